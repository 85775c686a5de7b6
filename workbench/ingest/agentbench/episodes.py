"""One AgentBench sample line as an episode: its history as steps, its outcome, its task."""

from __future__ import annotations

import re
from typing import Any

from store import Episode, Outcome, Task
from workbench.ingest.agentbench.layout import Names, folder_names, named
from workbench.ingest.agentbench.overall import Overall, flag_of, verdict
from workbench.ingest.base import ParsedEpisode, ReadContext, outcome_from
from workbench.ingest.record_files import namespaced
from workbench.ingest.steps import build_steps
from workbench.ingest.values import as_text, float_or_none, scalar

ENVIRONMENT = "agentbench"
ROLES = ("user", "agent")
_TASK_LINE = re.compile(
    r"my problem is|your task is|^\s*(?:task|question|instruction|goal)\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_ACK = re.compile(r"^\W*(?:ok|okay|sure|got it|understood|yes|i see)\W*$", re.IGNORECASE)
"""An agent's acknowledgement of the task's prompt, before the real question comes."""
_ACT = re.compile(r"^\s*(?:Act|Action)\s*:", re.IGNORECASE | re.MULTILINE)
_THINK = re.compile(r"^\s*(?:Think|Thought)\s*:\s*", re.IGNORECASE)


class Reader:
    """What every line of one run file is read with: the ``overall.json`` joined, and the
    names its folders give (a line that names its own agent or task is placed by those)."""

    def __init__(self, ctx: ReadContext, overall: Overall | None) -> None:
        self.ctx, self.overall = ctx, overall
        self.named = (overall.agent, overall.task) if overall else ("", "")
        self.names = folder_names(ctx.path, *self.named, "overall.json")

    def names_of(self, obj: dict[str, Any]) -> Names:
        """The names of a line's sample: those it gives, then those ``overall.json`` gives,
        the folders for the rest."""
        agent, task = named(obj)
        if not (agent or task):
            return self.names
        agent, task = agent or self.named[0], task or self.named[1]
        return folder_names(self.ctx.path, agent, task, "the record")

    def episode(self, number: int, obj: Any) -> ParsedEpisode:
        """The episode of the sample on line ``number``."""
        ctx, where = self.ctx, f"line {number}"
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
        grade = self.overall.grades.get(index) if self.overall else None
        names = self.names_of(obj)
        episode_id = ctx.episode_id(f"L{number}")
        fields, instruction = _steps(history)
        task = Task(
            id=namespaced(ENVIRONMENT, f"{names.task}:{index}"),
            environment=ENVIRONMENT,
            family=names.task,
            instruction=instruction,
        )
        episode = Episode(
            id=episode_id,
            task_id=task.id,
            agent=names.agent,
            batch_id=ctx.batch_id,
            family=names.task,
            outcome=_outcome(output, error, as_text(obj.get("info")), grade),
            source=ctx.source(where),
            metadata=_metadata(obj, output, index, grade),
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
    """Step fields of a history and its instruction (see the package docstring)."""
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
    """Index of the turn that states the real problem (see the package docstring)."""
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


def _outcome(
    output: dict[str, Any], error: str, info: str, grade: dict[str, Any] | None
) -> Outcome:
    """The sample's own flag, else its grade in ``overall.json``, else a score, else its
    status (see the package docstring)."""
    status = as_text(output.get("status"))
    if error:
        return Outcome(message=": ".join(p for p in (error, info) if p))
    message = as_text(grade.get("status")) if grade else ""
    message = message or status
    result = output.get("result")
    if isinstance(result, bool):
        return Outcome(success=result, message=message)
    found = result if isinstance(result, dict) else {}
    flag = flag_of(found)
    if flag is None and grade:
        flag = verdict(grade)
    outcome = outcome_from(found, status)
    success = flag if flag is not None else outcome.success
    if success is None and status and status != "completed":
        success = False
    score = outcome.score if outcome.score is not None else float_or_none(found.get("f1"))
    return Outcome(success=success, score=score, message=message)


def _metadata(
    obj: dict[str, Any], output: dict[str, Any], index: str, grade: dict[str, Any] | None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"index": index, "status": output.get("status")}
    for key in ("result", "error", "info", "time"):
        value = output.get(key) if key == "result" else obj.get(key)
        if value is not None:
            metadata[key] = value
    if grade is not None:
        metadata["graded"] = grade
    return metadata
