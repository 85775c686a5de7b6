"""The ``manual`` command group: thin layers over :mod:`workbench.manual.build` and
:mod:`workbench.manual.formulate`.

``manual_group`` is exported so other modules can register their own subcommands on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from workbench.cli.options import (
    RichProgress,
    check_endpoint,
    chosen_backends,
    console,
    db_option,
    errors,
    existing_db_option,
    family_list,
    integer,
    out_folder,
    reasoner_option,
)
from workbench.cli.plugins import env_option, families_default

if TYPE_CHECKING:
    from store import Store
    from workbench.manual.formulate import ManualError

NO_MANUAL_HINT = "; formulate one with `workbench manual formulate`"

NO_RULES_YET = (
    "[yellow]no rules yet:[/] this manual holds only the active artifacts; build the rules "
    "first with `workbench manual build`, then formulate again"
)
"""What ``formulate`` says when the manual it stored has no rule (the Building stage has not
run): the manual is still stored, as the artifacts alone make one."""


@click.group("manual")
def manual_group() -> None:
    """The AutoManual manual: rules and active artifacts formulated into versioned Markdown."""


@manual_group.command("build")
@env_option("Environment the Planner plays in.")
@click.option(
    "--family",
    "families",
    default=families_default(lambda plugin: plugin.demo_families),
    show_default=True,
    help="Comma-separated training task families.",
)
@click.option(
    "--episodes",
    type=integer(min=1),
    default=40,
    show_default=True,
    help="Episodes to learn from.",
)
@click.option("--seed", type=integer(), default=0, show_default=True, help="Plan seed.")
@click.option(
    "--n-max",
    type=integer(min=1),
    default=12,
    show_default=True,
    help="Most rules kept: above it the Consolidator merges and deletes.",
)
@click.option(
    "--batch",
    "batch_name",
    default="manual-build",
    show_default=True,
    help="Batch name (resumable).",
)
@click.option(
    "--agent",
    "agent_kind",
    type=click.Choice(["planner", "openai-planner", "scripted", "openai"]),
    default="planner",
    show_default=True,
    help="Who plays: the Planner writing its plan as code (planner: scripted, offline; "
    "openai-planner: the model), or an agent acting step by step (scripted, openai).",
)
@reasoner_option
@db_option
def manual_build(
    store: Store,
    env: str,
    families: str,
    episodes: int,
    seed: int,
    n_max: int,
    batch_name: str,
    agent_kind: str,
    reasoner_name: str | None,
) -> None:
    """Building stage: the Planner runs train episodes with the current rules, writing its
    plan as code (run in a limited sandbox; the rules' executable forms review every action);
    after each, the Builder updates the rules and the skill/reflection libraries."""
    from workbench.executors import LocalPool
    from workbench.manual.build import build
    from workbench.progress import Cancelled
    from workbench.runner import AgentSpec, RunConfig

    config = RunConfig(
        env=env,
        families=family_list(families),
        split="train",
        episodes=episodes,
        seed=seed,
        agent=AgentSpec(kind=agent_kind),
    )
    if agent_kind in ("openai", "openai-planner"):
        check_endpoint(store)
    builder = chosen_backends(store, reasoner_name).builder
    try:
        with LocalPool(1) as executor:  # one episode at a time: each learns from the last
            report = build(
                store,
                builder,
                config,
                executor=executor,
                batch=batch_name,
                n_max=n_max,
                progress=RichProgress(),
            )
    except Cancelled:
        raise click.ClickException(
            "build cancelled; recorded episodes and rules are kept — run again to resume"
        ) from None
    except (ValueError, RuntimeError) as error:
        raise click.ClickException(str(error)) from error
    outcomes = ", ".join(f"{n} {kind}" for kind, n in sorted(report.outcomes.items()))
    rules = store.manual_rules()
    types = ", ".join(sorted({r.type for r in rules}))
    console.print(
        f"batch {report.batch_id}: {report.episodes} episode(s) ({outcomes or 'none new'}), "
        f"{report.skipped} already recorded; {len(rules)} rule(s) now ({types}); "
        f"{report.consolidations} consolidation(s)"
    )
    for refusal in report.refused:
        console.print(f"[yellow]refused:[/] {escape(refusal)}")


@manual_group.command("formulate")
@reasoner_option
@existing_db_option
def manual_formulate(store: Store, reasoner_name: str | None) -> None:
    """Group the rules by scenario, write introductions and store the manual as a new version
    (unchanged rules and artifacts keep the current version). Build the rules first with
    `workbench manual build`: without any, the manual holds only the active artifacts, and
    formulate says so."""
    from workbench.llm import ModelError
    from workbench.manual.formulate import ManualError, formulate

    formulator = chosen_backends(store, reasoner_name).formulator
    before = store.manuals()
    try:
        manual = formulate(store, formulator)
    except (ManualError, ModelError) as error:  # each says what is missing and what to run
        raise click.ClickException(str(error)) from error
    summary = (
        f"{len(manual.rules)} rule(s), {len(manual.artifacts)} active artifact(s), "
        f"formulated by {escape(manual.reasoner)}"
    )
    if before and before[-1].version == manual.version:
        console.print(f"manual v{manual.version} is unchanged: {summary}")
    else:
        console.print(f"manual v{manual.version}: {summary}")
    if not manual.rules:
        errors.print(NO_RULES_YET, soft_wrap=True)


def _failing(error: ManualError) -> click.ClickException:
    hint = NO_MANUAL_HINT if "no manual has been formulated" in str(error) else ""
    return click.ClickException(f"{error}{hint}")


@manual_group.command("export")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Markdown file to write (replaced if it exists).",
)
@click.option("--version", "version", type=integer(), help="Manual version (default: the latest).")
@existing_db_option
def manual_export(store: Store, out: Path, version: int | None) -> None:
    """Write a manual version to a Markdown file."""
    from workbench.manual.formulate import ManualError, export

    try:
        manual = export(store, out_folder(out.parent) / out.name, version)
    except ManualError as error:
        raise _failing(error) from error
    except OSError as error:
        raise click.ClickException(f"cannot write {out}: {error.strerror or error}") from error
    console.print(f"manual v{manual.version} written to {escape(str(out))}", soft_wrap=True)


@manual_group.command("diff")
@click.argument("v1", type=integer())
@click.argument("v2", type=integer())
@existing_db_option
def manual_diff(store: Store, v1: int, v2: int) -> None:
    """Show how manual version V2 differs from V1 (a unified diff)."""
    from workbench.manual.formulate import ManualError, diff

    try:
        text = diff(store, v1, v2)
    except ManualError as error:
        raise _failing(error) from error
    click.echo(text or f"manual v{v1} and v{v2} are identical", nl=not text)
