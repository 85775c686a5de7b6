"""A virtual list of an episode's steps: only a window of rows around the view is ever held.

The list knows how many steps the episode has (so the scrollbar is true from the start) and
asks its parent for the rows it lacks with :class:`StepList.NeedSteps`; the parent reads them
in a worker and hands them back with :meth:`StepList.add_steps`. The first rows can come with
the length (:meth:`StepList.set_length`, :func:`first_steps`), so a first frame asks for none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from store import Span, Step, SynthExample
from tui.escapes import shown

PAGE = 50
"""Rows are requested in aligned pages of this many steps."""

KEEP_PAGES = 24
"""Pages kept in memory; the ones farthest from the cursor are dropped first."""

KIND_LABELS = {
    "action": "act",
    "observation": "obs",
    "message": "msg",
    "system": "sys",
    "thought": "thk",
    "tool_call": "call",
    "tool_result": "res",
    "error": "err",
}


def wanted_pages(top: int, height: int, cursor: int, n_steps: int) -> set[int]:
    """The pages a list wants held: its view (``height`` rows from ``top``) and its cursor,
    with half a page more on either side."""
    first = max(0, min(top, cursor) - PAGE // 2)
    last = min(n_steps, max(top + height, cursor + 1) + PAGE // 2)
    return set(range(first // PAGE, max(first, last - 1) // PAGE + 1)) if last > first else set()


def first_steps(cursor: int, height: int, n_steps: int) -> tuple[int, int]:
    """The steps (``start``, ``stop``) a list at most ``height`` rows tall wants first, its
    cursor put on ``cursor`` (which scrolls the cursor's row into view at the bottom): read
    them with the episode and its first frame needs no other."""
    pages = wanted_pages(max(0, cursor - height + 1), height, cursor, n_steps)
    if not pages:
        return 0, 0
    return min(pages) * PAGE, min(n_steps, (max(pages) + 1) * PAGE)


@dataclass(frozen=True)
class StepRow:
    """What one line of the list shows of a step."""

    index: int
    kind: str
    text: str
    reward: float | None
    agent: str = ""
    """The agent that spoke or acted (a log of several agents), shown before the text."""

    @classmethod
    def of(cls, step: Step) -> StepRow:
        text = step.action or step.content or step.observation or step.thought or step.tool_name
        first = next((line for line in text.splitlines() if line.strip()), "")
        return cls(step.index, step.kind, shown(first.strip()), step.reward, shown(step.agent))


class StepList(ScrollView, can_focus=True):
    """The steps of one episode, one per line, with a cursor, a selection and span marks."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "step-list--cursor",
        "step-list--selection",
        "step-list--index",
        "step-list--kind",
        "step-list--reward",
        "step-list--loading",
        "step-list--causal",
        "step-list--contrast",
        "step-list--evidence",
        "step-list--note",
        "step-list--example",
    }

    DEFAULT_CSS = """
    StepList {
        background: $surface;
        scrollbar-gutter: stable;
        & > .step-list--cursor { background: $block-cursor-blurred-background; text-style: bold; }
        &:focus > .step-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
        & > .step-list--selection { background: $warning 35%; }
        & > .step-list--index { color: $text-muted; }
        & > .step-list--kind { color: $text-secondary; }
        & > .step-list--reward { color: $success; }
        & > .step-list--loading { color: $text-disabled; }
        & > .step-list--causal { color: $error; }
        & > .step-list--contrast { color: $success; }
        & > .step-list--evidence { color: $primary-lighten-2; }
        & > .step-list--note { color: $accent; }
        & > .step-list--example { color: $secondary; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False)
    """Index of the highlighted step."""

    selection_anchor: reactive[int | None] = reactive(None, bindings=True)
    """Where the selection being made started (``None``: none is); a change redraws the list
    and refreshes the screen's keys (a screen may offer other keys while selecting)."""

    class Moved(Message):
        """The cursor moved to another step."""

        def __init__(self, index: int) -> None:
            self.index = index
            super().__init__()

    class NeedSteps(Message):
        """Rows ``start`` to ``stop`` (exclusive) are needed to draw the list."""

        def __init__(self, start: int, stop: int) -> None:
            self.start = start
            self.stop = stop
            super().__init__()

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.n_steps = 0
        self._rows: dict[int, StepRow] = {}
        self._pages: set[int] = set()
        self._requested: set[int] = set()
        self.spans: list[Span] = []
        self.examples: list[SynthExample] = []
        """Synthesized examples cut from this episode: their spans are marked like spans."""

    # -- attributes down --------------------------------------------------------------------

    def set_length(self, n_steps: int, cursor: int = 0, steps: Iterable[Step] = ()) -> None:
        """Show an episode of ``n_steps`` steps (forgetting any rows held), with the cursor on
        ``cursor`` and the rows of ``steps`` already there (read with the episode, so the
        first frame asks for none: see :func:`first_steps`)."""
        self._rows.clear()
        self._pages.clear()
        self._requested.clear()
        self.n_steps = n_steps
        self._add_rows(steps)
        self.virtual_size = Size(self.size.width, n_steps)
        self.cursor = self._clamp(cursor)

    def add_steps(self, steps: list[Step]) -> None:
        """Rows read for a :class:`NeedSteps` request."""
        self._add_rows(steps)
        self._evict()
        self.refresh()

    def _add_rows(self, steps: Iterable[Step]) -> None:
        pages = set()
        for step in steps:
            self._rows[step.index] = StepRow.of(step)
            pages.add(step.index // PAGE)
        self._pages |= pages
        self._requested -= pages

    def forget_request(self, start: int, stop: int) -> None:
        """A request failed or was dropped: ask again next time the rows are needed."""
        self._requested -= set(range(start // PAGE, (stop - 1) // PAGE + 1))

    def set_spans(self, spans: list[Span]) -> None:
        """Spans to mark in the left margin."""
        self.spans = spans
        self.refresh()

    def set_examples(self, examples: list[SynthExample]) -> None:
        """Synthesized examples whose spans to mark (after the spans, in the same margin)."""
        self.examples = examples
        self.refresh()

    def has_row(self, index: int) -> bool:
        """Whether the row of step ``index`` is loaded."""
        return index in self._rows

    @property
    def selection(self) -> tuple[int, int] | None:
        """The selected range (inclusive), while a selection is being made."""
        if self.selection_anchor is None:
            return None
        return min(self.selection_anchor, self.cursor), max(self.selection_anchor, self.cursor)

    def start_selection(self) -> None:
        """Start selecting at the cursor."""
        self.selection_anchor = self.cursor

    def clear_selection(self) -> None:
        """Stop selecting."""
        self.selection_anchor = None

    # -- cursor -----------------------------------------------------------------------------

    def _clamp(self, index: int) -> int:
        return max(0, min(index, self.n_steps - 1)) if self.n_steps else 0

    def validate_cursor(self, index: int) -> int:
        return self._clamp(index)

    def watch_cursor(self, old: int, index: int) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = round(self.scroll_y)
        # force: just after set_length the scrollbar is not laid out yet, and Textual would not
        # scroll (the view would stay at the top, wanting every page down to the cursor)
        if index < top:
            self.scroll_to(y=index, animate=False, immediate=True, force=True)
        elif index >= top + height:
            self.scroll_to(y=index - height + 1, animate=False, immediate=True, force=True)
        self._request_window()
        if self.selection_anchor is None:
            self.refresh_line(old)
            self.refresh_line(index)
        else:
            self.refresh()
        self.post_message(self.Moved(index))

    def action_move(self, delta: int) -> None:
        self.cursor += delta

    def action_page(self, direction: int) -> None:
        self.cursor += direction * max(1, self.scrollable_content_region.height - 1)

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self.n_steps - 1

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None:
            self.cursor = round(self.scroll_y) + offset.y

    # -- loading ----------------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._request_window()

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, self.n_steps)
        self._request_window()

    def _wanted_pages(self) -> set[int]:
        height = max(self.scrollable_content_region.height, 1)
        return wanted_pages(round(self.scroll_y), height, self.cursor, self.n_steps)

    def _request_window(self) -> None:
        if not self.n_steps:
            return
        for page in sorted(self._wanted_pages() - self._pages - self._requested):
            self._requested.add(page)
            start = page * PAGE
            self.post_message(self.NeedSteps(start, min(start + PAGE, self.n_steps)))

    def _evict(self) -> None:
        if len(self._pages) <= KEEP_PAGES:
            return
        here = self.cursor // PAGE
        keep = sorted(self._pages, key=lambda page: abs(page - here))[:KEEP_PAGES]
        for page in self._pages - set(keep):
            for index in range(page * PAGE, (page + 1) * PAGE):
                self._rows.pop(index, None)
        self._pages = set(keep)

    # -- drawing ----------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"step-list--{name}")

    def render_line(self, y: int) -> Strip:
        index = round(self.scroll_y) + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= self.n_steps:
            return Strip.blank(width, base)
        marks = self._marks(index)
        line = self._line(index)
        line.truncate(max(0, width - marks.cell_len), overflow="ellipsis", pad=True)
        selection = self.selection
        if selection and selection[0] <= index <= selection[1]:
            line.stylize(self._style("selection"))
        if index == self.cursor:
            line.stylize(self._style("cursor"))
        text = marks + line
        text.stylize_before(base)
        segments = list(text.render(self.app.console))
        return Strip(segments, text.cell_len).crop_extend(0, width, base)

    def _marks(self, index: int) -> Text:
        """A coloured bar per span (at most two) covering step ``index``; a synthesized
        example's span takes a place left free."""
        covering = [span for span in self.spans if span.start <= index <= span.end]
        marks = Text()
        for span in covering[:2]:
            marks.append("▌", self._style(span.kind))
        if len(marks) < 2 and any(e.start <= index <= e.end for e in self.examples):
            marks.append("▌", self._style("example"))
        return marks.append(" " * (2 - len(marks)))

    def _line(self, index: int) -> Text:
        text = Text(f"{index:>5} ", self._style("index"))
        row = self._rows.get(index)
        if row is None:
            return text.append("…", self._style("loading"))
        text.append(f"{KIND_LABELS.get(row.kind, row.kind):<4} ", self._style("kind"))
        if row.agent:
            text.append(f"{row.agent}: ", self._style("kind"))
        text.append(row.text)
        if row.reward:
            text.append(f" {row.reward:+g}", self._style("reward"))
        return text
