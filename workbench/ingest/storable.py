"""What a parsed episode may hold that SQLite cannot store, made storable or named.

Python reads from JSON what SQLite refuses: text with lone surrogates (``"\\ud800"``, or the
bytes a careless encoder writes for one), integers outside SQLite's 64 bits, values nested
too deep to write back as JSON. The import checks an episode's rows as it queues them
(:func:`refused`: plain values, ASCII text passed at C speed) and only then comes here:
lone surrogates are replaced by U+FFFD (each one by one replacement character, so
re-importing gives the same text), and anything else is an :class:`IngestError` naming the
file, the record and the field.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import cache
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any

from pydantic import BaseModel

from store import Episode, Span, Step, Task
from store.rows import columns, row_values
from store.staging import StagedEpisode
from workbench.ingest.base import IngestError, ParsedEpisode
from workbench.ingest.steps import StepFields

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
SQLITE_INT = range(-(2**63), 2**63)
"""The integers SQLite stores."""

UNSTORABLE = (UnicodeEncodeError, OverflowError, RecursionError, ValueError)
"""What storing a parsed episode raises for a value SQLite (or JSON) cannot hold."""
_INDEX, _EPISODE_ID = attrgetter("index"), attrgetter("episode_id")


def refused(rows: StagedEpisode) -> str | None:
    """What SQLite would refuse in an episode's rows: ``"surrogate"`` (text with a lone
    surrogate), ``"integer"`` (outside 64 bits), or None when it stores them all.

    The rows of validated records hold text and integers only where their models say so
    (:func:`_kinds`): those columns are gathered and checked at C speed, all the episode's
    text at once. Rows that hold something else where text is due (records built without
    validation) are looked through value by value.
    """
    _, task, episode, steps, spans = rows
    tables = [(Task, [task]), (Episode, [episode]), (Step, steps)]
    tables.append((Span, [row_values(span) for span in spans]))
    try:
        texts, integers = [], []
        for model, table in tables:
            if table:
                text_at, integer_at = _kinds(model)
                texts += filter(None, chain.from_iterable(map(text_at, table)))
                integers += filter(None, chain.from_iterable(map(integer_at, table)))
        # all at once when that is small; one by one when a copy of all would cost memory
        whole = ["".join(texts)] if sum(map(len, texts)) <= JOINED else texts
        beyond = bool(integers) and (max(integers) >= 2**63 or min(integers) < -(2**63))
    except TypeError:  # a value of another type where text or an integer is due
        return _refused_value(chain.from_iterable(table for _, table in tables))
    if any(not text.isascii() and _SURROGATE.search(text) is not None for text in whole):
        return "surrogate"
    return "integer" if beyond else None


JOINED = 1 << 22
"""Characters of an episode's text checked as one string (a copy of them all); an episode
with more (a tool output of many MB) has its texts checked one by one instead."""


def _refused_value(rows: Iterable[Sequence[Any]]) -> str | None:
    """:func:`refused`, value by value."""
    for row in rows:
        for value in row:
            kind = type(value)
            if kind is str:
                if not value.isascii() and _SURROGATE.search(value) is not None:
                    return "surrogate"
            elif kind is int and value not in SQLITE_INT:
                return "integer"
    return None


@cache
def _kinds(model: type[BaseModel]) -> tuple[Callable[[Any], tuple], Callable[[Any], tuple]]:
    """Getters of the values of ``model``'s row that are text (or ``None``), and of those that
    are integers (or ``None``), each as a tuple: text columns, datetimes (stored as text), JSON
    columns (stored as JSON text); integer columns."""
    text, integer = [], []
    for position, (_column, name, sub, is_json) in enumerate(columns(model)):
        field = model.model_fields[name]
        annotation = (field.annotation.model_fields[sub] if sub else field).annotation
        kinds = _types(annotation)
        if is_json or kinds <= {str, datetime, type(None)}:
            text.append(position)
        elif kinds <= {int, type(None)}:
            integer.append(position)
    return _getter(text), _getter(integer)


def _types(annotation: Any) -> set[Any]:
    """The types an annotation admits (a ``Literal`` of strings as ``str``)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return {type(arg) for arg in typing.get_args(annotation)}
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_types(arg) for arg in typing.get_args(annotation)))
    return {annotation}


def _getter(positions: list[int]) -> Callable[[Any], tuple]:
    """A getter of the values at ``positions`` as a tuple (one for any number of them)."""
    if not positions:
        return lambda row: ()
    if len(positions) == 1:
        (one,) = positions
        return lambda row: (row[one],)
    return itemgetter(*positions)


def misfit(path: str, parsed: ParsedEpisode) -> IngestError | None:
    """The error for an episode whose parts do not fit together (steps numbered other than
    0, 1, 2… or belonging to another episode, spans of another episode), which the database
    would refuse; None when they fit. The built-in importers never make one; an importer
    passed from Python may."""
    episode, steps = parsed.episode, parsed.steps
    if isinstance(steps, StepFields) and steps.episode_id == episode.id and not parsed.spans:
        return None  # (numbered by build_steps)
    fit = list(map(_INDEX, steps)) == list(range(len(steps)))  # (at C speed: the usual case)
    if fit and {episode.id}.issuperset(map(_EPISODE_ID, steps)) and not parsed.spans:
        return None
    where = f"episode {episode.id}"
    for i, step in enumerate(steps):
        if step.index != i:
            return IngestError(path, where, f"steps.{i}.index", f"expected {i}, got {step.index}")
        if step.episode_id != episode.id:
            return IngestError(
                path, where, f"steps.{i}.episode_id", f"names another episode ({step.episode_id})"
            )
    for i, span in enumerate(parsed.spans):
        if span.episode_id != episode.id:
            return IngestError(
                path, where, f"spans.{i}.episode_id", f"names another episode ({span.episode_id})"
            )
    return None


def without_surrogates(parsed: ParsedEpisode) -> ParsedEpisode:
    """``parsed`` with every lone surrogate in its text replaced by U+FFFD."""
    return ParsedEpisode(
        task=_cleaned(parsed.task),
        episode=_cleaned(parsed.episode),
        steps=[_cleaned(step) for step in parsed.steps],
        spans=[_cleaned(span) for span in parsed.spans],
        batch=_cleaned(parsed.batch) if parsed.batch is not None else None,
    )


def _cleaned(record: Any) -> Any:
    data = record.model_dump()
    return type(record).model_validate(_replace(data)) if _has_surrogate(data) else record


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_surrogate(v) for v in value)
    return False


def _replace(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {_replace(k): _replace(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_replace(v) for v in value)
    return value


def unstorable(path: str, parsed: ParsedEpisode, error: BaseException) -> IngestError:
    """The error for an episode SQLite refused with ``error``: its record and, when one can be
    found, the field at fault."""
    source = parsed.episode.source
    ours = source.path == path and source.record  # (the workbench's JSONL keeps its own)
    where = source.record if ours else f"episode {parsed.episode.id}"
    for prefix, record in _records(parsed):
        found = _bad_field(record)
        if found is not None:
            field, message = found
            return IngestError(path, where, ".".join(p for p in (prefix, field) if p), message)
    return IngestError(path, where, "", f"cannot be stored: {type(error).__name__}: {error}")


def _records(parsed: ParsedEpisode) -> list[tuple[str, BaseModel]]:
    records: list[tuple[str, BaseModel]] = [("task", parsed.task), ("episode", parsed.episode)]
    records += [(f"steps.{i}", step) for i, step in enumerate(parsed.steps)]
    records += [(f"spans.{i}", span) for i, span in enumerate(parsed.spans)]
    if parsed.batch is not None:
        records.append(("batch", parsed.batch))
    return records


def _bad_field(record: BaseModel) -> tuple[str, str] | None:
    """``(field, what is wrong)`` for the first value of ``record`` SQLite cannot store."""
    for name in type(record).model_fields:
        value = getattr(record, name)
        if isinstance(value, int) and not isinstance(value, bool) and value not in SQLITE_INT:
            return (
                name,
                f"integer {_short(value)} is out of range (SQLite stores -2**63 to 2**63-1)",
            )
        if isinstance(value, BaseModel):
            found = _bad_field(value)
            if found is not None:
                return f"{name}.{found[0]}", found[1]
    try:
        row_values(record)
    except RecursionError:
        return "", "a value nested too deeply to store"
    except (OverflowError, ValueError) as error:
        return "", f"cannot be stored: {error}"
    return None


def _short(value: int) -> str:
    text = str(value) if value.bit_length() < 4000 else "with over 1000 digits"
    return text if len(text) <= 40 else f"{text[:20]}…({len(text)} digits)"
