"""Claude Code session logs: ``~/.claude/projects/<project>/<session>.jsonl``.

Claude Code writes one JSON object per line. Conversation lines have ``type`` ``user`` or
``assistant``, a ``message`` in the Anthropic Messages shape, and the line's own ``uuid``,
``parentUuid``, ``isSidechain``, ``sessionId``, ``timestamp``, ``cwd``, ``version`` and
``gitBranch``::

    {"type": "user", "uuid": "u1", "parentUuid": null, "isSidechain": false,
     "sessionId": "5c1e…", "cwd": "/home/me/shop", "timestamp": "2025-06-02T09:00:00Z",
     "message": {"role": "user", "content": "Make the failing test pass."}}
    {"type": "assistant", "uuid": "a1", "parentUuid": "u1", …,
     "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-20250514",
                 "content": [{"type": "thinking", "thinking": "Run the tests first."},
                             {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                              "input": {"command": "pytest -q"}}],
                 "usage": {"input_tokens": 812, "output_tokens": 40}}}
    {"type": "user", "uuid": "u2", "parentUuid": "a1", …,
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": "1 failed", "is_error": true}]}}

Other lines (``summary``, ``system``, file-history snapshots and whatever later versions add)
carry no step: a ``summary`` becomes the episode's ``metadata.summary``, the rest is skipped.

**Episodes.** A file is one session and its main chain (lines with ``isSidechain`` false) is
one episode. Sub-agent runs (the Task tool) are *sidechains*: each becomes an episode of its
own, whose steps name the sub-agent (the parent call's ``subagent_type``, else the
sidechain's ``agentId``) as their agent, linked both ways: its ``metadata`` has
``sidechain: true``, ``parent_episode`` and, when the parent's Task call is found by its
prompt, ``parent_tool_call_id``; the parent lists its sidechains' episode ids in
``metadata.sidechains``. Separate episodes keep each agent's
decisions apart for analysis (a sub-agent's step is never read as the main agent's). Lines
of one sidechain are found by their ``agentId``, else by following ``parentUuid`` to the
sidechain's first line. A file holding only sidechain lines (``agent-*.jsonl``) gives only
sidechain episodes, linked to the session by ``metadata.session_id``.

**Steps.** A user message's text is a user ``message`` step; a ``tool_result`` block is a
``tool_result`` step answering its call (``is_error`` results start ``Error:`` so an analyzer
reads them as errors, and the flag is kept in the step's raw line). An assistant's
``tool_use`` block is a ``tool_call`` step whose action is the tool name and its input as
indented JSON (``Bash({"command": "pytest -q"})``, pretty-printed); the ``thinking`` and text
blocks just before it are its thought. Text with no tool call after it is an assistant
``message`` (its thinking as thought); thinking alone is a ``thought`` step. Blocks of one
API message split over several lines (same ``message.id``) are read together.

**Records.** The task is ``claude-code:prompt-<hash of the first user text>`` with that text
as instruction, so repeated sessions of one prompt share a task; sessions carry no outcome
(unknown). The agent is the model; usage sums each API message's tokens once (cache reads
and writes counted as prompt tokens). A line that is not JSON, or whose message, content or
block is malformed, is an error naming its line and field; with ``--skip-bad`` that line is
skipped and the rest of the session is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store import Episode, Outcome, Step, Task, Usage
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    iter_jsonl,
    text_of,
    yielded,
)
from workbench.ingest.record_files import instruction_key, namespaced
from workbench.ingest.steps import build_steps, render_pretty_call, step_column, tool_result_step
from workbench.ingest.values import as_text, int_or_none, iso_time, scalar, total

name = "claude-code"
description = (
    "Claude Code session logs (~/.claude/projects/*/*.jsonl), sub-agents as linked episodes"
)

ENVIRONMENT = "claude-code"
CONVERSATION = ("user", "assistant")
_SESSION_LINE = re.compile(r'"sessionId"\s*:\s*"[^"]*"')
_PARENT_UUID = re.compile(r'"parentUuid"\s*:')
_MESSAGE_TYPE = re.compile(r'"type"\s*:\s*"(?:user|assistant)"')
_NOT_A_PROMPT = ("<command-", "<local-command-", "Caveat: ")
"""Starts of user texts Claude Code writes itself (slash commands, their output, caveats)."""


def sniff(path: Path, head: str) -> bool:
    """JSON lines carrying Claude Code's ``sessionId``, ``parentUuid`` and a user/assistant type."""
    if not head.lstrip().startswith("{"):
        return False
    return all(p.search(head) for p in (_SESSION_LINE, _PARENT_UUID, _MESSAGE_TYPE))


# -- grouping lines into sessions and sidechains ------------------------------------------------


@dataclass
class _Chain:
    """The conversation lines of one episode: the main chain or one sidechain."""

    first_line: int
    sidechain: bool
    lines: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


@dataclass
class _Session:
    """What a file holds: its chains in order of first appearance, and its other facts."""

    main: _Chain | None = None
    sidechains: dict[str, _Chain] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    roots: dict[str, str] = field(default_factory=dict)
    """For each sidechain line's uuid, the key of the sidechain it belongs to."""

    def add(self, number: int, line: dict[str, Any]) -> None:
        """File one conversation line under its chain."""
        session = scalar(line.get("sessionId"))
        if session and session not in self.session_ids:
            self.session_ids.append(session)
        if line.get("isSidechain") is True:
            chain = self._sidechain(number, line)
        else:
            self.main = self.main or _Chain(number, sidechain=False)
            chain = self.main
        chain.lines.append((number, line))

    def _sidechain(self, number: int, line: dict[str, Any]) -> _Chain:
        parent = scalar(line.get("parentUuid"))
        key = scalar(line.get("agentId")) or self.roots.get(parent or "") or f"line {number}"
        uuid = scalar(line.get("uuid"))
        if uuid:
            self.roots[uuid] = key
        return self.sidechains.setdefault(key, _Chain(number, sidechain=True))


def _read_session(ctx: ReadContext) -> Iterator[_Session | IngestError]:
    """Yield bad lines as errors, then the session of the good ones."""
    session = _Session()
    for item in iter_jsonl(ctx):
        if isinstance(item, IngestError):
            yield item
            continue
        number, line = item
        if not isinstance(line, dict):
            yield ctx.error(f"line {number}", "", "expected a JSON object")
        elif line.get("type") == "summary" and isinstance(line.get("summary"), str):
            session.summaries.append(line["summary"])
        elif line.get("type") in CONVERSATION:
            session.add(number, line)
    yield session


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield the session's main episode, then one episode per sidechain."""
    session: _Session | None = None
    for item in _read_session(ctx):
        if isinstance(item, IngestError):
            yield item
        else:
            session = item
    assert session is not None
    if session.main is None and not session.sidechains:
        raise ctx.error("", "", "no user or assistant lines (not a Claude Code session log)")
    items = list(_episodes(ctx, session))  # (all built before the first is yielded)
    session = item = None  # its lines are not held while the episodes are stored
    items.reverse()
    while items:
        yield from yielded([items.pop()])


def _episodes(ctx: ReadContext, session: _Session) -> Iterator[ParsedEpisode | IngestError]:
    main = _parse_chain(ctx, session, session.main) if session.main else None
    calls = _task_calls(main.steps) if main is not None else {}
    agents = {prompt: agent for prompt, (_, agent) in calls.items()}
    subs = [_parse_chain(ctx, session, chain, agents) for chain in session.sidechains.values()]
    if main is not None:
        main.episode.metadata["sidechains"] = [p.episode.id for p in subs]
        for sub in subs:
            sub.episode.metadata["parent_episode"] = main.episode.id
            call_id = calls.get(sub.task.instruction, ("", ""))[0]
            if call_id:
                sub.episode.metadata["parent_tool_call_id"] = call_id
    for parsed in ([main] if main else []) + subs:
        yield from parsed.errors
        yield parsed.parsed


def _task_calls(steps: Sequence[Step]) -> dict[str, tuple[str, str]]:
    """Prompt of each sub-agent call (a ``tool_use`` with a ``prompt`` input) → its call id
    and the sub-agent it asks for (``subagent_type``; empty when it names none)."""
    calls = {}
    columns = (step_column(steps, field) for field in ("kind", "raw", "tool_call_id"))
    for kind, raw, call_id in zip(*columns, strict=True):
        block = raw.get("block") if isinstance(raw, dict) else None
        inputs = block.get("input") if isinstance(block, dict) else None
        prompt = inputs.get("prompt") if isinstance(inputs, dict) else None
        if kind == "tool_call" and isinstance(prompt, str):
            calls[prompt] = (call_id, scalar(inputs.get("subagent_type")) or "")
    return calls


# -- one chain to one episode -------------------------------------------------------------------


@dataclass
class _Parsed:
    """A chain read into an episode, and its lines that could not be read."""

    parsed: ParsedEpisode
    errors: list[IngestError]

    @property
    def episode(self) -> Episode:
        return self.parsed.episode

    @property
    def task(self) -> Task:
        return self.parsed.task

    @property
    def steps(self) -> list[Step]:
        return self.parsed.steps


def _parse_chain(
    ctx: ReadContext, session: _Session, chain: _Chain, agents: dict[str, str] | None = None
) -> _Parsed:
    """One chain's episode; a sidechain's steps (but its prompt) name the sub-agent that took
    them: the one its parent's call asked for (``agents``: prompt → sub-agent), else the
    sidechain's ``agentId``, else ``sub-agent``."""
    where = f"line {chain.first_line}"
    episode_id = ctx.episode_id(f"L{chain.first_line}")
    reader = _StepReader(ctx)
    for number, line in chain.lines:
        try:
            reader.line(number, line)
        except IngestError as error:
            reader.errors.append(error)
    reader.flush()
    if chain.sidechain:
        first = chain.lines[0][1]
        agent = (agents or {}).get(reader.instruction) or scalar(first.get("agentId"))
        for fields in reader.fields:
            if fields.get("role") != "user":
                fields["agent"] = agent or "sub-agent"
    steps = build_steps(ctx, where, episode_id, reader.fields)
    instruction = reader.instruction
    task = Task(
        id=namespaced(ENVIRONMENT, instruction_key(instruction) if instruction else where),
        environment=ENVIRONMENT,
        instruction=instruction,
    )
    lines = [line for _, line in chain.lines]
    episode = Episode(
        id=episode_id,
        task_id=task.id,
        agent=reader.model,
        batch_id=ctx.batch_id,
        outcome=Outcome(),
        usage=reader.usage(),
        source=ctx.source(where),
        started_at=iso_time(lines[0].get("timestamp")),
        ended_at=iso_time(lines[-1].get("timestamp")),
        metadata=_metadata(session, chain, lines),
    )
    return _Parsed(ParsedEpisode(task=task, episode=episode, steps=steps), reader.errors)


def _metadata(session: _Session, chain: _Chain, lines: list[dict[str, Any]]) -> dict[str, Any]:
    first = lines[0]
    metadata: dict[str, Any] = {
        "session_id": scalar(first.get("sessionId")),
        "cwd": scalar(first.get("cwd")),
        "git_branch": scalar(first.get("gitBranch")),
        "version": scalar(first.get("version")),
        "sidechain": chain.sidechain,
    }
    if chain.sidechain and scalar(first.get("agentId")):
        metadata["agent_id"] = first["agentId"]
    if not chain.sidechain and session.summaries:
        metadata["summary"] = session.summaries[-1]
    if len(session.session_ids) > 1:
        metadata["session_ids"] = session.session_ids
    return {k: v for k, v in metadata.items() if v is not None}


class _StepReader:
    """Turns a chain's lines into step fields, holding thinking and text until they are placed."""

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx
        self.fields: list[dict[str, Any]] = []
        self.errors: list[IngestError] = []
        self.instruction = ""
        self.model = ""
        self.tool_names: dict[str, str] = {}
        self.tokens: dict[str, tuple[int | None, int | None]] = {}
        self.thinking: list[str] = []
        self.text: list[str] = []
        self.pending_id: str | None = None
        self.pending_raw: dict[str, Any] | None = None

    def line(self, number: int, line: dict[str, Any]) -> None:
        """Read one conversation line (its blocks checked before any is used)."""
        message = line.get("message")
        if not isinstance(message, dict):
            raise self.ctx.error(f"line {number}", "message", "expected a message object")
        blocks = _blocks(self.ctx, number, message.get("content"))
        stamp = iso_time(line.get("timestamp"))
        if line["type"] == "assistant":
            self._assistant(line, message, blocks, stamp)
        else:
            self.flush()
            for block in blocks:
                self._user_block(line, block, stamp)

    def _user_block(self, line: dict[str, Any], block: dict[str, Any], stamp: Any) -> None:
        raw = {"line": line, "block": block}
        if block["type"] == "tool_result":
            call_id = as_text(block.get("tool_use_id"))
            text = text_of(block.get("content"))
            if block.get("is_error") is True and not text.lower().startswith("error"):
                text = f"Error: {text}"
            step = tool_result_step(text, call_id, self.tool_names.get(call_id, ""))
            self.fields.append({**step, "timestamp": stamp, "raw": raw})
        elif block["type"] == "text":
            text = as_text(block.get("text"))
            if (
                not self.instruction
                and not text.startswith(_NOT_A_PROMPT)
                and not line.get("isMeta")
            ):
                self.instruction = text
            self.fields.append(
                {"kind": "message", "role": "user", "content": text, "timestamp": stamp, "raw": raw}
            )

    def _assistant(
        self, line: dict[str, Any], message: dict[str, Any], blocks: list[dict], stamp: Any
    ) -> None:
        message_id = scalar(message.get("id")) or scalar(line.get("uuid")) or ""
        if message_id != self.pending_id:
            self.flush()
        self.pending_id, self.pending_raw = message_id, {"line": line}
        self.model = self.model or as_text(message.get("model"))
        usage = message.get("usage")
        if isinstance(usage, dict):
            self.tokens[message_id] = _tokens(usage)
        for block in blocks:
            if block["type"] == "thinking":
                self.thinking.append(as_text(block.get("thinking")))
            elif block["type"] == "text":
                self.text.append(as_text(block.get("text")))
            elif block["type"] == "tool_use":
                self._tool_use(line, block, stamp)

    def _tool_use(self, line: dict[str, Any], block: dict[str, Any], stamp: Any) -> None:
        call_id, tool = as_text(block.get("id")), as_text(block.get("name"))
        self.tool_names[call_id] = tool
        self.fields.append(
            {
                "kind": "tool_call",
                "role": "assistant",
                "thought": "\n\n".join(p for p in [*self.thinking, *self.text] if p),
                "action": render_pretty_call(tool, block.get("input")),
                "tool_name": tool,
                "tool_call_id": call_id,
                "timestamp": stamp,
                "raw": {"line": line, "block": block},
            }
        )
        self.thinking, self.text = [], []

    def flush(self) -> None:
        """Place held thinking and text: a text reply, or a thought step."""
        if not self.thinking and not self.text:
            self.pending_id = None
            return
        thought = "\n\n".join(p for p in self.thinking if p)
        text = "\n\n".join(p for p in self.text if p)
        line = (self.pending_raw or {}).get("line", {})
        stamp = iso_time(line.get("timestamp")) if isinstance(line, dict) else None
        if text:
            step = {"kind": "message", "role": "assistant", "content": text, "thought": thought}
            self.fields.append({**step, "timestamp": stamp, "raw": self.pending_raw})
        elif thought:
            step = {"kind": "thought", "role": "assistant", "thought": thought}
            self.fields.append({**step, "timestamp": stamp, "raw": self.pending_raw})
        self.thinking, self.text, self.pending_id = [], [], None

    def usage(self) -> Usage:
        """Tokens of each API message, counted once."""
        counts = self.tokens.values()
        return Usage(
            prompt_tokens=total(p for p, _ in counts), completion_tokens=total(c for _, c in counts)
        )


PROMPT_TOKENS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _tokens(usage: dict[str, Any]) -> tuple[int | None, int | None]:
    """``(prompt, completion)`` tokens of one API message, cache reads and writes as prompt."""
    prompt = None  # (as total() of the known counts, read as int_or_none reads them)
    for key in PROMPT_TOKENS:
        value = usage.get(key)
        count = value if type(value) is int else int_or_none(value)
        if count is not None:
            prompt = count if prompt is None else prompt + count
    completion = usage.get("output_tokens")
    return prompt, completion if type(completion) is int else int_or_none(completion)


BLOCK_TYPES = (
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "image",
    "document",
)


def _blocks(ctx: ReadContext, number: int, content: Any) -> list[dict[str, Any]]:
    """A message's content as blocks (a string is one text block), each checked (errors name
    line ``number``)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ctx.error(
            f"line {number}", "message.content", "expected text or a list of content blocks"
        )
    for k, block in enumerate(content):
        if not isinstance(block, dict):
            raise ctx.error(
                f"line {number}", f"message.content.{k}", "expected a content block object"
            )
        kind = block.get("type")
        if kind not in BLOCK_TYPES:
            problem = "missing" if kind is None else f"unknown block type {kind!r}"
            expected = f"{problem} (expected {', '.join(BLOCK_TYPES)})"
            raise ctx.error(f"line {number}", f"message.content.{k}.type", expected)
        if kind == "tool_use" and not scalar(block.get("name")):
            raise ctx.error(f"line {number}", f"message.content.{k}.name", "missing tool name")
        if kind == "tool_result" and not scalar(block.get("tool_use_id")):
            missing = "missing the id of the call it answers"
            raise ctx.error(f"line {number}", f"message.content.{k}.tool_use_id", missing)
    return content
