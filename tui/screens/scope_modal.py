"""The scope dialog: which failures ``r`` on the Clusters screen analyses — the default scope,
one batch, one split, or all of them with the held-out ones."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from tui.escapes import shown
from tui.screens.help import Help
from tui.widgets.key_footer import KeyFooter
from workbench.analyze.scopes import AnalysisScope

HELP = Help(
    "Analysis scope",
    "Pick the failures r analyses. The default is what `workbench analyze` reads without options: every failure but candidates' replays and held-out (test) episodes. A batch or a split is analysed as named, held-out or not; all adds the held-out episodes.",
    [
        ("↑ ↓", "move"),
        ("enter", "analyse this scope with r"),
        ("escape", "keep the scope as it was"),
    ],
)


def scope_option(scope: AnalysisScope) -> Option:
    """One scope's line: its name, the failures it covers, and what it is."""
    failures = "" if scope.failures is None else f" · {scope.failures} failures"
    prompt = Text.assemble(
        (shown(scope.label), "bold"), failures, "  ", (shown(scope.description), "dim")
    )
    return Option(prompt, id=scope.label)


class ScopeModal(ModalScreen[AnalysisScope | None]):
    """Pick one of ``scopes``; dismisses with it, or ``None`` if cancelled.

    Args:
        scopes: the scopes to offer (:func:`workbench.analyze.scopes.analysis_scopes`).
        current: the scope in use, highlighted first.
    """

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, scopes: list[AnalysisScope], current: AnalysisScope) -> None:
        super().__init__()
        self.scopes = scopes
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="scope-dialog"):
            yield Label("Failures to analyse with r", id="scope-title")
            yield OptionList(*map(scope_option, self.scopes), id="scope-options")
        yield KeyFooter()  # its own keys, over the footer of the screen beneath

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        labels = [scope.label for scope in self.scopes]
        if self.current.label in labels:
            options.highlighted = labels.index(self.current.label)
        options.focus()

    @on(OptionList.OptionSelected, "#scope-options")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.scopes[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
