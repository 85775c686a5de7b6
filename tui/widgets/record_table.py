"""A table of records that lays its columns out by what they hold, and the layout rule itself.

Identifier columns (ids, names, statuses, numbers) are as wide as their longest value, up to
:data:`MAX_ID`; free-text columns (messages, triggers, reasons) share what is left and are cut
with an ellipsis — or, in a table of wrapped rows, wrap. When the rows or the table's width
change the widths, the columns are laid out again (see :func:`column_widths`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from tui.escapes import escaped

MAX_ID = 64
"""The widest an identifier column gets (a longer id is cut with an ellipsis)."""
MIN_TEXT = 20
"""The narrowest a free-text column gets (unless its longest value is shorter): past that
the table scrolls sideways."""
SCROLLBAR = 2
"""Columns kept free for the vertical scrollbar."""


@dataclass(frozen=True)
class Column:
    """One column of a :class:`RecordTable`."""

    key: str
    """The column's key in the DataTable."""
    label: str | Text | None = None
    """The heading (default: the key); shown as it is, never read as markup."""
    text: bool = False
    """Free text: the column takes a share of the width the others leave, never less than
    its heading, and its cells are cut with … (wrapped in a table of wrapped rows). Any other
    column is as wide as its longest value (at least its heading, at most :data:`MAX_ID`)."""
    width: int = 0
    """A fixed width (a badge, a right-aligned number column); 0: measured."""

    @property
    def heading(self) -> Text:
        label = self.key if self.label is None else self.label
        return escaped(label if isinstance(label, Text) else Text(label))


class Whole(Text):
    """A cell of a free-text column that is an identifier (a staged artifact among reasons,
    a citation among claims): its column is never narrower than it (up to :data:`MAX_ID`)."""


def id_width(longest: int, heading: int = 0) -> int:
    """The width of an identifier column whose longest value is ``longest`` cells wide (at
    least one cell: DataTable renders nothing of an empty column)."""
    return min(MAX_ID, max(1, heading, longest))


def column_widths(
    columns: Sequence[Column],
    longest: Mapping[str, int],
    width: int,
    padding: int = 1,
    whole: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Every column's width, by key, in a table ``width`` cells wide.

    Identifiers come first: each is as wide as its longest value. The free-text columns share
    what is left: when it holds them all, the narrowest are widened first until they are
    even; when it does not, the narrowest get their whole text first and the rest share what
    remains evenly (the ones cut with …), each keeping at least :data:`MIN_TEXT` cells, its
    heading and its :class:`Whole` cells. Past that the table is wider than ``width`` and
    scrolls sideways.

    Args:
        columns: the table's columns.
        longest: the width of the longest value of each column, by key.
        width: the table's width in cells.
        padding: the table's cell padding (each side of every column).
        whole: the width of the longest :class:`Whole` cell of each free-text column.
    """
    whole = whole or {}
    heading = {c.key: c.heading.cell_len for c in columns}
    widths = {
        c.key: c.width or id_width(longest.get(c.key, 0), heading[c.key])
        for c in columns
        if c.width or not c.text
    }
    texts = [c.key for c in columns if c.key not in widths]
    floor = {
        key: max(heading[key], min(MIN_TEXT, longest.get(key, 0)), id_width(whole.get(key, 0)))
        for key in texts
    }
    natural = {key: max(floor[key], longest.get(key, 0)) for key in texts}
    left = width - SCROLLBAR - 2 * padding * len(columns) - sum(widths.values())
    widths.update(_share(left, natural, floor))
    return {c.key: widths[c.key] for c in columns}


def _share(left: int, natural: dict[str, int], floor: dict[str, int]) -> dict[str, int]:
    """``left`` cells shared among free-text columns that need ``natural`` cells each, and
    get at least ``floor`` (see :func:`column_widths`)."""
    shares: dict[str, int] = {}
    if sum(natural.values()) <= left:  # room for all: the narrowest widened
        for i, key in enumerate(sorted(natural, key=lambda k: -natural[k])):
            shares[key] = max(natural[key], left // (len(natural) - i))
            left -= shares[key]
    else:  # the narrowest whole, the rest share what remains
        for i, key in enumerate(sorted(natural, key=lambda k: natural[k])):
            shares[key] = max(floor[key], min(natural[key], left // (len(natural) - i)))
            left -= shares[key]
    return shares


def _measure(cell: Text) -> int:
    """The width of the cell's longest line."""
    return max(map(cell_len, cell.plain.split("\n")))


def _one_line(cell: Text) -> Text:
    """The cell on one line, cut with … at its column's width (line breaks become spaces)."""
    if "\n" in cell.plain or "\t" in cell.plain:
        cell.plain = cell.plain.replace("\n", " ").replace("\t", " ")
    cell.no_wrap = True
    cell.overflow = "ellipsis"
    return cell


Row = tuple[list[Text], str | None]
"""A row's cells and its key."""


class RecordTable(DataTable[Text]):
    """A DataTable whose columns are laid out by :func:`column_widths` from the rows it holds
    and its width, again whenever either changes them (the cursor and the scroll position
    stay; the row under the cursor is not announced again).

    Rows are given whole, as :class:`~rich.text.Text` (a str would be read as markup), through
    :meth:`set_rows` and :meth:`append_rows`; the table cuts them, and shows their control
    characters as ``\\xNN`` (:func:`~tui.escapes.escaped`).

    Args:
        columns: the table's columns.
        wrap: rows as tall as their wrapped text (free text wraps instead of being cut).
        id: the widget's id.
        zebra_stripes: alternate row colours.
    """

    def __init__(
        self,
        columns: Sequence[Column] = (),
        *,
        wrap: bool = False,
        id: str | None = None,
        zebra_stripes: bool = False,
    ) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=zebra_stripes)
        self.record_columns: list[Column] = list(columns)
        """The columns, in order."""
        self.wrap = wrap
        self.widths: dict[str, int] = {}
        """The columns' widths, by key."""
        self._rows: list[Row] = []
        self._longest: dict[str, int] = {}
        self._whole: dict[str, int] = {}

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def set_columns(self, columns: Sequence[Column]) -> None:
        """Replace the columns, and with them the rows (left empty, to be set again)."""
        self.record_columns = list(columns)
        self.widths = {}
        self.set_rows([])

    def set_rows(self, rows: Iterable[Sequence[Text]], keys: Iterable[str] | None = None) -> None:
        """Replace the rows (each a cell per column; ``keys``: the rows' keys)."""
        self.clear()
        self._rows = []
        self._longest = {}
        self._whole = {}
        self.append_rows(rows, keys)

    def append_rows(
        self, rows: Iterable[Sequence[Text]], keys: Iterable[str] | None = None
    ) -> None:
        """Add rows at the bottom, laying the columns out again if they widen one."""
        rows = list(rows)
        new: list[Row] = list(zip(map(self._cells, rows), keys or [None] * len(rows), strict=True))
        for cells, _ in new:
            for column, cell in zip(self.record_columns, cells, strict=False):
                width = _measure(cell)
                self._longest[column.key] = max(self._longest.get(column.key, 0), width)
                if isinstance(cell, Whole):
                    self._whole[column.key] = max(self._whole.get(column.key, 0), width)
        self._rows += new
        if not self._fit():
            self._add(new)

    def _cells(self, row: Sequence[Text]) -> list[Text]:
        cells = [escaped(cell) for cell in row]  # stored text: its control characters shown
        return cells if self.wrap else [_one_line(cell) for cell in cells]

    def _add(self, rows: list[Row]) -> None:
        for cells, key in rows:
            self.add_row(*cells, key=key, height=None if self.wrap else 1)

    def _fit(self) -> bool:
        """Lay the columns out again (with every row) if their widths changed; whether they
        did."""
        width = self.size.width or self.app.size.width
        widths = column_widths(
            self.record_columns, self._longest, width, self.cell_padding, self._whole
        )
        if widths == self.widths:
            return False
        self.widths = widths
        shown = self.row_count > 0  # the same rows again: their cursor is not news
        row, x, y = self.cursor_row, self.scroll_x, self.scroll_y
        with self.prevent(DataTable.RowHighlighted) if shown else nullcontext():
            self.clear(columns=True)
            for column in self.record_columns:
                self.add_column(column.heading, key=column.key, width=widths[column.key])
            self._add(self._rows)
            if self._rows:
                self.move_cursor(row=min(row, len(self._rows) - 1), scroll=False)
                self.scroll_to(x, y, animate=False, immediate=True)
        return True
