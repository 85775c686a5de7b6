"""A bar of drop-downs that make an :class:`~store.EpisodeFilter`."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Label, Select

from store import EpisodeFilter
from tui.data import OUTCOMES, FilterChoices
from tui.escapes import shown

FIELDS = ("outcome", "family", "agent", "batch", "split")


class FilterBar(Horizontal):
    """One compact drop-down per filter field; any change posts :class:`FilterBar.Changed`."""

    DEFAULT_CSS = """
    FilterBar {
        height: 1;
        background: $panel;
        padding: 0 1;
        & > Label { width: auto; padding: 0 1 0 0; color: $text-muted; }
        & > Select { width: 1fr; max-width: 28; margin: 0 2 0 0; }
        & > #filter-outcome { max-width: 14; }
        & > #filter-split { max-width: 12; }
    }
    """

    class Changed(Message):
        """The filter changed."""

        def __init__(self, where: EpisodeFilter) -> None:
            self.where = where
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._choices = FilterChoices()

    def compose(self) -> ComposeResult:
        for name in FIELDS:
            yield Label(f"{name}:")
            values = list(OUTCOMES) if name == "outcome" else getattr(self._choices, name)
            yield Select(
                [(Text(shown(value)), value) for value in values],
                prompt="all",
                compact=True,
                id=f"filter-{name}",
            )

    @property
    def where(self) -> EpisodeFilter:
        """The filter the drop-downs describe."""
        values = {}
        for name in FIELDS:
            value = self.query_one(f"#filter-{name}", Select).value
            values[name] = None if value is Select.NULL else value
        return EpisodeFilter(**values)

    def set_choices(self, choices: FilterChoices) -> None:
        """Offer these values (keeping each current selection that is still offered)."""
        before = self.where
        for name in ("family", "agent", "batch", "split"):
            values = getattr(choices, name)
            if values == getattr(self._choices, name):
                continue
            select = self.query_one(f"#filter-{name}", Select)
            current = select.value
            with self.prevent(Select.Changed):
                select.set_options([(Text(shown(value)), value) for value in values])
                if current in values:
                    select.value = current
        self._choices = choices
        if self.where != before:
            self.post_message(self.Changed(self.where))

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(self.where))
