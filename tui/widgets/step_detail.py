"""The full detail of one step: thought, action, observation, reward, and the raw record."""

from __future__ import annotations

import json
import re
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from store import Span, Step, SynthExample
from tui.escapes import shown

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


class StepDetail(VerticalScroll, can_focus=False):
    """Everything about the step under the cursor. Long texts wrap and show their first
    :data:`COLLAPSED_LINES` lines until :attr:`expanded` is set."""

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
    """Show long texts in full instead of their first lines."""

    show_raw: reactive[bool] = reactive(False)
    """Show the step's original record."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.step: Step | None = None
        self.spans: list[Span] = []
        self.examples: list[SynthExample] = []
        self.n_steps = 0
        self._index = 0
        self.result: Step | None = None

    def compose(self):
        yield Static(id="step-detail-body")

    def show(
        self,
        index: int,
        step: Step | None,
        spans: list[Span],
        n_steps: int,
        result: Step | None = None,
        examples: list[SynthExample] | None = None,
    ) -> None:
        """Show step ``index`` (``step`` is ``None`` while it loads); ``result`` is the tool
        result answering its call, shown under it; ``examples`` are the synthesized examples
        whose span covers it."""
        if step is None or self.step is None or step.index != self.step.index:
            self.scroll_home(animate=False, immediate=True)
        self._index, self.step, self.spans, self.n_steps = index, step, spans, n_steps
        self.result = result
        self.examples = examples or []
        self._render_body()

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
        step = self.step
        if step is None:
            if not self.n_steps:
                return Text("this episode has no steps", self._style("muted"))
            return Text(f"step {self._index} — loading…", self._style("muted"))
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
        for heading, value in (
            ("content", step.content),
            ("thought", step.thought),
            ("action", pretty_action(step.action)),
            ("observation", step.observation),
            (self._result_heading(), self.result.observation if self.result else ""),
        ):
            if value:
                visible, more = self._clip(value)
                parts += [Text(""), Text(heading, self._style("heading")), Text(shown(visible))]
                if more:
                    parts.append(Text(f"… {more} — press e to expand", self._style("muted")))
        if step.tool_name or step.tool_call_id:
            tool = shown(f"tool {step.tool_name} {step.tool_call_id}".rstrip())
            parts += [Text(""), Text(tool)]
        if self.show_raw:
            raw = json.dumps(step.raw, indent=2, ensure_ascii=False, default=str)
            parts += [Text(""), Text("raw record", self._style("heading")), Text(shown(raw))]
        elif step.raw is not None:
            parts += [Text(""), Text("r shows the raw record", self._style("muted"))]
        return Group(*parts)

    def _result_heading(self) -> str:
        return f"result (step {self.result.index})" if self.result else "result"

    def _title(self, step: Step) -> Text:
        title = Text(f"step {step.index}", self._style("title"))
        title.append(shown(f" · {step.kind} · {step.role}"), self._style("muted"))
        if step.reward is not None:
            title.append(f" · reward {step.reward:+g}", self._style("muted"))
        if step.timestamp is not None:
            title.append(f" · {step.timestamp:%Y-%m-%d %H:%M:%S}", self._style("muted"))
        return title

    def _clip(self, value: str) -> tuple[str, str]:
        """The part of ``value`` to show, and what is hidden (empty when nothing is)."""
        if self.expanded:
            return value, ""
        lines = value.splitlines() or [value]
        shown = "\n".join(lines[:COLLAPSED_LINES])
        hidden = (
            f"{len(lines) - COLLAPSED_LINES} more line(s)" if len(lines) > COLLAPSED_LINES else ""
        )
        if len(shown) > COLLAPSED_CHARS:
            shown = shown[:COLLAPSED_CHARS]
            hidden = hidden or f"{len(value) - COLLAPSED_CHARS} more character(s)"
        return shown, hidden
