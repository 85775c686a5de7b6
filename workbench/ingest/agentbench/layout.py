"""Which of a run file's two folders names the agent and which the task.

AgentBench writes ``<output>/<agent>/<task>/runs.jsonl``; copies of its outputs are also kept
the other way round, ``<source>/<model>/runs.jsonl``. Depth alone cannot tell the two apart,
so the names are read from what the files say, in this order:

1. a name the record itself gives (``agent`` or ``model``, ``task``; at its top or in its
   ``output``), or the ``overall.json`` beside it (the same keys at its top): the named value
   is used, and the folder that holds it tells which way round the folders are for the other;
2. the folder names: one that reads as a model (a model family's name: ``gpt-4o``,
   ``llama-3.3``, ``claude-2``...) is the agent, one that reads as an AgentBench task (a name
   with a split, ``os-std``, ``medagentbench-std``, ``webshop-dev``, or one of AgentBench's
   task names) is the task;
3. otherwise AgentBench's own layout: the folder holding the file is the task, the one above
   it the agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AGENT_KEYS = ("agent", "model")
TASK_KEYS = ("task",)

_MODEL = re.compile(
    r"^(?:gpt|chatgpt|o[1-9]|text-davinci|davinci|claude|llama|codellama|vicuna|alpaca|gemini"
    r"|gemma|palm|bison|deepseek|qwen|mistral|mixtral|codestral|glm|chatglm|internlm|baichuan"
    r"|yi|phi|command|grok|kimi|moonshot|ernie|falcon|openchat|wizardlm|koala|dolly|oasst"
    r"|guanaco|starchat|nemotron|dbrx|olmo|granite)(?![a-z])",
    re.IGNORECASE,
)
"""A model family's name at the start of a folder name (not followed by more letters)."""
_TASK = re.compile(
    r"[-_](?:std|dev|test)$|^(?:os|os[-_]interaction|dbbench|kg|knowledgegraph|webshop|alfworld"
    r"|ltp|cg|card[-_]game|m2w|mind2web|avalon|medagentbench)$",
    re.IGNORECASE,
)
"""An AgentBench task's name: ending in its split, or one of the benchmark's tasks."""


@dataclass(frozen=True)
class Names:
    """The agent and the task a run file's samples belong to, and why they were read so."""

    agent: str
    task: str
    evidence: str


def named(record: dict[str, Any]) -> tuple[str, str]:
    """The agent and task a record (or an ``overall.json``) names, each empty if none."""
    inner = record.get("output")
    places = (record, inner) if isinstance(inner, dict) else (record,)
    return _first(places, AGENT_KEYS), _first(places, TASK_KEYS)


def _first(places: tuple[dict[str, Any], ...], keys: tuple[str, ...]) -> str:
    for place in places:
        for key in keys:
            value = place.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return ""


def folder_names(path: Path, agent: str = "", task: str = "", source: str = "") -> Names:
    """The names of ``path``'s samples: ``agent`` and ``task`` where something named them
    (``source`` says what), the folders for the rest, the folder holding a named value
    telling which way round they are (see the module docstring)."""
    inner, outer = path.parent.name, path.parent.parent.name
    if (agent and agent == inner) or (task and task == outer):
        swapped, how = True, f"named in {source}"
    elif (agent and agent == outer) or (task and task == inner):
        swapped, how = False, f"named in {source}"
    else:
        swapped, how = _read_folders(inner, outer)
        if agent or task:
            how = f"named in {source} (no folder so named); {how}"
    if swapped:
        return Names(agent or inner, task or outer, f"{how}; folders <task>/<agent>")
    return Names(agent or outer, task or inner, f"{how}; folders <agent>/<task>")


def _read_folders(inner: str, outer: str) -> tuple[bool, str]:
    """Whether the folders are ``<task>/<agent>``, from their names, and why."""
    if _MODEL.match(inner) and not _MODEL.match(outer):
        return True, f"{inner!r} reads as a model"
    if _TASK.search(outer) and not _TASK.search(inner):
        return True, f"{outer!r} reads as an AgentBench task"
    if _MODEL.match(outer):
        return False, f"{outer!r} reads as a model"
    if _TASK.search(inner):
        return False, f"{inner!r} reads as an AgentBench task"
    return False, "AgentBench's own layout"
