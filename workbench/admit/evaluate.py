"""Held-out evaluation: two runs of the same plan (same tasks, same seeds), paired by task.

``workbench run --like demo-test --with-repo`` repeats a run's configuration with the active
repository; :func:`compare_runs` pairs the two batches' episodes and reports both success
rates with Wilson intervals and the exact McNemar p over the discordant pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from store import EpisodeFilter, Store
from workbench.admit.stats import mcnemar_exact, wilson_interval


@dataclass(frozen=True)
class Paired:
    """Two runs of one plan, compared episode by episode."""

    baseline: str
    candidate: str
    pairs: int
    baseline_successes: int
    candidate_successes: int
    fixed: int
    """Failed in the baseline run, succeeded in the candidate run."""
    broken: int
    """Succeeded in the baseline run, failed in the candidate run."""

    @property
    def mcnemar_p(self) -> float:
        return mcnemar_exact(self.fixed, self.broken)

    def rate(self, successes: int) -> tuple[float, float, float]:
        """Success rate and its 95% Wilson interval."""
        low, high = wilson_interval(successes, self.pairs)
        return (successes / self.pairs if self.pairs else 0.0), low, high


def _plan_key(episode_id: str, batch_id: str) -> str:
    return episode_id[len(batch_id) :] if episode_id.startswith(batch_id) else episode_id


def compare_runs(store: Store, baseline: str, candidate: str) -> Paired:
    """Pair two run batches' episodes by their place in the plan (family, variation, trial)."""
    runs = {}
    for name in (baseline, candidate):
        batch = store.batch(name)
        if batch is None:
            raise ValueError(f"no batch {name!r}")
        runs[name] = {
            _plan_key(e.id, batch.id): e.outcome.success
            for e in store.iter_episodes(EpisodeFilter(batch=batch.id))
        }
    shared = sorted(set(runs[baseline]) & set(runs[candidate]))
    before = [bool(runs[baseline][k]) for k in shared]
    after = [bool(runs[candidate][k]) for k in shared]
    return Paired(
        baseline=baseline,
        candidate=candidate,
        pairs=len(shared),
        baseline_successes=sum(before),
        candidate_successes=sum(after),
        fixed=sum(not b and a for b, a in zip(before, after, strict=True)),
        broken=sum(b and not a for b, a in zip(before, after, strict=True)),
    )
