"""Codex CLI session rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

Codex records a session as JSON lines ``{"timestamp", "type", "payload"}`` (``RolloutLine``
in ``codex-rs/protocol``), ``type`` being one of:

- ``session_meta``: the session's ``id``, ``cwd``, ``originator``, ``cli_version``,
  ``instructions`` and ``git`` (first line);
- ``response_item``: one item of the model conversation (Responses API shape), tagged by its
  own ``type``: ``message`` (``role`` user/assistant/developer/system, ``content`` parts
  ``input_text``/``output_text``/``input_image``), ``reasoning`` (``summary`` of
  ``summary_text`` parts, optional ``content`` of ``reasoning_text``), ``function_call``
  (``name``, ``arguments`` as a JSON string, ``call_id``), ``function_call_output``
  (``call_id``, ``output``: a string or a list of content parts), ``custom_tool_call``
  (``name``, free-text ``input``, ``call_id``) and its ``custom_tool_call_output``,
  ``local_shell_call`` (``action.command``) and ``web_search_call`` (``action``);
- ``turn_context``: the turn's ``cwd``, ``model``, ``effort``, policies;
- ``event_msg``: UI events (``user_message``, ``agent_message``, ``token_count``, …) that
  repeat the conversation; ``token_count``'s running ``total_token_usage`` is read, and
  ``user_message`` only in a rollout that records no user ``message`` item at all (the Codex
  Desktop file in ``tests/data/real/codex/``): there its ``message`` is the prompt;
- ``compacted`` and anything newer: skipped.

Rollouts written before the ``payload`` wrapper (2025 versions up to 0.3x) are read too: a
first line with the session's ``id`` and ``timestamp``, then bare response items (and
``{"record_type": "state"}`` lines, skipped).

**Steps.** A rollout is one episode. User text is a user ``message`` (or, where the rollout
has none, a ``user_message`` event, placed where it was typed; Codex's own
``<environment_context>``/``<user_instructions>`` blocks and developer messages are
``system`` steps); a call is a ``tool_call`` step whose action is the tool name and its
arguments as indented JSON (``shell({"command": ["bash", "-lc", "pytest"]})``) with the
reasoning summaries and assistant text just before it as its thought; an output is the
``tool_result`` under its call. Outputs that report failure read as errors: a JSON-wrapped
shell output with a non-zero ``metadata.exit_code`` becomes ``Error: exit code N`` followed by
its output. Assistant text with no call after it is an assistant ``message``.

**Records.** The task is ``codex:prompt-<hash of the first user prompt>`` with that prompt as
instruction; rollouts carry no outcome (unknown). The agent is the turn's model; usage is the
last ``token_count`` total. A line that is not JSON, or whose payload is malformed, is an error
naming its line and field; with ``--skip-bad`` that line is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store import Episode, Outcome, Task, Usage
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, iter_jsonl, text_of
from workbench.ingest.record_files import instruction_key, namespaced
from workbench.ingest.steps import build_steps, render_pretty_call, tool_result_step
from workbench.ingest.values import as_text, int_or_none, iso_time, parse_json, scalar

name = "codex"
description = "Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl)"

ENVIRONMENT = "codex"
ITEM_TYPES = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
)
_ROLLOUT_LINE = re.compile(
    r'^\{.*"type"\s*:\s*"(?:session_meta|response_item|turn_context|event_msg)".*"payload"\s*:'
    r'|^\{.*"payload"\s*:.*"type"\s*:\s*"(?:session_meta|response_item|turn_context|event_msg)"',
    re.MULTILINE,
)
_LEGACY_ITEM = re.compile(r'^\{.*"record_type"\s*:\s*"state"', re.MULTILINE)
_PAYLOAD = re.compile(r'"payload"\s*:')
"""What :data:`_ROLLOUT_LINE` cannot match without, found fast: ``re`` tries a pattern that
opens with ``^.*`` at every line, scanning each to its end (0.2 ms a head of other logs)."""
_CONTEXT_TAGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<INSTRUCTIONS>")
"""Starts of user-role texts Codex writes itself, not the user's prompt."""


def sniff(path: Path, head: str) -> bool:
    """JSON lines of Codex's ``{timestamp, type, payload}`` rollout lines (or a legacy rollout)."""
    if not head.lstrip().startswith("{"):
        return False
    if _PAYLOAD.search(head) and _ROLLOUT_LINE.search(head):
        return True
    return path.name.startswith("rollout-") and _LEGACY_ITEM.search(head) is not None


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield bad lines as errors, then the rollout's one episode."""
    rollout = _Rollout(ctx)
    for item in iter_jsonl(ctx):
        if isinstance(item, IngestError):
            yield item
            continue
        try:
            rollout.line(*item)
        except IngestError as error:
            yield error
    yield rollout.episode()


class _Rollout:
    """A rollout being read: its session facts and its steps so far."""

    def __init__(self, ctx: ReadContext) -> None:
        self.ctx = ctx
        self.meta: dict[str, Any] = {}
        self.context: dict[str, Any] = {}
        self.tokens: dict[str, Any] = {}
        self.fields: list[dict[str, Any]] = []
        self.held: list[str] = []
        self.held_text: list[str] = []
        self.tool_names: dict[str, str] = {}
        self.instruction = ""
        self.prompted = False
        """Whether a user ``message`` item held a prompt (then ``user_message`` events are
        repeats of it)."""
        self.typed: list[tuple[int, dict[str, Any]]] = []
        """Prompts read from ``user_message`` events, each with the number of steps before
        it; kept only if no user ``message`` item turns up."""
        self.first_stamp: Any = None
        self.last_stamp: Any = None
        """Times of the first and the last line with a readable timestamp."""
        self.unread_stamps: list[Any] = []
        """Timestamps of the lines after the last one whose time was read (lines without
        steps only need theirs read for the rollout's end)."""
        self.stamp: Any = None
        self.raw: Any = None
        self.held_stamp: Any = None
        self.held_raw: Any = None
        """Time and item of the last reasoning or assistant text held back."""

    def line(self, number: int, line: Any) -> None:
        """Read one line: a rollout line, or a legacy bare item or session header."""
        if not isinstance(line, dict):
            raise self._error(number, "", "expected a JSON object")
        if "payload" in line:
            kind, payload, prefix = line.get("type"), line["payload"], "payload"
        else:  # a legacy rollout: bare items
            kind, payload, prefix = _legacy(line)
        if kind is None:
            return
        if not isinstance(payload, dict):
            raise self._error(number, "payload", "expected an object")
        if kind != "response_item" and self.first_stamp is not None:
            # only ever the rollout's end: read when no later line has a readable time
            if "timestamp" in line:
                self.unread_stamps.append(line["timestamp"])
            stamp = None
        else:
            stamp = iso_time(line.get("timestamp"))
            if stamp is not None:
                self.last_stamp, self.unread_stamps = stamp, []
                if self.first_stamp is None:
                    self.first_stamp = stamp
        if kind == "response_item":
            self._item(number, prefix, payload, stamp)
        elif kind == "session_meta":
            self.meta = payload
        elif kind == "turn_context":
            self.context = {**self.context, **payload}
        elif kind == "event_msg" and payload.get("type") == "token_count":
            self._token_count(payload)
        elif kind == "event_msg" and payload.get("type") == "user_message":
            self._typed(payload, line.get("timestamp"))

    def _typed(self, payload: dict[str, Any], timestamp: Any) -> None:
        """A prompt as the UI recorded it, kept aside in case no user item repeats it."""
        text = as_text(payload.get("message"))
        if self.prompted or not text.strip():
            return
        self._flush()  # (a reply held back came before the prompt)
        step = {"kind": "message", "role": "user", "content": text}
        self.typed.append(
            (len(self.fields), step | {"timestamp": iso_time(timestamp), "raw": payload})
        )

    def _token_count(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
            self.tokens = info["total_token_usage"]

    def _item(self, number: int, prefix: str, item: dict[str, Any], stamp: Any) -> None:
        kind = item.get("type")
        read = _ITEMS.get(kind) if isinstance(kind, str) else None
        if read is None:
            if kind is None or not isinstance(kind, str):
                field = f"{prefix}.type" if prefix else "type"
                raise self._error(
                    number, field, f"missing (expected one of {', '.join(ITEM_TYPES)})"
                )
            return  # an item type of a later version (ghost snapshots, compaction, ...)
        self.stamp, self.raw = stamp, item
        read(self, number, "payload." if prefix else "", item)

    # -- items ----------------------------------------------------------------------------------

    def _message(self, number: int, at: str, item: dict[str, Any]) -> None:
        content = item.get("content")
        if not isinstance(content, list):
            raise self._error(number, f"{at}content", "expected a list of content parts")
        text, role = text_of(content), item.get("role")
        if role == "assistant":
            self.held_text.append(text)
            self._hold()
            return
        if role not in ("user", "developer", "system"):
            raise self._error(number, f"{at}role", f"unknown role {role!r}")
        self._flush()
        if role != "user" or text.lstrip().startswith(_CONTEXT_TAGS):
            self._add({"kind": "system", "role": "system", "content": text})
            return
        self.instruction, self.prompted = self.instruction or text, True
        self._add({"kind": "message", "role": "user", "content": text})

    def _reasoning(self, number: int, at: str, item: dict[str, Any]) -> None:
        parts = [*_list(item.get("summary")), *_list(item.get("content"))]
        self.held += [as_text(p.get("text")) for p in parts if isinstance(p, dict)]
        self._hold()

    def _function_call(self, number: int, at: str, item: dict[str, Any]) -> None:
        tool = self._required(number, at, item, "name")
        arguments = item.get("arguments")
        if arguments is not None and not isinstance(arguments, (str, dict)):
            raise self._error(number, f"{at}arguments", "expected a JSON string of arguments")
        call_id = self._required(number, at, item, "call_id")
        self._call(tool, render_pretty_call(tool, arguments), call_id)

    def _custom_tool_call(self, number: int, at: str, item: dict[str, Any]) -> None:
        tool = self._required(number, at, item, "name")
        action = f"{tool}(\n{as_text(item.get('input'))}\n)"
        self._call(tool, action, self._required(number, at, item, "call_id"))

    def _local_shell_call(self, number: int, at: str, item: dict[str, Any]) -> None:
        action = item.get("action")
        command = action.get("command") if isinstance(action, dict) else None
        if not isinstance(command, list):
            raise self._error(number, f"{at}action.command", "expected the command's argument list")
        call_id = scalar(item.get("call_id")) or scalar(item.get("id")) or ""
        self._call("local_shell", render_pretty_call("local_shell", {"command": command}), call_id)

    def _web_search_call(self, number: int, at: str, item: dict[str, Any]) -> None:
        action = item.get("action")
        call_id = scalar(item.get("id")) or ""
        self._call("web_search", render_pretty_call("web_search", action), call_id)

    def _function_call_output(self, number: int, at: str, item: dict[str, Any]) -> None:
        call_id = self._required(number, at, item, "call_id")
        output = item.get("output")
        if not isinstance(output, (str, list, dict)):
            raise self._error(number, f"{at}output", "expected the output text or content parts")
        step = tool_result_step(_observation(output), call_id, self.tool_names.get(call_id, ""))
        if self.held or self.held_text:
            self._flush()
        self._add(step)

    def _custom_tool_call_output(self, number: int, at: str, item: dict[str, Any]) -> None:
        self._function_call_output(number, at, item)

    # -- helpers --------------------------------------------------------------------------------

    def _hold(self) -> None:
        """Remember the item just held back, for the step it becomes when flushed."""
        self.held_stamp, self.held_raw = self.stamp, self.raw

    def _required(self, number: int, at: str, item: dict[str, Any], key: str) -> str:
        value = scalar(item.get(key))
        if value is None:
            raise self._error(number, f"{at}{key}", "missing")
        return value

    def _error(self, number: int, field: str, message: str) -> IngestError:
        return self.ctx.error(f"line {number}", field, message)

    def _add(self, step: dict[str, Any]) -> None:
        """A step of the item just read (its time and raw record are the item's)."""
        step["timestamp"], step["raw"] = self.stamp, self.raw
        self.fields.append(step)

    def _call(self, tool: str, action: str, call_id: str) -> None:
        self.tool_names[call_id] = tool
        thought = "\n\n".join([p for p in (*self.held, *self.held_text) if p])
        self.held, self.held_text = [], []
        self._add(
            {
                "kind": "tool_call",
                "role": "assistant",
                "thought": thought,
                "action": action,
                "tool_name": tool,
                "tool_call_id": call_id,
            }
        )

    def _flush(self) -> None:
        """Held reasoning and assistant text with no call after them: a reply or a thought
        (with the time and raw record of the last item held)."""
        if not self.held and not self.held_text:
            return
        thought = "\n\n".join(p for p in self.held if p)
        text = "\n\n".join(p for p in self.held_text if p)
        self.held, self.held_text = [], []
        at = {"timestamp": self.held_stamp, "raw": self.held_raw}
        if text:
            step = {"kind": "message", "role": "assistant", "content": text, "thought": thought}
            self.fields.append(step | at)
        elif thought:
            self.fields.append({"kind": "thought", "role": "assistant", "thought": thought, **at})

    def episode(self) -> ParsedEpisode:
        """The rollout as one episode; raises when it holds no conversation at all."""
        self._flush()
        if not self.prompted:
            self._place_typed()
        if not self.fields:
            raise self.ctx.error("", "", "no conversation items (not a Codex session rollout)")
        where = "session"
        episode_id = self.ctx.episode_id("session")
        steps = build_steps(self.ctx, where, episode_id, self.fields, own=True)
        key = instruction_key(self.instruction) if self.instruction else self.ctx.key
        task = Task(
            id=namespaced(ENVIRONMENT, key), environment=ENVIRONMENT, instruction=self.instruction
        )
        episode = Episode(
            id=episode_id,
            task_id=task.id,
            agent=as_text(self.context.get("model")) or as_text(self.meta.get("model")),
            batch_id=self.ctx.batch_id,
            outcome=Outcome(),
            usage=Usage(
                prompt_tokens=int_or_none(self.tokens.get("input_tokens")),
                completion_tokens=int_or_none(self.tokens.get("output_tokens")),
            ),
            source=self.ctx.source(where),
            started_at=self.first_stamp,
            ended_at=self._last_stamp(),
            metadata=self._metadata(),
        )
        return ParsedEpisode(task=task, episode=episode, steps=steps)

    def _place_typed(self) -> None:
        """Prompts only the ``user_message`` events hold, each put back where it was typed;
        the first is the instruction."""
        for before, step in reversed(self.typed):
            self.fields.insert(before, step)
        if self.typed:
            self.instruction = self.instruction or self.typed[0][1]["content"]

    def _last_stamp(self) -> Any:
        """The time of the last line with a readable timestamp."""
        for value in reversed(self.unread_stamps):
            stamp = iso_time(value)
            if stamp is not None:
                return stamp
        return self.last_stamp

    def _metadata(self) -> dict[str, Any]:
        meta, context = self.meta, self.context
        found = {
            "session_id": scalar(meta.get("id")),
            "cwd": scalar(meta.get("cwd")) or scalar(context.get("cwd")),
            "originator": scalar(meta.get("originator")),
            "cli_version": scalar(meta.get("cli_version")),
            "git": meta.get("git") if isinstance(meta.get("git"), dict) else None,
            "model": scalar(context.get("model")),
            "effort": scalar(context.get("effort")),
            "approval_policy": scalar(context.get("approval_policy")),
        }
        return {k: v for k, v in found.items() if v is not None}


_ITEMS = {kind: getattr(_Rollout, f"_{kind}") for kind in ITEM_TYPES}
"""How ``_Rollout`` reads each type of conversation item."""


def _legacy(line: dict[str, Any]) -> tuple[str | None, Any, str]:
    """``(kind, payload, field prefix)`` of a line of a rollout without payload wrappers."""
    if line.get("record_type") == "state":
        return None, None, ""
    if "type" in line:
        return "response_item", line, ""
    if "id" in line and "timestamp" in line:
        return "session_meta", line, ""
    return None, None, ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _observation(output: Any) -> str:
    """A call's output as text; a JSON-wrapped shell output unwrapped, a failed exit marked."""
    if not isinstance(output, str):
        text = text_of(output.get("content")) if isinstance(output, dict) else text_of(output)
        failed = isinstance(output, dict) and output.get("success") is False
        return f"Error: {text}" if failed and not text.lower().startswith("error") else text
    try:
        opens = output[:1] == "{" or output.lstrip().startswith("{")  # (a copy only if need be)
        wrapped = parse_json(output) if opens else None
    except json.JSONDecodeError:
        wrapped = None
    if not isinstance(wrapped, dict) or not isinstance(wrapped.get("output"), str):
        return output
    metadata = wrapped.get("metadata")
    code = int_or_none(metadata.get("exit_code")) if isinstance(metadata, dict) else None
    text = wrapped["output"]
    return f"Error: exit code {code}\n{text}" if code else text
