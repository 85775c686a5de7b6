"""ATIF, the Agent Trajectory Interchange Format of Harbor (Terminal-Bench's harness).

As its public RFC (``docs/rfcs/0001-trajectory-format.md`` in Harbor, versions ATIF-v1.0 to
v1.7) describes it, one trajectory is a JSON object::

    {"schema_version": "ATIF-v1.4", "session_id": "...",
     "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "...", "extra": {}},
     "steps": [
        {"step_id": 1, "timestamp": "2025-10-11T10:30:00Z", "source": "user",
         "message": "Fix the failing test in /app."},
        {"step_id": 2, "source": "agent", "message": "I'll look at the tests first.",
         "reasoning_content": "...", "model_name": "...",
         "tool_calls": [{"tool_call_id": "call_1", "function_name": "bash",
                         "arguments": {"command": "ls /app"}}],
         "observation": {"results": [{"source_call_id": "call_1", "content": "src tests"}]},
         "metrics": {"prompt_tokens": 520, "completion_tokens": 80, "cached_tokens": 200,
                     "cost_usd": 0.00045}}],
     "notes": "...", "extra": {},
     "final_metrics": {"total_prompt_tokens": 520, "total_completion_tokens": 80,
                       "total_cached_tokens": 200, "total_cost_usd": 0.00045, "total_steps": 2}}

``source`` is ``system``, ``user`` or ``agent``; ``message`` is a string (from v1.6 it may be
a list of content parts); tool call ``arguments`` is an object; an observation result may name
the call it answers (``source_call_id``) or, for actions without tool calls and system events
(v1.2), none, and may point at subagent trajectories (``subagent_trajectory_ref``) instead of
carrying ``content``.

ATIF records no task id and no reward. The task comes from a results file entry (``--results``,
found by ``session_id``, ``trial_name`` or ``id``) or from ``extra`` (``task_id``,
``task_name``, ...), else from a hash of the first user message. The outcome comes from that
results entry (``reward``, ``resolved``, ... also under ``verifier_result.rewards`` as Harbor's
trial results keep it), else from reward-like keys in ``extra`` or ``final_metrics``, else it is
unknown. A file holds one trajectory, or a JSON array or JSON lines of them.

Mapping: a system step becomes a ``system`` step, a user step a user ``message``; an agent
step with tool calls becomes one ``action`` step per call (thought = ``reasoning_content``, or
``message`` when there is none; action = the rendered call; observation = the results naming
that call), the message and thought going on the first; results naming no call become an
extra ``observation`` step, unless the agent step made exactly one call. An agent step without
tool calls becomes an assistant ``message`` (with its observation, if any).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store import Episode, Outcome, Step, Task, Usage
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, text_of
from workbench.ingest.record_files import (
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
    step_column,
)
from workbench.ingest.values import float_or_none, int_or_none, pick, scalar, total

name = "atif"
description = "ATIF trajectories (Harbor, Terminal-Bench): one JSON object, an array or JSONL"

DEFAULT_ENVIRONMENT = "atif"
SCHEMA_VERSION = re.compile(r'"schema_version"\s*:\s*"ATIF')
RESULT_ID_KEYS = ("session_id", "trial_name", "id", "trajectory_id")
"""Keys naming the trajectory a result belongs to, in a results file."""
RESULT_SUB_KEYS = ("verifier_result", "rewards", "result", "info", "metadata", "extra")
"""Sub-objects of a results entry that may hold the outcome."""
INLINE_SUB_KEYS = ("extra", "final_metrics")
"""Sub-objects of a trajectory that may hold a reward-like outcome."""
TASK_KEYS = ("task_id", "task_name", "task", "instance_id")
ENVIRONMENT_KEYS = ("environment", "benchmark", "dataset")
FAMILY_KEYS = ("family", "category", "task_type")


def sniff(path: Path, head: str) -> bool:
    """An ATIF ``schema_version`` (a value starting ``ATIF``) appears in the head."""
    return SCHEMA_VERSION.search(head) is not None


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per trajectory; unreadable trajectories are yielded as errors."""
    results = Results.load(ctx, RESULT_ID_KEYS, trial_keys=())
    yield from read_records(ctx, lambda record: _episode(ctx, record, results))


def _trajectory(ctx: ReadContext, record: Record) -> tuple[dict[str, Any], list[Any]]:
    """The trajectory object and its steps, or an error naming what is missing."""
    trajectory = record.value
    if not isinstance(trajectory, dict):
        raise ctx.error(record.where, "", "expected an ATIF trajectory object")
    version = trajectory.get("schema_version")
    if version is not None and not isinstance(version, str):
        raise ctx.error(record.where, "schema_version", "expected a string such as 'ATIF-v1.4'")
    steps = trajectory.get("steps")
    if not isinstance(steps, list):
        problem = "missing" if steps is None else "expected a list of steps"
        raise ctx.error(record.where, "steps", problem)
    return trajectory, steps


def _episode(ctx: ReadContext, record: Record, results: Results | None) -> ParsedEpisode:
    trajectory, raw_steps = _trajectory(ctx, record)
    episode_id = ctx.episode_id(f"r{record.index}")
    steps = _steps(ctx, record.where, episode_id, raw_steps)
    ids = [scalar(trajectory.get(k)) for k in ("session_id", "trajectory_id", "id")]
    result = results.find(ids) if results else None
    extra = trajectory.get("extra") if isinstance(trajectory.get("extra"), dict) else {}
    described = [d for d in (result, extra) if d is not None]
    instruction = first_user_message(steps)
    environment = _first(described, ENVIRONMENT_KEYS) or DEFAULT_ENVIRONMENT
    task_key = _first(described, TASK_KEYS) or unnamed_task_key(ctx, record, instruction)
    task = Task(
        id=namespaced(environment, task_key),
        environment=environment,
        family=_first(described, FAMILY_KEYS) or "",
        instruction=instruction,
    )
    stamps = [stamp for stamp in step_column(steps, "timestamp") if stamp is not None]
    episode = Episode(
        id=episode_id,
        task_id=task.id,
        agent=_agent(trajectory),
        batch_id=ctx.batch_id,
        outcome=_outcome(trajectory, result),
        usage=_usage(trajectory, raw_steps),
        source=ctx.source(record.where),
        started_at=min(stamps, default=None),
        ended_at=max(stamps, default=None),
        metadata=_metadata(trajectory, result),
    )
    return ParsedEpisode(task=task, episode=episode, steps=steps)


def _first(sources: list[dict[str, Any]], keys: tuple[str, ...]) -> str | None:
    return next((v for s in sources if (v := pick(s, keys)) is not None), None)


def _agent(trajectory: dict[str, Any]) -> str:
    agent = trajectory.get("agent")
    if not isinstance(agent, dict):
        return scalar(agent) or ""
    return scalar(agent.get("name")) or scalar(agent.get("model_name")) or ""


def _outcome(trajectory: dict[str, Any], result: dict[str, Any] | None) -> Outcome:
    if result is not None and (found := find_outcome(result, RESULT_SUB_KEYS)) is not None:
        return found
    return find_outcome(trajectory, INLINE_SUB_KEYS) or Outcome()


def _metadata(trajectory: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """Everything about the run but its steps (which are stored as steps)."""
    metadata = {k: v for k, v in trajectory.items() if k not in ("steps", "subagent_trajectories")}
    agent = trajectory.get("agent")
    if isinstance(agent, dict):
        metadata.update(
            {f"agent_{k}": agent[k] for k in ("version", "model_name") if agent.get(k) is not None}
        )
    subagents = trajectory.get("subagent_trajectories")
    if isinstance(subagents, list):
        metadata["subagent_sessions"] = [
            s.get("session_id") for s in subagents if isinstance(s, dict)
        ]
    if result is not None:
        metadata["result"] = result
    return metadata


def _usage(trajectory: dict[str, Any], raw_steps: list[Any]) -> Usage:
    """``final_metrics`` totals, or the sum of the steps' ``metrics`` where a total is missing."""
    final = trajectory.get("final_metrics")
    final = final if isinstance(final, dict) else {}
    metrics = [
        s["metrics"]
        for s in raw_steps
        if isinstance(s, dict) and isinstance(s.get("metrics"), dict)
    ]

    def known(total_key: str, step_key: str, convert: Callable[[Any], Any]) -> Any:
        value = convert(final.get(total_key))
        return value if value is not None else total(convert(m.get(step_key)) for m in metrics)

    return Usage(
        prompt_tokens=known("total_prompt_tokens", "prompt_tokens", int_or_none),
        completion_tokens=known("total_completion_tokens", "completion_tokens", int_or_none),
        cost=known("total_cost_usd", "cost_usd", float_or_none),
    )


# -- steps ------------------------------------------------------------------------------------


def _steps(ctx: ReadContext, where: str, episode_id: str, raw_steps: list[Any]) -> list[Step]:
    steps: list[dict[str, Any]] = []
    for i, raw in enumerate(raw_steps):
        path = f"steps.{i}"
        if not isinstance(raw, dict):
            raise ctx.error(where, path, "expected a step object")
        shared = {"timestamp": _timestamp(raw.get("timestamp")), "raw": raw}
        for n, fields in enumerate(_step_fields(ctx, where, path, raw)):
            reward = _reward(raw) if n == 0 else None
            steps.append({"reward": reward, **shared, **fields})
    return build_steps(ctx, where, episode_id, steps)


def _step_fields(
    ctx: ReadContext, where: str, path: str, raw: dict[str, Any]
) -> list[dict[str, Any]]:
    """Step fields for one ATIF step (several for an agent step with several tool calls)."""
    source = raw.get("source")
    message = text_of(raw.get("message"))
    by_call, loose = _observations(ctx, where, path, raw.get("observation"))
    observed = "\n".join([*loose, *(text for texts in by_call.values() for text in texts)])
    if source == "system":
        return [{"kind": "system", "role": "system", "content": message, "observation": observed}]
    if source == "user":
        return [{"kind": "message", "role": "user", "content": message, "observation": observed}]
    if source != "agent":
        problem = "missing" if source is None else f"unknown source {source!r}"
        raise ctx.error(where, f"{path}.source", f"{problem} (expected system, user or agent)")
    reasoning = text_of(raw.get("reasoning_content"))
    calls = raw.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ctx.error(where, f"{path}.tool_calls", "expected a list of tool calls")
    if not calls:
        return [
            {
                "kind": "message",
                "role": "assistant",
                "content": message,
                "thought": reasoning,
                "observation": observed,
            }
        ]
    return _action_fields(ctx, where, path, calls, message, reasoning, by_call, loose)


def _action_fields(
    ctx: ReadContext,
    where: str,
    path: str,
    calls: list[Any],
    message: str,
    reasoning: str,
    by_call: dict[str, list[str]],
    loose: list[str],
) -> list[dict[str, Any]]:
    """One ``action`` step per tool call, each with the results that name its call."""
    steps = []
    for k, call in enumerate(calls):
        function, arguments, call_id = _call_parts(ctx, where, f"{path}.tool_calls.{k}", call)
        steps.append(
            {
                "kind": "action",
                "role": "agent",
                "content": message if k == 0 and reasoning else "",
                "thought": (reasoning or message) if k == 0 else "",
                "action": render_call(function, arguments),
                "observation": "\n".join(by_call.pop(call_id, [])),
                "tool_name": function,
                "tool_call_id": call_id,
            }
        )
    unmatched = [*loose, *(text for texts in by_call.values() for text in texts)]
    if unmatched and len(steps) == 1 and not steps[0]["observation"]:
        steps[0]["observation"] = "\n".join(unmatched)
    elif unmatched:
        steps.append(
            {"kind": "observation", "role": "environment", "observation": "\n".join(unmatched)}
        )
    return steps


UNNAMED = "unnamed"
"""The name a tool call that gives none is kept under."""


def _call_parts(ctx: ReadContext, where: str, path: str, call: Any) -> ToolCall:
    """``(function name, arguments, tool call id)`` of one ATIF tool call.

    Earlier schema versions (and the tools that write them) name the function otherwise:
    ``function_name``, else ``name`` or ``tool_name``, else an OpenAI-style
    ``function: {name, arguments}``; a call that names none is kept as :data:`UNNAMED`.
    """
    if not isinstance(call, dict):
        raise ctx.error(where, path, "expected a tool call object")
    nested = call.get("function") if isinstance(call.get("function"), dict) else {}
    function = next(
        (
            name
            for name in (
                call.get("function_name"),
                call.get("name"),
                call.get("tool_name"),
                nested.get("name"),
            )
            if isinstance(name, str) and name.strip()
        ),
        UNNAMED,
    )
    arguments = call.get("arguments", nested.get("arguments", call.get("input")))
    call_id = scalar(call.get("tool_call_id")) or scalar(call.get("id")) or ""
    return function, arguments, call_id


def _observations(
    ctx: ReadContext, where: str, path: str, observation: Any
) -> tuple[dict[str, list[str]], list[str]]:
    """Result texts by the call they answer, and the texts that name no call."""
    by_call: dict[str, list[str]] = {}
    loose: list[str] = []
    if observation is None:
        return by_call, loose
    if not isinstance(observation, dict):
        raise ctx.error(where, f"{path}.observation", "expected an object with 'results'")
    results = observation.get("results") or []
    if not isinstance(results, list):
        raise ctx.error(where, f"{path}.observation.results", "expected a list of results")
    for k, result in enumerate(results):
        if not isinstance(result, dict):
            raise ctx.error(where, f"{path}.observation.results.{k}", "expected a result object")
        text = _result_text(result)
        call_id = scalar(result.get("source_call_id"))
        if call_id is None:
            loose.append(text)
        else:
            by_call.setdefault(call_id, []).append(text)
    return by_call, loose


def _result_text(result: dict[str, Any]) -> str:
    """A result's content; for a delegation without content, which subagents ran."""
    if result.get("content") is not None:
        return text_of(result.get("content"))
    refs = result.get("subagent_trajectory_ref")
    refs = [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []
    return "\n".join(
        " ".join(["[subagent", *(str(r[k]) for k in ("session_id", "trajectory_path") if r.get(k))])
        + "]"
        for r in refs
    )


def _timestamp(value: Any) -> datetime | None:
    """An ISO 8601 timestamp (UTC when it names no zone); ``None`` when absent or unreadable.

    The raw step keeps the original text either way.
    """
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _reward(raw: dict[str, Any]) -> float | None:
    """A per-step reward, where RL pipelines put one: ``metrics``, ``extra`` or their ``extra``."""
    for place in (raw.get("metrics"), raw.get("extra")):
        if not isinstance(place, dict):
            continue
        for inner in (place, place.get("extra")):
            if (
                isinstance(inner, dict)
                and (value := float_or_none(inner.get("reward"))) is not None
            ):
                return value
    return None
