"""The full detail of one step: thought, action, observation, reward, and the raw record.

Steps come cut (:meth:`store.Store.cut_steps`): each text at most :data:`WINDOW` characters,
with its full length. A text longer than that says how long it is and which characters are
shown; :meth:`StepDetail.page` asks (:class:`StepDetail.NeedText`) for the next or previous
window of the longest one, read with :meth:`store.Store.step_text`. So whatever a step holds
(a 200 MB tool output), the detail holds and draws at most a window of each text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from store import CutStep, Span, Step, SynthExample
from tui.escapes import shown

WINDOW = 4000
"""Characters of a text read at a time: what a step's texts are cut to, and what ``]`` and
``[`` move by."""

COLLAPSED_LINES = 12
"""Lines of a long text shown until the detail is expanded."""

COLLAPSED_CHARS = 2400
"""Characters of a long text shown until the detail is expanded (for very long lines)."""


CALL = re.compile(r"^(?P<name>[\w.\-]+)\((?P<arguments>[\[{].*)\)$", re.DOTALL)
"""A tool call stored as ``name(<JSON arguments>)``."""


def pretty_action(action: str) -> str:
    """A tool call's JSON arguments indented (``name(`` then the JSON, then ``)``); any other
    action unchanged."""
    call = CALL.match(action.strip())
    if call is None:
        return action
    try:
        arguments = json.loads(call["arguments"])
    except ValueError:
        return action
    body = json.dumps(arguments, indent=2, ensure_ascii=False)
    return f"{call['name']}({body})"


@dataclass(frozen=True)
class Window:
    """What the detail holds of one text: ``text``, from character ``start`` of a text
    ``length`` characters long."""

    heading: str
    index: int
    """The step the text belongs to."""
    field: str
    """Which of the step's texts (``observation``…)."""
    text: str
    start: int = 0
    length: int = 0

    @property
    def whole(self) -> bool:
        """Whether ``text`` is all of the text."""
        return self.start == 0 and len(self.text) >= self.length


def windows(cut: CutStep, result: CutStep | None = None) -> list[Window]:
    """The texts of a step as read (and the observation of the tool result answering it)."""
    texts = [(field, cut, field) for field in ("content", "thought", "action", "observation")]
    if result is not None:
        texts.append((f"result (step {result.step.index})", result, "observation"))
    found = []
    for heading, source, field in texts:
        text, length = getattr(source.step, field), source.lengths[field]
        if field == "action" and not source.cut(field):
            text = pretty_action(text)
            length = len(text)
        if text:
            found.append(Window(heading, source.step.index, field, text, 0, length))
    return found


class StepDetail(VerticalScroll, can_focus=False):
    """Everything about the step under the cursor. Long texts wrap and show their first
    :data:`COLLAPSED_LINES` lines until :attr:`expanded` is set; a text longer than
    :data:`WINDOW` shows a window of it at a time."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "step-detail--title",
        "step-detail--heading",
        "step-detail--muted",
        "step-detail--causal",
        "step-detail--contrast",
        "step-detail--evidence",
        "step-detail--note",
        "step-detail--example",
    }

    DEFAULT_CSS = """
    StepDetail {
        background: $surface;
        padding: 0 1;
        & > Static { width: 100%; }
        & > .step-detail--title { text-style: bold; color: $text; }
        & > .step-detail--heading { text-style: bold; color: $text-accent; }
        & > .step-detail--muted { color: $text-muted; }
        & > .step-detail--causal { color: $error; text-style: bold; }
        & > .step-detail--contrast { color: $success; text-style: bold; }
        & > .step-detail--evidence { color: $primary-lighten-2; text-style: bold; }
        & > .step-detail--note { color: $accent; text-style: bold; }
        & > .step-detail--example { color: $secondary; text-style: bold; }
    }
    """

    expanded: reactive[bool] = reactive(False)
    """Show long texts in full (a window of a text longer than :data:`WINDOW`) instead of
    their first lines."""

    show_raw: reactive[bool] = reactive(False)
    """Show the step's original record."""

    class NeedText(Message):
        """Characters ``start`` to ``start + WINDOW`` of text ``field`` of step ``index`` are
        needed (hand them back with :meth:`StepDetail.show_text`)."""

        def __init__(self, index: int, field: str, start: int) -> None:
            self.index = index
            self.field = field
            self.start = start
            super().__init__()

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.cut: CutStep | None = None
        self.windows: list[Window] = []
        """What is held of each text shown."""
        self.spans: list[Span] = []
        self.examples: list[SynthExample] = []
        self.n_steps = 0
        self._index = 0

    def compose(self):
        yield Static(id="step-detail-body")

    @property
    def step(self) -> Step | None:
        """The step shown (its texts cut), ``None`` while it loads."""
        return self.cut.step if self.cut else None

    def show(
        self,
        index: int,
        cut: CutStep | None,
        spans: list[Span],
        n_steps: int,
        result: CutStep | None = None,
        examples: list[SynthExample] | None = None,
    ) -> None:
        """Show step ``index`` (``cut`` is ``None`` while it loads); ``result`` is the tool
        result answering its call, shown under it; ``examples`` are the synthesized examples
        whose span covers it."""
        fresh = windows(cut, result) if cut else []
        if cut is not None and self.step is not None and cut.step.index == self.step.index:
            # the same step again (spans changed, a page arrived): keep the windows paged
            kept = {(w.index, w.field): w for w in self.windows if not w.whole}
            fresh = [kept.get((w.index, w.field), w) for w in fresh]
        else:
            self.scroll_home(animate=False, immediate=True)
        self.windows = fresh
        self._index, self.cut, self.spans, self.n_steps = index, cut, spans, n_steps
        self.examples = examples or []
        self._render_body()

    @property
    def paged(self) -> Window | None:
        """The text ``]`` and ``[`` page through: the longest one not read whole."""
        cut = [w for w in self.windows if not w.whole]
        return max(cut, key=lambda w: w.length) if cut else None

    def page(self, direction: int) -> bool:
        """Ask for the next (``direction`` 1) or previous (-1) window of :attr:`paged` and
        expand the detail; whether there is one."""
        window = self.paged
        if window is None:
            return False
        start = window.start + WINDOW if direction > 0 else max(0, window.start - WINDOW)
        if start >= window.length or start == window.start:
            return False
        self.expanded = True
        self.post_message(self.NeedText(window.index, window.field, start))
        return True

    def show_text(self, index: int, field: str, start: int, text: str) -> None:
        """The window asked for by :class:`NeedText` (ignored if the step shown changed)."""
        for i, window in enumerate(self.windows):
            if (window.index, window.field) == (index, field) and not window.whole:
                self.windows[i] = replace(window, text=text, start=start)
                self.scroll_home(animate=False, immediate=True)
                self._render_body()
                return

    @property
    def text(self) -> str:
        """The detail as plain text (what is shown, without styles)."""
        body = self._body()
        parts = body.renderables if isinstance(body, Group) else [body]
        return "\n".join(part.plain for part in parts if isinstance(part, Text))

    def watch_expanded(self) -> None:
        self._render_body()

    def watch_show_raw(self) -> None:
        self._render_body()

    def _style(self, name: str):
        return self.get_component_rich_style(f"step-detail--{name}")

    def _render_body(self) -> None:
        if not self.is_mounted:
            return
        self.query_one("#step-detail-body", Static).update(self._body())

    def _body(self) -> RenderableType:
        if self.cut is None:
            if not self.n_steps:
                return Text("this episode has no steps", self._style("muted"))
            return Text(f"step {self._index} — loading…", self._style("muted"))
        step = self.cut.step
        parts: list[RenderableType] = [self._title(step)]
        for span in self.spans:
            line = Text("■ ", self._style(span.kind))
            line.append(f"{span.kind} ", self._style(span.kind))
            line.append(f"{span.start}–{span.end}")
            if span.label:
                line.append(f"  {shown(span.label)}", "bold")
            if span.note:
                line.append(f"  {shown(span.note)}", self._style("muted"))
            parts.append(line)
        for example in self.examples:
            line = Text("■ ", self._style("example"))
            line.append(f"example {example.id} ", self._style("example"))
            line.append(f"{example.start}–{example.end}")
            line.append(f"  {example.kind} · {example.verdict}", self._style("muted"))
            line.append(f"  {shown(' '.join(example.instruction.split()))}", "bold")
            parts.append(line)
        paged = self.paged
        for window in self.windows:
            parts += [Text(""), *self._window(window, window is paged)]
        if step.tool_name or step.tool_call_id:
            tool = shown(f"tool {step.tool_name} {step.tool_call_id}".rstrip())
            parts += [Text(""), Text(tool)]
        parts += self._raw(step, self.cut.lengths["raw"])
        return Group(*parts)

    def _window(self, window: Window, paged: bool) -> list[Text]:
        """A text's heading and what is shown of it, with how to see more."""
        visible, more = self._clip(window)
        heading = Text(window.heading, self._style("heading"))
        if not window.whole:
            end = window.start + len(visible)
            heading.append(
                f" ({window.length:,} characters; showing {window.start + 1:,}–{end:,})",
                self._style("muted"),
            )
        lines = [heading, Text(shown(visible))]
        hints = [more] if more else []
        if paged and self.expanded:
            if window.start + len(window.text) < window.length:
                hints.append(f"] next {WINDOW:,} characters")
            if window.start:
                hints.append("[ previous")
        elif paged:
            hints.append("] pages through it")
        if hints:
            lines.append(Text("… " + " · ".join(hints), self._style("muted")))
        return lines

    def _raw(self, step: Step, length: int) -> list[Text]:
        """The raw record when asked for, or how to ask."""
        if not self.show_raw:
            if step.raw is None and not length:
                return []
            return [Text(""), Text("r shows the raw record", self._style("muted"))]
        if step.raw is None and length:
            return [
                Text(""),
                Text(
                    f"the raw record ({length:,} characters) is not read: it is longer than "
                    "a window, or holds the step's long texts",
                    self._style("muted"),
                ),
            ]
        raw = json.dumps(step.raw, indent=2, ensure_ascii=False, default=str)
        return [Text(""), Text("raw record", self._style("heading")), Text(shown(raw))]

    def _title(self, step: Step) -> Text:
        title = Text(f"step {step.index}", self._style("title"))
        title.append(shown(f" · {step.kind} · {step.role}"), self._style("muted"))
        if step.agent:
            title.append(shown(f" · {step.agent}"), self._style("muted"))
        if step.reward is not None:
            title.append(f" · reward {step.reward:+g}", self._style("muted"))
        if step.timestamp is not None:
            title.append(f" · {step.timestamp:%Y-%m-%d %H:%M:%S}", self._style("muted"))
        return title

    def _clip(self, window: Window) -> tuple[str, str]:
        """The part of the window to show, and what is hidden of it (empty when nothing is,
        or when expanded: the window is all there is to show)."""
        value = window.text
        if self.expanded:
            return value, ""
        lines = value.splitlines() or [value]
        shown_text = "\n".join(lines[:COLLAPSED_LINES])
        hidden = (
            f"{len(lines) - COLLAPSED_LINES} more line(s)" if len(lines) > COLLAPSED_LINES else ""
        )
        if len(shown_text) > COLLAPSED_CHARS:
            shown_text = shown_text[:COLLAPSED_CHARS]
            hidden = hidden or f"{len(value) - COLLAPSED_CHARS} more character(s)"
        if not window.whole:
            hidden = "e expands it"
        elif hidden:
            hidden += " — press e to expand"
        return shown_text, hidden
