"""Imported logs in the TUI: the task's goal and expected actions over the trajectory, tool
arguments indented with the call's result under it, and a rule admitted without replay
shown as "not replayed" on the Repository screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Store
from tests.tui.conftest import SIZE, rows, settle
from tests.tui.test_repository import open_repository
from tui.app import make_app
from tui.screens.trajectory import TrajectoryScreen
from workbench.cli import main


@pytest.fixture
def imported_db(tau_compiled: Path) -> Path:
    """The compiled tau-bench sample, its rule admitted without replay."""
    args = ["--db", str(tau_compiled), "repo", "admit", "1", "--without-replay"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return tau_compiled


async def test_the_trajectory_shows_the_goal_reference_arguments_and_results(imported_db):
    with Store(imported_db) as store:
        failed = next(e for e in store.episodes() if e.outcome.success is False)
        call = next(s for s in store.steps(failed.id) if s.kind == "tool_call")
    app = make_app(imported_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.open_trajectory(failed.id, call.index)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        header = screen.query_one("#episode-info").content.plain
        assert "You are" in header and "expected: get_reservation_details(" in header
        text = screen.detail.text
        assert 'cancel_reservation({\n  "reservation_id":' in text
        assert f"result (step {call.index + 1})" in text
        assert "Error: reservation must be looked up" in text


async def test_the_repository_marks_a_rule_admitted_without_replay(imported_db):
    app = make_app(imported_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        (row,) = rows(screen.version_table)
        assert "active" in row and "not replayed" in row


async def test_admitting_from_the_screen_leaves_an_imported_rule_staged(tau_compiled: Path):
    app = make_app(tau_compiled, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_repository(pilot)
        await pilot.press("a")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("--without-replay" in m for m in messages), messages
        assert "not replayed" in " ".join(rows(screen.version_table)[0])
    with Store(tau_compiled) as store:
        version = store.version(1)
        assert version.status == "staged" and version.contract_gate.passed
