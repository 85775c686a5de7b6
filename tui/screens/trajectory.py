"""The Trajectory screen: a virtual step list beside the selected step's full detail.

Steps are read a window at a time: the rows the first frame shows come with the episode (one
read, one frame), then :class:`~tui.widgets.step_list.StepList` asks for the pages it lacks as
it moves, so a 10,000-step episode opens as fast as a 10-step one. Spans are marked here and
saved at once; ``u`` undoes the last span change.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Header, Static

from store import CutStep, Episode, EpisodeFilter, ListedEpisode, Span, SynthExample, Task
from tui.cells import outcome_badge
from tui.data import (
    FIND_CHARS,
    ChangeKind,
    Session,
    SpanHistory,
    find_step,
    neighbour,
    spans_at,
)
from tui.escapes import shown
from tui.navigation import OpenCompare
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.find_bar import FindBar
from tui.widgets.key_footer import KeyFooter
from tui.widgets.step_detail import WINDOW, StepDetail
from tui.widgets.step_list import StepList, first_steps

HELP = Help(
    "Trajectory",
    "The step list (left) and the full detail of the step under the cursor (right). Coloured marks in the list are spans: causal red, contrast green, evidence blue, note orange.",
    [
        ("h l  ← →  ↑ ↓", "previous / next step"),
        ("0 $", "first / last step"),
        ("j k", "scroll the detail down / up"),
        ("e", "expand long texts (or collapse them again)"),
        ("] [", f"next / previous {WINDOW:,} characters of a text longer than that"),
        ("r", "show the step's raw record"),
        ("H L", "previous / next trajectory in the Runs filter"),
        (
            "/",
            f"find text in this trajectory (any case; each text's first {FIND_CHARS:,} characters)",
        ),
        ("n N", "next / previous match"),
        ("v", "start marking a span here; move with h l"),
        ("enter", "finish the span: choose kind, label and note"),
        ("escape", "stop marking"),
        ("E", "edit the span at this step"),
        ("D", "delete the span at this step"),
        ("u", "undo the last span change (add, edit or delete)"),
        ("c", "compare this failure with a successful run"),
    ],
)


STEP_KEYS = Binding.Group("Prev/next step")
RUN_KEYS = Binding.Group("Prev/next run")
MARKING_ONLY = frozenset({"finish_mark", "cancel_mark"})
"""Actions of the marking mode: shown in the footer, and active, only while marking."""
NOT_WHILE_MARKING = frozenset({"mark", "episode", "edit_span", "delete_span", "undo", "compare"})
"""Actions the footer leaves out (and keys that do nothing) while a span is being marked."""


def episode_header(episode: Episode, task: Task | None) -> Text:
    """Lines about an episode: outcome, ids and counts; its evaluator message; its task."""
    line = outcome_badge(episode)
    line.append(" ")
    line.append(shown(episode.id), "bold")
    line.append(
        shown(f"  {episode.task_id}  family {episode.family or '–'}  agent {episode.agent}")
    )
    line.append(f"  {episode.n_steps} steps", "bold")
    if episode.outcome.score is not None:
        line.append(f"  score {episode.outcome.score:g}")
    if episode.outcome.message:
        line.append("\n")
        line.append(shown(episode.outcome.message.splitlines()[0]), "italic")
    if task is not None and task.instruction:
        line.append("\n")
        line.append(shown(" ".join(task.instruction.split())), "dim")
    if task is not None:
        line.append_text(reference_lines(task))
    return line


def reference_lines(task: Task) -> Text:
    """The task's expected actions and other reference material, when the log carried them."""
    text = Text()
    actions = task.metadata.get("reference_actions")
    if isinstance(actions, list) and actions:
        text.append("\nexpected: ", "bold")
        text.append(shown(" → ".join(str(a) for a in actions)), "dim")
    reference = task.metadata.get("reference")
    if reference:
        reference_text = reference if isinstance(reference, str) else json.dumps(reference)
        text.append("\nreference: ", "bold")
        text.append(shown(" ".join(reference_text.split())[:300]), "dim")
    return text


def result_of(steps: dict[int, CutStep], cut: CutStep | None) -> CutStep | None:
    """The loaded tool result answering ``cut``'s tool call, if any."""
    step = cut.step if cut else None
    if step is None or step.kind != "tool_call" or not step.tool_call_id:
        return None
    later = sorted(i for i in steps if i > step.index)
    return next(
        (
            steps[i]
            for i in later
            if steps[i].step.kind == "tool_result"
            and steps[i].step.tool_call_id == step.tool_call_id
        ),
        None,
    )


class TrajectoryScreen(Screen[str]):
    """One episode, step by step. Dismisses with the id of the episode shown last."""

    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("h,left", "step(-1)", "Prev step", group=STEP_KEYS),
        Binding("l,right", "step(1)", "Next step", group=STEP_KEYS),
        Binding("0", "first", "First", show=False),
        Binding("dollar_sign", "last", "Last", show=False),
        Binding("j", "scroll_detail(1)", "Scroll", show=False),
        Binding("k", "scroll_detail(-1)", "Scroll up", show=False),
        Binding("H", "episode(-1)", "Prev run", group=RUN_KEYS),
        Binding("L", "episode(1)", "Next run", group=RUN_KEYS),
        Binding("slash", "find", "Find"),
        Binding("n", "find_next(1)", "Next match", show=False),
        Binding("N", "find_next(-1)", "Prev match", show=False),
        Binding("e", "expand", "Expand", show=False),
        Binding("right_square_bracket", "page_text(1)", "Next window", show=False),
        Binding("left_square_bracket", "page_text(-1)", "Prev window", show=False),
        Binding("r", "raw", "Raw", show=False),
        Binding("v", "mark", "Mark span"),
        Binding("enter", "finish_mark", "End span"),
        Binding("escape", "cancel_mark", "Cancel span"),
        Binding("E", "edit_span", "Edit span", show=False),
        Binding("D", "delete_span", "Delete span", show=False),
        Binding("u", "undo", "Undo"),
        Binding("c", "compare", "Compare"),
    ]

    def __init__(
        self,
        session: Session,
        episode_id: str,
        where: EpisodeFilter | None = None,
        *,
        start: int | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.where = where or EpisodeFilter()
        self.episode_id = episode_id
        self.episode: Episode | None = None
        self.episode_task: Task | None = None
        self.spans: list[Span] = []
        self.examples: list[SynthExample] = []
        """Synthesized examples cut from the episode (their spans are marked too)."""
        self.start = start
        self._steps: dict[int, CutStep] = {}
        """Steps read around the cursor, each text cut to :data:`WINDOW` characters."""
        self._query = ""
        self._span_lock = threading.Lock()
        self.painted = asyncio.Event()
        """Set once the step list and the first step's detail are on screen."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="episode-info")
        with Horizontal(id="panes"):
            yield StepList(id="steps")
            yield StepDetail(id="detail")
        yield FindBar("find", "text in this trajectory (any case)", id="find")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"trajectory · {self.session.pool.name}"
        self.step_list.border_title = "steps"
        self.detail.border_title = "step"
        self.step_list.focus()
        # the step list is shorter than the app: the rows it shows first are read with the episode
        self._load_episode(self.episode_id, self.start, self.app.size.height)

    @property
    def step_list(self) -> StepList:
        return self.query_one(StepList)

    @property
    def detail(self) -> StepDetail:
        return self.query_one(StepDetail)

    @property
    def history(self) -> SpanHistory:
        return self.session.history(self.episode_id)

    # -- loading ----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="trajectory-episode")
    def _load_episode(self, episode_id: str, start: int | None, height: int) -> None:
        with self.session.pool.store() as store:
            episode = store.episode(episode_id)
            task = store.task(episode.task_id) if episode else None
            spans = store.spans(episode_id) if episode else []
            examples = store.synth_examples(episode_id=episode_id) if episode else []
            first = first_steps(start or 0, height, episode.n_steps) if episode else (0, 0)
            steps = store.cut_steps(episode_id, *first, WINDOW) if first[1] > first[0] else []
        deliver(
            self, self._episode_loaded, episode_id, episode, task, spans, start, steps, examples
        )

    def _episode_loaded(
        self,
        episode_id: str,
        episode: Episode | None,
        task: Task | None,
        spans: list[Span],
        start: int | None,
        steps: list[CutStep],
        examples: list[SynthExample],
    ) -> None:
        if episode_id != self.episode_id:
            return
        if episode is None:
            self.notify(f"no episode {episode_id!r}", severity="error", markup=False)
            self.dismiss(None)
            return
        self.episode, self.episode_task, self.spans = episode, task, spans
        self._steps = {cut.step.index: cut for cut in steps}
        self.query_one("#episode-info", Static).update(episode_header(episode, task))
        self.examples = examples
        self.step_list.set_spans(spans)
        self.step_list.set_examples(examples)
        self.step_list.set_length(episode.n_steps, start or 0, [cut.step for cut in steps])
        self.step_list.border_title = f"steps · {episode.n_steps}"
        if episode.n_steps == 0:
            self.detail.show(0, None, [], 0)
            self.painted.set()

    @on(StepList.NeedSteps)
    def _need_steps(self, event: StepList.NeedSteps) -> None:
        self._load_steps(self.episode_id, event.start, event.stop)

    @work(thread=True, group="trajectory-steps")
    def _load_steps(self, episode_id: str, start: int, stop: int) -> None:
        with self.session.pool.store() as store:
            steps = store.cut_steps(episode_id, start, stop, WINDOW)
        deliver(self, self._steps_loaded, episode_id, start, stop, steps)

    def _steps_loaded(self, episode_id: str, start: int, stop: int, steps: list[CutStep]) -> None:
        if episode_id != self.episode_id:
            self.step_list.forget_request(start, stop)
            return
        self.step_list.add_steps([cut.step for cut in steps])
        self._steps.update((cut.step.index, cut) for cut in steps)
        self._trim_steps()
        cursor = self.step_list.cursor
        if start <= cursor < stop:
            self._show_detail(cursor)

    def _trim_steps(self, keep: int = 1200) -> None:
        if len(self._steps) > keep:
            cursor = self.step_list.cursor
            for index in sorted(self._steps, key=lambda i: abs(i - cursor))[keep:]:
                del self._steps[index]

    @on(StepList.Moved)
    def _moved(self, event: StepList.Moved) -> None:
        self._show_detail(event.index)

    def _show_detail(self, index: int) -> None:
        cut = self._steps.get(index)
        n_steps = self.episode.n_steps if self.episode else 0
        self.detail.show(
            index,
            cut,
            spans_at(self.spans, index),
            n_steps,
            result_of(self._steps, cut),
            [e for e in self.examples if e.start <= index <= e.end],
        )
        self.detail.border_title = f"step {index} of {n_steps}"
        selection = self.step_list.selection
        self.step_list.border_subtitle = (
            f"marking {selection[0]}–{selection[1]} · enter saves · esc cancels"
            if selection
            else ""
        )
        if cut is not None and not self.painted.is_set():
            self.painted.set()

    # -- moving -----------------------------------------------------------------------------

    def action_step(self, delta: int) -> None:
        self.step_list.cursor += delta

    def action_first(self) -> None:
        self.step_list.cursor = 0

    def action_last(self) -> None:
        self.step_list.cursor = max(0, self.step_list.n_steps - 1)

    def action_scroll_detail(self, direction: int) -> None:
        if direction > 0:
            self.detail.scroll_down(animate=False)
        else:
            self.detail.scroll_up(animate=False)

    def action_expand(self) -> None:
        self.detail.expanded = not self.detail.expanded

    def action_page_text(self, direction: int) -> None:
        if self.detail.page(direction):
            return
        if self.detail.paged is None:
            self.notify(f"no text of this step is longer than {WINDOW:,} characters", timeout=2)
        else:
            self.notify("this is the text's " + ("end" if direction > 0 else "start"), timeout=2)

    @on(StepDetail.NeedText)
    def _need_text(self, event: StepDetail.NeedText) -> None:
        self._read_text(self.episode_id, event.index, event.field, event.start)

    @work(thread=True, exclusive=True, group="trajectory-text")
    def _read_text(self, episode_id: str, index: int, field: str, start: int) -> None:
        with self.session.pool.store() as store:
            text = store.step_text(episode_id, index, field, start, WINDOW)
        deliver(self, self._text_read, episode_id, index, field, start, text)

    def _text_read(self, episode_id: str, index: int, field: str, start: int, text: str) -> None:
        if episode_id == self.episode_id:
            self.detail.show_text(index, field, start, text)

    def action_raw(self) -> None:
        self.detail.show_raw = not self.detail.show_raw

    def action_episode(self, direction: int) -> None:
        self._find_neighbour(self.episode_id, direction)

    @work(thread=True, exclusive=True, group="trajectory-neighbour")
    def _find_neighbour(self, episode_id: str, direction: int) -> None:
        with self.session.pool.store() as store:
            found = neighbour(store, self.where, episode_id, direction)
        deliver(self, self._go_to_neighbour, episode_id, found, direction)

    def _go_to_neighbour(
        self, episode_id: str, found: ListedEpisode | None, direction: int
    ) -> None:
        if episode_id != self.episode_id:
            return
        if found is None:
            self.notify("no " + ("next" if direction > 0 else "previous") + " trajectory")
            return
        self.show_episode(found.id)

    def show_episode(self, episode_id: str, start: int | None = None) -> None:
        """Switch to another episode in place."""
        self.episode_id = episode_id
        self.episode = None
        self.step_list.clear_selection()
        self.detail.expanded = False
        self._load_episode(episode_id, start, self.app.size.height)

    # -- finding ----------------------------------------------------------------------------

    def action_find(self) -> None:
        self.query_one(FindBar).open()

    @on(FindBar.Submitted, "#find")
    def _find_submitted(self, event: FindBar.Submitted) -> None:
        self._query = event.query
        self.query_one(FindBar).remove_class("-shown")
        self.step_list.focus()
        self.action_find_next(1)

    @on(FindBar.Closed, "#find")
    def _find_closed(self) -> None:
        self.step_list.focus()

    def action_find_next(self, direction: int) -> None:
        if not self._query:
            self.action_find()
            return
        if self.episode is not None:
            self._find(self.episode, self._query, self.step_list.cursor, direction > 0)

    @work(thread=True, exclusive=True, group="trajectory-find")
    def _find(self, episode: Episode, query: str, after: int, forward: bool) -> None:
        with self.session.pool.store() as store:
            found = find_step(store, episode.id, episode.n_steps, query, after, forward)
        deliver(self, self._found, episode.id, query, found)

    def _found(self, episode_id: str, query: str, found: int | None) -> None:
        if episode_id != self.episode_id:
            return
        if found is None:
            self.notify(f"{query!r} is not in this trajectory", severity="warning", markup=False)
        else:
            self.step_list.cursor = found

    # -- spans ------------------------------------------------------------------------------

    @property
    def marking(self) -> bool:
        """Whether a span is being marked (``v`` was pressed, ``enter`` ends it)."""
        return self.is_mounted and self.step_list.selection is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer shows (and the keys do) the marking keys while marking, the rest
        otherwise."""
        if action in MARKING_ONLY:
            return self.marking
        if action in NOT_WHILE_MARKING:
            return not self.marking
        return True

    def action_mark(self) -> None:
        if self.episode is not None and self.episode.n_steps:
            self.step_list.start_selection()
            self._show_detail(self.step_list.cursor)

    def action_cancel_mark(self) -> None:
        self.step_list.clear_selection()
        self._show_detail(self.step_list.cursor)

    def action_finish_mark(self) -> None:
        selection = self.step_list.selection
        if selection is None or self.episode is None:
            return
        self.step_list.clear_selection()
        self._show_detail(self.step_list.cursor)
        draft = Span(
            episode_id=self.episode.id, start=selection[0], end=selection[1], kind="causal"
        )
        self._open_span_modal(draft, None)

    def _span_here(self) -> Span | None:
        covering = spans_at(self.spans, self.step_list.cursor)
        if not covering:
            self.notify("no span at this step (v marks one)", severity="warning")
            return None
        return covering[0]

    def action_edit_span(self) -> None:
        span = self._span_here()
        if span is not None:
            self._open_span_modal(span, span)

    def action_delete_span(self) -> None:
        span = self._span_here()
        if span is not None:
            self._change_spans("delete", span, None)

    def action_undo(self) -> None:
        if not len(self.history):
            self.notify("nothing to undo")
            return
        self._undo(self.episode_id)

    @work(thread=True, group="trajectory-labels")
    def _open_span_modal(self, draft: Span, before: Span | None) -> None:
        with self.session.pool.store() as store:
            labels = store.span_labels()
        deliver(self, self._push_span_modal, draft, before, labels)

    def _push_span_modal(self, draft: Span, before: Span | None, labels: list[str]) -> None:
        from tui.screens.span_modal import SpanModal

        def saved(span: Span | None) -> None:
            if span is not None:
                self._change_spans("edit" if before else "add", span, before)

        self.app.push_screen(SpanModal(draft, labels), saved)

    @work(thread=True, group="trajectory-spans")
    def _change_spans(self, kind: ChangeKind, span: Span, before: Span | None) -> None:
        episode_id = span.episode_id
        with self._span_lock, self.session.pool.store() as store:
            self.session.history(episode_id).save(store, kind, span, before)
            spans = store.spans(episode_id)
        done = {"add": "span saved", "edit": "span updated", "delete": "span deleted"}[kind]
        deliver(self, self._spans_changed, episode_id, spans, done)

    @work(thread=True, group="trajectory-spans")
    def _undo(self, episode_id: str) -> None:
        with self._span_lock, self.session.pool.store() as store:
            change = self.session.history(episode_id).undo(store)
            spans = store.spans(episode_id)
        message = f"undid span {change.kind}" if change else "nothing to undo"
        deliver(self, self._spans_changed, episode_id, spans, message)

    def _spans_changed(self, episode_id: str, spans: list[Span], message: str) -> None:
        if episode_id != self.episode_id:
            return
        self.spans = spans
        self.step_list.set_spans(spans)
        self._show_detail(self.step_list.cursor)
        self.notify(message, timeout=2)

    # -- elsewhere --------------------------------------------------------------------------

    def action_compare(self) -> None:
        self.post_message(OpenCompare(self.episode_id, self.where))

    def action_back(self) -> None:
        self.dismiss(self.episode_id)
