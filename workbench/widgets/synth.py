"""Synthesized examples in a notebook: an example browser (world, kind and verdict pickers, the
examples, one example with its span's steps, provenance and checks) and a retrieval playground
(query and observation boxes, K, the top-K examples with every retriever's score).

Both read through the engine calls the terminal UI's Synthesis screen makes
(:mod:`workbench.synth.catalog`, :class:`~workbench.synth.retrieval.ExampleIndex`).
"""

from __future__ import annotations

import os

import ipywidgets as widgets

from store import Store, SynthExample
from workbench.synth.catalog import VERDICTS, ExampleDetail, read_example
from workbench.synth.retrieval import ExampleIndex, Hit
from workbench.widgets import html
from workbench.widgets.stepper import TrajectoryStepper

KINDS = ("backward", "whole")
SCORES = (("bm25 obs", "bm25_observation"), ("bm25 instr", "bm25_instruction"), ("dense", "dense"))
"""Each retriever's column heading and score key."""
DEFAULT_K = 5


def choices(values: tuple[str, ...] | list[str]) -> list[tuple[str, str | None]]:
    """A picker's options: every value, then ``all`` (``None``)."""
    return [("all", None), *((v, v) for v in values)]


def example_option(example: SynthExample) -> str:
    """``#12 backward · kept · Open fridge.``"""
    instruction = " ".join(example.instruction.split())
    return f"#{example.id} {example.kind} · {example.verdict} · {instruction}"


def example_html(detail: ExampleDetail) -> str:
    """One example: its instruction and verdict, provenance, checks and span's steps."""
    example = detail.example
    level = {"kept": "ok", "rejected": "error"}.get(example.verdict, "warning")
    head = (
        f"<h4 style='margin:0.3em 0'>{html.text(example.instruction)}</h4>"
        f"<div>example #{example.id} · {html.text(example.kind)} · "
        f"{html.status(example.verdict, level)}"
        + (f" · {html.status(example.reason, 'warning')}" if example.reason else "")
        + "</div>"
    )
    checks = [
        [html.text(name), html.mark(passed, "✓", "✗") if passed is not None else "·", html.text(f)]
        for name, f, passed in detail.checks()
    ]
    return "".join(
        [
            head,
            "<b>provenance</b>",
            html.table(["", ""], detail.provenance()),
            "<b>checks</b>",
            html.table(["check", "", "found"], checks, raw=True)
            if checks
            else html.status(" not filtered yet", "info"),
            "<b>span</b>",
            span_html(detail),
        ]
    )


def span_html(detail: ExampleDetail) -> str:
    """The span's steps as its episode recorded them (trimmed repeats marked)."""
    if not detail.steps:
        pairs = zip(detail.example.actions, detail.example.observations, strict=False)
        rows = [["", html.text(a), html.pre(o)] for a, o in pairs]
    else:
        rows = [
            [
                str(s.step.index),
                html.text(s.step.action + s.more("action"))
                + (" <i>(trimmed: a repeat)</i>" if s.trimmed else ""),
                html.pre(s.step.observation) + html.text(s.more("observation")),
            ]
            for s in detail.steps
        ]
    return html.table(["step", "action", "observation"], rows, raw=True)


def hits_html(hits: list[Hit]) -> str:
    """The hits, ranked, with every retriever's score (``–``: not computed)."""
    rows = [
        [
            str(rank),
            f"#{hit.example.id}",
            html.text(hit.example.kind),
            html.text(hit.example.env),
            *(f"{hit.scores[key]:.2f}" if key in hit.scores else "–" for _, key in SCORES),
            html.text(hit.example.instruction),
        ]
        for rank, hit in enumerate(hits, start=1)
    ]
    headers = ["rank", "example", "kind", "world", *(name for name, _ in SCORES), "instruction"]
    return html.table(headers, rows, raw=True)


class ExampleBrowser(widgets.VBox):
    """Synthesized examples by world, kind and verdict; the chosen one in full.

    Args:
        db: the database file.
        stepper: where *open* shows the chosen example's episode, at its span's first step.

    Attributes:
        examples: the examples listed (of the chosen world, kind and verdict).
        example: the chosen example; ``detail``: what is shown of it.
    """

    def __init__(
        self, db: str | os.PathLike[str], stepper: TrajectoryStepper | None = None
    ) -> None:
        self.store = Store(db)
        self.stepper = stepper
        self.examples: list[SynthExample] = []
        self.detail: ExampleDetail | None = None
        self.world = widgets.Dropdown(description="world").add_class("wb-world")
        self.kind = widgets.Dropdown(description="kind", options=choices(KINDS))
        self.kind.add_class("wb-kind")
        self.verdict = widgets.Dropdown(description="verdict", options=choices(VERDICTS))
        self.verdict.add_class("wb-verdict")
        self.summary = widgets.HTML().add_class("wb-summary")
        self.list = widgets.Select(rows=8, description="examples", layout={"width": "95%"})
        self.list.add_class("wb-examples")
        self.view = widgets.HTML().add_class("wb-example")
        self.open_button = widgets.Button(description="open in stepper").add_class("wb-open")
        self.status = widgets.HTML().add_class("wb-status")
        super().__init__(
            [
                widgets.HBox([self.world, self.kind, self.verdict]),
                self.summary,
                self.list,
                self.view,
                self.open_button,
                self.status,
            ]
        )
        self.add_class("wb-example-browser")
        for picker in (self.world, self.kind, self.verdict):
            picker.observe(lambda _: self.load(), names="value")
        self.list.observe(lambda _: self._show(), names="value")
        self.open_button.on_click(lambda _: self.open_example())
        self.refresh()

    @property
    def example(self) -> SynthExample | None:
        return next((e for e in self.examples if e.id == self.list.value), None)

    def refresh(self) -> None:
        """Read the worlds again and list the examples."""
        chosen, worlds = self.world.value, self.store.synth_example_worlds()
        self.world.options = choices(worlds)
        self.world.value = chosen if chosen in worlds else None
        self.load()

    def load(self) -> None:
        """List the examples of the chosen world, kind and verdict (the first one chosen)."""
        self.examples = self.store.synth_examples(
            env=self.world.value, verdict=self.verdict.value, kind=self.kind.value
        )
        counts = self.store.synth_counts()
        self.summary.value = html.text(
            f"{len(self.examples)} shown · in the database: "
            + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)
        )
        self.list.options = [(example_option(e), e.id) for e in self.examples]
        self.list.value = self.examples[0].id if self.examples else None
        self._show()

    def show(self, example_id: int) -> bool:
        """Choose the example ``example_id`` (every picker set to ``all`` if it is not listed)."""
        if example_id not in {e.id for e in self.examples}:
            self.world.value = self.kind.value = self.verdict.value = None
        if example_id not in {e.id for e in self.examples}:
            self._say(f"no example #{example_id}", "warning")
            return False
        self.list.value = example_id
        return True

    def open_example(self) -> bool:
        """Show the chosen example's episode in the stepper at the span's first step."""
        example = self.example
        if example is None or self.stepper is None:
            self._say("choose an example (and give the browser a stepper)", "warning")
            return False
        self.stepper.episode_id = example.episode_id
        self.stepper.go(example.start)
        self._say(f"opened {example.episode_id} at step {example.start}", "ok")
        return True

    def _show(self) -> None:
        example = self.example
        self.detail = read_example(self.store, example) if example else None
        self.view.value = (
            example_html(self.detail)
            if self.detail
            else html.status(
                "no example here yet: `workbench synth backward`, then `synth filter`", "info"
            )
        )
        self.status.value = ""

    def _say(self, message: str, level: str) -> None:
        self.status.value = html.status(message, level)

    def close(self) -> None:
        """Close the widget and its store."""
        super().close()
        self.store.close()


class RetrievalPlayground(widgets.VBox):
    """Search the kept examples as an agent would, every retriever's score shown.

    Args:
        db: the database file.
        browser: where *show* opens the chosen hit.

    Attributes:
        hits: what the last search found; ``index``: the index it searched.
    """

    def __init__(self, db: str | os.PathLike[str], browser: ExampleBrowser | None = None) -> None:
        self.store = Store(db)
        self.browser = browser
        self.hits: list[Hit] = []
        self.index: ExampleIndex | None = None
        self.query = widgets.Text(
            description="query", placeholder="what the agent is asked to do"
        ).add_class("wb-query")
        self.query.layout.width = "60%"
        self.observation = widgets.Textarea(
            description="observation", placeholder="optional: what the agent sees now"
        ).add_class("wb-observation")
        self.observation.layout.width = "60%"
        self.k = widgets.BoundedIntText(value=DEFAULT_K, min=1, max=50, description="k")
        self.k.add_class("wb-k")
        self.world = widgets.Dropdown(description="world").add_class("wb-world")
        self.kind = widgets.Dropdown(description="kind", options=choices(KINDS))
        self.kind.add_class("wb-kind")
        self.search_button = widgets.Button(description="search", button_style="primary")
        self.search_button.add_class("wb-search")
        self.status = widgets.HTML().add_class("wb-status")
        self.results = widgets.HTML().add_class("wb-hits")
        self.picked = widgets.Dropdown(description="hit", layout={"width": "60%"})
        self.picked.add_class("wb-hit")
        self.show_button = widgets.Button(description="show in browser").add_class("wb-show")
        super().__init__(
            [
                self.query,
                self.observation,
                widgets.HBox([self.k, self.world, self.kind, self.search_button]),
                self.status,
                self.results,
                widgets.HBox([self.picked, self.show_button]),
            ]
        )
        self.add_class("wb-retrieval")
        self.search_button.on_click(lambda _: self.search())
        self.show_button.on_click(lambda _: self.show_hit())
        self.world.options = choices(self.store.synth_example_worlds())

    def search(self) -> list[Hit]:
        """The top K kept examples of the chosen world and kind for the query (and the
        observation, when one is typed); the index is read from beside the database, or
        built when the kept examples changed."""
        query, observation = self.query.value.strip(), self.observation.value.strip()
        if not query and not observation:
            self._say("type a query (or an observation) first", "warning")
            return []
        self.index = ExampleIndex.open(self.store, env=self.world.value, kind=self.kind.value)
        self.hits = self.index.search(query or observation, self.k.value, observation or None)
        self.results.value = hits_html(self.hits) if self.hits else ""
        self.picked.options = [
            (f"{r} · {example_option(h.example)}", h.example.id)
            for r, h in enumerate(self.hits, start=1)
        ]
        found = f"{len(self.hits)} of {len(self.index)} kept examples"
        note = self.index.dense_note()
        self._say(found + (f" · {note}" if note else ""), "ok" if self.hits else "info")
        return self.hits

    def show_hit(self) -> bool:
        """Choose the picked hit in the browser."""
        if self.browser is None or self.picked.value is None:
            self._say("search first (and give the playground a browser)", "warning")
            return False
        return self.browser.show(self.picked.value)

    def _say(self, message: str, level: str) -> None:
        self.status.value = html.status(message, level)

    def close(self) -> None:
        """Close the widget and its store."""
        super().close()
        self.store.close()
