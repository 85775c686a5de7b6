"""Multi-agent group chats: a list of messages each naming its speaker, with the question and
the outcome beside it, one run per record; and Magentic-One's own event log.

AutoGen/AG2 group chats and the files multi-agent benchmarks keep of them hold records like::

    {"question": "How many primes are below 20?", "is_correct": false, "ground_truth": "8",
     "history": [
        {"role": "user", "name": "Admin", "content": "How many primes are below 20?"},
        {"role": "user", "name": "Coder", "content": "I count 9: 2, 3, 5, 7, 11, 13, 17, 19, 21."},
        {"role": "user", "name": "Critic", "content": "Agreed, 9."}]}

Each message is one step whose agent is its speaker (``name``; or a ``role`` that is an
agent's name, as Magentic-One writes ``WebSurfer`` or ``Orchestrator (thought)``), read as
the OpenAI chat importer reads messages (:mod:`workbench.ingest.openai_chat`, which also
reads such lists when they carry tool calls). The task is the record's question
(``question``, ``problem``, ``query``, ``prompt``, ``instruction``), else the first
user message; the outcome comes from ``is_correct``, ``correct``, ``success``, ``score`` and
the like, inline or under ``info``, ``metadata`` or ``result``, or from ``--results``. The
container is a JSON object, an array of them, or JSON lines (:mod:`~workbench.ingest.record_files`).

Magentic-One (``autogen-magentic-one``) logs a team's work as JSON lines of events instead,
appending run after run to one ``log.jsonl``::

    {"timestamp": "2024-11-20T15:41:10.06", "source": "UserProxy", "message": "Compute 34*87",
     "type": "OrchestrationEvent"}
    {"timestamp": "2024-11-20T15:41:12.40", "prompt_tokens": 336, "completion_tokens": 94,
     "type": "LLMCallEvent"}
    {"timestamp": "2024-11-20T15:41:19.18", "source": "Coder", "message": "result = 34 * 87 …",
     "type": "OrchestrationEvent"}
    {"timestamp": "2024-11-20T15:41:37.69", "source": "Orchestrator (termination condition)",
     "message": "No agent selected.", "type": "OrchestrationEvent"}

Each run ends with the orchestrator's ``(termination condition)`` event; what follows starts
the next. The user stating a task while a run is under way, unasked (not answering an
``Orchestrator (-> UserProxy)``: the app was restarted and the request typed again), also
starts the next, the run before it cut short (``metadata.cut_short``), as is a run the log
stops in. Every ``OrchestrationEvent``
is a message step of its ``source`` (the user proxy's as the user's, the others' as the
assistant's), every ``WebSurferEvent`` the web surfer's browser action (a tool call, or a
message when it names no action); ``LLMCallEvent`` tokens add up to the run's usage. The task
is the run's first user message; the log grades nothing, so the outcome is unknown (and,
naming no ids, it joins no ``--results``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store import Episode, Outcome, Task, Usage
from workbench.ingest import openai_chat
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, iter_jsonl, text_of
from workbench.ingest.record_files import (
    Record,
    Results,
    instruction_key,
    namespaced,
    read_records,
)
from workbench.ingest.steps import build_steps, first_user_message, render_call
from workbench.ingest.values import int_or_none, iso_time, scalar, total

name = "group-chat"
description = (
    "multi-agent group chats (AutoGen/AG2, Magentic-One): {content, role, name} messages, "
    "or Magentic-One's log.jsonl"
)

HISTORY_KEYS = ("history", "chat_history", "groupchat", "group_chat", "messages", "conversation")
"""Keys a record's message list may sit under, in the order they are tried."""
QUESTION_KEYS = ("question", "problem", "query", "prompt", "instruction")
"""Keys whose text is the record's task."""
TOOL_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call"})
"""Message keys of tool-calling chat logs, which the OpenAI chat importer reads."""

EVENT_TIME = re.compile(r'\A\s*\{[^\n]*"timestamp"\s*:\s*"')
"""The first line of Magentic-One's event log: an object with a ``timestamp``."""
ORCHESTRATION_EVENT = re.compile(r'"type"\s*:\s*"OrchestrationEvent"')
RUN_END = "(termination condition)"
"""The end of the source that closes a run (``Orchestrator (termination condition)``)."""
ADDRESSED = re.compile(r"\(-> (.+)\)$")
"""The agent an orchestrator's instruction is for: ``Orchestrator (-> WebSurfer)``."""


def sniff(path: Path, head: str) -> bool:
    """A JSON/JSONL file whose first record holds a list of messages that name their speaker
    (``name`` and ``content``, or AutoGen AgentChat's ``source`` and ``content``; no tool
    calls), or Magentic-One's event log."""
    if is_event_log(head):
        return True
    shape = openai_chat.head_shape(head)
    if shape is None or shape.strings.get("format") == "trajectory-workbench":
        return False
    return any(
        key in shape.lists
        and (
            {"name", "content"} <= (keys := shape.children.get(key, set()))
            or ({"source", "content"} <= keys and "role" not in keys)
        )
        and not keys & TOOL_KEYS
        for key in HISTORY_KEYS
    )


def is_event_log(head: str) -> bool:
    """Whether a file's head is Magentic-One's event log: lines of timestamped events, one of
    them an ``OrchestrationEvent``."""
    text = head.lstrip("\ufeff")
    return bool(EVENT_TIME.match(text)) and bool(ORCHESTRATION_EVENT.search(text))


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per record (per run, in an event log); unreadable ones as errors."""
    if is_event_log(_head(ctx)):
        yield from _event_log(ctx)
        return
    results = Results.load(ctx, openai_chat.RESULT_ID_KEYS)
    yield from read_records(ctx, lambda record: _episode(ctx, record, results))


def _episode(ctx: ReadContext, record: Record, results: Results | None) -> ParsedEpisode:
    return openai_chat.episode(ctx, record, results, name, QUESTION_KEYS, HISTORY_KEYS)


def _head(ctx: ReadContext, size: int = 1 << 16) -> str:
    """The file's first bytes as text, read aside (not counted as the import's progress)."""
    if ctx.content is not None:
        data = ctx.content[:size]
    else:
        with open(ctx.path, "rb") as handle:
            data = handle.read(size)
    return data.decode("utf-8-sig", errors="replace")


# -- Magentic-One's event log -----------------------------------------------------------------


@dataclass
class _Run:
    """The events of one run, as they are read."""

    index: int
    """Position among the log's runs, from 0."""
    first_line: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: list[int | None] = field(default_factory=list)
    completion_tokens: list[int | None] = field(default_factory=list)
    times: list[Any] = field(default_factory=list)
    addressed: str = ""
    """Whom the orchestrator last turned to (``Orchestrator (-> Coder)``: ``Coder``)."""
    error: IngestError | None = None
    """The first unreadable line; the run is then yielded as this error."""
    ended: bool = False


class _Log:
    """Magentic-One's event log, read into runs: a run ends with the orchestrator's
    termination condition, or where the user states a task nobody asked for (the app was
    restarted: the same request typed again), which starts the next."""

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx, self.run, self.count = ctx, None, 0

    def add(self, item: tuple[int, Any] | IngestError) -> Iterator[ParsedEpisode | IngestError]:
        number, event = (None, item) if isinstance(item, IngestError) else item
        if self.run is not None and _opens_run(self.run, event):
            yield from self.close()
        if self.run is None:
            self.run = _Run(self.count, number or 0)
            self.count += 1
        run = self.run
        if isinstance(event, IngestError):
            run.error = run.error or event
        elif run.error is None:
            try:
                _add_event(self.ctx, run, number, event)
            except IngestError as error:
                run.error = error
        if run.ended:
            yield from self.close()

    def close(self) -> Iterator[ParsedEpisode | IngestError]:
        if self.run is not None:
            run, self.run = self.run, None
            yield _finished(self.ctx, run)


def _event_log(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """One episode per run of the log; a run holding an unreadable line as that line's error."""
    log = _Log(ctx)
    for item in iter_jsonl(ctx):
        yield from log.add(item)
    yield from log.close()


def _opens_run(run: _Run, event: Any) -> bool:
    """Whether ``event`` is the user stating a task while ``run`` is under way, unasked."""
    if not run.steps or not isinstance(event, dict) or event.get("type") != "OrchestrationEvent":
        return False
    source = scalar(event.get("source")) or ""
    return source.lower() in openai_chat.USER_SPEAKERS and run.addressed != source


def _add_event(ctx: ReadContext, run: _Run, number: int | None, event: Any) -> None:
    where = f"line {number}"
    if not isinstance(event, dict):
        raise ctx.error(where, "", "expected an event object")
    kind = event.get("type")
    run.times.append(event.get("timestamp"))
    if kind == "LLMCallEvent":
        run.prompt_tokens.append(int_or_none(event.get("prompt_tokens")))
        run.completion_tokens.append(int_or_none(event.get("completion_tokens")))
        return
    if kind not in ("OrchestrationEvent", "WebSurferEvent"):
        return  # (another kind of event names no speaker)
    source = scalar(event.get("source"))
    if not source:
        raise ctx.error(where, "source", "missing (the agent that spoke)")
    step = {
        "kind": "message",
        "role": "user" if source.lower() in openai_chat.USER_SPEAKERS else "assistant",
        "agent": source,
        "content": text_of(event.get("message")),
        "timestamp": iso_time(event.get("timestamp")),
        "raw": event,
    }
    action = scalar(event.get("action")) if kind == "WebSurferEvent" else ""
    if action:
        call = render_call(action, event.get("arguments"))
        step |= {"kind": "tool_call", "content": "", "action": call, "tool_name": action}
    run.steps.append(step)
    if kind == "OrchestrationEvent":
        run.ended = source.endswith(RUN_END)
        if (target := ADDRESSED.search(source)) is not None:
            run.addressed = target.group(1)


def _finished(ctx: ReadContext, run: _Run) -> ParsedEpisode | IngestError:
    where = f"line {run.first_line}"
    if run.error is not None:
        return run.error
    if not run.steps:
        return ctx.error(where, "", "no agent spoke in this run (only model calls)")
    episode_id = ctx.episode_id(f"r{run.index}")
    steps = build_steps(ctx, where, episode_id, run.steps, own=True)
    instruction = first_user_message(steps)
    key = instruction_key(instruction) if instruction else f"{ctx.key}-{run.index}"
    task = Task(id=namespaced(name, key), environment=name, instruction=instruction)
    times = [t for t in map(iso_time, run.times) if t is not None]
    episode = Episode(
        id=episode_id,
        task_id=task.id,
        batch_id=ctx.batch_id,
        outcome=Outcome(),
        usage=Usage(
            prompt_tokens=total(run.prompt_tokens), completion_tokens=total(run.completion_tokens)
        ),
        source=ctx.source(where),
        started_at=times[0] if times else None,
        ended_at=times[-1] if times else None,
        metadata={} if run.ended else {"cut_short": True},
    )
    return ParsedEpisode(task=task, episode=episode, steps=steps)
