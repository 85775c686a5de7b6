"""Full-text search hits, one per line; choosing one opens its trajectory at the hit step.

Like the tables' identifiers (:mod:`tui.widgets.record_table`), each hit's episode, step and
kind are as wide as the widest among the hits; the snippet takes the rest of the line and is
cut with an ellipsis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.markup import escape
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from store import SearchHit
from tui.escapes import shown
from tui.widgets.record_table import id_width

GAP = "  "
"""Between a hit's columns, as between a table's."""


def hit_ids(hit: SearchHit) -> tuple[str, str, str]:
    """What identifies a hit: its episode, step and kind."""
    return shown(hit.episode_id), f"step {hit.index}", hit.kind


def hit_widths(hits: Sequence[SearchHit]) -> list[int]:
    """The widths of the episode, step and kind columns: each the widest among ``hits``."""
    ids = [hit_ids(hit) for hit in hits] or [("", "", "")]
    return [id_width(max(cell_len(row[i]) for row in ids)) for i in range(3)]


def hit_prompt(hit: SearchHit, widths: Sequence[int] = (24, 10, 11)) -> Text:
    """One hit as a line: episode, step, kind (each padded to its ``widths``), and the snippet
    with the match highlighted."""
    line = Text()
    for value, width, style in zip(hit_ids(hit), widths, ("bold", "cyan", "dim"), strict=True):
        cell = Text(value, style=style)
        cell.truncate(width, overflow="ellipsis", pad=True)
        line.append_text(cell)
        line.append(GAP)
    snippet = shown(" ".join(hit.snippet.split()))
    position = 0
    while (start := snippet.find("[", position)) >= 0 and (end := snippet.find("]", start)) >= 0:
        line.append(snippet[position:start])
        line.append(snippet[start + 1 : end], style="bold reverse")
        position = end + 1
    line.append(snippet[position:])
    return line


class SearchHits(OptionList):
    """The hits of one search; ``enter`` posts :class:`SearchHits.Chosen`."""

    DEFAULT_CSS = """
    SearchHits {
        display: none;
        height: 40%;
        border-top: solid $accent;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &.-shown { display: block; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close", show=False)]

    class Chosen(Message):
        """A hit was chosen."""

        def __init__(self, hit: SearchHit) -> None:
            self.hit = hit
            super().__init__()

    class Closed(Message):
        """The list was dismissed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hits: list[SearchHit] = []

    def show_hits(self, query: str, hits: list[SearchHit], newest: int | None = None) -> None:
        """List ``hits`` (of ``query``) and take the focus; ``newest``: they are the best of
        that many newest matches only (said in the title)."""
        self.hits = hits
        self.clear_options()
        if hits:
            widths = hit_widths(hits)
            self.add_options(Option(hit_prompt(hit, widths)) for hit in hits)
        else:
            self.add_option(Option(Text(f"no step matches {query!r}", style="dim"), disabled=True))
        ranked = f", best of the newest {newest:,} matches by rank" if newest else ""
        self.border_title = escape(f"{len(hits)} hit(s) for {query!r}{ranked}")
        self.add_class("-shown")
        self.focus()
        if hits:
            self.highlighted = 0

    def action_close(self) -> None:
        self.remove_class("-shown")
        self.post_message(self.Closed())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.hits):
            self.post_message(self.Chosen(self.hits[event.option_index]))
