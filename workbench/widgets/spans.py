"""Mark, edit, delete and undo spans on the episode a :class:`TrajectoryStepper` shows.

Every change goes through :class:`workbench.spans.SpanHistory` (the Trajectory screen's undo
history), so it is in SQLite at once; a refused span shows why in the status line."""

from __future__ import annotations

import os

import ipywidgets as widgets

from store import Span, Store
from workbench.spans import SPAN_KINDS, SpanHistory, span_error
from workbench.widgets import html
from workbench.widgets.stepper import TrajectoryStepper


def span_option(span: Span) -> str:
    """``#4 causal 2–3 premature-focus``: a span as the listing shows it."""
    label = f" {span.label}" if span.label else ""
    return f"#{span.id} {span.kind} {span.start}–{span.end}{label}"


class SpanAnnotator(widgets.VBox):
    """Spans of one episode: a form (range, kind, label, note) and the episode's spans.

    Choosing a span in the listing loads it for editing; *new* clears the form so *save*
    adds a span again.

    Args:
        db: the database file.
        stepper: follow this stepper's episode; *mark start* and *mark end* take its step.
        episode_id: the episode to annotate when there is no stepper.

    Attributes:
        spans: the episode's spans, by start step.
        editing: the span being edited (``None``: *save* adds a new one).
        history: the undo history of this widget's span changes.
    """

    def __init__(
        self,
        db: str | os.PathLike[str],
        stepper: TrajectoryStepper | None = None,
        episode_id: str | None = None,
    ) -> None:
        self.store = Store(db)
        self.stepper = stepper
        self.episode_id = stepper.episode_id if stepper is not None else (episode_id or "")
        self.spans: list[Span] = []
        self.editing: Span | None = None
        self.history = SpanHistory()
        self._filling = False
        self.start = widgets.IntText(description="start", layout={"width": "12em"})
        self.end = widgets.IntText(description="end", layout={"width": "12em"})
        self.mark_start = widgets.Button(description="mark start").add_class("wb-mark-start")
        self.mark_end = widgets.Button(description="mark end").add_class("wb-mark-end")
        self.kind = widgets.Dropdown(options=list(SPAN_KINDS), value="causal", description="kind")
        self.kind.add_class("wb-kind")
        self.label = widgets.Text(description="label", placeholder="e.g. premature-focus")
        self.label.add_class("wb-label")
        self.note = widgets.Textarea(description="note", placeholder="optional free text")
        self.note.add_class("wb-note")
        self.save_button = widgets.Button(description="save", button_style="primary")
        self.save_button.add_class("wb-save")
        self.new_button = widgets.Button(description="new").add_class("wb-new")
        self.delete_button = widgets.Button(description="delete", button_style="danger")
        self.delete_button.add_class("wb-delete")
        self.undo_button = widgets.Button(description="undo").add_class("wb-undo")
        self.status = widgets.HTML().add_class("wb-status")
        self.listing = widgets.Select(options=[], rows=6, description="spans")
        self.listing.add_class("wb-spans")
        super().__init__(
            [
                widgets.HBox([self.start, self.mark_start, self.end, self.mark_end]),
                self.kind,
                self.label,
                self.note,
                widgets.HBox(
                    [self.save_button, self.new_button, self.delete_button, self.undo_button]
                ),
                self.status,
                self.listing,
            ]
        )
        self.add_class("wb-annotator")
        self.mark_start.on_click(lambda _: self._mark(self.start))
        self.mark_end.on_click(lambda _: self._mark(self.end))
        self.save_button.on_click(lambda _: self.save())
        self.new_button.on_click(lambda _: self.new())
        self.delete_button.on_click(lambda _: self.delete())
        self.undo_button.on_click(lambda _: self.undo())
        self.listing.observe(self._chosen, names="value")
        if stepper is not None:
            stepper.observe(self._follow, names="episode_id")
            self.start.value = self.end.value = stepper.index
        self._reload()

    # -- actions ----------------------------------------------------------------------------

    def save(self) -> Span | None:
        """Add the form's span (or update the one being edited); ``None`` when refused."""
        before = self.editing
        try:
            span = Span.model_validate(
                {
                    **(before.model_dump() if before else {}),
                    "episode_id": self.episode_id,
                    "start": self.start.value,
                    "end": self.end.value,
                    "kind": self.kind.value,
                    "label": self.label.value.strip(),
                    "note": self.note.value.strip(),
                }
            )
            saved = self.history.save(self.store, "edit" if before else "add", span, before)
        except (ValueError, KeyError) as error:
            self._say(f"not saved: {span_error(error)}", "error")
            return None
        self._reload(keep=saved.id if before else None)
        self._say(f"{'updated' if before else 'saved'} span #{saved.id}", "ok")
        return saved

    def delete(self) -> Span | None:
        """Delete the span chosen in the listing; ``None`` when none is chosen."""
        span = self.editing
        if span is None:
            self._say("choose a span to delete in the listing", "warning")
            return None
        try:
            self.history.save(self.store, "delete", span)
        except KeyError as error:
            self._say(f"not deleted: {span_error(error)}", "error")
            self._reload()
            return None
        self._reload()
        self._say(f"deleted span #{span.id}", "ok")
        return span

    def undo(self) -> None:
        """Revert this widget's latest span change."""
        try:
            change = self.history.undo(self.store)
        except (ValueError, KeyError) as error:
            self._say(f"cannot undo: {span_error(error)}", "error")
            return
        self._reload()
        self._say(f"undid span {change.kind}" if change else "nothing to undo", "info")

    def new(self) -> None:
        """Stop editing: the next *save* adds a span."""
        self.listing.value = None
        self.editing = None
        self.label.value = self.note.value = ""
        self.save_button.description = "save"

    # -- reacting ---------------------------------------------------------------------------

    def _mark(self, field: widgets.IntText) -> None:
        if self.stepper is not None:
            field.value = self.stepper.index

    def _follow(self, change: dict) -> None:
        self.episode_id = change["new"]
        self.history = SpanHistory()
        self.start.value = self.end.value = 0
        self._reload()
        self.status.value = ""

    def _chosen(self, change: dict) -> None:
        if self._filling:
            return
        span = next((s for s in self.spans if s.id == change["new"]), None)
        self.editing = span
        if span is None:
            self.save_button.description = "save"
            return
        self.start.value, self.end.value = span.start, span.end
        self.kind.value, self.label.value, self.note.value = span.kind, span.label, span.note
        self.save_button.description = f"update #{span.id}"

    def _reload(self, keep: int | None = None) -> None:
        self.spans = self.store.spans(self.episode_id) if self.episode_id else []
        self._filling = True
        try:
            self.listing.options = [(span_option(s), s.id) for s in self.spans]
            self.listing.value = keep if keep in {s.id for s in self.spans} else None
        finally:
            self._filling = False
        self.editing = next((s for s in self.spans if s.id == keep), None)
        self.save_button.description = f"update #{keep}" if self.editing else "save"
        if self.stepper is not None:
            self.stepper.refresh_spans()

    def _say(self, message: str, level: str) -> None:
        self.status.value = html.status(message, level)

    def close(self) -> None:
        """Close the widget and its store."""
        super().close()
        self.store.close()
