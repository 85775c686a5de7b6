"""The ``synth`` command group: Learn-by-interact synthesis, thin layers over
:mod:`workbench.synth`.

Every command works in the synth workspace of the database (synthesized episodes, their
replays and their examples never mix with your own runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.episodes import shown
from workbench.cli.options import (
    LazyChoice,
    RichProgress,
    chosen_backends,
    console,
    executor_options,
    integer,
    plain,
    reasoner_option,
    workspace_db_option,
)
from workbench.cli.plugins import environment_names
from workbench.cli.tables import Column, print_records

if TYPE_CHECKING:
    from store import Store
    from workbench.executors import ExecutorChoice


@click.group("synth")
def synth_group() -> None:
    """Learn-by-interact synthesis: tasks from documentation, trajectories, backward
    construction, filters and exports (all in the database's synth workspace)."""


SYNTH_WORKSPACE = "synth"
"""``store.SYNTH_WORKSPACE``, written out so ``--help`` imports no store (a test checks)."""

synth_store = workspace_db_option(SYNTH_WORKSPACE)
"""``--db PATH`` opened as ``store`` in the synth workspace."""


def counts_line(store: Store) -> str:
    """``examples now: 12 kept, 3 rejected, 40 pending``."""
    counts = store.synth_counts()
    listed = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("kept", "rejected", "pending"))
    return f"examples now: {listed}"


# -- examples --


@synth_group.command("backward")
@click.option(
    "--batch",
    "batches",
    multiple=True,
    metavar="NAME",
    help="Only episodes of this synth batch (repeatable) [default: every synth batch].",
)
@click.option(
    "--episode",
    "episodes",
    multiple=True,
    metavar="ID",
    help="Only this episode (repeatable); overrides --batch.",
)
@click.option(
    "--max-spans-per-episode",
    "max_spans",
    type=integer(min=1),
    default=8,
    show_default=True,
    help="Most relabel calls per episode, the whole trajectory's abstraction included.",
)
@click.option(
    "--max-span-steps",
    type=integer(min=1),
    default=10,
    show_default=True,
    help="Longest span relabelled, in actions.",
)
@reasoner_option
@synth_store
def synth_backward(
    store: Store,
    batches: tuple[str, ...],
    episodes: tuple[str, ...],
    max_spans: int,
    max_span_steps: int,
    reasoner_name: str | None,
) -> None:
    """Backward construction: write a new instruction for spans of every synthesized episode
    that has no examples yet, from what the spans observably achieved (plus each episode's
    whole trajectory under the instruction it was played with). Resumable."""
    from workbench.progress import Cancelled
    from workbench.synth.backward import construct, pending_episodes

    relabeler = chosen_backends(store, reasoner_name).relabeler
    try:
        chosen = list(episodes) if episodes else pending_episodes(store, batches)
        report = construct(
            store,
            relabeler=relabeler,
            episodes=chosen,
            max_spans_per_episode=max_spans,
            max_span_steps=max_span_steps,
            progress=RichProgress("episodes"),
        )
    except (Cancelled, KeyboardInterrupt):
        raise click.ClickException(
            "backward construction stopped; episodes finished are kept — run again to resume"
        ) from None
    except ValueError as error:
        raise click.ClickException(str(error)) from error
    if not (report.episodes or report.failed):
        had = f" ({report.skipped} given had examples already)" if report.skipped else ""
        console.print(f"nothing to relabel: every synthesized episode has examples{had}")
        console.print(counts_line(store))
        return
    console.print(
        f"{report.episodes} episode(s) relabelled with {shown(relabeler.name)}: "
        f"{report.relabel_calls} relabel call(s), {report.examples} backward and "
        f"{report.whole} whole example(s), {report.trimmed} trimmed of repeated steps"
        + (f"; {report.skipped} had examples already" if report.skipped else "")
    )
    console.print(
        f"spans: {report.all_spans} sub-trajectories in all, {report.no_effect} with no "
        f"observable effect (no example), {report.capped} left out by the cap"
    )
    for error, count in report.errors.most_common():
        console.print(f"  {count}× {shown(error)} (episode left for the next run)")
    console.print(counts_line(store))


@synth_group.command("filter")
@executor_options
@reasoner_option
@synth_store
def synth_filter(store: Store, executor: ExecutorChoice, reasoner_name: str | None) -> None:
    """Filter the pending examples: the committee's deterministic vote, a replay of each
    example in the real simulator (its claimed effects must come back), duplicates by state,
    and with --reasoner openai the model's vote. Resumable."""
    from workbench.executors import make_executor
    from workbench.progress import Cancelled
    from workbench.synth.filters import filter_examples

    relabeler = chosen_backends(store, reasoner_name).relabeler
    try:
        with make_executor(executor) as pool:
            report = filter_examples(
                store, executor=pool, relabeler=relabeler, progress=RichProgress("episodes")
            )
    except (Cancelled, KeyboardInterrupt):
        raise click.ClickException(
            "filter stopped; verdicts and replays so far are kept — run again to resume"
        ) from None
    except (ValueError, RuntimeError) as error:
        raise click.ClickException(str(error)) from error
    rejected = sum(report.rejected.values())
    console.print(
        f"{report.examined} pending example(s): {report.kept} kept, {rejected} rejected, "
        f"{report.pending} still pending; {report.replays_played} replay(s) played, "
        f"{report.replays_reused} reused; {report.votes} model vote(s)"
    )
    for reason, count in report.rejected.most_common():
        console.print(f"  rejected {count}× {shown(reason)}")
    for error, count in report.errors.most_common():
        console.print(f"  {count}× {shown(error)} (left pending for the next run)")
    console.print(counts_line(store))


@synth_group.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["chat-jsonl", "examples-md"]),
    required=True,
    help="chat-jsonl: fine-tuning conversations in one file; examples-md: one Markdown "
    "file per example (front matter with provenance) in a folder.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The file (chat-jsonl) or folder (examples-md) to write.",
)
@click.option(
    "--kind",
    type=click.Choice(["backward", "whole"]),
    help="Only backward-constructed examples, or only whole trajectories [default: both].",
)
@click.option(
    "--verdict",
    type=click.Choice(["kept", "rejected", "pending", "any"]),
    default="kept",
    show_default=True,
    help="Which filter verdict to export.",
)
@click.option("--env", help="Only examples of this world.")
@synth_store
def synth_export(
    store: Store, fmt: str, out: Path, kind: str | None, verdict: str, env: str | None
) -> None:
    """Write examples as fine-tuning data or in-context example files (atomically)."""
    from workbench.synth.export import export_examples

    try:
        report = export_examples(
            store,
            out,
            fmt,  # type: ignore[arg-type]
            verdict=None if verdict == "any" else verdict,
            kind=kind,
            env=env,
        )
    except (ValueError, OSError) as error:
        raise click.ClickException(str(error)) from error
    where = shown(str(out))
    console.print(f"{report.examples} example(s) written to {where}")


# -- retrieval --


@synth_group.command("search")
@click.argument("query")
@click.option(
    "--k",
    "k",
    type=integer(min=1),
    default=5,
    show_default=True,
    help="How many examples to show.",
)
@click.option(
    "--observation",
    help="Match the examples' observations against this text [default: the query].",
)
@click.option(
    "--env",
    "env",
    type=LazyChoice(environment_names),
    default=None,
    help="Only examples of this world [default: all].",
)
@click.option(
    "--kind",
    type=click.Choice(["backward", "whole"]),
    default=None,
    help="Only examples of this kind [default: both].",
)
@synth_store
def synth_search(
    store: Store, query: str, k: int, observation: str | None, env: str | None, kind: str | None
) -> None:
    """The top K kept examples for QUERY, with the score each retriever gave them."""
    from workbench.synth.retrieval import ExampleIndex

    index = ExampleIndex.open(store, env=env, kind=kind)
    if index.dense_note():
        console.print(index.dense_note(), markup=False, soft_wrap=True)
    if not len(index):
        raise click.ClickException("no kept synthesized examples to search")
    hits = index.search(query, k, observation=observation)
    if not hits:
        console.print(f"no example shares a word with the query ({len(index)} searched)")
        return
    columns = [
        Column("rank", justify="right"),
        Column("example", justify="right"),
        Column("kind"),
        Column("env"),
        Column("bm25 obs", justify="right"),
        Column("bm25 instr", justify="right"),
        Column("dense", justify="right"),
        Column("instruction", text=True),
    ]
    rows = [
        [
            str(rank),
            str(hit.example.id),
            hit.example.kind,
            plain(hit.example.env),
            f"{hit.scores['bm25_observation']:.2f}",
            f"{hit.scores['bm25_instruction']:.2f}",
            f"{hit.scores['dense']:.3f}" if "dense" in hit.scores else "-",
            plain(hit.example.instruction),
        ]
        for rank, hit in enumerate(hits, start=1)
    ]
    print_records(console, columns, rows, title=f"{len(hits)} of {len(index)} kept examples")
