"""The ``workbench`` group itself: its global options; commands are added in
:mod:`workbench.cli`."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.cli.options import db_flag, workspace_flag


@click.group(
    name="workbench",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="trajectory-workbench")
@db_flag("SQLite database file for every command [env WORKBENCH_DB; default ./workbench.db].")
@workspace_flag
@click.pass_context
def main(ctx: click.Context, db_path: Path | None, workspace: str) -> None:
    """Trajectory Workbench: import agent trajectories, triage failures, turn them into knowledge.

    Everything lives in one SQLite file (--db, or WORKBENCH_DB, default ./workbench.db).
    """
    ctx.meta["db_path"] = db_path
    ctx.meta["workspace"] = workspace
