"""Step through one episode: buttons, a slider, a failures-first episode picker, and the
current step's detail with the spans that cover it."""

from __future__ import annotations

import os

import ipywidgets as widgets
import traitlets

from store import Episode, ListedEpisode, Span, Step, Store
from workbench.spans import spans_at
from workbench.widgets import html
from workbench.widgets.keys import KeyListener

PICKER_LIMIT = 500
"""Episodes the picker lists (failures first)."""
STEP_KEYS = {
    "ArrowLeft": "prev",
    "ArrowRight": "next",
    "h": "prev",
    "l": "next",
    "Home": "first",
    "End": "last",
    "0": "first",
    "$": "last",
}
"""The terminal UI's stepping keys, plus the arrows."""


def episode_label(episode: ListedEpisode | Episode) -> str:
    """``✗ boil-0-s3 · <environment>:boil:0 · 3 steps``."""
    success = episode.outcome.success
    badge = "?" if success is None else ("✓" if success else "✗")
    return f"{badge} {episode.id} · {episode.task_id} · {episode.n_steps} steps"


def step_html(step: Step | None) -> str:
    """A step's kind and every text it carries."""
    if step is None:
        return html.status("no step", "info")
    parts = [f"<b>{html.text(step.kind)}</b> · {html.text(step.role)}"]
    if step.agent:
        parts[0] += f" · {html.text(step.agent)}"
    if step.reward:
        parts[0] += f" · reward {step.reward:g}"
    for name in ("content", "thought", "action", "observation", "tool_name"):
        value = getattr(step, name)
        if value:
            parts.append(f"<div><i>{name}</i>{html.pre(value)}</div>")
    return "".join(parts)


def spans_html(spans: list[Span]) -> str:
    """The spans covering a step, innermost first."""
    if not spans:
        return html.status("no span covers this step", "info")
    rows = [(f"#{s.id}", s.kind, f"{s.start}–{s.end}", s.label, s.note, s.author) for s in spans]
    return html.table(["span", "kind", "steps", "label", "note", "author"], rows)


class TrajectoryStepper(widgets.VBox):
    """One episode, step by step.

    Args:
        db: the database file.
        episode_id: the episode shown first (``None``: the first failure).

    Attributes:
        index: the current step (0-based); setting it moves.
        episode_id: the episode shown; setting it loads that episode at step 0.
        episode: the loaded episode record (``None`` when it does not exist).
        spans: the episode's spans.
    """

    index = traitlets.Int(0)
    episode_id = traitlets.Unicode("")

    def __init__(self, db: str | os.PathLike[str], episode_id: str | None = None) -> None:
        self.store = Store(db)
        self.episode: Episode | None = None
        self.spans: list[Span] = []
        self.step: Step | None = None
        self.header = widgets.HTML().add_class("wb-episode-info")
        self.picker = widgets.Dropdown(description="episode", layout={"width": "36em"})
        self.picker.add_class("wb-episode")
        self.buttons = {
            name: widgets.Button(description=label, layout={"width": "5em"}).add_class(f"wb-{name}")
            for name, label in (("first", "⏮"), ("prev", "◀"), ("next", "▶"), ("last", "⏭"))
        }
        self.slider = widgets.IntSlider(min=0, max=0, readout=False, continuous_update=False)
        self.slider.add_class("wb-slider")
        self.position = widgets.HTML().add_class("wb-position")
        self.shortcuts = KeyListener(STEP_KEYS, "⌨ click, then ←/→ or h/l step · Home/End or 0/$")
        self.detail = widgets.HTML().add_class("wb-step")
        self.covering = widgets.HTML().add_class("wb-step-spans")
        super().__init__(
            [
                self.picker,
                self.header,
                widgets.HBox([*self.buttons.values(), self.slider, self.position, self.shortcuts]),
                self.detail,
                self.covering,
            ]
        )
        self.add_class("wb-stepper")
        for name, button in self.buttons.items():
            button.on_click(lambda _, name=name: self.act(name))
        self.slider.observe(lambda change: self.go(change["new"]), names="value")
        self.shortcuts.on_action(self.act)
        self.picker.observe(self._picked, names="value")
        listing = self.store.listing(limit=PICKER_LIMIT)
        self.picker.options = [(episode_label(e), e.id) for e in listing]
        first = episode_id or (listing[0].id if listing else "")
        if first == self.episode_id:
            self._load(first)
        self.episode_id = first

    @property
    def n_steps(self) -> int:
        """Steps in the episode shown."""
        return self.episode.n_steps if self.episode else 0

    def go(self, index: int) -> None:
        """Move to step ``index`` (clamped to the episode)."""
        self.index = max(0, min(index, self.n_steps - 1))

    def act(self, action: str) -> None:
        """Do a stepping action: ``first``, ``prev``, ``next`` or ``last``."""
        target = {
            "first": 0,
            "prev": self.index - 1,
            "next": self.index + 1,
            "last": self.n_steps - 1,
        }
        self.go(target[action])

    def refresh_spans(self) -> None:
        """Read the episode's spans again (after another widget or process changed them)."""
        self.spans = self.store.spans(self.episode_id) if self.episode else []
        self._show()

    def close(self) -> None:
        """Close the widget and its store."""
        super().close()
        self.store.close()

    # -- reacting -------------------------------------------------------------------------

    @traitlets.observe("episode_id")
    def _episode_changed(self, change: dict) -> None:
        self._load(change["new"])

    @traitlets.observe("index")
    def _index_changed(self, change: dict) -> None:
        self._show()

    def _picked(self, change: dict) -> None:
        if change["new"] and change["new"] != self.episode_id:
            self.episode_id = change["new"]

    def _load(self, episode_id: str) -> None:
        self.episode = self.store.episode(episode_id) if episode_id else None
        self.spans = self.store.spans(episode_id) if self.episode else []
        if self.episode is None:
            self.header.value = html.status(f"no episode {episode_id!r}", "error")
        else:
            self.header.value = self._header(self.episode)
            ids = [value for _, value in self.picker.options]
            if episode_id not in ids:
                self.picker.options = [
                    *self.picker.options,
                    (episode_label(self.episode), episode_id),
                ]
        self.picker.value = episode_id if self.episode else None
        self.slider.max = max(self.n_steps - 1, 0)
        if self.index == 0:
            self._show()
        self.index = 0

    def _header(self, episode: Episode) -> str:
        outcome = episode.outcome
        verdict = {True: ("passed", "ok"), False: ("failed", "error"), None: ("unknown", "info")}
        word, level = verdict[outcome.success]
        line = f"{html.status(word, level)} <b>{html.text(episode.id)}</b> · "
        line += html.text(f"{episode.task_id} · family {episode.family or '–'} · {episode.agent}")
        if outcome.message:
            line += f"<br><i>{html.text(outcome.message.splitlines()[0])}</i>"
        return line

    def _show(self) -> None:
        index = self.index
        self.step = self.store.step(self.episode_id, index) if self.episode else None
        self.position.value = f"step {index} / {self.n_steps}"
        self.slider.value = index
        self.detail.value = step_html(self.step)
        self.covering.value = spans_html(spans_at(self.spans, index)) if self.episode else ""
