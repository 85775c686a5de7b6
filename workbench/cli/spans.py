"""``spans import`` and ``spans export``: human span labels in and out as JSON lines, a thin
layer over :mod:`workbench.spans_io`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.cli.options import (
    console,
    db_option,
    errors,
    existing_db_option,
    filter_options,
    plain,
    write_out,
)

if TYPE_CHECKING:
    from store import EpisodeFilter, Store

index_option = click.option(
    "--index",
    type=click.Choice(["workbench", "source"]),
    default="workbench",
    show_default=True,
    help="Step numbers are the workbench's step indices, or the message positions in the source log.",
)


@click.group("spans")
def spans_group() -> None:
    """Span labels in and out as JSON lines (episode, start, end, kind, label, note, author)."""


@spans_group.command("import")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@index_option
@db_option
def import_command(store: Store, path: Path, index: str) -> None:
    """Import span labels from a JSONL file in one transaction: a bad line (reported by
    number and field) writes nothing; spans already stored are not added again."""
    from workbench.ingest import IngestError
    from workbench.spans_io import BadLabels, import_spans

    try:
        report = import_spans(store, path, index)  # type: ignore[arg-type]
    except BadLabels as error:
        raise click.ClickException(f"{plain(str(error))}\nno span was imported") from None
    except IngestError as error:
        raise click.ClickException(f"{plain(str(error))}\nno span was imported") from None
    console.print(
        f"imported {report.added} span(s)"
        + (f"; {report.present} already present" if report.present else "")
    )


@spans_group.command("export")
@filter_options
@click.option(
    "--author", help="Only this author's spans (a labeller's name, human or analyzer:NAME)."
)
@index_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output file (default: standard output).",
)
@existing_db_option
def export_command(
    store: Store, where: EpisodeFilter, author: str | None, index: str, out: Path | None
) -> None:
    """Export the spans of the chosen episodes as JSONL, in the format `spans import` reads."""
    from workbench.spans_io import export_spans

    if out is None:
        count = export_spans(store, sys.stdout, where, author=author, index=index)  # type: ignore[arg-type]
    else:
        count = write_out(
            out,
            lambda handle: export_spans(store, handle, where, author=author, index=index),  # type: ignore[arg-type]
        )
    errors.print(f"exported {count} span(s)")
