"""Terminal escapes in imported data are shown, never sent: every screen that shows stored
text draws its control characters as ``\\xNN``, as the CLI prints them.

The app runs on a driver that keeps what Textual writes to the terminal (Textual writes to a
driver only when it is not headless); the test reads that stream, not only the screen.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

import pytest
from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.drivers.headless_driver import HeadlessDriver
from textual.widgets import Select

from store import Store
from tests.tui.conftest import SIZE, settle
from tui.app import make_app
from tui.escapes import ControlFilter, escaped
from workbench.escapes import UNSAFE as CONTROL
from workbench.escapes import shown as plain
from workbench.ingest import import_paths
from workbench.manual.formulate import formulate
from workbench.manual.heuristic import HeuristicFormulator
from workbench.manual.operations import OPERATIONS, apply

HOSTILE = (
    "\x1b]52;c;SEVMTE8=\x07"  # OSC 52: write the clipboard
    "\x1b[2J"  # clear the screen
    "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"  # OSC 8: a hyperlink
    "\x1b]0;pwned\x07"  # OSC 0: the window title
    "\x9b31m"  # C1 CSI: red
)
SHOWN = "\\x1b]52;c;SEVMTE8="
"""The start of the hostile text as the screen shows it."""

TEXTUAL = re.compile(r"\x1b\[[\d;]*m|\x1b\[\d+;\d+H|\x1b\[\?\d+[hl]|\x1b\]22;[\w-]+\x07")
"""What Textual itself writes: colours, cursor moves, synchronized output, the pointer shape."""


class Terminal(HeadlessDriver):
    """A headless driver that keeps what the app writes, as a terminal would receive it."""

    written: ClassVar[list[str]]

    @property
    def is_headless(self) -> bool:
        return False  # so the app draws to it

    def write(self, data: str) -> None:
        self.written.append(data)


def text_of(written: list[str]) -> str:
    """What was written, without Textual's own sequences: the text the terminal shows, and
    any control character the data smuggled through."""
    return TEXTUAL.sub("", "".join(written))


def episode_line(episode_id: str, success: bool, turns: list[tuple[str, str]]) -> dict:
    """One episode of the workbench's own JSONL, every text of it hostile."""
    task = {
        "id": "shop:buy" + HOSTILE,
        "environment": "shop",
        "family": "buy" + HOSTILE,
        "instruction": "Buy milk " + HOSTILE,
        "split": "train",
    }
    batch = {"id": "b" + HOSTILE, "name": "batch " + HOSTILE, "kind": "import"}
    steps = [{"index": 0, "kind": "observation", "observation": "You are in a shop " + HOSTILE}]
    for i, (action, observation) in enumerate(turns, start=1):
        steps.append(
            {
                "index": i,
                "kind": "tool_call",
                "role": "assistant",
                "thought": "think " + HOSTILE,
                "action": action,
                "observation": observation,
                "tool_name": "tool" + HOSTILE,
                "tool_call_id": f"c{i}" + HOSTILE,
                "raw": {"said": HOSTILE},
            }
        )
    spans = [] if success else [{"start": 1, "end": 2, "kind": "causal", "label": HOSTILE}]
    return {
        "format": "trajectory-workbench",
        "version": 1,
        "task": task,
        "batch": batch,
        "episode": {
            "id": episode_id,
            "task_id": task["id"],
            "batch_id": batch["id"],
            "agent": "agent" + HOSTILE,
            "outcome": {"success": success, "message": "outcome " + HOSTILE},
        },
        "steps": steps,
        "spans": spans,
    }


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    """A failed and a successful run imported from a log whose every text carries escapes,
    and a manual whose rule cites an episode that is not there."""
    log = tmp_path / "hostile.jsonl"
    go = "go to aisle " + HOSTILE
    lines = [
        episode_line(
            "fail" + HOSTILE,
            False,
            [(go, "The aisle is closed " + HOSTILE), ("buy milk", "no milk here " + HOSTILE)],
        ),
        episode_line(
            "win" + HOSTILE,
            True,
            [("open aisle", "open"), (go, "in the aisle"), ("buy milk", "milk " + HOSTILE)],
        ),
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    db = tmp_path / "hostile.db"
    with Store(db) as store:
        import_paths(store, [log])
        rule = {
            "op": "write_rule",
            "type": "Corrected Error",
            "content": "Open the aisle first " + HOSTILE,
            "validation_logs": ["ghost" + HOSTILE],
        }
        apply(store, OPERATIONS.validate_python([rule]), "builder:heuristic", "fail")
        formulate(store, HeuristicFormulator())
    return db


async def test_escapes_in_imported_data_are_shown_never_sent(hostile_db):
    written: list[str] = []
    app = make_app(hostile_db, poll_interval=0)
    app.driver_class = type("Recorder", (Terminal,), {"written": written})
    async with app.run_test(size=SIZE, headless=False, notifications=True) as pilot:
        sent = 0

        async def visit(*keys: str) -> str:
            """Press ``keys`` one by one; what the terminal was sent since the last visit."""
            nonlocal sent
            await settle(pilot)
            for key in keys:
                await pilot.press(key)
                await settle(pilot)
            drawn, sent = text_of(written[sent:]), len(written)
            return drawn

        assert SHOWN in await visit()  # Runs: ids, family, agent, outcome message
        app.screen.query_one("#filter-family", Select).focus()
        assert SHOWN in await visit("enter")  # the family drop-down
        await visit("escape")
        app.screen.query_one("#episodes").focus()
        assert SHOWN in await visit("slash", *"milk", "enter")  # search hits
        await visit("escape")
        assert SHOWN in await visit("enter")  # Trajectory: header, step list, detail
        for keys in (("l",), ("e",), ("r",), ("l",)):  # texts, span label, raw record, result
            assert SHOWN in await visit(*keys)
        assert SHOWN in await visit("E")  # the span dialog
        await visit("escape")
        assert SHOWN in await visit("c")  # Compare
        await visit("q", "q")
        assert SHOWN in await visit("C", "r")  # Clusters, analysed
        assert SHOWN in await visit("k", "r")  # Compile, compiled
        await visit("q", "q")
        assert SHOWN in await visit("M")  # Manual
        assert SHOWN in await visit("enter", "enter")  # the cited episode is not there: a toast
        await visit("q")
        assert SHOWN in await visit("R")  # Repository
    leaked = CONTROL.findall(text_of(written))
    assert not leaked, f"{len(leaked)} control characters sent: {sorted(set(leaked))}"


def test_a_text_is_escaped_in_its_own_styles():
    text = Text("a\x1bb", style="bold")
    text.stylize("red", 1, 2)
    shown = escaped(text)
    assert shown.plain == "a\\x1bb" and shown.style == "bold"
    assert [(s.start, s.end, s.style) for s in shown.spans] == [(1, 5, "red")]
    assert escaped(plain_text := Text("plain")) is plain_text


def test_the_filter_escapes_what_a_widget_left_and_keeps_the_width():
    line = [Segment("ab\x1b]0;t\x07c  "), Segment("|")]
    width = Segment.get_line_length(line)
    filtered = ControlFilter().apply(line, Color(0, 0, 0))
    assert "".join(s.text for s in filtered) == plain("ab\x1b]0;t\x07c  |")[:width]
    assert Segment.get_line_length(filtered) == width
