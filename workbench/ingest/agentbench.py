"""AgentBench task outputs: ``<output>/<agent>/<task>/runs.jsonl`` beside ``overall.json``.

AgentBench's assigner appends one line per finished sample to ``runs.jsonl`` (and per sample
that broke on the harness side to ``error.jsonl``), a ``TaskClientOutput`` with the sample's
``index`` and the time::

    {"index": "std-00003", "error": null, "info": null,
     "output": {"index": "std-00003", "status": "completed",
                "result": {"result": false, "file": "data/os/std.json"},
                "history": [{"role": "user", "content": "You are an assistant ..."},
                            {"role": "agent", "content": "Think: ...\\n\\nAct: bash ..."},
                            {"role": "user", "content": "The output of the OS:\\n..."}]},
     "time": {"timestamp": 1700000000000, "str": "2023-11-14 22:13:20"}}

``status`` is a ``SampleStatus``: ``completed``, ``agent context limit``, ``agent validation
failed``, ``agent invalid action``, ``task limit reached``, ``task error``, ``unknown``.
``result`` is the task's own verdict: ``{"result": bool}`` (OS interaction, ALFWorld),
``{"is_correct": bool}`` (DBBench), a ``reward``/``score`` (WebShop), ``f1``/``em``
(knowledge graph)... When all samples are done AgentBench writes ``overall.json`` in the same
folder: ``{"total", "validation": {status: fraction, ...}, "custom": {task metrics}}``.

**Episodes.** One per line. The task is ``agentbench:<task>:<index>`` where ``<task>`` is the
folder the file sits in (``os-std``, ``dbbench-std``, ...) and the agent is the folder above
it; the task's name is also the episode's family. The ``overall.json`` beside the file (or the
one given with ``--results``) is joined: its ``custom`` metrics and the share of each status
are kept in every episode's ``metadata.overall``.

**Steps.** Histories often open with the task's prompt and a worked example (a one-shot
exchange of user and agent turns) before the real problem. The real problem starts at the
last user turn that states a task (``My problem is``, ``Your task is``, ``Question:``,
``Task:``...); it is the instruction, and everything before it is kept as plain ``message``
steps so the example's turns are never read as the agent's decisions. After it, each agent
turn is an ``action`` step whose observation is the user turn that answers it; a ``Think:`` or
``Thought:`` part before the ``Act:``/``Action:`` line is its thought. Without a task line
the first user turn is the instruction and every agent turn is an action.

**Outcome.** From ``result``: a boolean ``result``/``is_correct``/``success``/``correct``
flag, else a ``reward``/``score`` (a score alone succeeds at 1, see ``outcome_from``); a
status other than ``completed`` without a flag fails. The outcome's message is the status.
Lines from ``error.jsonl`` (the harness failed, not the agent) have an unknown outcome and the
error as message. A line that is not JSON, or whose ``output``/``history`` is malformed, is an
error naming its line and field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store import Episode, Outcome, Task
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    episodes_per_line,
    json_key,
    load_json,
    outcome_from,
)
from workbench.ingest.record_files import namespaced
from workbench.ingest.steps import build_steps
from workbench.ingest.values import as_text, float_or_none, scalar

name = "agentbench"
description = "AgentBench outputs: <agent>/<task>/runs.jsonl (user/agent histories) + overall.json"

ENVIRONMENT = "agentbench"
ROLES = ("user", "agent")
FLAG_KEYS = ("result", "is_correct", "success", "correct", "resolved")
"""Keys of a sample's ``result`` that say whether it succeeded, in the order tried."""
_SNIFF = (json_key("index"), json_key("output", "{"), json_key("history", "["))
_SNIFF_ERRORS = (json_key("index"), json_key("error"), json_key("info"), json_key("output"))
_TASK_LINE = re.compile(
    r"my problem is|your task is|^\s*(?:task|question|instruction|goal)\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_ACK = re.compile(r"^\W*(?:ok|okay|sure|got it|understood|yes|i see)\W*$", re.IGNORECASE)
"""An agent's acknowledgement of the task's prompt, before the real question comes."""
_ACT = re.compile(r"^\s*(?:Act|Action)\s*:", re.IGNORECASE | re.MULTILINE)
_THINK = re.compile(r"^\s*(?:Think|Thought)\s*:\s*", re.IGNORECASE)


def sniff(path: Path, head: str) -> bool:
    """JSON lines of ``{"index", "output": {..., "history": [...]}}`` sample records, or an
    ``error.jsonl`` of them (``{"index", "error", "info", "output"}``)."""
    if not head.lstrip().startswith("{"):
        return False
    if all(p.search(head) for p in _SNIFF):
        return True
    return path.name == "error.jsonl" and all(p.search(head) for p in _SNIFF_ERRORS)


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per sample line; bad lines are yielded as errors."""
    overall = _overall(ctx)
    task_name, agent = ctx.path.parent.name or ENVIRONMENT, ctx.path.parent.parent.name
    yield from episodes_per_line(
        ctx, lambda number, obj: _episode(ctx, number, obj, task_name, agent, overall)
    )


def _overall(ctx: ReadContext) -> dict[str, Any] | None:
    """The ``overall.json`` summary given with ``--results`` or beside the file, if any."""
    path = ctx.results or ctx.path.with_name("overall.json")
    if not path.is_file():
        return None
    data = load_json(ctx, path)
    if not isinstance(data, dict):
        raise IngestError(path, "", "", "expected the overall.json object")
    summary = {"custom": data.get("custom"), "validation": data.get("validation")}
    return {k: v for k, v in summary.items() if v is not None} or data


def _episode(
    ctx: ReadContext,
    number: int,
    obj: Any,
    task_name: str,
    agent: str,
    overall: dict[str, Any] | None,
) -> ParsedEpisode:
    where = f"line {number}"
    if not isinstance(obj, dict):
        raise ctx.error(where, "", "expected a sample record object")
    output = obj.get("output")
    error = as_text(obj.get("error"))
    if not isinstance(output, dict) and not (error and output is None):
        raise ctx.error(where, "output", "expected the sample's output object")
    output = output or {}
    index = scalar(obj.get("index")) or scalar(output.get("index"))
    if index is None:
        raise ctx.error(where, "index", "missing sample index")
    history = _history(ctx, where, output.get("history") or [])
    episode_id = ctx.episode_id(f"L{number}")
    fields, instruction = _steps(history)
    task = Task(
        id=namespaced(ENVIRONMENT, f"{task_name}:{index}"),
        environment=ENVIRONMENT,
        family=task_name,
        instruction=instruction,
    )
    episode = Episode(
        id=episode_id,
        task_id=task.id,
        agent=agent,
        batch_id=ctx.batch_id,
        family=task_name,
        outcome=_outcome(output, error, as_text(obj.get("info"))),
        source=ctx.source(where),
        metadata=_metadata(obj, output, index, overall),
    )
    return ParsedEpisode(
        task=task, episode=episode, steps=build_steps(ctx, where, episode_id, fields)
    )


def _history(ctx: ReadContext, where: str, history: Any) -> list[tuple[str, str]]:
    """``(role, content)`` of each turn, checked."""
    if not isinstance(history, list):
        raise ctx.error(where, "output.history", "expected a list of turns")
    turns = []
    for k, turn in enumerate(history):
        path = f"output.history.{k}"
        if not isinstance(turn, dict):
            raise ctx.error(where, path, "expected a turn object")
        if turn.get("role") not in ROLES:
            got = turn.get("role")
            problem = "missing" if got is None else f"unknown role {got!r}"
            raise ctx.error(where, f"{path}.role", f"{problem} (expected user or agent)")
        turns.append((turn["role"], as_text(turn.get("content"))))
    return turns


def _steps(turns: list[tuple[str, str]]) -> tuple[list[dict[str, Any]], str]:
    """Step fields of a history and its instruction (see the module docstring)."""
    start = _start(turns)
    fields: list[dict[str, Any]] = []
    for role, text in turns[:start]:
        fields.append(
            {"kind": "message", "role": "user" if role == "user" else "assistant", "content": text}
        )
    instruction = turns[start][1] if start < len(turns) else ""
    for k in range(start, len(turns)):
        role, text = turns[k]
        if role == "agent":
            fields.append(_action(text, k, turns))
        elif k == start or turns[k - 1][0] != "agent":
            fields.append({"kind": "message", "role": "user", "content": text, "raw": {"turn": k}})
    return fields, instruction


def _start(turns: list[tuple[str, str]]) -> int:
    """Index of the turn that states the real problem (see the module docstring)."""
    starts = [k for k, (role, text) in enumerate(turns) if role == "user" and _states_task(text)]
    if starts:
        return starts[-1]
    first = next((k for k, (role, _) in enumerate(turns) if role == "user"), 0)
    ack = turns[first + 1 : first + 3]
    if len(ack) == 2 and ack[0][0] == "agent" and _ACK.match(ack[0][1]) and ack[1][0] == "user":
        return first + 2  # the prompt, the agent's "Ok.", then the question
    return first


_TASK_PHRASE = re.compile(r"my problem is|your task is", re.IGNORECASE)
_TASK_LABEL = re.compile(r"\s*(?:task|question|instruction|goal)\s*:", re.IGNORECASE)


def _states_task(text: str) -> bool:
    """Whether ``_TASK_LINE`` finds a task line in ``text``: its phrases searched for only in
    text holding their words (``problem`` and ``your``, letters that match nothing but
    themselves in either case), its labels tried where lines start; the same answer without
    trying every alternative at every character."""
    lowered = text.lower()
    if ("problem" in lowered or "your" in lowered) and _TASK_PHRASE.search(text):
        return True
    if _TASK_LABEL.match(text):
        return True
    at = text.find("\n")
    while at >= 0:
        if _TASK_LABEL.match(text, at + 1):
            return True
        at = text.find("\n", at + 1)
    return False


def _action(text: str, k: int, turns: list[tuple[str, str]]) -> dict[str, Any]:
    """An agent turn as an action step, observed by the user turn after it."""
    thought, action = "", text.strip()
    act = _ACT.search(text)
    if act and act.start() > 0:
        thought = _THINK.sub("", text[: act.start()].strip(), count=1)
        action = text[act.start() :].strip()
    answer = turns[k + 1] if k + 1 < len(turns) and turns[k + 1][0] == "user" else None
    return {
        "kind": "action",
        "role": "agent",
        "thought": thought,
        "action": action,
        "observation": answer[1] if answer else "",
        "raw": {"turn": k, "content": text},
    }


def _outcome(output: dict[str, Any], error: str, info: str) -> Outcome:
    status = as_text(output.get("status"))
    if error:
        return Outcome(message=": ".join(p for p in (error, info) if p))
    result = output.get("result")
    if isinstance(result, bool):
        return Outcome(success=result, message=status)
    found = result if isinstance(result, dict) else {}
    flag = next((found[k] for k in FLAG_KEYS if isinstance(found.get(k), bool)), None)
    outcome = outcome_from(found, status)
    success = flag if flag is not None else outcome.success
    if success is None and status and status != "completed":
        success = False
    score = outcome.score if outcome.score is not None else float_or_none(found.get("f1"))
    return Outcome(success=success, score=score, message=status)


def _metadata(
    obj: dict[str, Any], output: dict[str, Any], index: str, overall: dict[str, Any] | None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"index": index, "status": output.get("status")}
    for key in ("result", "error", "info", "time"):
        value = output.get(key) if key == "result" else obj.get(key)
        if value is not None:
            metadata[key] = value
    if overall is not None:
        metadata["overall"] = overall
    return metadata


def companion_of(path: Path) -> str | None:
    """The file an ``overall.json`` is read with (``runs.jsonl`` or ``error.jsonl`` beside it),
    so a folder import says why it is not imported alone."""
    if path.name != "overall.json":
        return None
    beside = [name for name in ("runs.jsonl", "error.jsonl") if path.with_name(name).exists()]
    return " and ".join(beside) or None
