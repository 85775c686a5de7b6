"""The workbench's own JSONL format: one episode per line, lossless, also the export format.

Each line is one JSON object::

    {"format": "trajectory-workbench", "version": 1,
     "task": {Task}, "batch": {Batch}, "episode": {Episode},
     "steps": [{Step}, ...], "spans": [{Span}, ...]}

Field names and meanings are those of the records in ``store.records``. In ``steps`` and
``spans`` the ``episode_id`` may be left out (it is the episode's); step ``index`` values
must run 0, 1, 2, ... in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from store import Batch, Episode, Span, Store, Task
from workbench.escapes import json_dumps
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    episodes_per_line,
    validation_error,
)
from workbench.ingest.steps import step_list

M = TypeVar("M", bound=BaseModel)

FORMAT = "trajectory-workbench"
VERSION = 1

name = "workbench"
description = "the workbench's own JSONL (also what `workbench export` writes)"


_MARK = re.compile(rf'"format"\s*:\s*"{FORMAT}"')


def sniff(path: Path, head: str) -> bool:
    first_line = head.lstrip().partition("\n")[0]
    return first_line.startswith("{") and _MARK.search(first_line) is not None


def _parse(ctx: ReadContext, where: str, model: type[M], value: Any, prefix: str) -> M:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise validation_error(ctx.path, where, error, prefix) from None


def _parse_line(ctx: ReadContext, where: str, obj: Any) -> ParsedEpisode:
    if not isinstance(obj, dict):
        raise ctx.error(where, "", "expected a JSON object")
    if obj.get("format") != FORMAT:
        raise ctx.error(where, "format", f"expected {FORMAT!r}, got {obj.get('format')!r}")
    if obj.get("version") != VERSION:
        raise ctx.error(
            where, "version", f"unsupported version {obj.get('version')!r} (expected {VERSION})"
        )
    for key in ("task", "batch", "episode"):
        if key not in obj:
            raise ctx.error(where, key, "field required")
    task = _parse(ctx, where, Task, obj["task"], "task")
    batch = _parse(ctx, where, Batch, obj["batch"], "batch")
    episode = _parse(ctx, where, Episode, obj["episode"], "episode")
    if episode.task_id != task.id:
        raise ctx.error(
            where, "episode.task_id", f"{episode.task_id!r} is not the line's task {task.id!r}"
        )
    if episode.batch_id != batch.id:
        raise ctx.error(
            where, "episode.batch_id", f"{episode.batch_id!r} is not the line's batch {batch.id!r}"
        )
    try:
        steps = step_list().validate_python(
            [_owned(item, episode.id) for item in _list(ctx, where, obj, "steps")]
        )
    except ValidationError as error:
        raise validation_error(ctx.path, where, error, "steps") from None
    for i, step in enumerate(steps):
        if step.index != i:
            raise ctx.error(where, f"steps.{i}.index", f"expected {i}, got {step.index}")
        if step.episode_id != episode.id:
            raise ctx.error(
                where, f"steps.{i}.episode_id", f"{step.episode_id!r} is not {episode.id!r}"
            )
    spans = [
        _parse(ctx, where, Span, _owned(item, episode.id), f"spans.{i}")
        for i, item in enumerate(_list(ctx, where, obj, "spans"))
    ]
    for i, span in enumerate(spans):
        if span.end >= len(steps):
            raise ctx.error(where, f"spans.{i}.end", f"step {span.end} is past the last step")
    return ParsedEpisode(task=task, episode=episode, steps=steps, spans=spans, batch=batch)


def _list(ctx: ReadContext, where: str, obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise ctx.error(where, key, "expected a list")
    return value


def _owned(item: Any, episode_id: str) -> Any:
    if isinstance(item, dict) and "episode_id" not in item:
        return {**item, "episode_id": episode_id}
    return item


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    yield from episodes_per_line(ctx, lambda number, obj: _parse_line(ctx, f"line {number}", obj))


# -- export -----------------------------------------------------------------------------------


def episode_line(store: Store, episode: Episode) -> dict[str, Any]:
    """The JSONL object for one stored episode, with its task, batch, steps and spans."""
    task = store.task(episode.task_id)
    batch = store.batch(episode.batch_id)
    assert task is not None and batch is not None  # foreign keys guarantee both
    dump = lambda record, *drop: record.model_dump(mode="json", exclude=set(drop))  # noqa: E731
    return {
        "format": FORMAT,
        "version": VERSION,
        "task": dump(task),
        "batch": dump(batch),
        "episode": dump(episode),
        "steps": [dump(step, "episode_id") for step in store.steps(episode.id)],
        "spans": [dump(span, "episode_id") for span in store.spans(episode.id)],
    }


def write(store: Store, episodes: Iterable[Episode], out: IO[str]) -> int:
    """Write episodes as workbench JSONL to ``out``; returns how many were written.

    Control characters JSON leaves raw (DEL, C1) and characters that disguise text are
    written as ``\\uXXXX`` escapes (:func:`workbench.escapes.json_dumps`): the file shows
    safely in a terminal and reads back the same."""
    count = 0
    for episode in episodes:
        out.write(json_dumps(episode_line(store, episode)))
        out.write("\n")
        count += 1
    return count
