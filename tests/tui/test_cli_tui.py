"""`workbench tui`: opens the app on the database, or builds the demo database first."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import workbench.cli as cli
import workbench.cli.runs as cli_runs
from tui.app import WorkbenchApp


@pytest.fixture
def opened(monkeypatch):
    """The paths the app was run on (instead of taking over the terminal)."""
    paths = []
    monkeypatch.setattr(WorkbenchApp, "run", lambda self, **kwargs: paths.append(self.db_path))
    return paths


def test_tui_opens_the_given_database(opened, tui_db):
    result = CliRunner().invoke(cli.main, ["tui", "--db", str(tui_db)], env={"WORKBENCH_DB": ""})
    assert result.exit_code == 0, result.output
    assert opened == [tui_db]
    result = CliRunner().invoke(cli.main, ["--db", str(tui_db), "tui"], env={"WORKBENCH_DB": ""})
    assert result.exit_code == 0 and opened == [tui_db, tui_db]


def test_tui_refuses_a_missing_database(opened, tmp_path):
    result = CliRunner().invoke(cli.main, ["tui", "--db", str(tmp_path / "nope.db")])
    assert result.exit_code != 0 and "no database" in result.output
    assert opened == []


def test_tui_without_a_database_builds_the_demo_first(opened, tmp_path, monkeypatch):
    built = []
    monkeypatch.setattr(
        cli_runs, "run_and_report", lambda store, config, name, workers: built.append(name)
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORKBENCH_DB", raising=False)
    result = CliRunner().invoke(cli.main, ["tui"])
    assert result.exit_code == 0, result.output
    demo = ["demo-train", "demo-test", "demo-textworld-train", "demo-textworld-test"]
    assert built == demo  # every world the workbench ships
    assert [p.name for p in opened] == ["workbench.db"]
    # a second start finds the database and opens it straight away
    result = CliRunner().invoke(cli.main, ["tui"])
    assert built == demo and len(opened) == 2


def test_a_crash_in_a_screen_ends_the_process_with_an_error(tui_db, monkeypatch):
    """Textual prints the traceback of an exception raised while drawing and ends the app;
    `workbench tui` then exits with the app's return code, not 0."""
    from tui.screens.runs import RunsScreen

    def crash(self) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(RunsScreen, "on_mount", crash)
    run = WorkbenchApp.run
    monkeypatch.setattr(WorkbenchApp, "run", lambda self, **kw: run(self, headless=True, **kw))
    result = CliRunner().invoke(cli.main, ["tui", "--db", str(tui_db)], env={"WORKBENCH_DB": ""})
    assert result.exit_code == 1


def test_tui_opens_on_the_episode_given(tui_db, monkeypatch):
    """`--episode ID` opens that trajectory at start; `q` goes back to the Runs screen (made
    only then), its cursor on that episode; an unknown id is a one-line error."""
    from tests.tui.conftest import SIZE, settle
    from tui.screens.runs import RunsScreen
    from tui.screens.trajectory import TrajectoryScreen

    seen = []

    async def first_screen(pilot) -> None:
        await settle(pilot)
        seen.append((type(pilot.app.screen), getattr(pilot.app.screen, "episode_id", None)))
        await pilot.press("q")
        await settle(pilot)
        seen.append((type(pilot.app.screen), pilot.app.screen.table.current))
        pilot.app.exit()

    run = WorkbenchApp.run
    monkeypatch.setattr(
        WorkbenchApp,
        "run",
        lambda self, **kw: run(self, headless=True, size=SIZE, auto_pilot=first_screen),
    )
    args = ["tui", "--db", str(tui_db), "--episode", "boil-1-long"]
    result = CliRunner().invoke(cli.main, args, env={"WORKBENCH_DB": ""})
    assert result.exit_code == 0, result.output
    assert seen == [(TrajectoryScreen, "boil-1-long"), (RunsScreen, "boil-1-long")]
    result = CliRunner().invoke(cli.main, [*args[:-1], "nope"], env={"WORKBENCH_DB": ""})
    assert result.exit_code != 0 and "no episode 'nope'" in result.output
