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
from tui.widgets.record_table import Column, RecordTable
from workbench.envs.registry import task_cells

MARGIN = 50
"""Rows before the end of the loaded rows at which the next page is asked for."""

COLUMNS = [
    Column("outcome", "", width=4),
    Column("score", width=5),
    Column("steps", width=5),
    Column("family"),
    Column("task"),
    Column("agent"),
    Column("episode"),
    Column("message", text=True),
]
"""The identifiers as wide as their longest loaded value, the message taking what is left
(see :func:`~tui.widgets.record_table.column_widths`)."""


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
    family, task = task_cells(episode.task_id, episode.family)
    return [  # Text, not str: DataTable would read a str as markup
        outcome,
        Text(("" if score is None else f"{score:g}").rjust(COLUMNS[1].width)),
        Text(str(episode.n_steps).rjust(COLUMNS[2].width)),
        Text(family),
        Text(task),
        Text(episode.agent),
        Text(episode.id),
        Text(message),
    ]


class EpisodeTable(RecordTable):
    """Episodes as rows; ``enter`` opens the one under the cursor.

    Identifier columns are as wide as the longest loaded value and the message takes the rest
    (:class:`~tui.widgets.record_table.RecordTable`): a page that widens a column lays the
    columns out again with the loaded rows.
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
        super().__init__(COLUMNS, id=id, zebra_stripes=True)
        self.ids: list[str] = []
        self._id_set: set[str] = set()
        self.total = 0
        self._asked: int | None = None

    # -- attributes down --------------------------------------------------------------------

    def show(self, episodes: list[ListedEpisode], total: int, keep: str | None = None) -> None:
        """Replace the rows; keep the cursor on episode ``keep`` if it is still listed.

        When the rows shown are still the first ones listed (new episodes landed after them),
        only the new rows are added, so a live update of a long table stays cheap.
        """
        if [e.id for e in episodes[: len(self.ids)]] == self.ids:
            self.total = total
            self._asked = None
            self.append_rows(map(episode_cells, self._new(episodes[len(self.ids) :])))
            if keep is not None and keep != self.current:  # the first rows: the cursor goes there
                self.select_episode(keep)
            self._ask_if_near_end()
            return
        row = self.cursor_row
        scroll = self.scroll_y
        self.ids = []
        self._id_set.clear()
        self.total = total
        self._asked = None
        self.set_rows(map(episode_cells, self._new(episodes)))
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
        self.append_rows(map(episode_cells, self._new(episodes)))
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

    def _new(self, episodes: list[ListedEpisode]) -> list[ListedEpisode]:
        """The episodes not listed yet, now listed (live data can shift a page boundary by a
        row: never list an episode twice)."""
        new = [e for e in episodes if e.id not in self._id_set]
        self.ids += [e.id for e in new]
        self._id_set.update(e.id for e in new)
        return new

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
