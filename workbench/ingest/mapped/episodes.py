"""What a record or a block of lines read through a mapping becomes: a task, an episode and
its steps."""

from __future__ import annotations

from typing import Any

from store import Episode, Outcome, Task
from workbench.ingest.base import ParsedEpisode, ReadContext
from workbench.ingest.record_files import namespaced
from workbench.ingest.steps import build_steps

ROLES = {"observation": "environment", "tool_result": "tool", "tool_call": "assistant"}
"""A step's role by kind when the mapping gives none (otherwise ``agent``)."""


def parsed_episode(
    ctx: ReadContext,
    where: str,
    key: str,
    header: dict[str, Any],
    outcome: Outcome,
    steps: list[dict[str, Any]],
    metadata: dict[str, Any] | None = None,
) -> ParsedEpisode:
    """The episode of record ``key`` (its id's last part) read at ``where``.

    Args:
        ctx: the file being read.
        where: the record or line, as errors name it.
        key: the record's key: its id in the log, else where it is.
        header: the episode's ``task``, ``instruction``, ``agent`` and ``family`` when known.
        outcome: how it went.
        steps: its steps' fields (none: an episode of its outcome alone).
        metadata: the episode's metadata.
    """
    episode_id = ctx.episode_id(key)
    task = Task(
        id=namespaced(ctx.format, header.get("task") or key),
        environment=ctx.format,
        family=header.get("family") or "",
        instruction=header.get("instruction") or first_user_message(steps),
    )
    episode = Episode(
        id=episode_id,
        task_id=task.id,
        agent=header.get("agent") or "",
        batch_id=ctx.batch_id,
        family=task.family,
        outcome=outcome,
        source=ctx.source(where),
        metadata=metadata or {},
    )
    built = build_steps(ctx, where, episode_id, steps)
    return ParsedEpisode(task=task, episode=episode, steps=built)


def first_user_message(steps: list[dict[str, Any]]) -> str:
    """The content of the first user message among step fields (``""`` if none): the usual
    instruction of a chat."""
    for step in steps:
        if step.get("kind") == "message" and step.get("role") == "user" and step.get("content"):
            return step["content"]
    return ""


def kind_of_texts(step: dict[str, Any]) -> str:
    """A step's kind when the mapping gives none, from the texts it has: an action step when
    it has an action, a message when it has only message text, else a thought or an
    observation."""
    if step.get("action"):
        return "action"
    if step.get("content") and not step.get("observation"):
        return "message"
    return "thought" if step.get("thought") and not step.get("observation") else "observation"
