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
(knowledge graph), or only the agent's answer (MedAgentBench). When all samples are done
AgentBench writes ``overall.json`` in the same folder: ``{"total", "validation": {status:
fraction, ...}, "custom": {task metrics}}``, where some tasks grade each sample
(:mod:`~workbench.ingest.agentbench.overall`).

**Episodes.** One per line. The task is ``agentbench:<task>:<index>``, the task's name also
the episode's family, and the agent the episode's agent: named by the record or the
``overall.json`` where they name them, else read from the two folders above the file, which
come either way round (:mod:`~workbench.ingest.agentbench.layout`). The ``overall.json``
beside the file (or the one given with ``--results``) is joined: each sample's grade in it
goes into its episode's ``metadata.graded`` (without the history the line holds), and the rest
— what every sample shares — is stored once, with the file's source record
(``Store.source_metadata``: ``{"overall": ..., "overall_path": ...}``), not in every episode.

**Steps.** Histories often open with the task's prompt and a worked example (a one-shot
exchange of user and agent turns) before the real problem. The real problem starts at the
last user turn that states a task (``My problem is``, ``Your task is``, ``Question:``,
``Task:``...); it is the instruction, and everything before it is kept as plain ``message``
steps so the example's turns are never read as the agent's decisions. After it, each agent
turn is an ``action`` step whose observation is the user turn that answers it; a ``Think:`` or
``Thought:`` part before the ``Act:``/``Action:`` line is its thought. Without a task line
the first user turn is the instruction and every agent turn is an action.

**Outcome.** From ``result``: a boolean ``result``/``is_correct``/``success``/``correct``
flag; else the sample's grade in ``overall.json`` (a flag, or MedAgentBench's status
``completedCorrect``/``completedIncorrect``); else a ``reward``/``score`` (a score alone
succeeds at 1, see ``outcome_from``); a status other than ``completed`` without any of these
fails. The outcome's message is the grade's status where there is one, else the line's
status. Lines from ``error.jsonl`` (the harness failed, not the agent) have an unknown outcome
and the error as message. A line that is not JSON, or whose ``output``/``history`` is
malformed, is an error naming its line and field.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from workbench.ingest.agentbench.detection import companion_of, sniff
from workbench.ingest.agentbench.episodes import ENVIRONMENT, ROLES, Reader
from workbench.ingest.agentbench.overall import FLAG_KEYS, read_overall
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext, episodes_per_line

__all__ = ["ENVIRONMENT", "FLAG_KEYS", "ROLES", "companion_of", "companions", "read", "sniff"]

name = "agentbench"
description = (
    "AgentBench outputs: <agent>/<task>/runs.jsonl or <task>/<agent>/runs.jsonl "
    "(user/agent histories) + overall.json"
)


def companions(path: Path) -> list[Path]:
    """The ``overall.json`` beside a run file, read with it when no ``--results`` is given."""
    return [path.with_name("overall.json")] if path.name != "overall.json" else []


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per sample line; bad lines are yielded as errors. What the samples
    share (the ``overall.json`` summary, and how the folders were read) goes into
    ``ctx.shared``, stored once with the file."""
    overall = read_overall(ctx)
    reader = Reader(ctx, overall)
    if overall is not None:
        ctx.shared.update(overall.shared())
    ctx.shared["names"] = {
        "agent": reader.names.agent,
        "task": reader.names.task,
        "read_from": reader.names.evidence,
    }
    yield from episodes_per_line(ctx, reader.episode)
