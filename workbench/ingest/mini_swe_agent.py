"""mini-swe-agent trajectory files (``<instance_id>.traj.json``): one agent run per file.

A file is one JSON object, as mini-swe-agent saves it::

    {"info": {"exit_status": "Submitted", "submission": "diff --git ...",
              "model_stats": {"instance_cost": 0.05, "api_calls": 12},
              "mini_version": "1.9.0",
              "config": {"agent": {...}, "model": {"model_name": "..."}, ...}},
     "messages": [{"role": "system", "content": "..."},
                  {"role": "user", "content": "<the task>"},
                  {"role": "assistant", "content": "THOUGHT: ...\\n\\n```bash\\nls\\n```"},
                  {"role": "user", "content": "<returncode>0</returncode>\\n<output>...</output>"},
                  ...],
     "trajectory_format": "mini-swe-agent-1",
     "instance_id": "django__django-11099"}

Format ``mini-swe-agent-1.1`` (v2) uses the same layout; its commands sit in
``mswea_bash_command`` code blocks (also parsed into ``extra.actions``), messages carry
``extra`` (cost, timestamp, raw response, return code), the run ends with a ``role: "exit"``
message, and tool-calling models write assistant ``tool_calls`` answered by ``role: "tool"``
messages.

Mapping, message by message:

- ``system`` → a ``system`` step; the first ``user`` message → a ``message`` step (the
  task; its issue text is the task's instruction);
- an ``assistant`` message with one command (``extra.actions``, else exactly one bash block)
  → one ``action`` step: thought = the text outside the block (without its ``THOUGHT:``
  label), action = the command; the
  ``user`` (observation) message right after it becomes that step's observation, and the
  step's raw record is the list of both messages;
- an ``assistant`` message without a single command → a ``message`` step; one with
  ``tool_calls`` → one ``tool_call`` step per call, ``tool`` messages → ``tool_result`` steps;
- other ``user`` messages (format errors, limits) → ``message`` steps; ``exit`` → a
  ``message`` step from the ``environment``.

The instance id is the ``instance_id`` key, else the file name without ``.traj.json``; ids
that read ``owner__repo-NUMBER`` are tasks ``swe-bench:<id>`` of family ``repo``, others
``mini-swe-agent:<id>``. The outcome message is ``info.exit_status``; success stays unknown
unless a SWE-bench evaluation report is given as the results file. Usage: the cost from
``info.model_stats.instance_cost``, tokens summed from the raw responses' ``usage`` when
recorded.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store import Step, Usage
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, json_key, text_of
from workbench.ingest.steps import build_steps, step_column, tool_result_step
from workbench.ingest.swebench_report import (
    Instance,
    id_from_file_name,
    instance,
    problem_statement,
    read_run,
    run_episode,
)
from workbench.ingest.values import compact

name = "mini-swe-agent"
description = "mini-swe-agent .traj.json files, one run each (--results: a SWE-bench report)"

ENVIRONMENT = "mini-swe-agent"
"""Environment of tasks whose id is not a SWE-bench instance id."""

COMMAND_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)[ \t]*\n(.*?)\n```", re.DOTALL)
THOUGHT_LABEL = re.compile(r"^THOUGHT:[ \t]*")
CONTENT_TYPES = (str, list, type(None))
CHAT_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
"""Roles of messages stored one step each, and the step role they get."""
FORMAT_KEY = json_key("trajectory_format", '"mini-swe-agent')
VERSION_KEY = json_key("mini_version")
INFO = json_key("info", "{")
EXIT_STATUS = json_key("exit_status")
MESSAGES = json_key("messages", "[")
WORKBENCH = json_key("format", '"trajectory-workbench')
SWE_AGENT_KEYS = (json_key("trajectory", "["), json_key("history", "["))


def sniff(path: Path, head: str) -> bool:
    """A JSON object naming a ``mini-swe-agent`` trajectory format or version, or one whose
    ``info`` has an ``exit_status`` next to ``messages``."""
    text = head.lstrip()
    if not text.startswith("{") or WORKBENCH.search(text):
        return False
    if FORMAT_KEY.search(text) or VERSION_KEY.search(text):
        return True
    if all(p.search(text) for p in SWE_AGENT_KEYS):
        return False
    return bool(INFO.search(text) and EXIT_STATUS.search(text) and MESSAGES.search(text))


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield the file's one run (a record-level problem as an error)."""
    expected = "expected a mini-swe-agent trajectory: a JSON object with 'info' and 'messages'"
    yield from read_run(ctx, {"messages", "info", "trajectory_format"}, expected, _episode)


def _episode(ctx: ReadContext, data: dict[str, Any], resolved: dict[str, bool]) -> ParsedEpisode:
    task_instance = instance(_instance_id(ctx.path, data), ENVIRONMENT)
    where = f"instance {task_instance.id!r}"
    messages = data.get("messages")
    if messages is None:
        raise ctx.error(where, "messages", "field required")
    if not isinstance(messages, list):
        raise ctx.error(where, "messages", f"expected a list, got {type(messages).__name__}")
    info = data.get("info") or {}
    if not isinstance(info, dict):
        raise ctx.error(where, "info", f"expected an object, got {type(info).__name__}")
    episode_id = ctx.episode_id(task_instance.id)
    steps = _Steps(ctx, where, episode_id).read(messages)
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    model = _model_name(config)
    exit_status = info.get("exit_status")
    times = [time for time in step_column(steps, "timestamp") if time is not None]
    roles = zip(step_column(steps, "role"), step_column(steps, "content"), strict=True)
    task_prompt = next((text for role, text in roles if role == "user"), "")
    episode = run_episode(
        ctx,
        task_instance,
        steps,
        resolved,
        exit_status,
        agent="mini-swe-agent",
        model=model,
        usage=_usage(ctx, where, info, messages),
        started_at=min(times) if times else None,
        ended_at=max(times) if times else None,
        metadata=_metadata(data, info, config, task_instance, model),
    )
    task = task_instance.task(problem_statement(task_prompt))
    return ParsedEpisode(task=task, episode=episode, steps=steps)


def _instance_id(path: Path, data: dict[str, Any]) -> str:
    value = data.get("instance_id")
    if isinstance(value, str) and value:
        return value
    return id_from_file_name(path)


def _model_name(config: dict[str, Any]) -> str:
    model = config.get("model")
    value = model.get("model_name") if isinstance(model, dict) else None
    return value if isinstance(value, str) else ""


CONFIG_KEYS = ("agent_type", "model_type", "environment_type")
LIMIT_KEYS = ("step_limit", "cost_limit")


def _metadata(
    data: dict[str, Any],
    info: dict[str, Any],
    config: dict[str, Any],
    task_instance: Instance,
    model: str,
) -> dict[str, Any]:
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    agent = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    metadata = {
        "instance_id": task_instance.id,
        "exit_status": info.get("exit_status"),
        "submission": info.get("submission"),
        "api_calls": stats.get("api_calls"),
        "mini_version": info.get("mini_version"),
        "trajectory_format": data.get("trajectory_format"),
        "model": model or None,
        **{key: config.get(key) for key in CONFIG_KEYS},
        **{key: agent.get(key) for key in LIMIT_KEYS},
    }
    return compact(metadata)


def _usage(ctx: ReadContext, where: str, info: dict[str, Any], messages: list[Any]) -> Usage:
    stats = info.get("model_stats")
    if stats is not None and not isinstance(stats, dict):
        raise ctx.error(where, "info.model_stats", "expected an object")
    cost = (stats or {}).get("instance_cost")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float))):
        raise ctx.error(where, "info.model_stats.instance_cost", f"expected a number, got {cost!r}")
    prompt, completion = _token_totals(messages)
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cost=cost)


def _token_totals(messages: list[Any]) -> tuple[int | None, int | None]:
    """Prompt and completion tokens summed over the raw responses that record ``usage``."""
    prompt = completion = None
    for message in messages:
        response = _extra(message).get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
        if not isinstance(usage, dict):
            continue
        value = usage.get("prompt_tokens")
        if isinstance(value, int) and not isinstance(value, bool):
            prompt = (prompt or 0) + value
        value = usage.get("completion_tokens")
        if isinstance(value, int) and not isinstance(value, bool):
            completion = (completion or 0) + value
    return prompt, completion


def _extra(message: Any) -> dict[str, Any]:
    extra = message.get("extra") if isinstance(message, dict) else None
    return extra if isinstance(extra, dict) else {}


def _timestamp(extra: dict[str, Any]) -> datetime | None:
    value = extra.get("timestamp")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def _command(extra: dict[str, Any], content: str) -> tuple[str, str] | None:
    """``(thought, command)`` of an assistant message (its ``extra``, its text) with one
    command, else ``None``."""
    actions = extra.get("actions")
    if isinstance(actions, list) and actions:
        commands = [a.get("command") for a in actions if isinstance(a, dict)]
        if commands and all(isinstance(c, str) for c in commands):
            return _thought(COMMAND_BLOCK.sub("", content)), "\n".join(commands)
    blocks = list(itertools.islice(COMMAND_BLOCK.finditer(content), 2))
    if len(blocks) != 1:
        return None
    block = blocks[0]
    return _thought(content[: block.start()] + content[block.end() :]), block[1].strip()


def _thought(text: str) -> str:
    """The reasoning around a command, without the ``THOUGHT:`` label the prompt asks for."""
    return THOUGHT_LABEL.sub("", text.strip(), count=1).strip()


def _render_call(call: dict[str, Any]) -> tuple[str, str]:
    """``(tool name, rendered call)`` of an OpenAI-style tool call."""
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    tool = function.get("name") if isinstance(function.get("name"), str) else ""
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = text_of(arguments)
    return tool, f"{tool}({arguments})"


class _Steps:
    """Turns a mini-swe-agent message list into steps, pairing actions with observations."""

    def __init__(self, ctx: ReadContext, where: str, episode_id: str) -> None:
        self.ctx, self.where, self.episode_id = ctx, where, episode_id
        self.steps: list[dict[str, Any]] = []
        self.awaiting: dict[str, Any] | None = None
        """The last action step, while its observation has not come yet."""
        self.tool_names: dict[str, str] = {}

    def read(self, messages: list[Any]) -> Sequence[Step]:
        for index, message in enumerate(messages):
            self._message(index, message)
        return build_steps(self.ctx, self.where, self.episode_id, self.steps, own=True)

    def _message(self, index: int, message: Any) -> None:
        if not isinstance(message, dict):
            raise self.ctx.error(self.where, f"messages.{index}", "expected an object")
        role = message.get("role")
        if not isinstance(role, str):
            raise self.ctx.error(self.where, f"messages.{index}.role", "field required")
        content = message.get("content")
        if not isinstance(content, CONTENT_TYPES):
            where = f"messages.{index}.content"
            raise self.ctx.error(self.where, where, "expected a string or a list")
        content = content if type(content) is str else text_of(content)
        awaiting, self.awaiting = self.awaiting, None
        extra = _extra(message)
        base = {"raw": message, "timestamp": _timestamp(extra)}
        if role == "assistant":
            self._assistant(index, message, extra, content, base)
        elif role == "user" and awaiting is not None:
            awaiting["observation"] = content
            awaiting["raw"] = [awaiting["raw"], message]
        elif role == "tool":
            call_id = message.get("tool_call_id")
            call_id = call_id if isinstance(call_id, str) else ""
            tool = self.tool_names.get(call_id, "")
            self._add(**tool_result_step(content, call_id, tool), **base)
        elif role == "exit":
            self._add(kind="message", role="environment", content=content, **base)
        elif role in CHAT_ROLES:
            kind = "system" if CHAT_ROLES[role] == "system" else "message"
            self._add(kind=kind, role=CHAT_ROLES[role], content=content, **base)
        else:
            raise self.ctx.error(self.where, f"messages.{index}.role", f"unknown role {role!r}")

    def _assistant(
        self,
        index: int,
        message: dict[str, Any],
        extra: dict[str, Any],
        content: str,
        base: dict[str, Any],
    ) -> None:
        calls = message.get("tool_calls")
        if calls:
            if not isinstance(calls, list):
                where = f"messages.{index}.tool_calls"
                raise self.ctx.error(self.where, where, "expected a list")
            for number, call in enumerate(calls):
                self._tool_call(f"messages.{index}.tool_calls.{number}", call, content, base)
            return
        parsed = _command(extra, content)
        if parsed is None:
            self._add(kind="message", role="assistant", content=content, **base)
            return
        thought, command = parsed
        self.awaiting = self._add(
            kind="action", role="agent", thought=thought, action=command, **base
        )

    def _tool_call(self, field: str, call: Any, content: str, base: dict[str, Any]) -> None:
        if not isinstance(call, dict):
            raise self.ctx.error(self.where, field, "expected an object")
        tool, rendered = _render_call(call)
        call_id = call.get("id") if isinstance(call.get("id"), str) else ""
        self.tool_names[call_id] = tool
        self._add(
            kind="tool_call",
            role="assistant",
            content=content,
            action=rendered,
            tool_name=tool,
            tool_call_id=call_id,
            **base,
        )

    def _add(self, **fields: Any) -> dict[str, Any]:
        self.steps.append(fields)
        return fields
