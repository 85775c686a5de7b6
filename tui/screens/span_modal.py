"""The span dialog: kind, label (with completion from labels already used) and note."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, RadioButton, RadioSet

from store import Span
from tui.data import SPAN_KINDS
from tui.escapes import shown
from tui.screens.help import Help
from tui.widgets.key_footer import KeyFooter

KIND_HINTS = {
    "causal": "the decision that made the run fail",
    "contrast": "what a successful run did instead",
    "evidence": "what shows the failure",
    "note": "anything worth remembering",
}

HELP = Help(
    "Span",
    "Choose the span's kind (↑ ↓, then enter or space), give it a label — labels already used are suggested as you type and → accepts the suggestion — and an optional note.",
    [
        ("tab  shift+tab", "next / previous field"),
        ("enter in the note", "save"),
        ("ctrl+s", "save"),
        ("escape", "cancel"),
    ],
)


class SpanModal(ModalScreen[Span | None]):
    """Edit a (new or stored) span; dismisses with the edited span, or ``None`` if cancelled."""

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    def __init__(self, span: Span, labels: list[str]) -> None:
        super().__init__()
        self.span = span
        self.labels = labels

    def compose(self) -> ComposeResult:
        span = self.span
        verb = "Edit span" if span.id is not None else "New span"
        with Vertical(id="span-dialog"):
            yield Label(
                Text(f"{verb} · steps {span.start}–{span.end} · {shown(span.episode_id)}"),
                id="span-title",
            )
            yield Label("kind", classes="field-label")
            with RadioSet(id="span-kind"):
                for kind in SPAN_KINDS:
                    yield RadioButton(
                        Text(f"{kind} — {KIND_HINTS[kind]}"),
                        value=kind == span.kind,
                        name=kind,
                        classes=f"kind-{kind}",
                    )
            yield Label("label", classes="field-label")
            yield Input(
                span.label,
                placeholder="short reusable label, e.g. premature-focus",
                suggester=SuggestFromList(self.labels, case_sensitive=False),
                id="span-label",
            )
            yield Label("note", classes="field-label")
            yield Input(span.note, placeholder="optional free text", id="span-note")
            with Horizontal(id="span-buttons"):
                yield Button("Save", variant="primary", id="span-save")
                yield Button("Cancel", id="span-cancel")
        yield KeyFooter()  # its own keys, over the footer of the screen beneath

    def on_mount(self) -> None:
        self.query_one(RadioSet).focus()

    @property
    def kind(self) -> str:
        """The kind chosen in the radio set."""
        pressed = self.query_one(RadioSet).pressed_button
        return pressed.name if pressed is not None and pressed.name else self.span.kind

    def result(self) -> Span:
        """The span as the dialog describes it now."""
        return Span.model_validate(
            {
                **self.span.model_dump(),
                "kind": self.kind,
                "label": self.query_one("#span-label", Input).value.strip(),
                "note": self.query_one("#span-note", Input).value.strip(),
            }
        )

    @on(Input.Submitted, "#span-label")
    def _label_done(self) -> None:
        self.query_one("#span-note", Input).focus()

    @on(Input.Submitted, "#span-note")
    @on(Button.Pressed, "#span-save")
    def action_save(self) -> None:
        self.dismiss(self.result())

    @on(Button.Pressed, "#span-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
