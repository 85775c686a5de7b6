"""The ``synth`` command group: Learn-by-interact's synthesis, thin layers over
:mod:`workbench.synth`. Synthesized episodes live in the ``synth`` workspace of the database
(``--workspace synth`` lists and shows them); they never mix with your own runs.

``synth_group`` is exported so each part of the stage registers its commands on it, each in
its own section below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from workbench.cli.options import (
    RichProgress,
    check_endpoint,
    chosen_backends,
    console,
    db_option,
    family_list,
    reasoner_option,
    workers_option,
)
from workbench.cli.plugins import agent_choice, env_option
from workbench.cli.tables import Column, print_records

if TYPE_CHECKING:
    from store import Store
    from workbench.synth.tasks import ProposalReport


@click.group("synth")
def synth_group() -> None:
    """Learn-by-interact synthesis: tasks proposed from a world's documentation, played by an
    agent into episodes of the synth workspace, then turned into examples."""


# -- tasks and exploration --


@synth_group.command("tasks")
@env_option("The world whose documentation tasks are proposed from.")
@click.option(
    "--n",
    "n",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Instructions proposed per documentation passage (the paper samples three).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed the proposals are drawn with."
)
@click.option(
    "--family",
    "families",
    multiple=True,
    help="Only this family (repeatable or comma-separated) [default: every documented one].",
)
@reasoner_option
@db_option
def tasks_command(
    store: Store,
    env: str,
    n: int,
    seed: int,
    families: tuple[str, ...],
    reasoner_name: str | None,
) -> None:
    """Propose task instructions from a world's documentation (self-instruct) and store them;
    running again adds only new ones."""
    from workbench.llm import ModelError
    from workbench.progress import Cancelled
    from workbench.synth.tasks import propose_tasks

    backends = chosen_backends(store, reasoner_name)
    chosen = [f for text in families for f in family_list(text)]
    try:
        report = propose_tasks(
            store,
            env,
            n,
            proposer=backends.proposer,
            seed=seed,
            families=chosen,
            progress=RichProgress(),
        )
    except Cancelled:
        raise click.ClickException("cancelled; the passages done so far are stored") from None
    except (ValueError, ModelError) as error:
        raise click.ClickException(str(error)) from error
    _print_proposals(report)


def _print_proposals(report: ProposalReport) -> None:
    rows = [[s.source, str(s.proposed), str(s.present)] for s in report.sources if s.proposed]
    print_records(
        console,
        [Column("source"), Column("proposed", justify="right"), Column("present", justify="right")],
        rows,
    )
    empty = sum(1 for s in report.sources if not s.proposed)
    console.print(
        f"{report.env}: {report.proposed} task(s) proposed by {escape(report.proposer)} from "
        f"{len(report.sources)} passage(s), {report.added} new, {report.present} already "
        "stored" + (f"; {empty} passage(s) gave none" if empty else ""),
        soft_wrap=True,
    )


@synth_group.command("explore")
@env_option("The world whose synthesized tasks are played.")
@click.option(
    "--agent",
    "agent_kind",
    type=agent_choice(),
    default="explorer",
    show_default=True,
    help="Who plays: the offline scripted explorer, or the LLM agent (openai).",
)
@click.option("--model", help="LLM agent: model name [default: env WORKBENCH_MODEL].")
@workers_option
@click.option(
    "--batch",
    "batch_name",
    help="Batch name (stored as synth/NAME); an existing one resumes [default: the world "
    "and agent's next batch, or its unfinished one].",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help="Most tasks a new batch plays [default: every task not yet played by this agent].",
)
@click.option(
    "--step-limit",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="Most actions per episode.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Run seed (episode seeds derive from it).",
)
@db_option
def explore_command(
    store: Store,
    env: str,
    agent_kind: str,
    model: str | None,
    workers: int,
    batch_name: str | None,
    limit: int | None,
    step_limit: int,
    seed: int,
) -> None:
    """Play the synthesized tasks with an agent and record the episodes in the synth
    workspace (progress bar, parallel, resumable: Ctrl-C keeps finished episodes)."""
    from workbench.agents.base import AgentSpec
    from workbench.executors import LocalPool
    from workbench.progress import Cancelled
    from workbench.synth.explore import explore

    if agent_kind == "command":
        raise click.UsageError(
            "synth explore plays agents that need no command line; use explorer or openai"
        )
    if agent_kind == "openai":
        check_endpoint(store, model)
    spec = AgentSpec(kind=agent_kind, model=model)
    try:
        with LocalPool(workers) as executor:
            report = explore(
                store,
                executor=executor,
                env=env,
                agent=spec,
                batch=batch_name,
                limit=limit,
                step_limit=step_limit,
                seed=seed,
                progress=RichProgress(),
            )
    except (Cancelled, KeyboardInterrupt):
        raise click.ClickException(
            "exploration interrupted; finished episodes are kept — run again to resume"
        ) from None
    except (ValueError, RuntimeError) as error:
        raise click.ClickException(str(error)) from error
    if not report.planned:
        console.print(
            f"every synthesized task of {env} is already planned for {agent_kind}", soft_wrap=True
        )
        return
    solved = report.finished - report.failed
    done = (
        f"batch {report.batch_id}: {report.finished} episode(s) played "
        f"({solved} solved the world's own task)"
    )
    if report.skipped:
        done += f"; {report.skipped} already recorded (resumed)"
    if report.lost:
        done += f"; {len(report.lost)} lost to crashed workers (recorded as failed)"
    console.print(done + " — see them with `workbench --workspace synth ls`", soft_wrap=True)
    for error, count in report.errors.most_common():
        console.print(f"  {count}× {escape(error)}", soft_wrap=True)
