"""The shared column layout: identifiers whole, free text sharing what is left; and the table
that lays itself out again when its rows or its width change."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tests.tui.conftest import shown
from tui.widgets.record_table import (
    MAX_ID,
    MIN_TEXT,
    SCROLLBAR,
    Column,
    RecordTable,
    Whole,
    column_widths,
)

RUNS = [Column("score", width=5), Column("episode"), Column("message", text=True)]


def test_identifiers_are_as_wide_as_their_longest_value():
    widths = column_widths(RUNS, {"episode": 32, "message": 300}, width=120)
    assert widths["score"] == 5  # fixed
    assert widths["episode"] == 32
    # the message takes exactly what is left: 3 columns of padding 1 each side, the scrollbar
    assert widths["message"] == 120 - SCROLLBAR - 6 - 5 - 32
    assert list(widths) == ["score", "episode", "message"]
    assert column_widths(RUNS, {"episode": 3}, 120)["episode"] == len("episode")  # its heading
    assert column_widths(RUNS, {"episode": 200}, 120)["episode"] == MAX_ID
    assert column_widths([Column("passed", "")], {}, 120) == {"passed": 1}  # never empty


def test_free_text_keeps_its_minimum_and_the_table_scrolls():
    widths = column_widths(RUNS, {"episode": 60, "message": 300}, width=80)
    assert widths["episode"] == 60 and widths["message"] == MIN_TEXT
    short = column_widths(RUNS, {"episode": 60, "message": 12}, width=80)
    assert short["message"] == len("message") + 5  # its longest value, under the minimum


def test_free_text_columns_share_what_is_left():
    columns = [Column("family"), Column("trigger", text=True), Column("reason", text=True)]
    left = 100 - SCROLLBAR - 6 - len("family")
    # room for both: widened evenly
    roomy = column_widths(columns, {"trigger": 23, "reason": 30}, width=100)
    assert (roomy["trigger"], roomy["reason"]) == (left // 2, left - left // 2)
    # room for one: the short trigger whole, the reason the rest
    tight = column_widths(columns, {"trigger": 23, "reason": 300}, width=100)
    assert (tight["trigger"], tight["reason"]) == (23, left - 23)
    # room for neither: even shares
    both = column_widths(columns, {"trigger": 300, "reason": 300}, width=100)
    assert (both["trigger"], both["reason"]) == (left // 2, left - left // 2)


def test_a_free_text_column_keeps_its_heading_and_its_whole_cells():
    columns = [Column("step", width=5), Column("failed", "failed · " + "x" * 40, text=True)]
    assert column_widths(columns, {"failed": 300}, width=40)["failed"] == 49
    outcome = [Column("id"), Column("outcome", text=True)]
    widths = column_widths(outcome, {"outcome": 300}, width=40, whole={"outcome": 36})
    assert widths["outcome"] == 36


class Tables(App[None]):
    """A record table beside a wrapped one, counting the rows they announce."""

    CSS = "RecordTable { height: 1fr; }"

    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[int] = []

    def compose(self) -> ComposeResult:
        yield RecordTable(RUNS, id="cut", zebra_stripes=True)
        yield RecordTable([Column("name"), Column("note", text=True)], id="wrapped", wrap=True)

    @on(DataTable.RowHighlighted, "#cut")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.highlighted.append(event.cursor_row)


LONG_ID = "demo-train:test-conductivity:123"
NOTE = "a note long enough to wrap " * 5


async def test_rows_are_cut_to_their_columns_and_laid_out_again():
    app = Tables()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one("#cut", RecordTable)
        rows = [
            [Text("1"), Text("ep-1"), Text("stopped [b]early[/b]\nthen again")],
            [Text("2"), Text("ep-2"), Text("fine")],
        ]
        table.set_rows(rows, ["ep-1", "ep-2"])
        await pilot.pause()
        assert table.widths["episode"] == len("episode")
        assert shown(table)[1].split() == ["1", "ep-1", "stopped", "[b]early[/b]", "then", "again"]
        table.move_cursor(row=1)
        await pilot.pause()
        app.highlighted.clear()

        # a longer id widens its column: the message gives the difference up
        message = table.widths["message"]
        table.append_rows([[Text("3"), Text(LONG_ID), Text("x" * 200)]], [LONG_ID])
        await pilot.pause()
        assert table.widths["episode"] == len(LONG_ID)
        assert table.widths["message"] == message - (len(LONG_ID) - len("episode"))
        line = shown(table)[3]
        assert line.split()[:2] == ["3", LONG_ID] and line.endswith("x…")
        assert table.cursor_row == 1 and table.get_row_at(1)[1].plain == "ep-2"

        # a narrower terminal: the message shrinks to its minimum, the id stays whole
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        assert table.widths["message"] == MIN_TEXT and table.widths["episode"] == len(LONG_ID)
        assert table.cursor_row == 1
        assert app.highlighted == []  # the same row under the cursor: nothing to announce

        wrapped = app.query_one("#wrapped", RecordTable)
        wrapped.set_rows([[Whole(LONG_ID), Text(NOTE.strip())]])
        await pilot.pause()
        lines = shown(wrapped)
        assert lines[1].startswith(f" {LONG_ID}  a note")
        note = " ".join(line[len(LONG_ID) + 3 :].strip() for line in lines[1:])
        assert " ".join(note.split()) == " ".join(NOTE.split())  # wrapped, whole
