"""Spans as the faces edit them: which spans cover a step, and an undoable history of
span changes saved to the store (the Trajectory screen and the notebook annotator share it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import ValidationError

from store import Span, Store
from store.records import SpanKind

SPAN_KINDS: tuple[str, ...] = get_args(SpanKind)
"""The kinds a span can have, in the order the faces offer them."""


def spans_at(spans: list[Span], index: int) -> list[Span]:
    """The spans that cover step ``index``, innermost (shortest) first."""
    covering = [s for s in spans if s.start <= index <= s.end]
    return sorted(covering, key=lambda s: (s.end - s.start, -(s.id or 0)))


ChangeKind = Literal["add", "edit", "delete"]


@dataclass
class SpanChange:
    """One span change that can be undone: what the span was before and after."""

    kind: ChangeKind
    before: Span | None
    after: Span | None


class SpanHistory:
    """Span changes made in the UI, newest last, undone against the store one at a time."""

    def __init__(self) -> None:
        self._changes: list[SpanChange] = []

    def __len__(self) -> int:
        return len(self._changes)

    def record(self, kind: ChangeKind, before: Span | None, after: Span | None) -> None:
        """Remember a change that has been saved."""
        self._changes.append(SpanChange(kind, before, after))

    def save(self, store: Store, kind: ChangeKind, span: Span, before: Span | None = None) -> Span:
        """Make a change in the store and remember it: ``add`` ``span``, ``edit`` ``before``
        into ``span``, or ``delete`` ``span``. Returns the span as stored (with its id), or as
        it was before a delete."""
        if kind == "add":
            self.record("add", None, saved := store.add_span(span))
        elif kind == "edit":
            self.record("edit", before, saved := store.update_span(span))
        else:
            assert span.id is not None
            self.record("delete", saved := store.delete_span(span.id), None)
        return saved

    def undo(self, store: Store) -> SpanChange | None:
        """Revert the newest change in the store; ``None`` when there is nothing to undo.

        Undoing a delete stores the span again under a new id; older changes that name the
        old id are pointed at the new one.
        """
        if not self._changes:
            return None
        change = self._changes.pop()
        if change.kind == "add":
            assert change.after is not None and change.after.id is not None
            store.delete_span(change.after.id)
        elif change.kind == "edit":
            assert change.before is not None
            store.update_span(change.before)
        else:
            assert change.before is not None
            restored = store.add_span(change.before.model_copy(update={"id": None}))
            self._renumber(change.before.id, restored.id)
        return change

    def _renumber(self, old: int | None, new: int | None) -> None:
        for change in self._changes:
            for name in ("before", "after"):
                span = getattr(change, name)
                if span is not None and span.id == old:
                    setattr(change, name, span.model_copy(update={"id": new}))


def span_error(error: Exception) -> str:
    """One line saying why the store refused a span (bad range, unknown episode or span)."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"]))
        message = first["msg"].removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    return str(error)
