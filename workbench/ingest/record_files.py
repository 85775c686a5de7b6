"""Files of agent-run records, shared by the openai-chat and ATIF importers.

A run file holds records in one of three containers: a JSON array of records (streamed), a
single JSON object (one record), or JSON lines (one record per line); see
:func:`json_records`. Outcomes may sit in the records themselves (:func:`find_outcome`) or in a
separate results file given with ``--results`` (:class:`Results`): an object mapping ids to
results, or an array or JSON lines of results each naming its id (and trial).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson
from pydantic import ValidationError

from store import Outcome
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    json_items,
    json_line,
    outcome_from,
    validation_error,
    yielded,
)
from workbench.ingest.values import float_or_none, loads, parse_json, pick, places, scalar

TRIAL_KEYS = ("trial", "attempt", "epoch", "run")
"""Keys naming which attempt at its task a record (or a result) is."""
MESSAGE_TEXT_KEYS = ("exit_status", "status", "message", "error", "feedback", "reason")
"""Keys whose text becomes the outcome's evaluator-visible message."""
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jl")


# -- outcomes inside records ------------------------------------------------------------------


def find_outcome(obj: dict[str, Any], sub_keys: Sequence[str]) -> Outcome | None:
    """The outcome recorded in ``obj`` or its sub-objects; ``None`` when none says one.

    The first place with a success flag or a score wins (see ``outcome_from``); the message
    is the first text under :data:`MESSAGE_TEXT_KEYS` anywhere in those places.
    """
    found = list(places(obj, sub_keys))
    message = next(
        (p[k] for p in found for k in MESSAGE_TEXT_KEYS if isinstance(p.get(k), str)), ""
    )
    for place in found:
        outcome = outcome_from(place, message)
        if outcome.success is not None or outcome.score is not None:
            return outcome
    return Outcome(message=message) if message else None


# -- JSON containers: an array, one object, or JSON lines -------------------------------------


@dataclass
class Record:
    """One record read from a JSON container."""

    index: int
    """Position among the file's records, from 0 (unreadable JSON lines count too)."""
    where: str
    """Where it is, for errors and sources: ``record 3`` (array index) or ``line 12``."""
    value: Any


def json_records(ctx: ReadContext) -> Iterator[Record | IngestError]:
    """The records of a JSON array (streamed), a single JSON object, or JSON lines.

    An unreadable JSON line is yielded as an error; a file that is not JSON at all, or an
    array whose text breaks off, raises.
    """
    with ctx.open() as handle:
        head = handle.peek(1 << 16)
        if head.startswith(b"\xef\xbb\xbf"):
            handle.read(3)
            head = head[3:]
        first = head.lstrip()[:1]
        if first == b"[" and not _looks_like_lines(ctx, head):
            yield from _array_records(ctx, handle)
        elif first in (b"[", b"{"):
            yield from _object_or_lines(ctx, handle)
        elif not first:
            raise ctx.error("", "", "empty file")
        elif b"\x00" in head[:4096]:
            raise ctx.error("", "", "binary data, not JSON")
        else:
            raise ctx.error(
                "", "", "expected a JSON object, an array of records or JSON lines of records"
            )


def _ijson_message(error: Exception) -> str:
    text = str(error).removeprefix("b'").removeprefix('b"')
    return re.split(r"\\n|\n", text, maxsplit=1)[0].strip().rstrip(".")


def _looks_like_lines(ctx: ReadContext, head: bytes) -> bool:
    """Whether a file is JSON lines: by its suffix, or a whole value on its first line."""
    if ctx.path.suffix.lower() in JSONL_SUFFIXES:
        return True
    text = head.lstrip()
    end = text.find(b"\n")
    return end >= 0 and bool(text[end:].strip()) and _is_json(text[:end])


def _is_json(text: str | bytes) -> bool:
    """Whether ``text`` is one whole JSON value."""
    try:
        loads(text)
    except ValueError:
        return False
    return True


def _array_records(ctx: ReadContext, handle: io.BufferedReader) -> Iterator[Record]:
    count = 0
    try:
        # Large reads: yajl grows a long string chunk by chunk, slowly with small chunks.
        for value in json_items(handle, "item", buf_size=1 << 22):
            yield Record(count, f"record {count}", value)
            count += 1
    except ijson.JSONError as error:
        raise ctx.error(f"record {count}", "", f"invalid JSON: {_ijson_message(error)}") from None


def _object_or_lines(ctx: ReadContext, handle: io.BufferedReader) -> Iterator[Record | IngestError]:
    """JSON lines, or one JSON document when its first line is not a whole value."""
    number, first = 0, b""
    for raw in handle:
        number += 1
        if raw and not raw.isspace():
            first = raw
            break
    lines = ctx.path.suffix.lower() in JSONL_SUFFIXES
    line = [first]
    if lines:  # (else a document whose first line is not a whole value is read from it)
        raw = first = b""
    value = _load_line(ctx, number, line)
    if isinstance(value, IngestError) and not lines:
        yield Record(0, "record 0", _whole_document(ctx, first + handle.read(), number - 1))
        return
    raw = first = b""  # a line's bytes are not held while its record is stored
    box = [value if isinstance(value, IngestError) else Record(0, f"line {number}", value)]
    value = None
    yield from yielded(box)
    index = 1
    for raw in handle:
        number += 1
        if raw and not raw.isspace():
            line, raw = [raw], b""
            value = _load_line(ctx, number, line)
            box = [
                value if isinstance(value, IngestError) else Record(index, f"line {number}", value)
            ]
            value = None
            yield from yielded(box)
            index += 1


def _load_line(ctx: ReadContext, number: int, line: list[bytes]) -> Any:
    """The JSON value on the line in ``line`` (taken out of it: a line that opens an object
    is decoded, and its bytes freed before its text is parsed), or an :class:`IngestError`
    saying why there is none."""
    raw = line.pop()
    try:
        if raw[:1] != b"{" or raw[1:2] == b"\x00":
            return json_line(raw.rstrip(b"\r\n"))
        text = raw.decode("utf-8", "surrogatepass")  # as json_line reads it
        del raw
        try:  # a line's end is JSON space: no stripped copy of a line that parses
            return parse_json(text)
        except json.JSONDecodeError:
            return parse_json(text.rstrip("\r\n"))  # (the error's column: of the line)
    except UnicodeDecodeError:
        return ctx.error(f"line {number}", "", "not UTF-8 text")
    except json.JSONDecodeError as error:
        place = "column" if error.msg.endswith(" at") else "at column"
        problem = f"{error.msg[:1].lower()}{error.msg[1:]} {place} {error.colno}"
        return ctx.error(f"line {number}", "", f"invalid JSON: {problem}")


def _whole_document(ctx: ReadContext, data: bytes, skipped_lines: int) -> Any:
    try:
        return loads(data)
    except UnicodeDecodeError as error:
        raise ctx.error(f"byte {error.start}", "", "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno + skipped_lines} column {error.colno}"
        raise ctx.error(where, "", f"invalid JSON: {error.msg}") from None


def read_records(
    ctx: ReadContext, episode: Callable[[Record], ParsedEpisode]
) -> Iterator[ParsedEpisode | IngestError]:
    """Yield ``episode(record)`` for each record of the file; unreadable records as errors."""
    for record in json_records(ctx):
        if isinstance(record, IngestError):
            yield record
            continue
        where = record.where
        try:
            box = [episode(record)]
        except IngestError as error:
            yield error
            continue
        except ValidationError as error:
            yield validation_error(ctx.path, where, error)
            continue
        record = None  # not held while the episode is stored (see yielded)
        yield from yielded(box)


# -- task keys --------------------------------------------------------------------------------


def instruction_key(instruction: str) -> str:
    """A stable task key from the task's instruction, for records that name no task."""
    return "prompt-" + hashlib.sha256(instruction.encode()).hexdigest()[:12]


def unnamed_task_key(ctx: ReadContext, record: Record, instruction: str) -> str:
    """The task key of a record that names no task: from its instruction, else its place."""
    return instruction_key(instruction) if instruction else f"{ctx.key}-{record.index}"


def namespaced(environment: str, key: str) -> str:
    """The task id ``<environment>:<key>``, unless ``key`` already starts so."""
    return key if key.startswith(f"{environment}:") else f"{environment}:{key}"


# -- results files ----------------------------------------------------------------------------


@dataclass
class Results:
    """Outcomes from a separate results file, found by record id (and trial)."""

    path: Path
    entries: dict[tuple[str, str | None], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(
        cls, ctx: ReadContext, id_keys: Sequence[str], trial_keys: Sequence[str] = TRIAL_KEYS
    ) -> Results | None:
        """Read ``ctx.results`` (if given): an id→result object, or an array/JSONL of results.

        Raises :class:`IngestError` naming the results file when it cannot be used.
        """
        if ctx.results is None:
            return None
        results = cls(ctx.results)
        with ctx.open(ctx.results) as handle:
            data = handle.read()
        for where, entry, key in results._entries(results._parse(data), id_keys):
            trial = pick(entry, trial_keys)
            keys = [key] if key is not None else []
            keys += [v for k in id_keys if (v := scalar(entry.get(k))) is not None]
            if not keys:
                raise IngestError(
                    results.path, where, id_keys[0], f"no id (one of {', '.join(id_keys)})"
                )
            for id_value in keys:
                results.entries[(id_value, trial)] = entry
        return results

    def find(self, ids: Iterable[str | None], trial: str | None = None) -> dict[str, Any] | None:
        """The result for the first of ``ids`` that has one, preferring the same trial."""
        ids = [i for i in ids if i is not None]
        for wanted in [trial, None] if trial is not None else [None]:
            for id_value in ids:
                entry = self.entries.get((id_value, wanted))
                if entry is not None:
                    return entry
        return None

    def _parse(self, data: bytes) -> Any:
        """One JSON document, or JSON lines when the whole text is not one document."""
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise IngestError(self.path, f"byte {error.start}", "", "not UTF-8 text") from None
        try:
            return loads(text)
        except json.JSONDecodeError as whole:
            lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
            if len(lines) < 2 or not _is_json(lines[0][1]):
                where = f"line {whole.lineno} column {whole.colno}"
                raise IngestError(self.path, where, "", f"invalid JSON: {whole.msg}") from None
        parsed = []
        for number, line in lines:
            try:
                parsed.append(loads(line))
            except json.JSONDecodeError as error:
                where = f"line {number}"
                raise IngestError(self.path, where, "", f"invalid JSON: {error.msg}") from None
        return parsed

    def _entries(
        self, data: Any, id_keys: Sequence[str]
    ) -> Iterator[tuple[str, dict[str, Any], str | None]]:
        """``(where, result, id it is filed under)`` for each result in the parsed file."""
        if isinstance(data, list):
            for i, entry in enumerate(data):
                if not isinstance(entry, dict):
                    raise IngestError(self.path, f"record {i}", "", "expected a result object")
                yield f"record {i}", entry, None
        elif isinstance(data, dict) and ("resolved_ids" in data or "unresolved_ids" in data):
            for key, success in (("resolved_ids", True), ("unresolved_ids", False)):
                for id_value in data.get(key) or []:
                    yield key, {"success": success}, scalar(id_value)
        elif isinstance(data, dict) and any(scalar(data.get(k)) for k in id_keys):
            yield "", data, None
        elif isinstance(data, dict):
            for key, value in data.items():
                yield f"key {key!r}", self._mapped(key, value), key
        else:
            raise IngestError(self.path, "", "", "expected an object or an array of results")

    def _mapped(self, key: str, value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        if isinstance(value, bool):
            return {"success": value}
        if float_or_none(value) is not None:
            return {"score": value}
        raise IngestError(
            self.path, f"key {key!r}", key, "expected a result object, a boolean or a number"
        )
