"""The ``synth`` command group: Learn-by-interact synthesis from the command line.

``synth_group`` is exported so other modules can register their own subcommands on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from workbench.cli.options import LazyChoice, console, existing_db_option, integer, plain
from workbench.cli.plugins import environment_names
from workbench.cli.tables import Column, print_records

if TYPE_CHECKING:
    from store import Store


@click.group("synth")
def synth_group() -> None:
    """Learn-by-interact: synthesized examples and their retrieval."""


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
@existing_db_option
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
