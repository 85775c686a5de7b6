"""The episodes of the current filter, failures first, fed a page at a time.

The table never holds more rows than the user has scrolled to: when the cursor (or the view)
comes within :data:`MARGIN` rows of the last loaded row it posts
:class:`EpisodeTable.Wanted`, and its parent appends the next page with
:meth:`EpisodeTable.add_page`.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from store import ListedEpisode

MARGIN = 50
"""Rows before the end of the loaded rows at which the next page is asked for."""

COLUMNS: list[tuple[str, str, int]] = [
    ("outcome", "", 4),
    ("score", "score", 5),
    ("steps", "steps", 5),
    ("family", "family", 0),
    ("task", "task", 0),
    ("agent", "agent", 0),
    ("episode", "episode", 0),
    ("message", "message", 0),
]
"""(key, heading, width); width 0: an identifier as wide as its longest value, or the message
taking whatever width is left (see :func:`column_widths`)."""

MIN_MESSAGE = 20
"""The narrowest the message gets: past that the table scrolls sideways."""
MAX_ID = 64
"""The widest an identifier column gets (a longer id is cut with an ellipsis)."""
SCROLLBAR = 2
"""Columns kept free for the vertical scrollbar."""


def column_widths(longest: dict[str, int], width: int, padding: int = 1) -> dict[str, int]:
    """Every column's width in a table ``width`` cells wide. Identifiers come first: each is
    as wide as its longest value (``longest``, by column key; at least its heading, at most
    :data:`MAX_ID`); the free-text message gets what is left, at least :data:`MIN_MESSAGE`.

    Args:
        longest: the length of the longest value of each identifier column.
        width: the table's width in cells.
        padding: the table's cell padding (each side of every column).
    """
    widths = {
        key: fixed or min(MAX_ID, max(len(label), longest.get(key, 0)))
        for key, label, fixed in COLUMNS[:-1]
    }
    used = sum(w + 2 * padding for w in widths.values()) + 2 * padding + SCROLLBAR
    widths["message"] = max(MIN_MESSAGE, width - used)
    return widths


def id_values(episode: ListedEpisode) -> dict[str, str]:
    """The episode's identifiers by column key."""
    return {
        "family": episode.family,
        "task": episode.task_id.removeprefix("scienceworld:"),
        "agent": episode.agent,
        "episode": episode.id,
    }


def _cell(text: str) -> Text:
    """A cell cut with an ellipsis at its column's width (Text, not str: DataTable would read
    a str as markup)."""
    return Text(text, no_wrap=True, overflow="ellipsis")


def outcome_badge(episode: ListedEpisode) -> Text:
    """A coloured ``FAIL`` / ``PASS`` / ``?`` badge for an episode's outcome."""
    success = episode.outcome.success
    if success is None:
        return Text.assemble(("  ?   ", "bold reverse"))
    if success:
        return Text.assemble((" PASS ", "bold white on dark_green"))
    return Text.assemble((" FAIL ", "bold white on red"))


def episode_cells(episode: ListedEpisode) -> list[Text]:
    """The cells of one episode's row, whole: the column widths cut them."""
    success = episode.outcome.success
    outcome = (
        Text("?", style="dim")
        if success is None
        else Text("pass", style="bold green")
        if success
        else Text("FAIL", style="bold red")
    )
    score = episode.outcome.score
    message = episode.outcome.message.splitlines()[0] if episode.outcome.message else ""
    return [
        outcome,
        Text(("" if score is None else f"{score:g}").rjust(COLUMNS[1][2])),
        Text(str(episode.n_steps).rjust(COLUMNS[2][2])),
        *map(_cell, id_values(episode).values()),
        _cell(message),
    ]


class EpisodeTable(DataTable[Text]):
    """Episodes as rows (keyed by episode id); ``enter`` opens the one under the cursor.

    Identifier columns are as wide as the longest loaded value and the message takes the rest
    (:func:`column_widths`); when a page or a resize changes the widths, the columns are laid
    out again with the loaded rows.
    """

    DEFAULT_CSS = """
    EpisodeTable {
        height: 1fr;
        background: $surface;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g,home", "scroll_top", "Top", show=False),
        Binding("G,end", "scroll_bottom", "Bottom", show=False),
    ]

    class Wanted(Message):
        """The rows from ``offset`` on are needed (the cursor is near the last loaded row)."""

        def __init__(self, offset: int) -> None:
            self.offset = offset
            super().__init__()

    class Opened(Message):
        """The user chose an episode."""

        def __init__(self, episode_id: str, row: int) -> None:
            self.episode_id = episode_id
            self.row = row
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.ids: list[str] = []
        self._id_set: set[str] = set()
        self.total = 0
        self.widths: dict[str, int] = {}
        """The columns' widths, by key."""
        self._longest: dict[str, int] = {}
        self._cells: list[list[Text]] = []
        self._asked: int | None = None

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    # -- attributes down --------------------------------------------------------------------

    def show(self, episodes: list[ListedEpisode], total: int, keep: str | None = None) -> None:
        """Replace the rows; keep the cursor on episode ``keep`` if it is still listed.

        When the rows shown are still the first ones listed (new episodes landed after them),
        only the new rows are added, so a live update of a long table stays cheap.
        """
        if [e.id for e in episodes[: len(self.ids)]] == self.ids:
            self.total = total
            self._asked = None
            self._append(episodes[len(self.ids) :])
            self._ask_if_near_end()
            return
        row = self.cursor_row
        scroll = self.scroll_y
        self.clear()
        self.ids = []
        self._id_set.clear()
        self._cells = []
        self._longest = {}
        self.total = total
        self._asked = None
        self._append(episodes)
        if keep is not None and keep in self.ids:
            row = self.ids.index(keep)
        if self.ids:
            self.move_cursor(row=min(row, len(self.ids) - 1), scroll=False)
            self.scroll_to(y=scroll, animate=False, immediate=True)
            self._ask_if_near_end()

    def add_page(self, offset: int, episodes: list[ListedEpisode], total: int) -> None:
        """Rows read for a :class:`Wanted` request (ignored unless they continue the table)."""
        if offset != len(self.ids):
            return
        self.total = total
        self._asked = None
        self._append(episodes)
        self._ask_if_near_end()

    def select_episode(self, episode_id: str) -> bool:
        """Move the cursor to an episode if it is loaded."""
        if episode_id not in self.ids:
            return False
        self.move_cursor(row=self.ids.index(episode_id))
        return True

    @property
    def current(self) -> str | None:
        """Id of the episode under the cursor."""
        return self.ids[self.cursor_row] if 0 <= self.cursor_row < len(self.ids) else None

    def _append(self, episodes: list[ListedEpisode]) -> None:
        # Live data can shift a page boundary by a row: never list an episode twice.
        new = [e for e in episodes if e.id not in self._id_set]
        for episode in new:
            for key, value in id_values(episode).items():
                self._longest[key] = max(self._longest.get(key, 0), len(value))
        rows = [episode_cells(e) for e in new]
        self._cells += rows
        self.ids += [e.id for e in new]
        self._id_set.update(e.id for e in new)
        if not self._fit():
            self.add_rows(rows)

    def _fit(self) -> bool:
        """Lay the columns out again (with every loaded row) if their widths changed; whether
        they did."""
        widths = column_widths(
            self._longest, self.size.width or self.app.size.width, self.cell_padding
        )
        if widths == self.widths:
            return False
        self.widths = widths
        row, x, y = self.cursor_row, self.scroll_x, self.scroll_y
        self.clear(columns=True)
        for key, label, _ in COLUMNS:
            self.add_column(label, key=key, width=widths[key])
        if self._cells:
            self.add_rows(self._cells)
            self.move_cursor(row=min(row, len(self._cells) - 1), scroll=False)
            self.scroll_to(x, y, animate=False, immediate=True)
        return True

    # -- paging -----------------------------------------------------------------------------

    def _ask_if_near_end(self) -> None:
        loaded = len(self.ids)
        bottom = max(self.cursor_row, round(self.scroll_y) + self.size.height)
        if loaded < self.total and bottom >= loaded - MARGIN and self._asked != loaded:
            self._asked = loaded
            self.post_message(self.Wanted(loaded))

    def watch_cursor_coordinate(self, old, new) -> None:
        super().watch_cursor_coordinate(old, new)
        self._ask_if_near_end()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._ask_if_near_end()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.ids):
            self.post_message(self.Opened(self.ids[event.cursor_row], event.cursor_row))
