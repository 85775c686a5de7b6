"""OpenHands evaluation ``output.jsonl``: one JSON object per line, one line per instance.

The format as OpenHands' evaluation harness writes it (``EvalOutput`` in
``evaluation/utils/shared.py``; events from ``openhands/events/serialization/event.py``)::

    {"instance_id": "django__django-11099",
     "test_result": {"git_patch": "...", "report"?: {"resolved": true, "empty_generation",
                     "failed_apply_patch", "error_eval", "test_timeout"}, ...},
     "instruction": "...",
     "metadata": {"agent_class", "llm_config": {"model", ...}, "max_iterations", "dataset",
                  "data_split", "git_commit", "start_time", ...},
     "history": [event, ...],
     "metrics": {"accumulated_cost", "accumulated_token_usage": {"prompt_tokens",
                 "completion_tokens", ...}, "token_usages": [...], ...},
     "error": null, "instance": {"repo", "problem_statement", ...},
     "report"?: {"resolved": ...}}

``report`` at the top level is what OpenHands' SWE-bench scripts add after evaluation.
The history comes in three forms, each handled:

* events (OpenHands 0.x): ``{id, timestamp, source: agent|user|environment, message,
  action: run|run_ipython|read|write|edit|browse|message|system|think|finish|recall|...,
  args: {command|code|path|content|thought|...}, tool_call_metadata?}`` for actions and
  ``{id, timestamp, source, cause: <action id>, observation: run|read|edit|error|
  agent_state_changed|..., content, extras}`` for observations;
* pairs (older OpenDevin/OpenHands): ``[[action, observation], ...]`` with the same dicts
  (a ``null`` observation where the action had none);
* SDK events (OpenHands agent SDK, ``OpenHands/benchmarks``): objects tagged by ``kind``:
  ``SystemPromptEvent``, ``MessageEvent`` (``llm_message``), ``ActionEvent`` (``thought``,
  ``tool_name``, ``tool_call_id``, ``tool_call: {name, arguments}``), ``ObservationEvent``
  (``action_id``, ``observation: {content}``), ``UserRejectObservation``,
  ``AgentErrorEvent``, and state events.

Steps: an action and the observation answering it (same ``cause``/``action_id``, else the
next observation without a cause) make ONE ``action`` step: thought from the action's
thought, action the rendered command (``run`` → the shell command, ``run_ipython`` → the
code, anything else ``kind({args})``), observation the observation's content; raw is
``{"action": ..., "observation": ...}``. ``think`` actions are ``thought`` steps, messages
``message`` steps (role ``user`` or ``assistant`` by source), the system prompt a ``system``
step. ``agent_state_changed`` and ``null`` observations and SDK state events are skipped
(they carry no content for the agent); other observations without an action become
``observation`` steps, or ``error`` steps for error observations.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from store import Episode, Outcome, Step, Task, Usage
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    episodes_per_line,
    outcome_from,
    text_of,
    validation_error,
)
from workbench.ingest.steps import build_steps, first_user_message
from workbench.ingest.values import (
    as_text,
    compact_json,
    float_or_none,
    int_or_zero,
    iso_time,
    parse_json,
)

name = "openhands"
description = "OpenHands evaluation output.jsonl (one instance per line, with its event history)"

SWE_BENCH_ID = re.compile(r"^(?P<owner>[\w.-]+?)__(?P<repo>[\w.-]+)-(?P<number>\d+)$")
SPLITS = {"train": "train", "dev": "dev", "validation": "dev", "val": "dev", "test": "test"}
SKIPPED_OBSERVATIONS = {"agent_state_changed", "null"}
SDK_OBSERVATIONS = {"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"}
NOISE_ARGS = {
    "thought",
    "security_risk",
    "confirmation_state",
    "impl_source",
    "blocking",
    "hidden",
    "is_confirmed",
    "keep_prompt",
    "include_extra",
    "wait_for_response",
    "translated_ipython_code",
    "is_static",
}
DEFAULT_ARGS = {"start": (0, 1), "end": (-1,), "is_input": (False,)}
LLM_KEYS = ("model", "temperature", "top_p", "max_input_tokens", "max_output_tokens")


ID_KEYS = ("instance_id", "question_id", "task_id", "sample_id", "id")
"""Keys naming the evaluated instance, in the order they are tried: OpenHands writes
``instance_id``; harnesses of other benchmarks keep their own (APIBench's ``question_id``)."""


def sniff(path: Path, head: str) -> bool:
    """JSONL whose first line is an object with an instance id and ``history`` or
    ``test_result``, or with both of those (an evaluation of another benchmark)."""
    first = head.lstrip().split("\n", 1)[0]
    if not first.startswith("{"):
        return False
    history, result = '"history"' in first, '"test_result"' in first
    return (history and result) or ('"instance_id"' in first and (history or result))


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per line (per evaluated instance)."""
    yield from episodes_per_line(ctx, lambda number, obj: _episode(ctx, number, obj))


# -- one instance -----------------------------------------------------------------------------


def _episode(ctx: ReadContext, number: int, obj: Any) -> ParsedEpisode:
    where = f"line {number}"
    if not isinstance(obj, dict):
        raise ctx.error(where, "", "expected a JSON object")
    instance_id = next((str(v) for k in ID_KEYS if _an_id(v := obj.get(k))), f"L{number}")
    where = f"line {number} instance {instance_id!r}"
    for key in ("test_result", "metadata", "metrics", "instance", "report"):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            raise ctx.error(where, key, "expected an object")
    history = obj.get("history")
    if history is not None and not isinstance(history, list):
        raise ctx.error(where, "history", "expected a list of events")

    episode_id = ctx.episode_id(f"{instance_id}-L{number}")
    trajectory = _trajectory(ctx, where, history or [])
    steps = build_steps(ctx, where, episode_id, trajectory.steps)
    task = _task(obj, instance_id, steps)
    try:
        episode = Episode(
            id=episode_id,
            task_id=task.id,
            agent=_agent(obj.get("metadata") or {}),
            batch_id=ctx.batch_id,
            outcome=_outcome(obj, trajectory.finish),
            n_steps=len(steps),
            usage=_usage(obj.get("metrics") or {}),
            source=ctx.source(f"line {number}"),
            family=task.family,
            split=task.split,
            started_at=trajectory.times[0] if trajectory.times else None,
            ended_at=trajectory.times[-1] if trajectory.times else None,
            metadata=_episode_metadata(obj, trajectory.form),
        )
    except ValidationError as error:
        raise validation_error(ctx.path, where, error) from None
    return ParsedEpisode(task=task, episode=episode, steps=steps)


def _an_id(value: Any) -> bool:
    """Whether ``value`` can name an instance (a non-empty string or an integer)."""
    return not isinstance(value, bool) and isinstance(value, str | int) and value != ""


def _task(obj: dict[str, Any], instance_id: str, steps: list[Step]) -> Task:
    """The task: ``swe-bench:<id>`` for SWE-bench-style ids, else ``<dataset>:<id>``."""
    metadata = obj.get("metadata") or {}
    instance = obj.get("instance") or {}
    dataset = as_text(metadata.get("dataset"))
    match = SWE_BENCH_ID.match(instance_id)
    environment = "swe-bench" if match else dataset or "openhands"
    repo = as_text(instance.get("repo")) or (f"{match['owner']}/{match['repo']}" if match else "")
    first_user = first_user_message(steps)
    instruction = (
        as_text(obj.get("instruction")) or as_text(instance.get("problem_statement")) or first_user
    )
    split = metadata.get("data_split") or metadata.get("dataset_split")
    return Task(
        id=f"{environment}:{instance_id}",
        environment=environment,
        family=repo or dataset,
        instruction=instruction,
        split=SPLITS.get(split, "other") if isinstance(split, str) else "other",
        metadata={k: v for k, v in (("dataset", dataset), ("instance", instance)) if v},
    )


def _agent(metadata: dict[str, Any]) -> str:
    """``<agent class>:<model>`` (either alone when the other is unknown)."""
    llm = metadata.get("llm_config") or metadata.get("llm") or {}
    model = as_text(llm.get("model")) if isinstance(llm, dict) else ""
    model = model or as_text(metadata.get("model_name"))
    return ":".join(part for part in (as_text(metadata.get("agent_class")), model) if part)


def _outcome(obj: dict[str, Any], finish: str) -> Outcome:
    """Success from a SWE-bench report's ``resolved``, else the test result's usual keys."""
    test_result = obj.get("test_result") or {}
    report = obj.get("report") or test_result.get("report")
    report = report if isinstance(report, dict) else {}
    resolved = next(
        (
            value
            for value in (report.get("resolved"), test_result.get("resolved"), obj.get("resolved"))
            if isinstance(value, bool)
        ),
        None,
    )
    if resolved is not None:
        success, score = resolved, float(resolved)
    else:
        success, score = _test_result_outcome(test_result)
    error = as_text(obj.get("error"))
    if error and success is None:
        success = False
    message = error or _summary(report, test_result) or finish
    return Outcome(success=success, score=score, message=message)


def _test_result_outcome(test_result: dict[str, Any]) -> tuple[bool | None, float | None]:
    found = outcome_from(test_result)
    if found.success is not None or found.score is not None:
        return found.success, found.score
    for key in ("result", "score"):
        value = test_result.get(key)
        if isinstance(value, bool):
            return value, float(value)
        if isinstance(value, dict):
            found = outcome_from(value)
        elif isinstance(value, (int, float)):
            found = outcome_from({"score": value})
        else:
            continue
        if found.success is not None or found.score is not None:
            return found.success, found.score
    return None, None


def _summary(report: dict[str, Any], test_result: dict[str, Any]) -> str:
    """A one-line summary: the report's flags, else the test result's short scalar values."""
    if report:
        flags = [key for key, value in report.items() if value is True and key != "resolved"]
        verdict = "resolved" if report.get("resolved") is True else "not resolved"
        return f"{verdict}: {', '.join(flags)}" if flags else verdict
    scalars = [
        f"{key}={value}"
        for key, value in test_result.items()
        if key != "report"
        and (
            isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= 200)
        )
    ]
    return ", ".join(scalars)


def _usage(metrics: dict[str, Any]) -> Usage:
    """Accumulated tokens and cost (summing per-call token usages when no total is kept)."""
    total = metrics.get("accumulated_token_usage")
    usages = [total] if isinstance(total, dict) else metrics.get("token_usages") or []
    usages = [u for u in usages if isinstance(u, dict)] if isinstance(usages, list) else []
    prompt = sum(int_or_zero(u.get("prompt_tokens")) for u in usages) if usages else None
    completion = sum(int_or_zero(u.get("completion_tokens")) for u in usages) if usages else None
    cost = float_or_none(metrics.get("accumulated_cost"))
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cost=cost)


def _episode_metadata(obj: dict[str, Any], form: str) -> dict[str, Any]:
    metadata = obj.get("metadata") or {}
    llm = metadata.get("llm_config") or metadata.get("llm") or {}
    llm = {key: llm[key] for key in LLM_KEYS if isinstance(llm, dict) and key in llm}
    found = {
        "history_format": form,
        "agent_class": metadata.get("agent_class"),
        "llm": llm or None,
        "max_iterations": metadata.get("max_iterations"),
        "dataset": metadata.get("dataset"),
        "data_split": metadata.get("data_split") or metadata.get("dataset_split"),
        "git_commit": metadata.get("git_commit"),
        "start_time": metadata.get("start_time"),
        "details": metadata.get("details"),
        "attempt": obj.get("attempt"),
        "test_result": obj.get("test_result"),
        "report": obj.get("report"),
        "error": obj.get("error"),
    }
    return {key: value for key, value in found.items() if value not in (None, {}, "")}


# -- history ----------------------------------------------------------------------------------


@dataclass
class _Trajectory:
    """Steps (as field dicts) built from a history, with what pairs observations to actions."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    by_id: dict[str, int] = field(default_factory=dict)
    """Step index of each action, by event id and tool call id."""
    answered: set[int] = field(default_factory=set)
    pending: int | None = None
    """The latest action still waiting for its observation."""
    times: list[datetime] = field(default_factory=list)
    """Timestamps of the events, in history order."""
    finish: str = ""
    form: str = "events"

    def add(self, step: dict[str, Any], event: dict[str, Any]) -> None:
        """Add a step that expects no observation (a message, the system prompt...)."""
        self.steps.append({"raw": event, **step})

    def add_action(self, step: dict[str, Any], event: dict[str, Any], *ids: Any) -> None:
        """Add an action step, waiting for the observation that answers one of ``ids``."""
        index = len(self.steps)
        self.add(step, event)
        for key in ids:
            if key is not None and key != "":
                self.by_id[str(key)] = index
        self.pending = index

    def attach(self, text: str, event: dict[str, Any], *ids: Any) -> bool:
        """Put an observation on the action it answers; ``False`` when there is none.

        With no ids (an older event without ``cause``) it answers the latest waiting action.
        """
        known = [str(key) for key in ids if key is not None and key != ""]
        if known:
            index = next((self.by_id[key] for key in known if key in self.by_id), None)
        else:
            index = self.pending
        if index is None or index in self.answered:
            return False
        step = self.steps[index]
        step["observation"] = text
        step["raw"] = {"action": step["raw"], "observation": event}
        self.answered.add(index)
        if self.pending == index:
            self.pending = None
        return True

    def time(self, event: dict[str, Any]) -> datetime | None:
        value = iso_time(event.get("timestamp"))
        if value is not None:
            self.times.append(value)
        return value


def _trajectory(ctx: ReadContext, where: str, history: list[Any]) -> _Trajectory:
    trajectory = _Trajectory()
    forms = set()
    for i, item in enumerate(history):
        if isinstance(item, list | tuple):
            forms.add("pairs")
            if len(item) != 2:
                raise ctx.error(where, f"history.{i}", "expected an [action, observation] pair")
            for j, event in enumerate(item):
                _event(ctx, where, f"history.{i}.{j}", event, trajectory)
            trajectory.pending = None  # a pair's observation (or its null) was the only answer
        else:
            forms.add("sdk" if isinstance(item, dict) and _is_sdk(item) else "events")
            _event(ctx, where, f"history.{i}", item, trajectory)
    trajectory.form = "+".join(sorted(forms)) or "events"
    return trajectory


def _is_sdk(event: dict[str, Any]) -> bool:
    legacy = isinstance(event.get("action"), str) or isinstance(event.get("observation"), str)
    return not legacy and isinstance(event.get("kind"), str)


def _event(
    ctx: ReadContext, where: str, field_path: str, event: Any, trajectory: _Trajectory
) -> None:
    if not isinstance(event, dict):
        raise ctx.error(where, field_path, "expected an event object")
    if isinstance(event.get("action"), str):
        _action(ctx, where, field_path, event, trajectory)
    elif isinstance(event.get("observation"), str):
        _observation(event, trajectory)
    elif isinstance(event.get("kind"), str):
        _sdk_event(event, trajectory)
    else:
        raise ctx.error(where, field_path, "expected an 'action', 'observation' or 'kind' key")


def _action(
    ctx: ReadContext, where: str, field_path: str, event: dict[str, Any], trajectory: _Trajectory
) -> None:
    kind = event["action"]
    args = event.get("args") or {}
    if not isinstance(args, dict):
        raise ctx.error(where, f"{field_path}.args", "expected an object")
    timestamp = trajectory.time(event)
    thought = as_text(args.get("thought"))
    if kind == "system":
        content = as_text(args.get("content")) or as_text(event.get("message"))
        step = {"kind": "system", "role": "system", "content": content}
        trajectory.add({**step, "timestamp": timestamp}, event)
        return
    if kind == "message":
        role = "user" if event.get("source") == "user" else "assistant"
        content = as_text(args.get("content")) or as_text(event.get("message"))
        step = {"kind": "message", "role": role, "content": content, "thought": thought}
        trajectory.add({**step, "timestamp": timestamp}, event)
        return
    if kind == "finish":
        trajectory.finish = (
            as_text(args.get("final_thought")) or as_text(event.get("message")) or trajectory.finish
        )
    metadata = event.get("tool_call_metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    step = {
        "kind": "thought" if kind == "think" else "action",
        "role": _role(event.get("source")),
        "thought": thought,
        "action": "" if kind == "think" else _render(kind, args),
        "tool_name": as_text(metadata.get("function_name")),
        "tool_call_id": as_text(metadata.get("tool_call_id")),
        "timestamp": timestamp,
    }
    trajectory.add_action(step, event, event.get("id"))


def _observation(event: dict[str, Any], trajectory: _Trajectory) -> None:
    kind = event["observation"]
    if kind in SKIPPED_OBSERVATIONS:
        return
    timestamp = trajectory.time(event)
    text = text_of(event.get("content"))
    if trajectory.attach(text, event, event.get("cause")):
        return
    if kind == "error":
        step = {"kind": "error", "role": "environment", "content": text}
    else:
        step = {"kind": "observation", "role": "environment", "observation": text}
    trajectory.add({**step, "timestamp": timestamp}, event)


def _sdk_event(event: dict[str, Any], trajectory: _Trajectory) -> None:
    kind = event["kind"]
    timestamp = trajectory.time(event)
    if kind == "SystemPromptEvent":
        parts = (text_of(event.get("system_prompt")), text_of(event.get("dynamic_context")))
        content = "\n\n".join(part for part in parts if part)
        step = {"kind": "system", "role": "system", "content": content}
        trajectory.add({**step, "timestamp": timestamp}, event)
    elif kind == "MessageEvent":
        trajectory.add({**_sdk_message(event), "timestamp": timestamp}, event)
    elif kind == "ActionEvent":
        _sdk_action(event, timestamp, trajectory)
    elif kind in SDK_OBSERVATIONS:
        text = _sdk_observation_text(event)
        if not trajectory.attach(text, event, event.get("action_id"), event.get("tool_call_id")):
            if kind == "AgentErrorEvent":
                step = {"kind": "error", "role": "agent", "content": text}
            else:
                step = {"kind": "observation", "role": "environment", "observation": text}
            trajectory.add({**step, "timestamp": timestamp}, event)
    # other kinds (state updates, pauses, condensations, token events) carry no step


def _sdk_message(event: dict[str, Any]) -> dict[str, Any]:
    message = event.get("llm_message")
    message = message if isinstance(message, dict) else {}
    role = message.get("role") or ("user" if event.get("source") == "user" else "assistant")
    content = text_of(message.get("content"))
    if role == "system":
        return {"kind": "system", "role": "system", "content": content}
    return {
        "kind": "message",
        "role": "user" if role == "user" else "assistant",
        "content": content,
        "thought": as_text(message.get("reasoning_content")),
    }


def _sdk_action(event: dict[str, Any], timestamp: datetime | None, trajectory: _Trajectory) -> None:
    call = event.get("tool_call")
    call = call if isinstance(call, dict) else {}
    action = event.get("action")
    action = action if isinstance(action, dict) else {}
    tool = as_text(event.get("tool_name")) or as_text(call.get("name"))
    if "arguments" in call:
        arguments = _json_text(call["arguments"])
    else:
        arguments = compact_json({k: v for k, v in action.items() if k != "kind"})
    thoughts = (as_text(event.get("reasoning_content")), text_of(event.get("thought")))
    if tool == "finish":
        trajectory.finish = as_text(action.get("message")) or trajectory.finish
    step = {
        "kind": "action",
        "role": "agent",
        "thought": "\n\n".join(part for part in thoughts if part),
        "action": f"{tool}({arguments})",
        "tool_name": tool,
        "tool_call_id": as_text(event.get("tool_call_id")),
        "timestamp": timestamp,
    }
    trajectory.add_action(step, event, event.get("id"), event.get("tool_call_id"))


def _sdk_observation_text(event: dict[str, Any]) -> str:
    if event["kind"] == "AgentErrorEvent":
        return as_text(event.get("error"))
    if event["kind"] == "UserRejectObservation":
        return f"Action rejected: {as_text(event.get('rejection_reason'))}"
    observation = event.get("observation")
    if not isinstance(observation, dict):
        return text_of(observation)
    return text_of(observation.get("content")) or text_of(observation.get("output"))


def _render(kind: str, args: dict[str, Any]) -> str:
    """An action as text: the command for ``run``, the code for ``run_ipython``, else
    ``kind({args})`` without the thought and bookkeeping fields."""
    if kind == "run":
        command = as_text(args.get("command"))
        return f"[input] {command}" if args.get("is_input") is True else command
    if kind == "run_ipython":
        return as_text(args.get("code"))
    kept = {
        key: value
        for key, value in args.items()
        if key not in NOISE_ARGS
        and value not in (None, "", [], {})
        and value not in DEFAULT_ARGS.get(key, ())
    }
    return f"{kind}({compact_json(kept)})"


# -- small helpers ----------------------------------------------------------------------------


def _role(source: Any) -> str:
    return {"user": "user", "environment": "environment"}.get(source, "agent")


def _json_text(arguments: Any) -> str:
    """Tool-call arguments as compact JSON (they arrive as a JSON string or an object)."""
    if isinstance(arguments, str):
        try:
            return compact_json(parse_json(arguments))
        except json.JSONDecodeError:
            return arguments
    return compact_json(arguments)
