"""Span labels in and out as JSON lines, one span a line.

A line names the ``episode``, the ``start`` and ``end`` steps (inclusive), the ``kind``
(``causal``, ``contrast``, ``evidence`` or ``note``), and optionally a ``label``, a ``note``,
the ``author`` and a ``confidence``; an export adds the ``agents`` that acted in the span's
steps, in a log of several agents (left aside when read back)::

    {"episode": "3f2a9c1e0b7d-r4", "start": 6, "end": 6, "kind": "causal",
     "label": "wrong-confirmation", "note": "confirms before checking", "author": "alice"}

Step numbers are the workbench's step indices, or with ``index="source"`` the position of the
step's message in the source log (see :func:`source_positions`). An author other than
``human`` or ``analyzer:<name>`` is a named labeller, stored as ``human:<name>``.

Reading a file checks every line before anything is written; a bad line is reported by its
number and field, and a file with any bad line writes nothing. Spans already stored (same
episode, steps, kind, label, note and author) are not added again, so importing a file twice
adds nothing.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from store import EpisodeFilter, Span, Step, Store
from store.records import SpanKind
from workbench.escapes import json_dumps
from workbench.ingest.base import IngestError, validation_error

IndexBase = Literal["workbench", "source"]
"""Which step numbers a label file uses: the workbench's step indices or the source's."""

MAX_ERRORS = 20
"""Bad lines reported at most (the count of the rest is given)."""


class SpanLine(BaseModel):
    """One line of a label file."""

    model_config = ConfigDict(extra="forbid")

    episode: str = Field(min_length=1)
    """The episode the span marks."""
    start: int = Field(ge=0)
    """First step (inclusive)."""
    end: int | None = Field(default=None, ge=0)
    """Last step (inclusive); the start step when left out."""
    kind: SpanKind = "causal"
    """Why the span was marked."""
    label: str = ""
    """Short label grouping spans."""
    note: str = ""
    """Free-text note."""
    author: str = Field(default="human", min_length=1)
    """``human``, a labeller's name, or ``analyzer:<name>``."""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    """How sure the author is, from 0 to 1."""
    agents: list[str] = []
    """The agents that acted in the span's steps, in a log of several agents (what an export
    says; read back, it is left aside: the steps say it)."""


def stored_author(name: str) -> str:
    """The author as stored: ``human`` and ``analyzer:…`` as given, a name as ``human:<name>``."""
    if name == "human" or name.startswith(("human:", "analyzer:")):
        return name
    return f"human:{name}"


def is_human(author: str) -> bool:
    """Whether a stored author is a person (``human`` or ``human:<name>``)."""
    return author == "human" or author.startswith("human:")


def by_author(author: str, name: str) -> bool:
    """Whether a stored author is the one called ``name`` (as given on the command line)."""
    return author == stored_author(name)


# -- source positions -----------------------------------------------------------------------


def source_positions(steps: list[Step]) -> list[tuple[int, int]]:
    """For each step, the first and last position in the source log of the message(s) it was
    read from.

    Importers keep each step's source record verbatim in ``Step.raw``; positions are counted
    from those records: the tool calls of one assistant message (consecutive ``tool_call``
    steps with the same record) share the message's position, and a step read from a list of
    messages (mini-swe-agent's action with its observation) covers one position per message.
    """
    spans: list[tuple[int, int]] = []
    position = 0
    for k, step in enumerate(steps):
        previous = steps[k - 1] if k else None
        if previous is not None and _same_message(previous, step):
            spans.append(spans[-1])
            continue
        width = _messages_in(step.raw)
        spans.append((position, position + width - 1))
        position += width
    return spans


def _same_message(previous: Step, step: Step) -> bool:
    return (
        step.kind == previous.kind == "tool_call"
        and step.raw is not None
        and step.raw == previous.raw
    )


def _messages_in(raw: Any) -> int:
    if isinstance(raw, list) and raw and all(isinstance(m, dict) and "role" in m for m in raw):
        return len(raw)
    return 1


@dataclass
class StepMap:
    """One episode's steps against source positions, both ways."""

    n_steps: int
    """Steps stored for the episode."""
    positions: list[tuple[int, int]]
    """First and last source position of each step (see :func:`source_positions`)."""

    def step_at(self, position: int, last: bool) -> int | None:
        """The first (or ``last``) step read from the message at ``position``; ``None`` past
        the end of the log."""
        if not self.positions or position > self.positions[-1][1]:
            return None
        k = bisect_right([first for first, _ in self.positions], position) - 1
        if not last:
            return next(i for i, p in enumerate(self.positions) if p == self.positions[k])
        return k

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """Step indices ``start..end`` as source positions."""
        return self.positions[start][0], self.positions[end][1]


def step_map(store: Store, episode_id: str) -> StepMap | None:
    """The episode's :class:`StepMap`; ``None`` when there is no such episode."""
    episode = store.episode(episode_id)
    if episode is None:
        return None
    return StepMap(episode.n_steps, source_positions(store.steps(episode_id)))


# -- import ---------------------------------------------------------------------------------


class BadLabels(Exception):
    """A label file with bad lines; nothing of it was written."""

    def __init__(self, errors: list[IngestError], more: int) -> None:
        self.errors, self.more = errors, more
        lines = [str(e) for e in errors]
        if more:
            lines.append(f"… and {more} more bad line(s)")
        super().__init__("\n".join(lines))


@dataclass
class SpanImport:
    """What importing a label file did."""

    added: int = 0
    """Spans stored."""
    present: int = 0
    """Lines whose span was stored already (or repeated in the file), left as they were."""


def import_spans(store: Store, path: Path | str, index: IndexBase = "workbench") -> SpanImport:
    """Store the spans of a label file in one transaction.

    Raises :class:`BadLabels` naming every bad line (by number and field), writing nothing;
    :class:`IngestError` when the file cannot be read at all.
    """
    path = Path(path)
    spans, errors = _read_spans(store, path, index)
    if errors:
        raise BadLabels(errors[:MAX_ERRORS], max(0, len(errors) - MAX_ERRORS))
    report = SpanImport()
    with store.transaction():
        seen = {episode: _keys(store.spans(episode)) for episode in {s.episode_id for s in spans}}
        for span in spans:
            if _key(span) in seen[span.episode_id]:
                report.present += 1
                continue
            seen[span.episode_id].add(_key(span))
            store.add_span(span)
            report.added += 1
    return report


def _key(span: Span) -> tuple[Any, ...]:
    return (span.start, span.end, span.kind, span.label, span.note, span.author)


def _keys(spans: list[Span]) -> set[tuple[Any, ...]]:
    return {_key(span) for span in spans}


def _read_spans(store: Store, path: Path, index: IndexBase) -> tuple[list[Span], list[IngestError]]:
    """Every line's span, and every bad line's error."""
    spans: list[Span] = []
    errors: list[IngestError] = []
    maps: dict[str, StepMap | None] = {}
    for number, obj in _lines(path, errors):
        try:
            spans.append(_span(store, path, number, obj, index, maps))
        except IngestError as error:
            errors.append(error)
    return spans, errors


def _lines(path: Path, errors: list[IngestError]) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON)`` per non-blank line; bad JSON goes to ``errors``."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as error:
        raise IngestError(path, "", "", error.strerror or str(error)) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw)
            except UnicodeDecodeError:
                errors.append(IngestError(path, f"line {number}", "", "not UTF-8 text"))
            except json.JSONDecodeError as error:
                errors.append(IngestError(path, f"line {number}", "", f"invalid JSON: {error.msg}"))


def _span(
    store: Store,
    path: Path,
    number: int,
    obj: Any,
    index: IndexBase,
    maps: dict[str, StepMap | None],
) -> Span:
    """The span one line describes, its steps checked against its episode."""
    where = f"line {number}"
    if not isinstance(obj, dict):
        raise IngestError(path, where, "", "expected a JSON object")
    try:
        line = SpanLine.model_validate(obj)
    except ValidationError as error:
        raise validation_error(path, where, error) from None
    end = line.start if line.end is None else line.end
    if end < line.start:
        raise IngestError(path, where, "end", f"end {end} is before start {line.start}")
    if line.episode not in maps:
        maps[line.episode] = step_map(store, line.episode)
    steps = maps[line.episode]
    if steps is None:
        raise IngestError(path, where, "episode", f"no episode {line.episode!r}")
    first, last = _steps(path, where, steps, line.start, end, index)
    author = stored_author(line.author)
    if not author.removeprefix("human:").removeprefix("analyzer:"):
        raise IngestError(path, where, "author", "empty author name")
    return Span(
        episode_id=line.episode,
        start=first,
        end=last,
        kind=line.kind,
        label=line.label,
        note=line.note,
        author=author,
        confidence=line.confidence,
    )


def _steps(
    path: Path, where: str, steps: StepMap, start: int, end: int, index: IndexBase
) -> tuple[int, int]:
    """The workbench step indices of ``start..end``, checked against the episode."""
    if index == "workbench":
        for name, value in (("start", start), ("end", end)):
            if value >= steps.n_steps:
                raise IngestError(
                    path,
                    where,
                    name,
                    f"step {value} is past the episode's last step {steps.n_steps - 1}",
                )
        return start, end
    found = {"start": steps.step_at(start, last=False), "end": steps.step_at(end, last=True)}
    for name, value in (("start", start), ("end", end)):
        if found[name] is None:
            last = steps.positions[-1][1] if steps.positions else -1
            raise IngestError(
                path, where, name, f"source message {value} is past the log's last message {last}"
            )
    return found["start"], found["end"]  # type: ignore[return-value]


# -- export ---------------------------------------------------------------------------------


def span_line(
    span: Span, steps: StepMap | None = None, agents: list[str] | None = None
) -> dict[str, Any]:
    """A span as a label-file line (step numbers as source positions when ``steps`` is given;
    ``agents``, those that acted in its steps, when any did)."""
    start, end = steps.to_source(span.start, span.end) if steps else (span.start, span.end)
    line = {
        "episode": span.episode_id,
        "start": start,
        "end": end,
        "kind": span.kind,
        "label": span.label,
        "note": span.note,
        "author": span.author,
    }
    if span.confidence is not None:
        line["confidence"] = span.confidence
    if agents:
        line["agents"] = agents
    return line


def export_spans(
    store: Store,
    handle: IO[str],
    where: EpisodeFilter | None = None,
    *,
    author: str | None = None,
    index: IndexBase = "workbench",
) -> int:
    """Write the spans of the episodes matching ``where`` (only ``author``'s, if given) as
    JSON lines; returns how many were written. Control characters JSON leaves raw and
    characters that disguise text are written as ``\\uXXXX`` escapes."""
    count = 0
    for episode in store.iter_episodes(where or EpisodeFilter()):
        spans = [
            s for s in store.spans(episode.id) if author is None or by_author(s.author, author)
        ]
        if not spans:
            continue
        steps = step_map(store, episode.id) if index == "source" else None
        for span in spans:
            agents = store.agents_in(episode.id, span.start, span.end)
            handle.write(json_dumps(span_line(span, steps, agents)) + "\n")
            count += 1
    return count
