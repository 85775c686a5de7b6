"""Listings of records on the command line: every listing command prints through
:func:`print_records`.

On a terminal wide enough, a borderless table: identifiers, names and numbers are shown whole,
and only free text (messages, triggers, reasons) is truncated to fit. Otherwise — output to a
pipe or a file, or a terminal too narrow for the identifiers plus :data:`TEXT_SHARE` columns
of each free text — one record per block: ``key: value`` lines (none for an empty free text),
a blank line after each record, nothing cut. The console decides which (rich reads ``COLUMNS``
for the width, and ``TTY_COMPATIBLE=1`` makes a pipe count as a terminal).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

Cell = str | Text
"""A cell: plain text (printed as it is, never read as markup) or styled rich text."""

TEXT_SHARE = 20
"""Fewest columns a free-text column gets in a table (fewer if its longest value is
shorter); a terminal narrower than that switches to blocks."""

GAP = 2
"""Spaces between table columns."""


@dataclass(frozen=True)
class Column:
    """One column of a listing."""

    name: str
    text: bool = False
    """Free text (a message, trigger, reason): truncated with … to fit a table. Any other
    column (an id, name, status or number) is never cut."""
    justify: Literal["left", "right"] = "left"


def print_records(
    console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]], title: str = ""
) -> None:
    """Print ``rows`` as a table if ``console`` is a terminal with room for it, else as
    blocks (see the module docstring)."""
    cells = [[cell if isinstance(cell, Text) else Text(cell) for cell in row] for row in rows]
    widths = table_widths(console.width, columns, cells) if console.is_terminal else None
    if widths is None:
        _print_blocks(console, columns, cells, title)
    else:
        _print_table(console, columns, cells, widths, title)


def table_widths(
    width: int, columns: Sequence[Column], rows: Sequence[Sequence[Text]]
) -> list[int] | None:
    """Column widths of a table ``width`` cells wide: every column but the free-text ones at
    its widest value, the rest shared out among free text (none gets more than its widest);
    ``None`` when that leaves a free-text column fewer than :data:`TEXT_SHARE` cells."""
    natural = [
        max([len(column.name), *(_cell_width(row[i]) for row in rows)])
        for i, column in enumerate(columns)
    ]
    texts = sorted((i for i, c in enumerate(columns) if c.text), key=lambda i: natural[i])
    left = width - GAP * (len(columns) - 1)
    left -= sum(w for i, w in enumerate(natural) if not columns[i].text)
    if left < sum(min(natural[i], TEXT_SHARE) for i in texts):
        return None
    widths = list(natural)
    for k, i in enumerate(texts):  # the narrowest first, so what they leave goes to the rest
        widths[i] = min(natural[i], left // (len(texts) - k))
        left -= widths[i]
    return widths


def _cell_width(cell: Text) -> int:
    return max((line.cell_len for line in cell.split("\n")), default=0)


def _print_table(
    console: Console,
    columns: Sequence[Column],
    rows: Sequence[Sequence[Text]],
    widths: Sequence[int],
    title: str,
) -> None:
    if title:
        console.print(Text(title, "italic"), soft_wrap=True)
    table = Table(box=None, header_style="bold", pad_edge=False, padding=(0, GAP, 0, 0))
    for column, width in zip(columns, widths, strict=True):
        table.add_column(
            column.name, width=width, no_wrap=True, overflow="ellipsis", justify=column.justify
        )
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _print_blocks(
    console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Text]], title: str
) -> None:
    if title:
        console.print(Text(title, "italic"), soft_wrap=True)
        console.print()
    keys = max((len(c.name) for c in columns), default=0) + 2
    for row in rows:
        for column, cell in zip(columns, row, strict=True):
            if column.text and not cell.plain:
                continue  # free text with nothing to say (a staged spec's reason): no line
            lines = cell.split("\n") if cell.plain else [Text()]
            key = f"{column.name}:".ljust(keys) if cell.plain else f"{column.name}:"
            console.print(Text.assemble((key, "bold"), lines[0]), soft_wrap=True)
            for line in lines[1:]:
                console.print(Text.assemble(" " * keys, line), soft_wrap=True)
        console.print()
