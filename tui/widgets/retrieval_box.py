"""A retrieval box: a query, an optional observation and K typed in, the top-K synthesized
examples listed with the score each retriever gave them."""

from __future__ import annotations

from typing import ClassVar

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Label

from tui.widgets.record_table import Column, RecordTable
from workbench.synth.retrieval import Hit

DEFAULT_K = 5
MAX_K = 50

HIT_COLUMNS = [
    Column("rank"),
    Column("example"),
    Column("kind"),
    Column("world"),
    Column("bm25 obs"),
    Column("bm25 instr"),
    Column("dense"),
    Column("instruction", text=True),
]
SCORE_KEYS = ("bm25_observation", "bm25_instruction", "dense")
"""The retrievers' scores, in the columns' order."""


def hit_cells(rank: int, hit: Hit) -> list[Text]:
    """One hit's row: its rank, example, and every retriever's score (``–``: not computed)."""
    example = hit.example
    scores = [
        Text(f"{hit.scores[key]:.2f}", justify="right")
        if key in hit.scores
        else Text("–", style="dim", justify="right")
        for key in SCORE_KEYS
    ]
    if hit.exact:  # the observation is word for word one of the example's
        scores[0].stylize("bold green")
    return [
        Text(str(rank), justify="right"),
        Text(str(example.id), justify="right"),
        Text(example.kind),
        Text(example.env),
        *scores,
        Text(" ".join(example.instruction.split())),
    ]


def parse_k(text: str) -> int:
    """K as typed (:data:`DEFAULT_K` when empty or not a number; at most :data:`MAX_K`)."""
    try:
        k = int(text)
    except ValueError:
        return DEFAULT_K
    return min(max(k, 1), MAX_K)


class RetrievalBox(Vertical):
    """Query, observation and K fields over a table of hits (shown with the ``-shown`` class).

    ``enter`` in a field posts :class:`Submitted`; highlighting a hit posts
    :class:`Highlighted`, ``enter`` on it :class:`Chosen`; ``escape`` hides the box and posts
    :class:`Closed`.
    """

    DEFAULT_CSS = """
    RetrievalBox {
        display: none;
        height: 45%;
        min-height: 8;
        border: round $accent 60%;
        border-title-color: $text;
        border-subtitle-color: $text-muted;
        &.-shown { display: block; }
        &:focus-within { border: round $accent; }
        & > #retrieval-fields { height: 1; background: $panel; padding: 0 1; }
        & Label { width: auto; padding: 0 1 0 0; color: $text-accent; text-style: bold; }
        & Input { height: 1; border: none; padding: 0; background: $panel; }
        & Input:focus { border: none; }
        & #query, & #observation { width: 1fr; margin-right: 2; }
        & #k { width: 5; }
        & > RecordTable { height: 1fr; border: none; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close", show=False)]

    class Submitted(Message):
        """A search was asked for (``observation`` ``None``: none typed)."""

        def __init__(self, query: str, observation: str | None, k: int) -> None:
            self.query = query
            self.observation = observation
            self.k = k
            super().__init__()

    class Highlighted(Message):
        """The cursor moved onto a hit."""

        def __init__(self, hit: Hit) -> None:
            self.hit = hit
            super().__init__()

    class Chosen(Message):
        """A hit was chosen with ``enter``."""

        def __init__(self, hit: Hit) -> None:
            self.hit = hit
            super().__init__()

    class Closed(Message):
        """The box was dismissed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hits: list[Hit] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="retrieval-fields"):
            yield Label("query")
            yield Input(placeholder="what the agent is asked to do", id="query")
            yield Label("observation")
            yield Input(placeholder="optional: what it sees now", id="observation")
            yield Label("k")
            yield Input(str(DEFAULT_K), type="integer", id="k")
        yield RecordTable(HIT_COLUMNS, id="hit-table")

    def on_mount(self) -> None:
        self.border_title = "retrieval"

    @property
    def table(self) -> RecordTable:
        return self.query_one("#hit-table", RecordTable)

    def field(self, name: str) -> Input:
        """The ``query``, ``observation`` or ``k`` field."""
        return self.query_one(f"#{name}", Input)

    def open(self) -> None:
        """Show the box and focus the query, the previous one selected."""
        self.add_class("-shown")
        query = self.field("query")
        query.focus()
        query.select_all()

    def action_close(self) -> None:
        self.remove_class("-shown")
        self.post_message(self.Closed())

    def show_hits(self, hits: list[Hit], searched: int, note: str = "") -> None:
        """List ``hits`` (found among ``searched`` kept examples) and focus them; ``note``
        says what a retriever lacks (e.g. the dense extra)."""
        self.hits = hits
        self.table.set_rows(
            (hit_cells(rank, hit) for rank, hit in enumerate(hits, start=1)),
            [str(hit.example.id) for hit in hits],
        )
        self.border_title = f"retrieval · {len(hits)} of {searched} kept examples"
        self.border_subtitle = escape(note)
        if hits:
            self.table.move_cursor(row=0, animate=False)
            self.table.focus()
            self.post_message(self.Highlighted(hits[0]))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        query = self.field("query").value.strip()
        observation = self.field("observation").value.strip()
        if not query and not observation:
            self.notify("type a query (or an observation) first", severity="warning")
            return
        k = parse_k(self.field("k").value)
        self.field("k").value = str(k)
        self.post_message(self.Submitted(query or observation, observation or None, k))

    @on(DataTable.RowHighlighted, "#hit-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.hits):
            self.post_message(self.Highlighted(self.hits[event.cursor_row]))

    @on(DataTable.RowSelected, "#hit-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.hits):
            self.post_message(self.Chosen(self.hits[event.cursor_row]))
