"""The Compile screen: specs with their cited fields and witness tables, opening citations,
compiling from the TUI."""

from __future__ import annotations

import threading
from dataclasses import replace

from store import Store
from tests.tui.conftest import SIZE, rows, screen_for_key, settle, shown
from tui.app import WorkbenchApp, make_app
from tui.screens.clusters import ClustersScreen
from tui.screens.compile import CompileScreen, attempts_line, read_specs
from tui.screens.help import HelpScreen
from tui.screens.repository import RepositoryScreen
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.job_progress import JobProgress


async def open_compile(pilot) -> CompileScreen:
    return await screen_for_key(pilot, "K", CompileScreen)


def info(screen: CompileScreen) -> str:
    return screen.query_one("#compile-info").content.plain


async def select_spec(pilot, screen: CompileScreen, spec_id: int) -> None:
    ids = [s.id for s in screen.specs]
    screen.spec_table.move_cursor(row=ids.index(spec_id))
    await settle(pilot)
    assert screen.spec.id == spec_id


async def test_specs_fields_and_witness_tables(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        assert "analysis run 1 · heuristic · 2 specs (1 deferred, 1 supported)" in info(screen)
        # supported specs first, then the deferred ones (the newer spec 2 is deferred)
        assert rows(screen.spec_table) == [
            [
                "1",
                "supported",
                "blocked-precondition",
                "boil",
                "rule ✗ → skill ✓",
                "open-door-before-go-boil v1 active",
            ],
            [
                "2",
                "deferred",
                "–",
                "–",
                "–",
                "unrecognised cluster: no mechanism with an observable trigger fits",
            ],
        ]
        assert screen.spec.id == 1
        fields = rows(screen.field_table)
        assert fields[:3] == [
            ["activation.trigger", "the agent is about to 'go to <X>'", "go to (.+)"],
            ["", "  ↳ cites door-1@1", ""],
            ["activation.observations[0]", "the door to <X> is not open", "The door is not open"],
        ]
        names = [r[0] for r in fields if r[0]]
        assert names == [
            "activation.trigger",
            "activation.observations[0]",
            "scope.objective",
            "scope.decisions[0]",
            "scope.decisions[1]",
            "execution.state",
            "execution.completion",
        ]
        labels = [c.label() if c else None for c in screen.field_citations]
        # each field row opens its first citation, each citation row its own
        assert labels == [
            *["door-1@1"] * 2,
            *["door-1@2"] * 2,
            *["boil-ok@1-2"] * 2,
            *["boil-ok@1"] * 2,
            *["boil-ok@2"] * 2,
            *["boil-ok@1"] * 2,
            *["boil-ok@2", "boil-ok@2", "door-1@2"],
        ]

        assert screen.witness_table.border_title == "obligations · rule ✗ → skill ✓"
        witnesses = rows(screen.witness_table)
        assert witnesses[0] == ["1 rule ✗", "observation", "closed", "guard", "door-1@1"]
        assert witnesses[1][:4] == ["", "state", "open", "–"]
        assert witnesses[1][4].startswith("which door was opened must persist")
        assert [r[1] for r in witnesses] == [
            "observation",
            "state",
            "decision",
            "completion",
            "missing",
            "observation",
            "state",
            "decision",
            "completion",
            "had to close",
            "had to close",
            "had to close",
        ]
        assert witnesses[4][4] == "negative"
        assert witnesses[5][:4] == ["2 skill ✓", "observation", "closed", "applicability"]
        assert witnesses[5][4] == "door-1@1, door-1@2"
        assert witnesses[9][4].startswith("rule state: which door was opened")

        await pilot.press("down")  # the deferred spec says why, and has no attempts
        await settle(pilot)
        assert screen.spec.id == 2
        assert rows(screen.field_table) == [
            [
                "deferred",
                "unrecognised cluster: no mechanism with an observable trigger fits",
                "",
            ]
        ]
        assert screen.witness_table.row_count == 0
        assert screen.witness_table.border_subtitle == "deferred specs are not compiled"


LONG_ARTIFACT = "no-repeat-after-the-door-is-not-open"
LONG_SLOT = "applicability_of_the_guard"


async def test_ids_are_shown_whole_and_free_text_cut(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        data = screen.data
        version = data.staged[1].model_copy(update={"artifact": LONG_ARTIFACT})
        rule, skill = data.attempts[1]
        checks = [rule.checks[0].model_copy(update={"slot": LONG_SLOT}), *rule.checks[1:]]
        attempts = [rule.model_copy(update={"checks": checks}), skill]
        screen._loaded(replace(data, staged={1: version}, attempts={1: attempts}))
        await settle(pilot)
        supported, deferred = shown(screen.spec_table)[1:3]
        assert supported.endswith(f" {LONG_ARTIFACT} v1 active")  # the staged version, whole
        assert " unrecognised cluster: no mechanism" in deferred and deferred.endswith("…")
        witnesses = shown(screen.witness_table)
        assert witnesses[1].split() == [
            "1",
            "rule",
            "✗",
            "observation",
            "closed",
            LONG_SLOT,
            "door-1@1",
        ]
        # in the detail tables free text wraps: the witness is whole, on two lines
        state = " ".join(" ".join(line.split()) for line in witnesses[2:4])
        assert state == (
            "state open – which door was opened must persist for the procedure; "
            "a rule keeps nothing between decisions"
        )
        fields = shown(screen.field_table)
        assert fields[2].split() == ["↳", "cites", "door-1@1"]


async def test_the_cursor_lands_on_the_first_supported_spec(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        assert screen.spec_table.cursor_row == 0 and screen.spec.id == 1
        assert screen.witness_table.row_count == 12
        assert screen.witness_table.border_subtitle == ""
        assert [s.id for s in screen.data.specs] == [2, 1]  # as read: newest (deferred) first
        assert [(s.id, s.status) for s in screen.specs] == [(1, "supported"), (2, "deferred")]


async def test_enter_on_a_citation_opens_the_trajectory_at_that_step(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        await select_spec(pilot, screen, 1)
        await pilot.press("enter")  # on the spec: into its fields
        await settle(pilot)
        assert screen.focused is screen.field_table
        row = 1 + [c.label() if c else None for c in screen.field_citations].index("boil-ok@1-2")
        assert rows(screen.field_table)[row][1] == "  ↳ cites boil-ok@1-2"
        screen.field_table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)
        assert trajectory.episode_id == "boil-ok" and trajectory.step_list.cursor == 1

        await pilot.press("q")
        await settle(pilot)
        assert app.screen is screen
        # a field row opens its first citation; an obligation row the evidence it cites
        screen.field_table.move_cursor(row=2)  # activation.observations[0]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TrajectoryScreen)
        assert (app.screen.episode_id, app.screen.step_list.cursor) == ("door-1", 2)
        await pilot.press("q")
        await settle(pilot)
        screen.witness_table.focus()
        screen.witness_table.move_cursor(row=8)  # skill completion: boil-ok@2
        await pilot.press("enter")
        await settle(pilot)
        assert (app.screen.episode_id, app.screen.step_list.cursor) == ("boil-ok", 2)
        await pilot.press("q")
        await settle(pilot)
        screen.witness_table.move_cursor(row=1)  # an open obligation cites nothing
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen


async def test_from_a_cluster_its_spec_is_preselected(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)
        clusters = app.screen
        assert isinstance(clusters, ClustersScreen)
        for row, spec_id in ((0, 1), (1, 2)):  # the door cluster, then the focus cluster
            clusters.cluster_table.move_cursor(row=row)
            await settle(pilot)
            await pilot.press("k")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, CompileScreen)
            assert screen.cluster_id == clusters.cluster.id
            assert screen.spec.id == spec_id
            await pilot.press("q")
            await settle(pilot)
            assert app.screen is clusters


async def test_r_compiles_the_run_and_shows_the_new_specs(analysed_repo_db):
    app = make_app(analysed_repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        assert "no spec yet. Press r" in info(screen)
        assert screen.spec_table.row_count == 0

        await pilot.press("r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running
        assert not screen.query_one(JobProgress).has_class("-shown")
        with Store(analysed_repo_db) as store:
            stored = read_specs(store)
        assert [s.id for s in screen.data.specs] == [s.id for s in stored.specs]
        table = rows(screen.spec_table)
        assert len(table) == 3
        assert {r[2] for r in table} >= {"repeated-rejection", "unnamed-commitment"}
        staged = [r[5] for r in table if r[4] == "rule ✓"]
        assert len(staged) == 2 and all(s.endswith(" v1 staged") for s in staged)
        assert "3 specs" in info(screen) and "2 versions staged" in info(screen)

        supported = [r for r in table if r[1] == "supported"]
        await pilot.press("r")  # again: the supported specs are reused, nothing is staged
        await app.workers.wait_for_complete()
        await settle(pilot)
        table = rows(screen.spec_table)
        assert [r for r in table if r[1] == "supported"] == supported
        with Store(analysed_repo_db) as store:
            assert [s.id for s in screen.data.specs] == [s.id for s in read_specs(store).specs]


async def test_compiling_needs_an_analysis_run_and_can_be_cancelled(app, analysed_repo_db):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        assert "No analysis run yet" in info(screen)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running and screen.spec_table.row_count == 0

    app = make_app(analysed_repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        cancel = threading.Event()
        cancel.set()  # as if escape had been pressed before compiling started
        screen._cancel = cancel
        screen._compile(cancel, screen.query_one(JobProgress).reporter())
        await settle(pilot)
        assert not screen.running
        with Store(analysed_repo_db) as store:
            assert store.specs() == []  # cancelled before the first spec: nothing written
        screen._cancel = threading.Event()
        running = screen._cancel
        screen.refresh_bindings()
        await pilot.press("escape")
        assert running.is_set()


async def test_repository_and_help_from_the_compile_screen(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compile(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen) and app.screen.help.title == "Compile"
        await pilot.press("q")
        await settle(pilot)
        await select_spec(pilot, screen, 1)
        await pilot.press("R")
        await settle(pilot)
        repository = app.screen
        assert isinstance(repository, RepositoryScreen)
        assert repository.version.artifact == "open-door-before-go-boil"


def test_attempts_line_and_read_specs(repo_db):
    with Store(repo_db) as store:
        data = read_specs(store)
    assert [s.id for s in data.specs] == [2, 1]
    assert attempts_line(data.attempts[1]).plain == "rule ✗ → skill ✓"
    assert attempts_line(data.attempts[2]).plain == "–"
    assert data.staged[1].artifact == "open-door-before-go-boil" and 2 not in data.staged
    assert data.spec_covering(1).id == 1


def test_compile_screen(snap_compare, repo_db):
    async def run_before(pilot):
        screen = await open_compile(pilot)
        await select_spec(pilot, screen, 1)

    app: WorkbenchApp = make_app(repo_db, poll_interval=0)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
