"""JSON and JSONL logs read through a mapping's ``[episodes]`` and ``[steps]`` tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from store import Outcome
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    iter_jsonl,
    load_json,
    shortened,
)
from workbench.ingest.mapped.episodes import ROLES, kind_of_texts, parsed_episode
from workbench.ingest.mapped.language import (
    ROLE_NAMES,
    SHOWN_CHARS,
    STEP_KINDS,
    Mapping,
    Misfit,
    Read,
    shown,
)
from workbench.ingest.mapped.paths import first_found
from workbench.ingest.values import compact_json, float_or_none, scalar

TEXTS = ("action", "observation", "thought", "content")
"""The step fields that hold text."""


def _text(values: list[Any]) -> str:
    """Text of the values found at a path (joined by newlines)."""
    return "\n".join(v if isinstance(v, str) else compact_json(v) for v in values if v is not None)


def _elements(found: list[Any]) -> list[Any]:
    """What a path found, as a list: one list found is its elements (``runs`` as ``runs[*]``)."""
    return found[0] if len(found) == 1 and isinstance(found[0], list) else found


def described(record: Any) -> str:
    """A record as an error that found nothing in it shows it: an object by its keys."""
    if isinstance(record, dict) and record:
        return shortened(f"an object with keys {', '.join(record)}", SHOWN_CHARS)
    return shown(record)


class RecordReader:
    """Reads a JSON log (whole) or a JSONL log (a line at a time) into episodes."""

    def __init__(self, mapping: Mapping, ctx: ReadContext, lines: bool) -> None:
        self.episodes, self.steps = mapping.episodes, mapping.steps
        self.ctx = ctx
        self.lines = lines
        """Whether the log is JSONL (each line a record, or ``episodes.path`` in it)."""

    def read(self) -> Iterator[ParsedEpisode | IngestError]:
        """Yield the log's episodes; a record that does not fit is yielded as an error."""
        if not self.lines:
            yield from self._records(load_json(self.ctx), "record")
            return
        for item in iter_jsonl(self.ctx):
            if isinstance(item, IngestError):
                yield item
            elif self.episodes.path is None:
                yield self._try(f"line {item[0]}", item[1])
            else:
                yield from self._records(item[1], f"line {item[0]}, record")

    def _records(self, container: Any, label: str) -> Iterator[ParsedEpisode | IngestError]:
        records = _elements(first_found(container, self.episodes.path or "$"))
        for number, record in enumerate(records):
            yield self._try(f"{label} {number}", record)

    def _try(self, where: str, record: Any) -> ParsedEpisode | IngestError:
        try:
            return self.episode(where, record)
        except IngestError as error:
            return error

    def episode(self, where: str, record: Any) -> ParsedEpisode:
        """The episode of one record (``where`` names it in errors)."""
        key = self._scalar(where, record, "id") or where.replace(", ", ".").replace(" ", "")
        header = {k: self._scalar(where, record, k) for k in ("task", "agent", "family")}
        header["instruction"] = _text(self._read(where, record, "instruction"))
        steps = self._steps(where, record)
        outcome = self._outcome(where, record)
        if not steps and outcome.success is None and outcome.score is None:
            field = "steps.path" if self.steps else "episodes.success"
            at = f"no steps at {self.steps.path!r} and " if self.steps else ""
            raise self.ctx.error(where, field, f"{at}no outcome in {described(record)}")
        return parsed_episode(self.ctx, where, key, header, outcome, steps, {"record": key})

    def _spec(self, key: str, table: str) -> Any:
        """How field ``key`` of ``[table]`` is read (``None``: it is not mapped)."""
        section = self.episodes if table == "episodes" else self.steps
        return getattr(section, key) if section is not None else None

    def _read(self, where: str, record: Any, key: str, table: str = "episodes") -> list[Any]:
        """The values of field ``key`` of ``[table]`` in ``record`` (none when unmapped)."""
        spec = self._spec(key, table)
        if spec is None:
            return []
        try:
            return spec.read(record)
        except Misfit as misfit:
            raise self.ctx.error(where, f"{table}.{key}", str(misfit)) from None

    def _scalar(self, where: str, record: Any, key: str) -> str | None:
        spec = getattr(self.episodes, key)
        values = self._read(where, record, key)
        if isinstance(spec, Read) and key in ("id", "task") and not values:
            found = f"nothing at {spec.source} in {described(record)}"
            raise self.ctx.error(where, f"episodes.{key}", found)
        value = scalar(values[0]) if values else None
        if values and value is None and values[0] is not None:
            wrong = f"expected text at {spec.source}, got {shown(values[0])}"
            raise self.ctx.error(where, f"episodes.{key}", wrong)
        return value

    def _outcome(self, where: str, record: Any) -> Outcome:
        found = self._read(where, record, "success")
        success = bool(found[0]) if found and found[0] is not None else None
        return Outcome(success=success, score=self._number(where, record, "score", "episodes"))

    def _number(self, where: str, record: Any, key: str, table: str) -> float | None:
        values = self._read(where, record, key, table)
        number = float_or_none(values[0]) if values else None
        if values and number is None and values[0] is not None:
            wrong = f"expected a number at {self._spec(key, table).source}, got {shown(values[0])}"
            raise self.ctx.error(where, f"{table}.{key}", wrong)
        return number

    def _steps(self, where: str, record: Any) -> list[dict[str, Any]]:
        if self.steps is None:
            return []
        found = first_found(record, self.steps.path)
        items = [] if found == [None] else _elements(found)
        return [self._step(f"{where}, step {i}", item) for i, item in enumerate(items)]

    def _step(self, where: str, item: Any) -> dict[str, Any]:
        texts = {key: _text(self._read(where, item, key, "steps")) for key in TEXTS}
        if not any(texts.values()):
            raise self.ctx.error(
                where,
                "steps.action",
                f"no action, observation, thought or content in {shown(item)}",
            )
        kind = self._kind(where, item) or kind_of_texts(texts)
        return {
            **texts,
            "kind": kind,
            "role": self._role(where, item, kind),
            "agent": _text(self._read(where, item, "agent", "steps")),
            "reward": self._number(where, item, "reward", "steps"),
            "raw": item,
        }

    def _kind(self, where: str, item: Any) -> str:
        assert self.steps is not None
        found = self._read(where, item, "kind", "steps")
        value = found[0] if found else None
        if value is None or value == "":
            return ""  # none mapped: the step's texts say (see kind_of_texts)
        text = value if isinstance(value, str) else compact_json(value)
        kind = self.steps.kinds.get(text, text)
        if kind not in STEP_KINDS:
            raise self.ctx.error(
                where, "steps.kind", f"{shown(value)} is no step kind; map it in kinds"
            )
        return kind

    def _role(self, where: str, item: Any, kind: str) -> str:
        assert self.steps is not None
        found = self._read(where, item, "role", "steps")
        value = found[0] if found else None
        if value is None or value == "":
            return ROLES.get(kind, "agent")
        if value not in ROLE_NAMES:
            spec = self.steps.role
            assert spec is not None
            raise self.ctx.error(
                where,
                "steps.role",
                f"{shown(value)} at {spec.source} is no role (one of {', '.join(ROLE_NAMES)});"
                " map it with a value map",
            )
        return value
