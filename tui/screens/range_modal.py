"""The step-range dialog: a corrected start and end step for a causal span."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from tui.screens.help import Help
from tui.widgets.key_footer import KeyFooter

HELP = Help(
    "Step range",
    "Type the first and last step (inclusive) of the causal span. Steps count from 0.",
    [
        ("tab  shift+tab", "next / previous field"),
        ("enter in end", "save"),
        ("ctrl+s", "save"),
        ("escape", "cancel"),
    ],
)


def parse_range(start: str, end: str, n_steps: int | None = None) -> tuple[int, int] | str:
    """The range typed as ``start`` and ``end``, or what is wrong with it."""
    try:
        first, last = int(start.strip()), int(end.strip())
    except ValueError:
        return "start and end must be whole numbers"
    if first < 0 or last < 0:
        return "steps count from 0"
    if first > last:
        return "the start comes after the end"
    if n_steps is not None and last >= n_steps:
        return f"the episode has steps 0–{n_steps - 1}"
    return first, last


class RangeModal(ModalScreen[tuple[int, int] | None]):
    """Ask for a step range; dismisses with ``(start, end)``, or ``None`` if cancelled.

    Args:
        title: what the range is of.
        start: the first step shown.
        end: the last step shown.
        n_steps: the episode's length (ranges past it are refused), if known.
    """

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    def __init__(self, title: str, start: int, end: int, n_steps: int | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.start = start
        self.end = end
        self.n_steps = n_steps

    def compose(self) -> ComposeResult:
        steps = f" · steps 0–{self.n_steps - 1}" if self.n_steps else ""
        with Vertical(id="range-dialog"):
            yield Label(Text(self.title_text + steps), id="range-title")
            yield Label("start step", classes="field-label")
            yield Input(str(self.start), type="integer", id="range-start")
            yield Label("end step (inclusive)", classes="field-label")
            yield Input(str(self.end), type="integer", id="range-end")
            yield Label("", id="range-error")
            with Horizontal(id="range-buttons"):
                yield Button("Save", variant="primary", id="range-save")
                yield Button("Cancel", id="range-cancel")
        yield KeyFooter()  # its own keys, over the footer of the screen beneath

    def on_mount(self) -> None:
        self.query_one("#range-start", Input).focus()

    @on(Input.Submitted, "#range-start")
    def _start_done(self) -> None:
        self.query_one("#range-end", Input).focus()

    @on(Input.Submitted, "#range-end")
    @on(Button.Pressed, "#range-save")
    def action_save(self) -> None:
        found = parse_range(
            self.query_one("#range-start", Input).value,
            self.query_one("#range-end", Input).value,
            self.n_steps,
        )
        if isinstance(found, str):
            self.query_one("#range-error", Label).update(Text(found, "bold red"))
        else:
            self.dismiss(found)

    @on(Button.Pressed, "#range-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
