"""OpenAI chat-completions message lists, one agent run per record.

The file holds records in one of three containers: a JSON array of records, a single JSON
object (one record), or JSON lines (one record per line). A record is an object whose message
list sits under one of :data:`MESSAGE_KEYS` (``messages``, ``traj``, ``trajectory``,
``conversation``, ``chat``); a bare list of messages is accepted as a record too. tau-bench's
``results.json`` (``task_id``, ``trial``, ``reward``, ``info``, ``traj``) is one such file::

    {"task_id": "calc-3", "trial": 0, "model": "gpt-4o", "reward": 1.0,
     "messages": [
        {"role": "system", "content": "You can call tools."},
        {"role": "user", "content": "What is 17 * 23?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "calculator", "arguments": "{\\"expression\\": \\"17*23\\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "391"},
        {"role": "assistant", "content": "17 * 23 = 391."}]}

Messages follow the chat-completions API: ``role`` is ``system`` (or ``developer``),
``user``, ``assistant``, ``tool`` or the legacy ``function``; ``content`` is a string, null,
or a list of content parts; an assistant's ``tool_calls`` carry an ``id`` and a ``function``
with ``name`` and ``arguments`` (a JSON string); a tool message answers with
``tool_call_id``. The legacy assistant ``function_call`` is read as one tool call.

Around the messages a record may say which task it ran (``task_id``, ``instance_id``, ``id``,
``task``), which attempt (``trial``, ``attempt``, ``epoch``, ``run``), where (``environment``,
``env``, ``benchmark``), the task's ``family`` (or ``task_type``, ``category``), the ``agent``
or ``model``, token ``usage`` and ``cost``, and how it went (``reward``, ``score``,
``success``, ``resolved``, ... inline or under ``info``, ``metadata`` or ``result``). The
outcome may instead come from a separate results file (``--results``): an object mapping
ids to results, or an array or JSON lines of results each naming its id (and trial).

The readers of JSON containers and results files are in :mod:`workbench.ingest.record_files`,
shared with the ATIF importer.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from store import Episode, Outcome, Step, Task, Usage
from workbench.ingest import json_events
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, text_of
from workbench.ingest.record_files import (
    TRIAL_KEYS,
    Record,
    Results,
    find_outcome,
    namespaced,
    read_records,
    unnamed_task_key,
)
from workbench.ingest.steps import (
    ToolCall,
    build_steps,
    first_user_message,
    render_call,
    tool_call_steps,
    tool_result_step,
)
from workbench.ingest.values import float_or_none, int_or_none, pick, scalar, total

name = "openai-chat"
description = "OpenAI chat message lists, one run per record (JSON array, object or JSONL)"

DEFAULT_ENVIRONMENT = "openai-chat"
MESSAGE_KEYS = ("messages", "traj", "trajectory", "conversation", "chat")
"""Keys a record's message list may sit under, in the order they are tried."""
TASK_KEYS = ("task_id", "instance_id", "id", "task")
RESULT_ID_KEYS = ("id", "task_id", "instance_id", "sample_id")
"""Keys naming the record a result belongs to, in a results file."""
DETAIL_KEYS = ("info", "metadata", "result")
"""Sub-objects of a record that may hold its outcome or descriptive fields."""
MINI_SWE_AGENT = re.compile(r'"trajectory_format"\s*:\s*"mini-swe-agent')
ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}

# -- detection --------------------------------------------------------------------------------


@dataclass
class HeadShape:
    """What the first record in a file's head looks like, one or two levels deep."""

    lists: set[str] = field(default_factory=set)
    """Top-level keys whose value is a list."""
    children: dict[str, set[str]] = field(default_factory=dict)
    """For each top-level key, the keys of its object value or of its list's objects."""
    strings: dict[str, str] = field(default_factory=dict)
    """Top-level string values."""


HEAD_PREFIX = 1000
"""The longest ijson path :func:`head_shape` follows (the first record's shape is shallow)."""
HEAD_BUFFER = 1 << 10
"""Bytes ijson parses at a time in :func:`head_shape`: it makes every event of a chunk, each
with its path, before the first is seen, so a chunk of 64 KiB nested as deep would hold
gigabytes of paths."""


def head_shape(head: str) -> HeadShape | None:
    """The shape of the first record of a JSON array, object or JSONL head (may be cut off)."""
    text = head.lstrip("\ufeff \t\r\n")
    root = "item" if text.startswith("[") else "" if text.startswith("{") else None
    if root is None:
        return None
    shape = HeadShape()
    data = text.encode("utf-8", "replace")
    parser = json_events.parser(data)
    events = parser.parse(io.BytesIO(data), multiple_values=True, buf_size=HEAD_BUFFER)
    try:
        for prefix, event, value in events:
            if len(prefix) > HEAD_PREFIX or not _note_event(shape, root, prefix, event, value):
                break  # (ijson keeps the path of every level: deep nesting costs depth² memory)
    except (ijson.JSONError, ValueError):  # (ValueError: an integer of over 4300 digits)
        pass
    return shape


def _note_event(shape: HeadShape, root: str, prefix: str, event: str, value: Any) -> bool:
    """Record one parse event of the first record; ``False`` once that record has ended."""
    if prefix == root:
        return event not in ("end_map", "end_array")
    if root and not prefix.startswith(root + "."):
        return True  # the enclosing array
    parts = (prefix[len(root) + 1 :] if root else prefix).split(".")
    if len(parts) == 1:
        if event == "start_array":
            shape.lists.add(parts[0])
        elif event == "string":
            shape.strings[parts[0]] = value
        elif event == "map_key":
            shape.children.setdefault(parts[0], set()).add(value)
    elif len(parts) == 2 and parts[1] == "item" and event == "map_key":
        shape.children.setdefault(parts[0], set()).add(value)
    return True


def sniff(path: Path, head: str) -> bool:
    """A JSON/JSONL file whose first record holds a list of role-bearing chat messages.

    Leaves out the workbench's own JSONL and mini-swe-agent trajectories (whose top-level
    ``info`` carries an ``exit_status``), which have importers of their own.
    """
    shape = head_shape(head)
    if shape is None or shape.strings.get("format") == "trajectory-workbench":
        return False
    if "exit_status" in shape.children.get("info", set()):
        return False
    if MINI_SWE_AGENT.search(head):
        return False
    return any(k in shape.lists and "role" in shape.children.get(k, set()) for k in MESSAGE_KEYS)


# -- reading ----------------------------------------------------------------------------------


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per record; unreadable records are yielded as errors."""
    results = Results.load(ctx, RESULT_ID_KEYS)
    yield from read_records(ctx, lambda record: episode(ctx, record, results))


def _messages(
    ctx: ReadContext, record: Record, keys: tuple[str, ...]
) -> tuple[dict[str, Any], str | None, list[Any]]:
    """The record's fields, the key of its message list (the first of ``keys`` that holds
    one), and the list."""
    value = record.value
    if isinstance(value, list):
        return {}, None, value
    if not isinstance(value, dict):
        raise ctx.error(record.where, "", "expected a record object or a list of messages")
    for key in keys:
        if isinstance(value.get(key), list):
            return value, key, value[key]
    hint = " (this looks like a single message)" if "role" in value else ""
    raise ctx.error(record.where, keys[0], f"no message list (one of {', '.join(keys)}){hint}")


def episode(
    ctx: ReadContext,
    record: Record,
    results: Results | None,
    environment: str = DEFAULT_ENVIRONMENT,
    question_keys: tuple[str, ...] = (),
    message_keys: tuple[str, ...] = MESSAGE_KEYS,
) -> ParsedEpisode:
    """One record's episode (``environment``: the tasks' environment when the record names
    none; ``question_keys``: keys whose text is the task, before its first user message;
    ``message_keys``: where its message list may be)."""
    fields, list_key, messages = _messages(ctx, record, message_keys)
    episode_id = ctx.episode_id(f"r{record.index}")
    steps = _steps(ctx, record.where, episode_id, messages, list_key or "messages")
    question = next(
        (t for k in question_keys if isinstance(t := fields.get(k), str) and t.strip()), ""
    )
    instruction = question or first_user_message(steps)
    environment = pick(fields, ("environment", "env", "benchmark"), DETAIL_KEYS) or environment
    task_key = _task_key(fields) or unnamed_task_key(ctx, record, instruction)
    trial = pick(fields, TRIAL_KEYS)
    result = results.find(_ids(fields), trial) if results else None
    outcome = find_outcome(result, DETAIL_KEYS) if result is not None else None
    outcome = outcome or find_outcome(fields, DETAIL_KEYS) or Outcome()
    family = pick(fields, ("family", "task_type", "category"), DETAIL_KEYS) or ""
    goal, expected = task_goal(fields)
    task = Task(
        id=namespaced(environment, task_key),
        environment=environment,
        family=family,
        instruction=goal or instruction,
        metadata=expected,
    )
    episode = Episode(
        id=episode_id,
        task_id=task.id,
        agent=_agent(fields),
        batch_id=ctx.batch_id,
        seed=int_or_none(fields.get("seed")),
        outcome=outcome,
        usage=_usage(fields, messages),
        source=ctx.source(record.where),
        metadata=_metadata(fields, list_key, trial, result),
    )
    return ParsedEpisode(task=task, episode=episode, steps=steps)


def task_goal(fields: dict[str, Any]) -> tuple[str, dict[str, list[str]]]:
    """The task's goal and what it expects, when the record carries them (tau-bench:
    ``info.task.instruction``, ``info.task.actions`` — each ``{"name", "kwargs"}``, rendered
    as the stored tool-call steps are — and ``info.task.outputs``, what the agent's replies
    must say), as task metadata (``reference_actions``, ``expected_outputs``); ``("", {})``
    otherwise."""
    for holder in (fields, *(fields.get(k) for k in DETAIL_KEYS)):
        task = holder.get("task") if isinstance(holder, dict) else None
        if isinstance(task, dict) and ("instruction" in task or "actions" in task):
            goal = task.get("instruction")
            expected = {"reference_actions": _reference(task.get("actions"))}
            outputs = task.get("outputs")
            if isinstance(outputs, list):
                expected["expected_outputs"] = [
                    str(o)
                    for o in outputs
                    if isinstance(o, str | int | float) and not isinstance(o, bool)
                ]
            return (goal if isinstance(goal, str) else "", {k: v for k, v in expected.items() if v})
    return "", {}


def _reference(actions: Any) -> list[str]:
    if not isinstance(actions, list):
        return []
    return [
        render_call(str(a["name"]), a.get("kwargs", a.get("arguments")))
        for a in actions
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    ]


def _task_key(fields: dict[str, Any]) -> str | None:
    task = fields.get("task")
    if isinstance(task, dict):
        nested = pick(task, ("id", "task_id", "name"))
        if nested is not None:
            return nested
    return pick(fields, TASK_KEYS)


def _ids(fields: dict[str, Any]) -> list[str | None]:
    """Every id a results file may file this record under, most specific first."""
    return [scalar(fields.get(k)) for k in ("task_id", "instance_id", "sample_id", "id", "task")]


def _agent(fields: dict[str, Any]) -> str:
    agent = fields.get("agent")
    if isinstance(agent, dict):
        agent = agent.get("name")
    return scalar(agent) or pick(fields, ("model",), DETAIL_KEYS) or ""


def _metadata(
    fields: dict[str, Any], list_key: str | None, trial: str | None, result: dict | None
) -> dict[str, Any]:
    """The record's other fields, its own ``metadata`` object flattened in."""
    metadata = {k: v for k, v in fields.items() if k not in (list_key, "metadata")}
    if isinstance(fields.get("metadata"), dict):
        metadata = {**fields["metadata"], **metadata}
    if trial is not None:
        metadata["trial"] = trial
    if result is not None:
        metadata["result"] = result
    return metadata


def _usage(fields: dict[str, Any], messages: list[Any]) -> Usage:
    """Record-level ``usage`` (and ``cost``) if given, else the sum of per-message usage."""
    usage = fields.get("usage")
    if isinstance(usage, dict):
        parts = [usage]
    else:
        parts = [
            m["usage"] for m in messages if isinstance(m, dict) and isinstance(m.get("usage"), dict)
        ]
    cost = float_or_none(fields.get("cost"))
    if cost is None:
        cost = total(float_or_none(p.get("cost")) for p in parts)
    return Usage(
        prompt_tokens=total(
            int_or_none(p.get("prompt_tokens", p.get("input_tokens"))) for p in parts
        ),
        completion_tokens=total(
            int_or_none(p.get("completion_tokens", p.get("output_tokens"))) for p in parts
        ),
        cost=cost,
    )


# -- messages to steps ------------------------------------------------------------------------


def _steps(
    ctx: ReadContext, where: str, episode_id: str, messages: list[Any], list_key: str
) -> list[Step]:
    steps: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}
    for n, message in enumerate(messages):
        path = f"{list_key}.{n}"
        for fields in _message_fields(ctx, where, path, message, call_names):
            steps.append({"raw": message, **fields})
    return build_steps(ctx, where, episode_id, steps)


def _message_fields(
    ctx: ReadContext, where: str, path: str, message: Any, call_names: dict[str, str]
) -> list[dict[str, Any]]:
    """Step fields for one message: one step, or one per tool call of an assistant message;
    each names the message's agent, if any (:func:`_speaker`)."""
    if not isinstance(message, dict):
        raise ctx.error(where, path, "expected a message object")
    role, agent = _speaker(ctx, where, path, message)
    fields = _role_fields(ctx, where, path, message, role, call_names)
    if agent:
        for step in fields:
            step["agent"] = agent
    return fields


USER_SPEAKERS = frozenset({"user", "userproxy", "user_proxy", "human"})
"""Speakers (lower-cased) that speak for the user."""


def _speaker(ctx: ReadContext, where: str, path: str, message: dict[str, Any]) -> tuple[str, str]:
    """``(role, agent)`` of a message. In a log of several agents the agent is the message's
    ``name`` (AutoGen/AG2 group chats; not a tool result's, which names the tool), or its
    ``role`` when that is no chat role but an agent's name (Magentic-One: ``WebSurfer``,
    ``Orchestrator (thought)``), which then speaks as the assistant; a message with no role
    but a ``source`` (AutoGen AgentChat) is that speaker's (the user's for ``user``)."""
    got = message.get("role")
    source = message.get("source")
    if got is None and isinstance(source, str) and source.strip():
        # AutoGen AgentChat's messages name their speaker as `source`, with no role
        speaker = source.strip()
        return ("user", "") if speaker.lower() in USER_SPEAKERS else ("assistant", speaker)
    if not isinstance(got, str) or not got.strip():
        problem = "missing" if got is None else f"not a role: {got!r}"
        raise ctx.error(
            where,
            f"{path}.role",
            f"{problem} (expected system, user, assistant, tool or an agent's name)",
        )
    role = ROLES.get(got)
    name = scalar(message.get("name")) if role != "tool" else ""
    if role is None:
        return "assistant", name or got.strip()
    return role, name or ""


def _role_fields(
    ctx: ReadContext,
    where: str,
    path: str,
    message: dict[str, Any],
    role: str,
    call_names: dict[str, str],
) -> list[dict[str, Any]]:
    content = text_of(message.get("content"))
    if role == "system":
        return [{"kind": "system", "role": "system", "content": content}]
    if role == "user":
        return [{"kind": "message", "role": "user", "content": content}]
    if role == "tool":
        call_id = scalar(message.get("tool_call_id")) or ""
        tool = scalar(message.get("name")) or call_names.get(call_id, "")
        return [tool_result_step(content, call_id, tool)]
    return _assistant_fields(ctx, where, path, message, content, call_names)


def _assistant_fields(
    ctx: ReadContext,
    where: str,
    path: str,
    message: dict[str, Any],
    content: str,
    call_names: dict[str, str],
) -> list[dict[str, Any]]:
    reasoning = next(
        (message[k] for k in ("reasoning_content", "reasoning") if isinstance(message.get(k), str)),
        "",
    )
    calls, calls_path = message.get("tool_calls"), f"{path}.tool_calls"
    if not calls and isinstance(message.get("function_call"), dict):
        calls, calls_path = [message["function_call"]], f"{path}.function_call"
    if not calls:
        return [{"kind": "message", "role": "assistant", "content": content, "thought": reasoning}]
    if not isinstance(calls, list):
        raise ctx.error(where, calls_path, "expected a list of tool calls")
    legacy = calls_path.endswith("function_call")
    parts = [
        _call_parts(ctx, where, calls_path if legacy else f"{calls_path}.{k}", call)
        for k, call in enumerate(calls)
    ]
    return tool_call_steps(parts, content, reasoning, call_names)


def _call_parts(ctx: ReadContext, where: str, path: str, call: Any) -> ToolCall:
    """``(function name, arguments, call id)`` of a tool call (or legacy function call)."""
    if not isinstance(call, dict):
        raise ctx.error(where, path, "expected a tool call object")
    function = call.get("function")
    spec, name_path = (
        (function, f"{path}.function.name")
        if isinstance(function, dict)
        else (
            call,
            f"{path}.name",
        )
    )
    function_name = spec.get("name")
    if not isinstance(function_name, str) or not function_name:
        raise ctx.error(where, name_path, "missing function name")
    return function_name, spec.get("arguments"), scalar(call.get("id")) or ""
