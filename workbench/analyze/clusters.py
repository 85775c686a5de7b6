"""Failure clusters: analyses grouped only when the same correction applies under the same
observable conditions, with the regime's successes attached as contrastive evidence."""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from store import Analysis, AnalysisRun, Cluster, Episode, EpisodeFilter, Store
from store.db import ListedEpisode
from workbench.analyze.families import episodes_of, family_of, is_inferred

CONTRASTS_PER_CLUSTER = 10
"""Successful episodes attached to a cluster as contrastive evidence and preservation candidates."""


def cluster_key(analysis: Analysis, family: str) -> tuple[str, str, str]:
    """What members of one cluster share: family (regime), trigger and correction."""
    return family, analysis.trigger, analysis.correction


def deferral_reason(members: list[Analysis]) -> str:
    """Why a group cannot support one intervention (empty when it can)."""
    first = members[0]
    if not first.trigger or first.trigger.startswith("stopped"):
        return (
            "no observable trigger: the runs stopped without an error or a divergence at a decision"
        )
    if not first.correction:
        return "no consistent correction: no successful run of this regime shows what to do instead"
    return ""


def cluster_run(store: Store, run_id: int) -> list[Cluster]:
    """Group a run's analyses into clusters and store them (replacing earlier clusters)."""
    analyses = [a for a in store.analyses(run_id) if a.status != "rejected"]
    families = {a.episode_id: _family(store, a.episode_id) for a in analyses}
    groups: dict[tuple[str, str, str], list[Analysis]] = defaultdict(list)
    for analysis in analyses:
        groups[cluster_key(analysis, families[analysis.episode_id])].append(analysis)
    clusters = []
    for (family, trigger, correction), members in sorted(groups.items()):
        reason = deferral_reason(members)
        successes = _successes(store, family)
        clusters.append(
            Cluster(
                run_id=run_id,
                family=family,
                trigger=trigger,
                correction=correction,
                status="deferred" if reason else "supported",
                reason=reason,
                members=[m.id for m in members if m.id is not None],
                contrasts=[e.id for e in successes],
            )
        )
    return store.replace_clusters(run_id, clusters)


def _family(store: Store, episode_id: str) -> str:
    """The episode's family, inferred when its log names none (see
    :func:`~workbench.analyze.families.family_of`)."""
    episode = store.episode(episode_id)
    assert episode is not None  # analyses are deleted with their episode
    return family_of(store, episode)


def _successes(store: Store, family: str) -> list[Episode] | list[ListedEpisode]:
    """Up to :data:`CONTRASTS_PER_CLUSTER` successes of ``family`` (no replays)."""
    if not is_inferred(family):
        where = EpisodeFilter(outcome="passed", family=family or None, replays=False)
        return store.listing(where, limit=CONTRASTS_PER_CLUSTER)
    found = episodes_of(store, family, EpisodeFilter(outcome="passed", replays=False))
    return list(itertools.islice(found, CONTRASTS_PER_CLUSTER))


@dataclass(frozen=True)
class ClusterData:
    """What the screen shows: the latest analysis run, its clusters and its analyses."""

    run: AnalysisRun | None = None
    clusters: list[Cluster] = field(default_factory=list)
    analyses: dict[int, Analysis] = field(default_factory=dict)

    def members(self, cluster: Cluster) -> list[Analysis]:
        """The cluster's member analyses, in the order the store gives them."""
        return [self.analyses[m] for m in cluster.members if m in self.analyses]


def read_clusters(store: Store, run_id: int | None = None) -> ClusterData:
    """An analysis run (the latest when ``None``; any reasoner, any scope) with its clusters
    and analyses."""
    runs = store.analysis_runs()
    run = next((r for r in runs if run_id is None or r.id == run_id), None)
    if run is None or run.id is None:
        return ClusterData()
    analyses = {a.id: a for a in store.analyses(run.id) if a.id is not None}
    return ClusterData(run, store.clusters(run.id), analyses)
