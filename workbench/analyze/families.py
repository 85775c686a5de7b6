"""The regime an episode belongs to: its family, or one inferred when its log names none.

Imported logs often say nothing of a task family. Episodes of one benchmark that offer the
agent the same tools face the same regime, so the inferred family is the benchmark (the
task's environment) and the tool set the log declares (``tools`` in the episode's or task's
metadata, as chat-completions requests carry it); without a declared tool set, the benchmark
alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from store import Episode, EpisodeFilter, Store

INFERRED = "~"
"""First character of an inferred family (a stored family never starts with it)."""


def declared_tools(metadata: dict[str, Any]) -> list[str]:
    """Tool names a ``tools`` list declares (chat-completions, Anthropic or plain names)."""
    tools = metadata.get("tools")
    names = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, str):
            names.append(tool)
        elif isinstance(tool, dict):
            spec = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if isinstance(spec.get("name"), str):
                names.append(spec["name"])
    return sorted(set(names))


def family_of(store: Store, episode: Episode) -> str:
    """``episode``'s family as stored, else ``~<benchmark>`` plus ``[tool,…]`` when its log
    declares its tools."""
    if episode.family:
        return episode.family
    task = store.task(episode.task_id)
    environment = task.environment if task else ""
    tools = declared_tools(episode.metadata) or (declared_tools(task.metadata) if task else [])
    return f"{INFERRED}{environment}" + (f" [{','.join(tools)}]" if tools else "")


def is_inferred(family: str) -> bool:
    """Whether ``family`` was inferred (see :func:`family_of`)."""
    return family.startswith(INFERRED)


def episodes_of(store: Store, family: str, where: EpisodeFilter | None = None) -> Iterator[Episode]:
    """Episodes ``where`` selects whose family (stored or inferred) is ``family``."""
    base = vars(where or EpisodeFilter())
    if not is_inferred(family):
        yield from store.iter_episodes(EpisodeFilter(**{**base, "family": family}))
        return
    environment = family[len(INFERRED) :].split(" [", 1)[0]
    unnamed = EpisodeFilter(**{**base, "family": "", "environment": environment})
    yield from (e for e in store.iter_episodes(unnamed) if family_of(store, e) == family)
