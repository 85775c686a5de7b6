"""AgentBench's ``overall.json``: what a run's samples share, and their per-sample grades.

AgentBench writes it beside ``runs.jsonl`` once every sample is done: ``{"total",
"validation": {status: fraction, ...}, "custom": {the task's own metrics}}``. Some tasks keep
every sample's grade in ``custom`` too: MedAgentBench's ``custom.raw_results`` is a list of
``{"index", "status": "completedCorrect" | "completedIncorrect" | <other status>, "result",
"history"}``, the only place its samples are graded (``runs.jsonl`` holds the agent's answer).

Read here as an :class:`Overall`: the per-sample lists in ``custom`` (lists of objects with an
``index``) become each sample's grade, found by its index, without the ``history`` its
``runs.jsonl`` line already holds; everything else is the summary all the samples share,
which the import stores once with the file's source record, not in every episode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.ingest.agentbench.layout import named
from workbench.ingest.base import IngestError, ReadContext, load_json, path_text
from workbench.ingest.values import scalar

FLAG_KEYS = ("result", "is_correct", "success", "correct", "resolved")
"""Keys of a sample's ``result`` (or its grade) that say whether it succeeded, in the order
tried."""
_GRADED = re.compile(r"(in)?correct$", re.IGNORECASE)
"""A status that carries the grade (MedAgentBench: ``completed`` + ``Correct``/``Incorrect``)."""
_LEFT_OUT = ("index", "history")
"""What a sample's grade keeps of its entry: not its index (the key), nor its history (the
steps, from ``runs.jsonl``)."""


@dataclass
class Overall:
    """An ``overall.json``, read."""

    path: Path
    summary: dict[str, Any]
    """The file without its per-sample lists: what every sample shares."""
    grades: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each sample's entry in a per-sample list, by its index (as text), without its index and
    history."""
    agent: str = ""
    """The agent (or model) the file names, if any."""
    task: str = ""
    """The task the file names, if any."""

    def shared(self) -> dict[str, Any]:
        """What the import stores once for the run file it is read with."""
        return {"overall": self.summary, "overall_path": path_text(self.path)}


def read_overall(ctx: ReadContext) -> Overall | None:
    """The ``overall.json`` given with ``--results`` or beside the file, if any."""
    path = ctx.results or ctx.path.with_name("overall.json")
    if not path.is_file():
        return None
    data = load_json(ctx, path)
    if not isinstance(data, dict):
        raise IngestError(path, "", "", "expected the overall.json object")
    overall = Overall(path=path, summary=dict(data))
    overall.agent, overall.task = named(data)
    custom = data.get("custom")
    if isinstance(custom, dict):
        kept = {}
        for key, value in custom.items():
            grades = _grades(value)
            if grades is None:
                kept[key] = value
            else:
                overall.grades.update(grades)
        overall.summary["custom"] = kept
    return overall


def _grades(value: Any) -> dict[str, dict[str, Any]] | None:
    """A per-sample list's entries by index; ``None`` when ``value`` is no such list."""
    if not isinstance(value, list) or not value:
        return None
    grades = {}
    for entry in value:
        index = scalar(entry.get("index")) if isinstance(entry, dict) else None
        if index is None:
            return None
        grades[index] = {k: v for k, v in entry.items() if k not in _LEFT_OUT}
    return grades


def flag_of(result: dict[str, Any]) -> bool | None:
    """The first boolean of :data:`FLAG_KEYS` in a sample's ``result`` (or its grade)."""
    return next((result[k] for k in FLAG_KEYS if isinstance(result.get(k), bool)), None)


def verdict(grade: dict[str, Any]) -> bool | None:
    """Whether a sample's grade says it succeeded: a flag (``result``, ``is_correct``...), or a
    status ending in ``Correct``/``Incorrect``; ``None`` when it says neither."""
    flag = flag_of(grade)
    if flag is not None:
        return flag
    status = grade.get("status")
    graded = _GRADED.search(status) if isinstance(status, str) else None
    return None if graded is None else graded.group(1) is None
