"""Logs of any shape, read through a mapping file (``workbench import --map mapping.toml``).

A mapping is a TOML file that says where a log keeps its episodes and their steps, so a JSON,
JSONL or text log imports without code::

    name = "my-agent"            # the tasks' environment and the episodes' source format
    format = "json"              # json | jsonl | text (default: text with [text], json with
                                 # episodes.path, else jsonl)

    [episodes]
    path = "runs[*]"             # json: where the list of episodes is (jsonl: one per line)
    id = "run_id"
    task = "task.id"
    instruction = "task.goal"
    agent = "meta.model"
    family = "task.kind"
    success = { path = "result.status", equals = "done" }   # or a path read as truthy
    score = "result.reward"

    [steps]
    path = "trace[*]"            # inside an episode
    action = "act.cmd"
    observation = "obs"
    thought = "think"
    reward = "r"
    kind = "type"                # optional; values mapped through [steps.kinds]
    kinds = { tool = "tool_call", note = "thought" }

**Paths** are dotted keys with list indices and wildcards: ``info.reward``, ``traj[0].role``,
``traj[*].content`` (every element; text fields join them with newlines); ``$`` is the record
itself. **Text logs** use ``[text]`` with regular expressions matched per line: ``episode``
(a line that starts an episode; groups ``id``, ``task``, ``instruction``, ``agent``,
``family``), ``instruction``, ``thought``, ``action``, ``observation`` (the group of the same
name, else the whole match) and ``outcome`` (groups ``success``, read as success when its
value is in ``success_values``, and ``score``). A thought, the action after it and the
observation after that make one ``action`` step; unmatched lines continue an observation.

A mapping with an unknown key, a bad path or a bad pattern is one error naming the mapping
file and the key; a record that does not fit is one error naming the log file, its line or
record and the mapping key that failed.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from store import Episode, Outcome, Task
from workbench import patterns
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    iter_jsonl,
    load_json,
    validation_error,
)
from workbench.ingest.record_files import namespaced
from workbench.ingest.steps import build_steps
from workbench.ingest.values import compact_json, float_or_none, scalar

StepKindName = Literal[
    "system", "message", "thought", "action", "observation", "tool_call", "tool_result", "error"
]
ROLES = {"observation": "environment", "tool_result": "tool", "tool_call": "assistant"}
"""A step's role by kind when the mapping gives none (otherwise ``agent``)."""
SUCCESS_VALUES = ["success", "succeeded", "pass", "passed", "won", "win", "true", "yes", "1"]

# -- paths ------------------------------------------------------------------------------------

_SEGMENT = re.compile(r"([A-Za-z_][\w\-]*)|\[(\d+|\*)\]|\.")


def parse_path(text: str) -> tuple[str | int, ...]:
    """A path's parts: keys, indices and ``"*"``; raises ``ValueError`` for a bad path."""
    if text == "$":
        return ()
    parts: list[str | int] = []
    pos, expect_key = 0, True
    while pos < len(text):
        match = _SEGMENT.match(text, pos)
        if match is None or (match.group() == "." and expect_key):
            raise ValueError(f"bad path {text!r} at character {pos + 1}")
        key, index = match.group(1), match.group(2)
        if key is not None:
            if not expect_key:
                raise ValueError(f"bad path {text!r}: a key must follow '.'")
            parts.append(key)
        elif index is not None:
            parts.append("*" if index == "*" else int(index))
        expect_key, pos = match.group() == ".", match.end()
    if expect_key:
        raise ValueError(f"bad path {text!r}: it ends in '.' or is empty")
    return tuple(parts)


def resolve(obj: Any, parts: tuple[str | int, ...]) -> list[Any]:
    """Every value at the path's parts in ``obj`` (none when it is absent)."""
    values = [obj]
    for part in parts:
        values = [found for value in values for found in _inside(value, part)]
    return values


def _inside(value: Any, part: str | int) -> list[Any]:
    """The values one path part reaches from ``value``."""
    if isinstance(value, list):
        if part == "*":
            return value
        return [value[part]] if isinstance(part, int) and part < len(value) else []
    if isinstance(value, dict) and isinstance(part, str) and part in value:
        return [value[part]]
    return []


# -- the mapping ------------------------------------------------------------------------------


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_paths(value: Any) -> Any:
    if isinstance(value, str):
        parse_path(value)
    return value


class Check(_Section):
    """How a value says the episode succeeded."""

    path: str
    """Where the value is."""
    equals: Any = None
    """Success when the value equals this (or is in it, for a list); else the value's truth."""

    @model_validator(mode="before")
    @classmethod
    def _from_path(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value

    _path = field_validator("path")(_check_paths)

    def read(self, record: Any) -> bool | None:
        """Whether ``record`` succeeded; ``None`` when the value is absent."""
        values = resolve(record, parse_path(self.path))
        if not values or values[0] is None:
            return None
        value = values[0]
        if self.equals is None:
            return bool(value)
        wanted = self.equals if isinstance(self.equals, list) else [self.equals]
        return value in wanted


class Episodes(_Section):
    """Where episodes and their fields are in a JSON or JSONL log."""

    path: str | None = None
    """The list of episodes in a JSON file; unset: the whole file (JSONL: each line)."""
    id: str | None = None
    """The episode's id (default: its line or record number)."""
    task: str | None = None
    """The task's id (default: the episode's id)."""
    instruction: str | None = None
    """The task's instruction."""
    agent: str | None = None
    """The agent that ran it."""
    family: str | None = None
    """The task's family."""
    success: Check | None = None
    """Whether it succeeded: a path read as truthy, or ``{path, equals}``."""
    score: str | None = None
    """Its score or final reward (a number)."""

    _paths = field_validator("path", "id", "task", "instruction", "agent", "family", "score")(
        _check_paths
    )


class Steps(_Section):
    """Where an episode's steps and their fields are."""

    path: str
    """The list of steps inside an episode, e.g. ``trace[*]``."""
    action: str | None = None
    """The step's action."""
    observation: str | None = None
    """What the environment answered."""
    thought: str | None = None
    """The agent's reasoning before acting."""
    content: str | None = None
    """Message text, for message steps."""
    reward: str | None = None
    """The step's reward (a number)."""
    kind: str | None = None
    """The step's kind (default ``action``), through :attr:`kinds` when given."""
    role: str | None = None
    """The step's role (default from its kind)."""
    kinds: dict[str, StepKindName] = {}
    """The log's kind values mapped to step kinds."""

    _paths = field_validator(
        "path", "action", "observation", "thought", "content", "reward", "kind", "role"
    )(_check_paths)


class Text(_Section):
    """Line patterns of a text log (regular expressions, matched with ``re.search``)."""

    episode: str | None = None
    """A line that starts an episode (unset: the file is one episode)."""
    instruction: str | None = None
    """A line giving the task's instruction."""
    thought: str | None = None
    """A thought line."""
    action: str | None = None
    """An action line."""
    observation: str | None = None
    """An observation line (the lines after it that match nothing continue it)."""
    outcome: str | None = None
    """A line with the outcome: groups ``success`` and/or ``score``."""
    success_values: list[str] = SUCCESS_VALUES
    """Values of the ``success`` group that mean success (case-insensitive)."""

    @field_validator("episode", "instruction", "thought", "action", "observation", "outcome")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None and (problem := patterns.error(value)) is not None:
            raise ValueError(f"bad regular expression: {problem}")
        return value


class Mapping(_Section):
    """A mapping file: where a log keeps episodes, steps and outcomes."""

    name: str = Field("mapped", pattern=r"^[\w.\-]+$")
    """The tasks' environment (task ids are ``<name>:<task>``) and the source format."""
    format: Literal["json", "jsonl", "text"] | None = None
    """How the log is read (default: ``text`` with ``[text]``, ``json`` with
    ``episodes.path``, else ``jsonl``)."""
    episodes: Episodes = Episodes()
    """Episodes of a JSON or JSONL log."""
    steps: Steps | None = None
    """Steps of a JSON or JSONL log's episodes."""
    text: Text | None = None
    """Line patterns of a text log."""

    @model_validator(mode="after")
    def _complete(self) -> Mapping:
        kind = self.kind
        if kind == "text" and self.text is None:
            raise ValueError("a text mapping needs a [text] table")
        if kind != "text" and self.steps is None:
            raise ValueError(f"a {kind} mapping needs a [steps] table")
        return self

    @property
    def kind(self) -> str:
        """How the log is read: ``json``, ``jsonl`` or ``text``."""
        if self.format:
            return self.format
        if self.text is not None:
            return "text"
        return "json" if self.episodes.path else "jsonl"


def load(path: Path | str) -> MappedImporter:
    """The importer a mapping file describes; raises :class:`IngestError` naming the key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise IngestError(path, "", "", f"cannot read the mapping: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise IngestError(path, "", "", f"invalid TOML: {error}") from None
    try:
        return MappedImporter(Mapping.model_validate(data), path)
    except ValidationError as error:
        raise validation_error(path, "", error) from None


# -- reading ----------------------------------------------------------------------------------


def _text(values: list[Any]) -> str:
    """Text of the values found at a path (joined by newlines)."""
    parts = [v if isinstance(v, str) else compact_json(v) for v in values]
    return "\n".join(p for p, v in zip(parts, values, strict=True) if v is not None)


@dataclass
class MappedImporter:
    """An importer built from a mapping; pass it as ``import_paths(format=...)``."""

    mapping: Mapping
    path: Path
    """The mapping file."""
    description: str = "a log read through a mapping file (--map)"
    name: str = field(init=False)
    binary: bool = field(init=False)
    """A text log may quote a binary file's bytes; JSON never holds a NUL byte."""

    def __post_init__(self) -> None:
        self.name = self.mapping.name
        self.binary = self.mapping.kind == "text"

    def sniff(self, path: Path, head: str) -> bool:
        """A mapping is only ever used when given, never detected."""
        return False

    def read(self, ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
        """Yield the log's episodes; a record that does not fit is yielded as an error."""
        kind = self.mapping.kind
        if kind == "text":
            yield from TextReader(self.mapping, ctx).read()
        elif kind == "jsonl":
            for item in iter_jsonl(ctx):
                yield item if isinstance(item, IngestError) else self._try(ctx, *item, "line")
        else:
            data = load_json(ctx)
            records = resolve(data, parse_path(self.mapping.episodes.path or "$"))
            if len(records) == 1 and isinstance(records[0], list):
                records = records[0]
            for number, record in enumerate(records):
                yield self._try(ctx, number, record, "record")

    def _try(self, ctx: ReadContext, number: int, record: Any, unit: str) -> Any:
        try:
            return self._episode(ctx, f"{unit} {number}", record)
        except IngestError as error:
            return error

    def _episode(self, ctx: ReadContext, where: str, record: Any) -> ParsedEpisode:
        fields = self.mapping.episodes
        found = lambda key: self._scalar(ctx, where, record, key)  # noqa: E731
        key = found("id") or where.replace(" ", "")
        episode_id = ctx.episode_id(key)
        task = Task(
            id=namespaced(self.name, found("task") or key),
            environment=self.name,
            family=found("family") or "",
            instruction=_text(self._at(record, fields.instruction)),
        )
        episode = Episode(
            id=episode_id,
            task_id=task.id,
            agent=found("agent") or "",
            batch_id=ctx.batch_id,
            family=task.family,
            outcome=self._outcome(ctx, where, record),
            source=ctx.source(where),
            metadata={"record": key},
        )
        steps = build_steps(ctx, where, episode_id, self._steps(ctx, where, record))
        return ParsedEpisode(task=task, episode=episode, steps=steps)

    @staticmethod
    def _at(record: Any, path: str | None) -> list[Any]:
        return resolve(record, parse_path(path)) if path else []

    def _scalar(self, ctx: ReadContext, where: str, record: Any, key: str) -> str | None:
        path = getattr(self.mapping.episodes, key)
        values = self._at(record, path)
        if path and key in ("id", "task") and not values:
            raise ctx.error(where, f"episodes.{key}", f"nothing at {path!r}")
        value = scalar(values[0]) if values else None
        if values and value is None and values[0] is not None:
            raise ctx.error(where, f"episodes.{key}", f"expected text at {path!r}")
        return value

    def _outcome(self, ctx: ReadContext, where: str, record: Any) -> Outcome:
        fields = self.mapping.episodes
        success = fields.success.read(record) if fields.success else None
        values = self._at(record, fields.score)
        score = float_or_none(values[0]) if values else None
        if values and score is None and values[0] is not None:
            raise ctx.error(where, "episodes.score", f"expected a number at {fields.score!r}")
        return Outcome(success=success, score=score)

    def _steps(self, ctx: ReadContext, where: str, record: Any) -> list[dict[str, Any]]:
        steps = self.mapping.steps
        assert steps is not None  # checked by Mapping
        items = self._at(record, steps.path)
        if len(items) == 1 and isinstance(items[0], list):
            items = items[0]
        if not items:
            raise ctx.error(where, "steps.path", f"no steps at {steps.path!r}")
        return [self._step(ctx, f"{where}, step {i}", item) for i, item in enumerate(items)]

    def _step(self, ctx: ReadContext, where: str, item: Any) -> dict[str, Any]:
        steps = self.mapping.steps
        assert steps is not None
        texts = {
            key: _text(self._at(item, getattr(steps, key)))
            for key in ("action", "observation", "thought", "content")
        }
        if not any(texts.values()):
            raise ctx.error(where, "steps.action", "no action, observation, thought or content")
        kind = self._kind(ctx, where, item)
        role = scalar(next(iter(self._at(item, steps.role)), None)) or ROLES.get(kind, "agent")
        return {**texts, "kind": kind, "role": role, "reward": self._reward(ctx, where, item)}

    def _kind(self, ctx: ReadContext, where: str, item: Any) -> str:
        steps = self.mapping.steps
        assert steps is not None
        value = scalar(next(iter(self._at(item, steps.kind)), None))
        if value is None:
            return "action"
        kind = steps.kinds.get(value, value)
        if kind not in StepKindName.__args__:
            raise ctx.error(where, "steps.kind", f"{value!r} is no step kind; map it in kinds")
        return kind

    def _reward(self, ctx: ReadContext, where: str, item: Any) -> float | None:
        steps = self.mapping.steps
        assert steps is not None
        values = self._at(item, steps.reward)
        reward = float_or_none(values[0]) if values else None
        if values and reward is None and values[0] is not None:
            raise ctx.error(where, "steps.reward", f"expected a number at {steps.reward!r}")
        return reward


# -- text logs --------------------------------------------------------------------------------


@dataclass
class _Draft:
    """An episode of a text log being read."""

    line: int
    """The line it starts on."""
    header: dict[str, str] = field(default_factory=dict)
    """Groups of its start line (``id``, ``task``, ``instruction``, ``agent``, ``family``)."""
    steps: list[dict[str, Any]] = field(default_factory=list)
    success: bool | None = None
    score: float | None = None


class TextReader:
    """Reads a text log line by line with the mapping's ``[text]`` patterns."""

    def __init__(self, mapping: Mapping, ctx: ReadContext) -> None:
        assert mapping.text is not None
        self.text, self.ctx, self.importer_name = mapping.text, ctx, mapping.name
        self.patterns = {
            key: pattern
            for key in ("episode", "instruction", "thought", "action", "observation", "outcome")
            if (pattern := getattr(self.text, key)) is not None
        }

    def read(self) -> Iterator[ParsedEpisode | IngestError]:
        """Yield one episode per start line (or the whole file as one).

        Each pattern runs under the time limit of :mod:`workbench.patterns`; one that runs
        past it is an error of the whole file (naming the line and the pattern): it would
        likely do so again on every line.
        """
        draft = None if "episode" in self.patterns else _Draft(line=1)
        with self.ctx.open() as handle:
            for number, raw in enumerate(handle, start=1):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                start = self.patterns.get("episode")
                if start and (match := self._search("episode", number, line)):
                    if draft is not None:
                        yield self._finish(draft)
                    draft = _Draft(line=number, header=_groups(match))
                elif draft is not None:
                    error = self._line(draft, number, line)
                    if error is not None:
                        yield error
        if draft is not None:
            yield self._finish(draft)

    def _search(self, key: str, number: int, line: str) -> Any:
        try:
            return patterns.search(self.patterns[key], line)
        except patterns.PatternTimeout as timeout:
            raise self.ctx.error(f"line {number}", f"text.{key}", str(timeout)) from None

    def _line(self, draft: _Draft, number: int, line: str) -> IngestError | None:
        for key in self.patterns:
            if key != "episode" and (match := self._search(key, number, line)):
                return self._matched(draft, number, key, match)
        last = draft.steps[-1] if draft.steps else None
        if last is not None and last["observation"] and line.strip():
            last["observation"] += "\n" + line
        return None

    def _matched(self, draft: _Draft, number: int, key: str, match: re.Match[str]) -> Any:
        value = _group(match, key)
        if key == "outcome":
            return self._outcome(draft, number, match)
        if key == "instruction":
            draft.header.setdefault("instruction", value)
            return None
        last = draft.steps[-1] if draft.steps else None
        if last is None or last["observation"] or (key != "observation" and last["action"]):
            last = {"action": "", "observation": "", "thought": "", "raw": {"line": number}}
            draft.steps.append(last)
        assert last is not None
        last[key] = value
        return None

    def _outcome(self, draft: _Draft, number: int, match: re.Match[str]) -> IngestError | None:
        groups = _groups(match)
        if "success" in groups:
            wanted = {v.lower() for v in self.text.success_values}
            draft.success = groups["success"].strip().lower() in wanted
        if "score" in groups:
            draft.score = _number(groups["score"])
            if draft.score is None:
                return self.ctx.error(
                    f"line {number}", "text.outcome", f"score {groups['score']!r} is no number"
                )
        return None

    def _finish(self, draft: _Draft) -> ParsedEpisode | IngestError:
        where = f"line {draft.line}"
        if not draft.steps:
            return self.ctx.error(where, "text.action", "no step in this episode")
        header = draft.header
        key = header.get("id") or f"L{draft.line}"
        episode_id = self.ctx.episode_id(key)
        task = Task(
            id=namespaced(self.importer_name, header.get("task") or key),
            environment=self.importer_name,
            family=header.get("family", ""),
            instruction=header.get("instruction", ""),
        )
        episode = Episode(
            id=episode_id,
            task_id=task.id,
            agent=header.get("agent", ""),
            batch_id=self.ctx.batch_id,
            family=task.family,
            outcome=Outcome(success=draft.success, score=draft.score),
            source=self.ctx.source(where),
        )
        fields = [{**step, "kind": _text_kind(step)} for step in draft.steps]
        fields = [{**step, "role": ROLES.get(step["kind"], "agent")} for step in fields]
        try:
            steps = build_steps(self.ctx, where, episode_id, fields)
        except IngestError as error:
            return error
        return ParsedEpisode(task=task, episode=episode, steps=steps)


def _text_kind(step: dict[str, Any]) -> str:
    """An action step when it has an action, else a thought or an observation."""
    if step["action"]:
        return "action"
    return "thought" if step["thought"] and not step["observation"] else "observation"


def _groups(match: re.Match[str]) -> dict[str, str]:
    """A match's named groups that matched, stripped."""
    return {k: v.strip() for k, v in match.groupdict().items() if v is not None}


def _group(match: re.Match[str], key: str) -> str:
    """The group named ``key``, else the whole match."""
    groups = match.groupdict()
    return (groups.get(key) if groups.get(key) is not None else match.group()).strip()


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
