"""SWE-agent trajectory files (``<instance_id>.traj``): one agent run per file.

A ``.traj`` file is one JSON object, as SWE-agent's ``DefaultAgent.get_trajectory_data``
writes it::

    {"trajectory": [{"thought": "...", "action": "ls -F\\n", "observation": "...",
                     "response": "<raw model output>", "state": {...},
                     "execution_time": 0.2, "query": [<messages sent>], "extra_info": {}},
                    ...],
     "history": [{"role": "system", "content": "...", "agent": "main",
                  "message_type": "system_prompt"},
                 {"role": "user", "content": "<instance prompt with the issue>", ...},
                 {"role": "assistant", "content": "...", "thought": "...", "action": "..."},
                 ...],
     "info": {"exit_status": "submitted", "submission": "diff --git ...",
              "model_stats": {"instance_cost": 0.41, "tokens_sent": 81234,
                              "tokens_received": 1532, "api_calls": 9},
              "swe_agent_version": "1.0.1", ...},
     "replay_config": "<JSON of the run config, or null>",
     "environment": "main"}

Older versions (0.x) write the same keys without ``replay_config``; the retry agent adds
``attempts`` (the data of each attempt) and ``info.best_attempt_idx``.

Mapping:

- each ``trajectory`` entry is one ``action`` step (thought, action, observation), the entry
  kept whole as the step's raw record (its ``response`` and ``query`` included);
- ``history`` is not stored as steps (each entry repeats a trajectory step); its length,
  the system prompt and the first non-demonstration user message are kept: the task's
  instruction is the issue text inside that message (see
  :func:`~workbench.ingest.swebench_report.problem_statement`);
- the instance id is ``replay_config.problem_statement.id`` when present, else the file name
  without ``.traj``; ids that read ``owner__repo-NUMBER`` are tasks ``swe-bench:<id>`` of
  family ``repo``, others ``swe-agent:<id>``;
- the outcome message is ``info.exit_status``; success stays unknown unless a SWE-bench
  evaluation report is given as the results file;
- usage: ``tokens_sent``, ``tokens_received``, ``instance_cost`` of ``info.model_stats``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store import Usage
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, json_key, text_of
from workbench.ingest.steps import build_steps
from workbench.ingest.swebench_report import (
    id_from_file_name,
    instance,
    problem_statement,
    read_run,
    run_episode,
)
from workbench.ingest.values import compact, loads

name = "swe-agent"
description = "SWE-agent .traj files, one run each (--results: a SWE-bench evaluation report)"

ENVIRONMENT = "swe-agent"
"""Environment of tasks whose id is not a SWE-bench instance id."""
TRAJECTORY = json_key("trajectory", "[")
HISTORY = json_key("history", "[")
STEP_KEYS = (json_key("action"), json_key("observation"))
NOT_OURS = (
    json_key("format", '"trajectory-workbench'),
    json_key("trajectory_format", '"mini-swe-agent'),
    json_key("mini_version"),
)


def sniff(path: Path, head: str) -> bool:
    """A JSON object named ``*.traj``, or one with ``trajectory`` steps (and a ``history``)."""
    text = head.lstrip()
    if not text.startswith("{") or any(p.search(text) for p in NOT_OURS):
        return False
    if path.suffix == ".traj":
        return True
    if not TRAJECTORY.search(text):
        return False
    # ``history`` follows the trajectory, so the head of a long run shows only its first step
    # (whose ``action`` and ``observation`` come first; a long observation hides the rest).
    return bool(HISTORY.search(text)) or all(p.search(text) for p in STEP_KEYS)


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield the file's one run (a record-level problem as an error)."""
    expected = "expected a SWE-agent trajectory: a JSON object with 'trajectory' and 'history'"
    yield from read_run(ctx, {"trajectory", "history", "info"}, expected, _episode)


def _episode(ctx: ReadContext, data: dict[str, Any], resolved: dict[str, bool]) -> ParsedEpisode:
    replay = _replay_config(data.get("replay_config"))
    task_instance = instance(_instance_id(ctx.path, replay), ENVIRONMENT)
    where = f"instance {task_instance.id!r}"
    entries = _field(ctx, where, data, "trajectory", list, required=True)
    history = _field(ctx, where, data, "history", list) or []
    info = _field(ctx, where, data, "info", dict) or {}
    episode_id = ctx.episode_id(task_instance.id)
    fields = [_step(ctx, where, i, entry) for i, entry in enumerate(entries)]
    steps = build_steps(ctx, where, episode_id, fields)
    system_prompt, instance_prompt = _prompts(ctx, where, history)
    instruction = _instruction(replay, instance_prompt)
    model = _model_name(replay)
    exit_status = info.get("exit_status")
    metadata = {
        "instance_id": task_instance.id,
        "exit_status": exit_status,
        "submission": info.get("submission"),
        "model": model or None,
        "environment": data.get("environment"),
        "history_length": len(history),
        "system_prompt": system_prompt or None,
        **_info_extras(info),
    }
    if instance_prompt and instance_prompt != instruction:
        metadata["instance_prompt"] = instance_prompt
    if isinstance(data.get("attempts"), list):
        metadata["attempts"] = len(data["attempts"])
    episode = run_episode(
        ctx,
        task_instance,
        steps,
        resolved,
        exit_status,
        agent="swe-agent",
        model=model,
        usage=_usage(ctx, where, info),
        metadata=compact(metadata),
    )
    return ParsedEpisode(task=task_instance.task(instruction), episode=episode, steps=steps)


def _field(
    ctx: ReadContext,
    where: str,
    data: dict[str, Any],
    key: str,
    kind: type,
    required: bool = False,
) -> Any:
    """``data[key]`` checked to be a ``kind`` (``None`` when absent and not required)."""
    if key not in data or data[key] is None:
        if required:
            raise ctx.error(where, key, "field required")
        return None
    if not isinstance(data[key], kind):
        expected = "a list" if kind is list else "an object"
        raise ctx.error(where, key, f"expected {expected}, got {type(data[key]).__name__}")
    return data[key]


def _step(ctx: ReadContext, where: str, index: int, entry: Any) -> dict[str, Any]:
    field = f"trajectory.{index}"
    if not isinstance(entry, dict):
        raise ctx.error(where, field, "expected an object")
    texts: dict[str, str] = {}
    for key in ("action", "observation", "thought"):
        value = entry.get(key)
        if value is None and key != "thought":
            raise ctx.error(where, f"{field}.{key}", "field required")
        if value is not None and not isinstance(value, str):
            raise ctx.error(where, f"{field}.{key}", f"expected a string, got {value!r:.60}")
        texts[key] = value or ""
    return {"kind": "action", "role": "agent", "raw": entry, **texts}


def _prompts(ctx: ReadContext, where: str, history: list[Any]) -> tuple[str, str]:
    """The first system message and the first user message that is not a demonstration."""
    system = user = None
    for index, item in enumerate(history):
        if not isinstance(item, dict):
            raise ctx.error(where, f"history.{index}", "expected an object")
        demo = item.get("is_demo") or item.get("message_type") == "demonstration"
        if system is None and item.get("role") == "system":
            system = text_of(item.get("content"))
        elif user is None and item.get("role") == "user" and not demo:
            user = text_of(item.get("content"))
        if system is not None and user is not None:
            break
    return system or "", user or ""


def _instruction(replay: dict[str, Any], instance_prompt: str) -> str:
    statement = replay.get("problem_statement")
    if isinstance(statement, dict) and isinstance(statement.get("text"), str):
        return statement["text"]
    return problem_statement(instance_prompt)


def _replay_config(value: Any) -> dict[str, Any]:
    """The run config SWE-agent stores (as a JSON string) for replays; ``{}`` if unreadable."""
    if isinstance(value, str):
        try:
            value = loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def _instance_id(path: Path, replay: dict[str, Any]) -> str:
    statement = replay.get("problem_statement")
    if isinstance(statement, dict) and isinstance(statement.get("id"), str) and statement["id"]:
        return statement["id"]
    return id_from_file_name(path)


def _model_name(replay: dict[str, Any]) -> str:
    agent = replay.get("agent")
    if not isinstance(agent, dict):
        return ""
    configs = agent.get("agent_configs")  # the retry agent nests one config per attempt
    if isinstance(configs, list) and configs and isinstance(configs[0], dict):
        agent = configs[0]
    model = agent.get("model")
    name_ = model.get("name") if isinstance(model, dict) else None
    return name_ if isinstance(name_, str) else ""


INFO_EXTRAS = ("swe_agent_version", "swe_agent_hash", "swe_rex_version", "best_attempt_idx")


def _info_extras(info: dict[str, Any]) -> dict[str, Any]:
    extras = {key: info[key] for key in INFO_EXTRAS if key in info}
    stats = info.get("model_stats")
    if isinstance(stats, dict) and "api_calls" in stats:
        extras["api_calls"] = stats["api_calls"]
    return extras


def _usage(ctx: ReadContext, where: str, info: dict[str, Any]) -> Usage:
    stats = info.get("model_stats")
    if stats is None:
        return Usage()
    if not isinstance(stats, dict):
        raise ctx.error(where, "info.model_stats", "expected an object")
    sent, received, cost = (
        _number(ctx, where, stats, key)
        for key in ("tokens_sent", "tokens_received", "instance_cost")
    )
    return Usage(
        prompt_tokens=None if sent is None else int(sent),
        completion_tokens=None if received is None else int(received),
        cost=cost,
    )


def _number(ctx: ReadContext, where: str, stats: dict[str, Any], key: str) -> float | None:
    value = stats.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ctx.error(where, f"info.model_stats.{key}", f"expected a number, got {value!r}")
    return value
