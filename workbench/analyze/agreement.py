"""Agreement between analyzer and human causal spans."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from store import EpisodeFilter, Span, Store
from workbench.spans_io import by_author, is_human


@dataclass(frozen=True)
class Agreement:
    """How well analyzer causal spans match human ones over a group of episodes."""

    key: str
    """``all`` or a family."""
    episodes: int
    """Episodes that have both a human and an analyzer causal span."""
    exact: float
    """Share whose span starts on the same step."""
    within_one: float
    """Share whose starts are at most one step apart."""
    iou: float
    """Mean overlap (intersection over union of the step ranges)."""


def iou(a: Span, b: Span) -> float:
    """Intersection over union of two inclusive step ranges."""
    inter = max(0, min(a.end, b.end) - max(a.start, b.start) + 1)
    union = (a.end - a.start + 1) + (b.end - b.start + 1) - inter
    return inter / union


def agreement(
    store: Store, where: EpisodeFilter | None = None, author: str | None = None
) -> list[Agreement]:
    """Per family and overall (``all`` first): the earliest human causal span of each episode
    against the latest analyzer causal span of the same episode.

    Args:
        store: the spans' store.
        where: which episodes.
        author: only this labeller's spans count as the human ones (a name as given in a label
            file, ``human``, or ``human:<name>``); default: every person's.
    """
    pairs: dict[str, list[tuple[Span, Span]]] = defaultdict(list)
    for episode in store.iter_episodes(where or EpisodeFilter()):
        causal = [s for s in store.spans(episode.id) if s.kind == "causal"]
        human = [s for s in causal if _labelled_by(s.author, author)]
        machine = [s for s in causal if s.author.startswith("analyzer:")]
        if human and machine:
            pair = (human[0], max(machine, key=lambda s: s.id or 0))
            pairs[episode.family].append(pair)
            pairs["all"].append(pair)
    return [_score(key, pairs[key]) for key in sorted(pairs, key=lambda k: (k != "all", k))]


def _labelled_by(stored: str, author: str | None) -> bool:
    """Whether a span's stored author is a person, and ``author`` when one is named."""
    if author is None:
        return is_human(stored)
    return by_author(stored, author) and is_human(stored)


def _score(key: str, pairs: list[tuple[Span, Span]]) -> Agreement:
    n = len(pairs)
    return Agreement(
        key=key,
        episodes=n,
        exact=sum(h.start == m.start for h, m in pairs) / n,
        within_one=sum(abs(h.start - m.start) <= 1 for h, m in pairs) / n,
        iou=sum(iou(h, m) for h, m in pairs) / n,
    )
