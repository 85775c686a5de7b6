"""Text logs read line by line through a mapping's ``[text]`` patterns.

A line is read by the first pattern that matches it. A thought, the action after it and the
observation after that make one ``action`` step; a ``user`` or ``assistant`` line makes a
``message`` step. A field named in ``multiline`` keeps the lines after its match — blank ones
included, up to the next line another pattern matches — and a line its own pattern matches
again adds its group to the same field (Aider writes a multi-line user message as several
``#### `` lines). Without it, lines that match nothing continue an observation and are
otherwise skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from store import Outcome
from workbench import patterns
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext
from workbench.ingest.mapped.episodes import ROLES, kind_of_texts, parsed_episode
from workbench.ingest.mapped.language import Mapping, shown

HEADER = ("task", "instruction", "agent", "family")
"""Episode fields a start line's groups (or the mapping's constants) give."""


@dataclass
class _Block:
    """A field whose match runs over the lines after it (``multiline``)."""

    key: str
    """The pattern that opened it."""
    target: dict[str, Any]
    """The step (or the episode's header) that gets the text."""
    field: str
    """The field of :attr:`target` it fills."""
    lines: list[str]

    def close(self) -> None:
        """Write the lines, without blank lines at either end, into the field."""
        kept = [i for i, line in enumerate(self.lines) if line.strip()]
        text = "\n".join(self.lines[kept[0] : kept[-1] + 1]) if kept else ""
        self.target[self.field] = text


@dataclass
class _Draft:
    """An episode of a text log being read."""

    line: int
    """The line it starts on."""
    text: str = ""
    """Its start line (empty when the file is one episode)."""
    header: dict[str, str] = field(default_factory=dict)
    """Groups of its start line (``id``, ``task``, ``instruction``, ``agent``, ``family``)."""
    steps: list[dict[str, Any]] = field(default_factory=list)
    success: bool | None = None
    score: float | None = None
    block: _Block | None = None
    """The multi-line field being read, if any."""

    def close_block(self) -> None:
        """End the multi-line field being read."""
        if self.block is not None:
            self.block.close()
            self.block = None


def _blank_step(number: int) -> dict[str, Any]:
    return {"action": "", "observation": "", "thought": "", "content": "", "raw": {"line": number}}


class TextReader:
    """Reads a text log line by line with the mapping's ``[text]`` patterns."""

    def __init__(self, mapping: Mapping, ctx: ReadContext) -> None:
        assert mapping.text is not None
        self.text, self.ctx = mapping.text, ctx
        self.constants = mapping.episodes.constants()
        self.patterns = self.text.patterns()
        self.line_keys = [key for key in self.patterns if key != "episode"]
        """The patterns a line inside an episode is matched against, in order."""
        self.multiline = set(self.text.multiline)

    def read(self) -> Iterator[ParsedEpisode | IngestError]:
        """Yield one episode per start line (or the whole file as one).

        Each pattern runs under the time limit of :mod:`workbench.patterns`; one that runs
        past it is an error of the whole file (naming the line and the pattern): it would
        likely do so again on every line.
        """
        start = self.patterns.get("episode")
        draft = None if start is not None else _Draft(line=1)
        with self.ctx.open() as handle:
            for number, raw in enumerate(handle, start=1):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if start and (match := self._search("episode", number, line)):
                    if draft is not None:
                        yield self._finish(draft)
                    draft = _Draft(line=number, text=line, header=_groups(match))
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
        key, match = self._match(number, line)
        block = draft.block
        if match is None:
            if block is not None:
                block.lines.append(line)
            elif draft.steps and draft.steps[-1]["observation"] and line.strip():
                draft.steps[-1]["observation"] += "\n" + line
            return None
        if block is not None and block.key == key:
            block.lines.append(_group(match, key))
            return None
        draft.close_block()
        return self._matched(draft, number, key, match)

    def _match(self, number: int, line: str) -> tuple[str, re.Match[str] | None]:
        """The first pattern but ``episode`` that matches the line, and its match."""
        for key in self.line_keys:
            if match := self._search(key, number, line):
                return key, match
        return "", None

    def _matched(self, draft: _Draft, number: int, key: str, match: re.Match[str]) -> Any:
        value = _group(match, key)
        if key == "outcome":
            return self._outcome(draft, number, match)
        if key == "instruction":
            if "instruction" not in draft.header:
                draft.header["instruction"] = value
                self._open(draft, key, draft.header, "instruction", value)
            return None
        if key in ("user", "assistant"):
            message = {**_blank_step(number), "kind": "message", "role": key, "content": value}
            draft.steps.append(message)
            self._open(draft, key, message, "content", value)
            return None
        last = draft.steps[-1] if draft.steps else None
        if (
            last is None
            or last.get("kind") == "message"
            or last["observation"]
            or (key != "observation" and last["action"])
        ):
            last = _blank_step(number)
            draft.steps.append(last)
        last[key] = value
        self._open(draft, key, last, key, value)
        return None

    def _open(self, draft: _Draft, key: str, target: dict[str, Any], name: str, value: str) -> None:
        """Start reading ``key``'s field over the next lines, when it is multi-line."""
        if key in self.multiline:
            draft.block = _Block(key=key, target=target, field=name, lines=[value])

    def _outcome(self, draft: _Draft, number: int, match: re.Match[str]) -> IngestError | None:
        groups = _groups(match)
        if "success" in groups:
            wanted = {v.lower() for v in self.text.success_values}
            draft.success = groups["success"].strip().lower() in wanted
        if "score" in groups:
            draft.score = _number(groups["score"])
            if draft.score is None:
                return self.ctx.error(
                    f"line {number}", "text.outcome", f"score {shown(groups['score'])} is no number"
                )
        return None

    def _finish(self, draft: _Draft) -> ParsedEpisode | IngestError:
        draft.close_block()
        where = f"line {draft.line}"
        success = draft.success if draft.success is not None else self.constants.get("success")
        score = draft.score if draft.score is not None else self.constants.get("score")
        if not draft.steps and success is None and score is None:
            start = f": {shown(draft.text)}" if draft.text else ""
            return self.ctx.error(
                where, "text.action", f"no step and no outcome in this episode{start}"
            )
        header = {k: draft.header.get(k) or self.constants.get(k) for k in HEADER}
        outcome = Outcome(success=success, score=None if score is None else float(score))
        steps = [_with_kind_and_role(step) for step in draft.steps]
        key = draft.header.get("id") or f"L{draft.line}"
        try:
            return parsed_episode(self.ctx, where, key, header, outcome, steps)
        except IngestError as error:
            return error


def _with_kind_and_role(step: dict[str, Any]) -> dict[str, Any]:
    """A step's fields with its kind (a message's own; else an action step when it has an
    action, else a thought or an observation) and the role of that kind."""
    kind = step.get("kind") or kind_of_texts(step)
    return {**step, "kind": kind, "role": step.get("role") or ROLES.get(kind, "agent")}


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
