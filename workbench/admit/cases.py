"""Replay sets: which learning-partition episodes a candidate is replayed on.

- **Correction set**: the spec's source failures, then other learning failures where the
  candidate's trigger is observable at a recorded decision point (same trigger, same
  mechanism).
- **Preservation set**: the spec's contrastive successes, then *negative-boundary* cases —
  learning successes where the trigger is observable at a recorded decision point, so the
  candidate would act although the run already succeeds.

Only episodes a run produced can be replayed (same task, same seed, same agent); held-out
(test) episodes never enter either set. Screening evaluates the candidate's patterns in the
sandbox.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from store import Episode, EpisodeFilter, InterventionSpec, ReplayCase, Store
from workbench.admit.evidence import decision_points, origin_of
from workbench.admit.sandbox import PATTERN_LIMITS, run_limited
from workbench.compile.specs import LEARNING_SPLITS


@dataclass(frozen=True)
class CaseLimits:
    """How many cases of each kind a replay set takes."""

    sources: int = 8
    """Source failures (the spec's own evidence)."""
    similar: int = 4
    """Other learning failures where the trigger is observable."""
    contrasts: int = 4
    """Contrastive successes."""
    boundary: int = 6
    """Learning successes where the trigger is observable (negative boundary)."""
    screened: int = 400
    """Learning episodes screened for the trigger (a bound on the work)."""


def _case(store: Store, episode: Episode, role: str, why: str) -> ReplayCase | None:
    origin = origin_of(store, episode)
    if origin is None or episode.split not in LEARNING_SPLITS:
        return None
    return ReplayCase(
        episode_id=episode.id,
        role=role,  # type: ignore[arg-type]
        family=episode.family,
        variation=origin.variation,
        split=episode.split,  # type: ignore[arg-type]
        seed=episode.seed or 0,
        why=why,
    )


def screen_episodes(
    store: Store, form: dict, episodes: list[Episode]
) -> dict[str, tuple[int, str]]:
    """Episodes where ``form`` would act at a recorded decision point: ``id → (step, action)``
    of the first such point (evaluated in the sandbox)."""
    cases, owners = [], []
    for episode in episodes:
        for step, case in decision_points(store, episode.id):
            cases.append(case.model_dump(mode="json"))
            owners.append((episode.id, step.index, step.action))
    if not cases:
        return {}
    verdicts = run_limited("screen", {"form": form, "cases": cases}, PATTERN_LIMITS)
    found: dict[str, tuple[int, str]] = {}
    for (episode_id, index, action), verdict in zip(owners, verdicts, strict=True):
        changes = verdict["fires"] and verdict["action"] != action
        if changes and episode_id not in found:
            found[episode_id] = (index, action)
    return found


def replay_cases(
    store: Store,
    spec: InterventionSpec | None,
    form: dict,
    limits: CaseLimits | None = None,
) -> list[ReplayCase]:
    """The candidate's correction and preservation sets."""
    limits = limits or CaseLimits()
    chosen: dict[str, ReplayCase] = {}
    counts: dict[str, int] = {}

    def add(episode: Episode | None, role: str, kind: str, cap: int, why: str = "") -> None:
        if episode is None or episode.id in chosen or counts.get(kind, 0) >= cap:
            return
        case = _case(store, episode, role, f"{kind}: {why}" if why else kind)
        if case is not None:
            chosen[episode.id] = case
            counts[kind] = counts.get(kind, 0) + 1

    families = spec.families if spec else []
    for episode_id in spec.sources if spec else []:
        add(store.episode(episode_id), "correction", "source failure", limits.sources)
    for episode_id in spec.contrasts if spec else []:
        add(store.episode(episode_id), "preservation", "contrastive success", limits.contrasts)
    replayable = (
        e
        for split in LEARNING_SPLITS
        for e in store.iter_episodes(EpisodeFilter(split=split, replays=False))
        if e.id not in chosen and origin_of(store, e) is not None
    )
    learning = list(itertools.islice(replayable, limits.screened))  # stop reading at the bound
    hits = screen_episodes(store, form, learning)
    for episode in _spread([e for e in learning if e.id in hits]):
        index, action = hits[episode.id]
        where = f"trigger observable at step {index} ('{action}')"
        if episode.outcome.success:
            add(episode, "preservation", "negative boundary", limits.boundary, where)
        elif episode.outcome.success is False and (not families or episode.family in families):
            add(episode, "correction", "same trigger", limits.similar, where)
    return sorted(chosen.values(), key=lambda c: (c.role, c.episode_id))


def _spread(episodes: list[Episode]) -> list[Episode]:
    """Episodes reordered so that families take turns (a set covers every regime it can)."""
    by_family: dict[str, list[Episode]] = {}
    for episode in episodes:
        by_family.setdefault(episode.family, []).append(episode)
    queues = list(by_family.values())
    spread = []
    for turn in range(max((len(q) for q in queues), default=0)):
        spread += [q[turn] for q in queues if turn < len(q)]
    return spread
