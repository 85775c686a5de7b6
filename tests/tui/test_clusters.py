"""The Clusters screen: running the analysis, reviewing members, opening them elsewhere."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from store import Batch, Episode, EpisodeFilter, Outcome, Step, Store, Task
from tests.tui.conftest import SIZE, WHEN, screen_for_key, settle, shown
from tui.app import WorkbenchApp, make_app
from tui.screens.clusters import ClustersScreen, read_clusters
from tui.screens.compare import CompareScreen
from tui.screens.help import HelpScreen
from tui.screens.range_modal import RangeModal, parse_range
from tui.screens.scope_modal import ScopeModal
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.job_progress import JobProgress
from workbench.analyze.analyzer import analyze
from workbench.analyze.heuristic import HeuristicAnalyst
from workbench.analyze.scopes import AnalysisScope, analysis_scopes

INSTRUCTION = "Your task is to boil water. First, focus on the water."
SUCCESS = [
    ("open door to kitchen", "The door is now open."),
    ("go to kitchen", "You move to the kitchen."),
    ("activate sink", "The sink appears broken, and can't be activated."),
    ("focus on water", "You focus on the water."),
    ("activate stove", "The stove is now activated."),
]
DOOR = [("go to kitchen", "The door is not open."), ("go to kitchen", "The door is not open.")]

# (episode id, task, success, turns)
EPISODES = [
    ("boil-ok", "sw:boil:1", True, SUCCESS),
    ("door-1", "sw:boil:1", False, DOOR),
    ("door-2", "sw:boil:1", False, [DOOR[0], ("look around", "You see the hallway.")]),
    ("focus-sink", "sw:boil:1", False, [*SUCCESS[:3], ("focus on sink", "CRITICAL")]),
    ("melt-alone", "sw:melt:1", False, [("look around", "You see a room.")]),
]


def build(path: Path, prefix: str = "", boil: str = "boil") -> None:
    """Three boil failures (two alike), a boil success, and a melt failure with no success
    (each episode id after ``prefix``; ``boil``: the boil family's name)."""
    with Store(path) as store:
        store.put_batch(Batch(id="b", name="b", kind="run", created_at=WHEN))
        for task, family in (("sw:boil:1", boil), ("sw:melt:1", "melt")):
            store.put_task(
                Task(id=task, environment="scienceworld", family=family, instruction=INSTRUCTION)
            )
        for name, task, success, turns in EPISODES:
            episode_id = prefix + name
            steps = [
                Step(
                    episode_id=episode_id,
                    index=0,
                    kind="observation",
                    observation="This room is called the hallway.",
                    timestamp=WHEN,
                )
            ]
            for i, (action, observation) in enumerate(turns, start=1):
                steps.append(
                    Step(
                        episode_id=episode_id,
                        index=i,
                        kind="action",
                        action=action,
                        observation=observation,
                        reward=-100.0 if observation == "CRITICAL" else 0.0,
                        timestamp=WHEN,
                    )
                )
            store.add_episode(
                Episode(
                    id=episode_id,
                    task_id=task,
                    batch_id="b",
                    outcome=Outcome(success=success, score=100.0 if success else 0.0),
                    started_at=WHEN,
                ),
                steps,
            )


@pytest.fixture
def clusters_db(tmp_path: Path) -> Path:
    path = tmp_path / "clusters.db"
    build(path)
    return path


@pytest.fixture
def analysed_db(clusters_db: Path) -> Path:
    with Store(clusters_db) as store:
        analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    return clusters_db


async def open_clusters(pilot) -> ClustersScreen:
    return await screen_for_key(pilot, "C", ClustersScreen)


def info(screen: ClustersScreen) -> str:
    return screen.query_one("#clusters-info").content.plain


def analysis_of(path: Path, episode_id: str):
    with Store(path) as store:
        [analysis] = store.analyses(episode_id=episode_id)
        return analysis, store.spans(episode_id)


async def select_member(pilot, screen: ClustersScreen, episode_id: str) -> None:
    """Put the cursors on the cluster holding ``episode_id`` and on that member."""
    for row, cluster in enumerate(screen.data.clusters):
        ids = [a.episode_id for a in screen.data.members(cluster)]
        if episode_id in ids:
            screen.cluster_table.move_cursor(row=row)
            await settle(pilot)
            screen.member_table.focus()
            screen.member_table.move_cursor(row=ids.index(episode_id))
            await settle(pilot)
            assert screen.member.episode_id == episode_id
            return
    raise AssertionError(f"{episode_id} is in no cluster")


async def test_no_run_then_r_analyses_and_shows_clusters(clusters_db):
    app = make_app(clusters_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        assert screen.data.run is None
        assert "No analysis run yet" in info(screen) and "Press r" in info(screen)
        assert screen.cluster_table.row_count == 0

        await pilot.press("r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running
        assert not screen.query_one(JobProgress).has_class("-shown")
        clusters = screen.data.clusters
        assert [(len(c.members), c.family, c.status) for c in clusters] == [
            (2, "boil", "supported"),
            (1, "boil", "supported"),
            (1, "melt", "deferred"),
        ]
        assert screen.cluster_table.row_count == 3
        assert "analysis run 1 · heuristic · default scope · 4 analyses" in info(screen)
        assert "1 deferred" in info(screen)
        # the largest cluster is selected: its two members and its contrast are listed
        assert screen.member_table.row_count == 2
        assert {a.episode_id for a in screen.data.members(clusters[0])} == {"door-1", "door-2"}
        assert screen.contrast_table.row_count == 1 and screen.contrast == "boil-ok"
        await pilot.press("down", "down")  # the deferred cluster says why
        await settle(pilot)
        assert "no observable trigger" in screen.member_table.border_subtitle


async def test_cancelling_a_running_analysis(clusters_db):
    app = make_app(clusters_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        cancel = threading.Event()
        cancel.set()  # as if escape had been pressed before the first failure
        screen._cancel = cancel
        screen._analyze(cancel, screen.query_one(JobProgress).reporter())
        await settle(pilot)
        assert not screen.running
        with Store(clusters_db) as store:
            assert not store.analyses()
        # escape reaches the running analysis's event
        screen._cancel = threading.Event()
        running = screen._cancel
        screen.refresh_bindings()
        await pilot.press("escape")
        assert running.is_set()


async def test_accept_reject_and_edit_members(analysed_db):
    app = make_app(analysed_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)

        await select_member(pilot, screen, "door-1")
        await pilot.press("a")
        await settle(pilot)
        analysis, spans = analysis_of(analysed_db, "door-1")
        assert analysis.status == "accepted"
        assert [(s.author, s.kind, s.start, s.end) for s in spans if s.author == "human"] == [
            ("human", "causal", analysis.start, analysis.end)
        ]
        assert screen.member.episode_id == "door-1"  # the selection survives the reload
        assert "accepted" in screen.member_table.get_row_at(screen.member_table.cursor_row)[3]

        await select_member(pilot, screen, "door-2")
        await pilot.press("x")
        await settle(pilot)
        analysis, spans = analysis_of(analysed_db, "door-2")
        assert analysis.status == "rejected"
        assert not [s for s in spans if s.author.startswith("analyzer")]
        assert [len(c.members) for c in screen.data.clusters][:1] == [1]  # door-2 left it

        await select_member(pilot, screen, "focus-sink")
        await pilot.press("e")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, RangeModal) and modal.n_steps == 5
        await pilot.press("ctrl+a", "ctrl+k", "9", "tab", "ctrl+a", "ctrl+k", "3", "enter")
        await settle(pilot)
        assert app.screen is modal  # 9 > 3 is refused
        assert "after the end" in str(modal.query_one("#range-error").content)
        await pilot.press("shift+tab", "ctrl+a", "ctrl+k", "2", "tab", "enter")
        await settle(pilot)
        assert app.screen is screen
        analysis, spans = analysis_of(analysed_db, "focus-sink")
        assert analysis.status == "edited"
        assert [(s.start, s.end) for s in spans if s.author == "human"] == [(2, 3)]


async def test_enter_opens_the_trajectory_and_c_the_comparison(analysed_db):
    app = make_app(analysed_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        await select_member(pilot, screen, "focus-sink")
        causal = screen.member.start
        assert causal == 4
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.episode_id == "focus-sink" and app.screen.step_list.cursor == causal

        await pilot.press("q")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("c")
        await settle(pilot)
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert compare.comparison.failed.id == "focus-sink"
        assert compare.comparison.success.id == "boil-ok"
        divergence = compare.comparison.alignment.first_divergence
        assert compare.query_one("#alignment").cursor_row == divergence.pair

        await pilot.press("q")
        await settle(pilot)
        screen.contrast_table.focus()
        await pilot.press("enter")  # a contrast: the selected member against it
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.comparison.success.id == "boil-ok"


def test_read_clusters_and_parse_range(analysed_db, clusters_db):
    with Store(analysed_db) as store:
        data = read_clusters(store)
    assert data.run is not None and len(data.analyses) == 4
    assert sum(len(data.members(c)) for c in data.clusters) == 4
    assert parse_range("2", " 3 ") == (2, 3)
    assert parse_range("3", "2") == "the start comes after the end"
    assert parse_range("x", "2") == "start and end must be whole numbers"
    assert parse_range("-1", "2") == "steps count from 0"
    assert parse_range("0", "5", n_steps=5) == "the episode has steps 0–4"


PREFIX = "demo-train:conductivity:"
"""Before each episode id: ids as long as a demo batch's."""
FAMILY = "test-conductivity-of-metals"


async def test_ids_are_shown_whole_and_free_text_cut(tmp_path):
    path = tmp_path / "long.db"
    build(path, prefix=PREFIX, boil=FAMILY)
    with Store(path) as store:
        analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    app = make_app(path, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        header, door, focus, melt = shown(screen.cluster_table)[:4]
        assert header.split() == ["size", "family", "trigger", "correction", "status", "reason"]
        assert f" {FAMILY} " in door and f" {FAMILY} " in focus
        assert "go to <X> | is not open" in door and "open door to <X>" in door
        assert "no observable trigger" in melt and melt.endswith("…")  # the reason, cut

        header, *members = shown(screen.member_table)[:3]
        for member, name in zip(members, ["door-1", "door-2"], strict=True):
            assert member.startswith(f" {PREFIX}{name} ")
            assert "instead of" in member and member.endswith("…")  # the change, cut
        change = screen.member.change
        assert len(change) > 30 and change not in members[0]
        assert shown(screen.contrast_table)[1] == f" {PREFIX}boil-ok"


def test_clusters_screen(snap_compare, analysed_db):
    async def run_before(pilot):
        await open_clusters(pilot)

    app: WorkbenchApp = make_app(analysed_db, poll_interval=0)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


# -- the scope of r ---------------------------------------------------------------------------

HELD_OUT = "sw:boil:2"


@pytest.fixture
def held_out_db(clusters_db: Path) -> Path:
    """The clusters database with a held-out batch: a test-split door failure, and a replay
    batch (a candidate's paired replay) that is never offered."""
    with Store(clusters_db) as store:
        store.put_task(
            Task(
                id=HELD_OUT,
                environment="scienceworld",
                family="boil",
                split="test",
                instruction=INSTRUCTION,
            )
        )
        store.put_batch(Batch(id="held-out", name="held-out", kind="run", created_at=WHEN))
        store.put_batch(Batch(id="replay-1", name="replay-1", kind="replay", created_at=WHEN))
        for episode_id, batch in (("door-test", "held-out"), ("door-replay", "replay-1")):
            store.add_episode(
                Episode(
                    id=episode_id,
                    task_id=HELD_OUT,
                    batch_id=batch,
                    outcome=Outcome(success=False, score=0.0),
                    started_at=WHEN,
                ),
                [
                    Step(episode_id=episode_id, index=0, kind="observation", observation="hall"),
                    Step(
                        episode_id=episode_id,
                        index=1,
                        kind="action",
                        action=DOOR[0][0],
                        observation=DOOR[0][1],
                    ),
                ],
            )
    return clusters_db


def analysed_ids(path: Path) -> set[str]:
    """The episodes analysed by the latest analysis run."""
    with Store(path) as store:
        data = read_clusters(store)
    return {a.episode_id for a in data.analyses.values()}


def scope_text(screen: ClustersScreen) -> str:
    return screen.query_one("#clusters-scope").content.plain


async def pick_scope(pilot, label: str) -> None:
    """Open the scope dialog with s and choose ``label`` with the arrow keys and enter."""
    await pilot.press("s")
    await settle(pilot)
    modal = pilot.app.screen
    assert isinstance(modal, ScopeModal)
    labels = [scope.label for scope in modal.scopes]
    moves = labels.index(label) - labels.index(modal.current.label)
    await pilot.press(*(["down"] * moves if moves > 0 else ["up"] * -moves), "enter")
    await settle(pilot)
    assert not isinstance(pilot.app.screen, ScopeModal)


async def analyse_with_r(pilot) -> None:
    await pilot.press("r")
    await pilot.app.workers.wait_for_complete()
    await settle(pilot)


async def test_r_by_default_leaves_the_held_out_failures_out(held_out_db):
    app = make_app(held_out_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        assert scope_text(screen) == (
            "r analyses default: every failure but replays and held-out (test) episodes"
            " · 4 failures · s picks the scope"
        )
        await analyse_with_r(pilot)
        assert analysed_ids(held_out_db) == {"door-1", "door-2", "focus-sink", "melt-alone"}
        assert "default scope" in info(screen)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert "r analyses now: default — every failure but replays" in app.screen.help.intro
        assert ("s", "pick the scope r analyses: default, one batch, one split, or all") in (
            app.screen.help.keys
        )


@pytest.mark.parametrize(
    ("label", "analysed"),
    [
        ("batch held-out", {"door-test"}),
        ("split test", {"door-test"}),
        ("all", {"door-1", "door-2", "focus-sink", "melt-alone", "door-test"}),
    ],
)
async def test_r_analyses_exactly_the_scope_picked(held_out_db, label, analysed):
    app = make_app(held_out_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        await pick_scope(pilot, label)
        assert screen.scope.label == label
        assert scope_text(screen).startswith(f"r analyses {label}: ")
        await analyse_with_r(pilot)
        assert analysed_ids(held_out_db) == analysed
        await pilot.press("question_mark")
        await settle(pilot)
        assert f"r analyses now: {label} — " in app.screen.help.intro


async def test_escape_keeps_the_scope(held_out_db):
    app = make_app(held_out_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_clusters(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, ScopeModal)
        await pilot.press("down", "escape")
        await settle(pilot)
        assert app.screen is screen and screen.scope.label == "default"


def test_analysis_scopes_offer_batches_splits_and_all(held_out_db):
    with Store(held_out_db) as store:
        scopes = analysis_scopes(store)
    assert [(s.label, s.failures) for s in scopes] == [
        ("default", 4),
        ("batch b", 4),
        ("batch held-out", 1),
        ("split test", 1),  # the replay's task is held out too, but replays are left out
        ("split other", 4),
        ("all", 5),
    ]
    assert AnalysisScope("split", "test").where == EpisodeFilter(split="test")
