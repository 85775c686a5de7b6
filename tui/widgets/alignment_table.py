"""Two runs' actions side by side, one aligned pair per row, the first divergence highlighted."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from tui.widgets.record_table import Column, RecordTable
from workbench.compare import Alignment, Pair

OP_GLYPHS = {"match": "=", "substitute": "≠", "insert": "+", "delete": "−"}
"""How each kind of pair is drawn between the two sides."""

LEGEND = "= same  ≠ different  + only the failed run  − only the successful run"


STEP_WIDTH = 5
"""Wide enough for a step of a 10,000-step episode."""


def columns(failed_label: str, success_label: str) -> list[Column]:
    """Step and action of each side, the op between them; the actions share the width (each
    at least as wide as its heading, which names the episode)."""
    return [
        Column("failed-step", "step", width=STEP_WIDTH),
        Column("failed", failed_label, text=True),
        Column("op", "", width=1),
        Column("success-step", "step", width=STEP_WIDTH),
        Column("success", success_label, text=True),
    ]


def pair_cells(
    pair: Pair,
    failed_actions: dict[int, str],
    success_actions: dict[int, str],
    first: bool,
) -> list[Text]:
    """The five cells of one pair: failed step and action, op, success step and action."""
    side_style = {
        "match": ("", ""),
        "substitute": ("yellow", "yellow"),
        "insert": ("bold red", ""),
        "delete": ("", "bold green"),
    }[pair.op]
    cells = []
    for step, actions, style in (
        (pair.failed, failed_actions, side_style[0]),
        (pair.success, success_actions, side_style[1]),
    ):
        if step is None:
            cells += [Text(""), Text("·", style="dim")]
        else:
            cells += [
                Text(str(step), style="dim", justify="right"),
                Text(actions.get(step, ""), style=style),
            ]
    op = Text(OP_GLYPHS[pair.op], justify="center", style="dim" if pair.op == "match" else "bold")
    row = [cells[0], cells[1], op, cells[2], cells[3]]
    if first:
        for cell in row:
            cell.stylize("bold white on dark_red")
    return row


class AlignmentTable(RecordTable):
    """The alignment of a failed and a successful run; one table, so both sides scroll
    together. ``d`` jumps to the first divergence, ``n``/``N`` to the next/previous one."""

    DEFAULT_CSS = """
    AlignmentTable {
        height: 1fr;
        background: $surface;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("d", "first_divergence", "Divergence"),
        Binding("n", "divergence(1)", "Next diff"),
        Binding("N", "divergence(-1)", "Prev diff", show=False),
        Binding("g", "scroll_top", "Top", show=False),
        Binding("G", "scroll_bottom", "Bottom", show=False),
    ]

    class PairChanged(Message):
        """The cursor moved to another pair."""

        def __init__(self, position: int, pair: Pair) -> None:
            self.position = position
            self.pair = pair
            super().__init__()

    class PairChosen(Message):
        """``enter`` on a pair."""

        def __init__(self, position: int, pair: Pair) -> None:
            self.position = position
            self.pair = pair
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(columns("failed", "success"), id=id)
        self.alignment: Alignment | None = None

    def show(
        self,
        alignment: Alignment,
        failed_actions: dict[int, str],
        success_actions: dict[int, str],
        failed_label: str = "failed",
        success_label: str = "success",
    ) -> None:
        """Show ``alignment``, with the cursor on its first divergence."""
        self.alignment = alignment
        self.set_columns(columns(failed_label, success_label))
        divergence = alignment.first_divergence
        first = divergence.pair if divergence else -1
        self.set_rows(
            pair_cells(pair, failed_actions, success_actions, i == first)
            for i, pair in enumerate(alignment.pairs)
        )
        self.action_first_divergence()

    def action_first_divergence(self) -> None:
        divergence = self.alignment.first_divergence if self.alignment else None
        if divergence is not None:
            self.jump(divergence.pair)

    def action_divergence(self, direction: int) -> None:
        if self.alignment is None:
            return
        starts = self.alignment.divergences()
        here = self.cursor_row
        ahead = [i for i in starts if (i > here if direction > 0 else i < here)]
        if ahead:
            self.jump(ahead[0] if direction > 0 else ahead[-1])

    def jump(self, position: int) -> None:
        """Put the cursor on pair ``position``, a few rows below the top of the view."""
        self.move_cursor(row=position, scroll=False)
        self.scroll_to(y=max(0, position - 3), animate=False, immediate=True)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if self.alignment and 0 <= event.cursor_row < len(self.alignment.pairs):
            position = event.cursor_row
            self.post_message(self.PairChanged(position, self.alignment.pairs[position]))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.alignment and 0 <= event.cursor_row < len(self.alignment.pairs):
            position = event.cursor_row
            self.post_message(self.PairChosen(position, self.alignment.pairs[position]))
