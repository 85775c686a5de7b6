"""An experiment's workspace opened from the command line and in the terminal UI."""

from __future__ import annotations

from click.testing import CliRunner

from store import Store
from tests.store.test_workspaces import add_run
from tui.app import make_app
from workbench.cli import main


def test_the_cli_and_the_terminal_ui_open_a_workspace(db_path):
    with Store(db_path) as mine, Store(db_path, workspace="evolve/x/gated") as theirs:
        add_run(mine, "mine", [True])
        add_run(theirs, "theirs", [False, False])
    runner = CliRunner()
    listed = runner.invoke(main, ["--db", str(db_path), "--workspace", "evolve/x/gated", "ls"])
    assert listed.exit_code == 0 and "theirs:0" in listed.output and "mine:0" not in listed.output
    own = runner.invoke(main, ["--db", str(db_path), "ls"])
    assert "mine:0" in own.output and "theirs:0" not in own.output
    app = make_app(db_path, workspace="evolve/x/gated")
    with app.session.pool.store() as store:
        assert store.count_episodes() == 2
    assert app.session.pool.name == "workbench.db [evolve/x/gated]"
