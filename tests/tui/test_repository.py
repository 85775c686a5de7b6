"""The Repository screen: versions with their gates, the replay ledger, admitting."""

from __future__ import annotations

import io
import threading

from rich.console import Console
from textual.widgets import Static

from store import ArtifactVersion, Gate, GateCheck, LedgerEntry, Store
from tests.tui.conftest import (
    RULE,
    SIZE,
    SKILL,
    WHEN,
    rows,
    rule_contract,
    screen_for_key,
    settle,
    shown,
)
from tui.app import WorkbenchApp, make_app
from tui.screens.help import HelpScreen
from tui.screens.repository import RepositoryScreen, read_repository, replay_text
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.job_progress import JobProgress
from workbench.admit.evidence import not_replayed


async def open_repository(pilot) -> RepositoryScreen:
    return await screen_for_key(pilot, "R", RepositoryScreen)


def info(screen: RepositoryScreen) -> str:
    return screen.query_one("#repo-info").content.plain


def contract(screen: RepositoryScreen) -> str:
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(screen.query_one("#contract-text", Static).content)
    return console.export_text()


async def select_version(pilot, screen: RepositoryScreen, artifact: str) -> None:
    names = [v.artifact for v in screen.data.versions]
    screen.version_table.move_cursor(row=names.index(artifact))
    await settle(pilot)
    assert screen.version.artifact == artifact


async def test_versions_gate_checks_ledger_and_contract(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        assert info(screen) == "2 versions of 2 artifacts · 1 active, 1 staged"
        assert rows(screen.version_table) == [
            ["2", RULE, "1", "rule", "staged", "–", "–", "0+0"],
            ["1", SKILL, "1", "skill", "active", "pass", "pass +2/-0 reg 0 p=0.5", "2+1"],
        ]
        # the staged rule: no gate has run, nothing replayed
        assert rows(screen.gate_table) == [
            ["contract", "not run", "", ""],
            ["replay", "not run", "", ""],
        ]
        assert screen.ledger_table.row_count == 0
        assert screen.ledger_table.border_title == "replay ledger · not replayed"

        await select_version(pilot, screen, SKILL)
        assert rows(screen.gate_table) == [
            ["contract", "schema", "✓", "every required slot filled"],
            ["", "patterns", "✓", "3 compile"],
            [
                "",
                "declared inputs",
                "✓",
                "templates read only what the trigger binds and the task names",
            ],
            [
                "",
                "reaches its result",
                "✓",
                "from door-1@1: 'You move to the kitchen.' after 2 steps",
            ],
            ["replay", "corrections improve", "✓", "2 fixed, 0 broken of 2"],
            ["", "no preservation regression", "✓", "all 1 preserved"],
        ]
        assert rows(screen.ledger_table) == [
            ["door-1", "correction", "fail", "pass", "fixed", "yes"],
            ["door-2", "correction", "fail", "pass", "fixed", "yes"],
            ["boil-ok", "preservation", "pass", "pass", "same", "no"],
        ]
        assert screen.ledger_table.border_subtitle == (
            "correction 0/2 → 2/2 · preservation 1/1 → 1/1"
        )
        text = contract(screen)
        assert f"{SKILL} v1\nskill · compiled from spec 1\n" in text
        assert "Open a closed door before going through it." in text
        lines = [" ".join(line.split()) for line in text.splitlines()]
        assert "procedure 1. open door to {1}" in lines and "2. go to {1}" in lines
        assert "recovery look around and try the next door" in lines
        assert "inputs {1}" in lines and "gate cases 1 probe" in lines
        form = lines[lines.index("executable form") + 1 :]
        assert form[:2] == ["when_action go to (.+)", "when_evidence The door is not open"]
        assert "steps 1. open door to {1}" in form and "until You move to the {1}" in form


async def test_the_contract_shows_the_form_as_the_agent_runs_it(tau_compiled):
    """A compiled contract stores its form with placeholders for its name and description
    (the engine names the form after the artifact when it runs it): the view shows the
    artifact's own, never the placeholders."""
    with Store(tau_compiled) as store:
        (version,) = store.versions()
    assert version.contract["form"]["id"] == "x"  # the stored placeholder
    app = make_app(tau_compiled, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        text = contract(screen)
        lines = [" ".join(line.split()) for line in text.splitlines()]
        assert lines[0] == f"{version.artifact} v1"
        assert " ".join(version.contract["description"].split()) in " ".join(lines)
        form = " ".join(lines[lines.index("executable form") + 1 :])
        assert "when_action (?s:" in form and "response veto" in form
        assert '"x"' not in text and '"description": ""' not in text


async def test_enter_on_a_ledger_case_opens_the_replayed_episode(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        await select_version(pilot, screen, SKILL)
        await pilot.press("enter")  # on the version: into its ledger
        await settle(pilot)
        assert screen.focused is screen.ledger_table
        await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)
        assert trajectory.episode_id == "replay-v1-cand:door-2"
        assert trajectory.episode.outcome.success is True and trajectory.step_list.cursor == 0

        await pilot.press("q")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("b")  # the same case without the artifact
        await settle(pilot)
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.episode_id == "replay-v1-base:door-2"
        assert app.screen.episode.outcome.success is False


async def test_admitting_a_staged_version_records_its_gates(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        await select_version(pilot, screen, SKILL)
        await pilot.press("a")  # active: the engine refuses, nothing changes
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running
        assert screen.version.status == "active"

        # the hand-written rule has no negative trigger: the contract gate rejects it
        # before any replay (no environment runs)
        await select_version(pilot, screen, RULE)
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running
        assert not screen.query_one(JobProgress).has_class("-shown")
        with Store(repo_db) as store:
            [stored] = store.versions(artifact=RULE)
        assert stored.status == "rejected" and stored.replay_gate is None
        assert screen.version.artifact == RULE  # the selection survives the reload
        assert rows(screen.version_table)[0][4:7] == ["rejected", "fail", "–"]
        gates = rows(screen.gate_table)
        assert gates[0] == ["contract", "schema", "✗", "missing slots: negative"]
        assert gates[-1] == ["replay", "not run", "", ""]


async def test_help_and_cancelling(repo_db):
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen) and app.screen.help.title == "Repository"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        screen._cancel = threading.Event()
        running = screen._cancel
        screen.refresh_bindings()
        await pilot.press("escape")
        assert running.is_set()


def test_read_repository_and_replay_text(repo_db):
    with Store(repo_db) as store:
        data = read_repository(store)
    skill = next(v for v in data.versions if v.artifact == SKILL)
    assert [e.change for e in data.ledgers[skill.id]] == ["fixed", "fixed", "same"]
    assert replay_text(skill.replay_gate).plain == "pass +2/-0 reg 0 p=0.5"
    assert replay_text(None).plain == "–"
    nothing = Gate(passed=False, checks=[GateCheck(name="cases", passed=False)])
    assert replay_text(nothing).plain == "fail"  # no case replayed: no numbers


LONG_ARTIFACT = "no-repeat-after-no-known-action-matches-that"
LONG_CASE = "demo-train:test-conductivity:123"
LONG_CHECK = "negative triggers never fire on a success"
LONG_DETAIL = (
    "the rule fired on 'go to kitchen' in boil-ok@2, a step of a successful run that "
    "went on to pass: a veto there would have broken it"
)


def add_long_version(path) -> None:
    """A staged rule with a long name, its contract gate failed on a long check, and one
    ledger case replaying an episode with a long id."""
    with Store(path) as store:
        version = store.stage_version(
            ArtifactVersion(
                artifact=LONG_ARTIFACT,
                version=1,
                kind="rule",
                contract=rule_contract(),
                origin="hand",
                created_at=WHEN,
            )
        )
        assert version.id is not None
        check = GateCheck(name=LONG_CHECK, passed=False, detail=LONG_DETAIL)
        store.record_gate(version.id, "contract", Gate(passed=False, checks=[check]))
        store.put_ledger(
            LedgerEntry(
                version_id=version.id,
                case=LONG_CASE,
                role="correction",
                baseline_success=False,
                candidate_success=True,
                fired=True,
            )
        )


async def test_ids_are_shown_whole_and_free_text_wraps(repo_db):
    add_long_version(repo_db)
    app = make_app(repo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        assert screen.version.artifact == LONG_ARTIFACT
        versions = shown(screen.version_table)
        assert versions[1].split()[:4] == ["3", LONG_ARTIFACT, "1", "rule"]
        assert f" {RULE} " in versions[2]
        ledger = shown(screen.ledger_table)
        assert ledger[1].split() == [LONG_CASE, "correction", "fail", "pass", "fixed", "yes"]
        # the check's name on one line, its detail (free text) wrapped, whole
        header, *gates = shown(screen.gate_table)
        assert gates[0].startswith(f" contract  {LONG_CHECK}  ✗  the rule fired")
        detail = header.index("detail")
        assert " ".join(line[detail:] for line in gates[:3]) == LONG_DETAIL
        assert gates[3].split() == ["replay", "not", "run"]


def test_repository_screen(snap_compare, repo_db):
    async def run_before(pilot):
        screen = await open_repository(pilot)
        await select_version(pilot, screen, SKILL)

    app: WorkbenchApp = make_app(repo_db, poll_interval=0)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_a_rule_read_off_imported_logs_is_admitted_without_replay_on_a_second_A(
    tau_compiled,
):
    with Store(tau_compiled) as store:
        (version,) = store.versions()
    app = make_app(tau_compiled, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        await select_version(pilot, screen, version.artifact)
        await pilot.press("a")  # both gates: the contract passes, nothing can replay it
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert screen.version.status == "staged"
        await pilot.press("A")  # asks for confirmation first
        await settle(pilot)
        assert not screen.running and screen.version.status == "staged"
        await pilot.press("A")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert screen.version.status == "active"
        assert rows(screen.version_table)[0][4:7] == ["active", "pass", "not replayed"]
    with Store(tau_compiled) as store:
        assert not_replayed(store.version(version.id))
