"""``workbench tui``: the terminal UI over a database (the demo's, built on first start)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.options import (
    db_flag,
    errors,
    executor_options,
    given_db,
    given_workspace,
    local_workers,
    open_store,
    reasoner_option,
    workspace_flag,
)
from workbench.cli.runs import play_demo

if TYPE_CHECKING:
    from workbench.executors import ExecutorChoice


@click.command("tui")
@db_flag("SQLite database file [env WORKBENCH_DB; default: the demo database ./workbench.db].")
@workspace_flag
@reasoner_option
@executor_options
@click.option(
    "--episode",
    "episode_id",
    metavar="ID",
    help="Open this episode's trajectory at start (q goes back to the Runs screen).",
)
def tui_command(
    db_path: Path | None,
    workspace: str,
    reasoner_name: str | None,
    executor: ExecutorChoice,
    episode_id: str | None,
) -> None:
    """Open the terminal UI: runs, trajectories, spans and comparisons.

    With no database given (neither --db nor WORKBENCH_DB) it opens the demo database
    ./workbench.db, building it first (as `workbench demo` does) if it does not exist.
    The analyses, compilations and manual jobs started there use --reasoner (else the
    configured backend); the header names a model backend. The episodes its jobs play (the
    Repository screen's admission, a manual build) go to --executor. With --episode it opens
    on that episode's trajectory, as from the Runs screen.
    """
    from store import default_db_path

    path = given_db(db_path)
    if path is not None and not Path(path).exists():
        raise click.ClickException(
            f"no database {path}; make one with `workbench import`, `run` or `demo`"
        )
    if path is None:
        path = default_db_path()
        if not path.exists():
            errors.print(f"no database given: building the demo database {path} first")
            with open_store(path) as store:
                play_demo(store, None, None, local_workers())
    with open_store(path) as store:  # the same one-line error as every other command
        if episode_id is not None and store.episode(episode_id) is None:
            raise click.ClickException(f"no episode {episode_id!r} in {path}")
    try:
        from tui.app import make_app
    except ImportError as error:
        raise click.ClickException(
            f"the terminal UI needs textual ({error}); install it with "
            "pip install 'trajectory-workbench[tui]'"
        ) from error
    make_app(
        path,
        workspace=given_workspace(workspace),
        reasoner=reasoner_name,
        episode=episode_id,
        executor=executor,
    ).run()
