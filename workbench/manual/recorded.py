"""Rules for the manual from imported logs, where no simulator runs the Building stage.

The Building stage (:mod:`workbench.manual.build`) writes rules while a Planner plays train
episodes; imported runs cannot be played. What they have instead is the analysis of their
failures and the spans people marked on them. Each cluster of the latest analysis run whose
members are all imported becomes one rule — a *Corrected Error* when a success shows the
correction, an *Unsolved Error* otherwise — and each human span with a label or a note on an
imported episode becomes one too. Every rule cites where it was read (its validation logs),
and a rule already written (its content, even if the rule was deleted since) is never
written again.
"""

from __future__ import annotations

from collections.abc import Iterable

from store import Analysis, Cluster, Episode, EpisodeFilter, ManualRule, Span, Store
from workbench.manual.operations import WriteRule, apply
from workbench.spans_io import is_human

ACTOR = "formulator:records"
"""Who the rule events name as the rules' writer."""
EXAMPLE_CHARS = 300


def learn_from_records(store: Store) -> list[ManualRule]:
    """Write the rules imported logs give that are not written yet (one transaction)."""
    written = {rule.content for rule in store.manual_rules(include_deleted=True)}
    recorded: dict[str, bool] = {}
    operations: list[WriteRule] = []
    for op in [*_from_clusters(store, recorded), *_from_spans(store, recorded)]:
        if op.content not in written:
            written.add(op.content)
            operations.append(op)
    return apply(store, operations, ACTOR) if operations else []


def _is_recorded(store: Store, episode: Episode | None, seen: dict[str, bool]) -> bool:
    """Whether ``episode`` is an imported log (see :func:`workbench.admit.evidence.imported`)."""
    from workbench.admit.evidence import imported

    if episode is None:
        return False
    if episode.id not in seen:
        seen[episode.id] = imported(episode)
    return seen[episode.id]


def _from_clusters(store: Store, recorded: dict[str, bool]) -> Iterable[WriteRule]:
    runs = store.analysis_runs()
    if not runs:
        return
    analyses = {a.id: a for a in store.analyses(run_id=runs[0].id)}
    for cluster in store.clusters(runs[0].id):
        members = [analyses[i] for i in cluster.members if i in analyses]
        episodes = [store.episode(a.episode_id) for a in members]
        if members and all(_is_recorded(store, e, recorded) for e in episodes):
            yield _cluster_rule(cluster, members, episodes)


def _cluster_rule(
    cluster: Cluster, members: list[Analysis], episodes: list[Episode | None]
) -> WriteRule:
    first = members[0]
    scope = next((e.family for e in episodes if e is not None and e.family), "") or "these tasks"
    change = first.change or f"avoid: {first.trigger}"
    solved = cluster.status == "supported"
    reason = "" if solved else f" (not solved by any recorded run: {cluster.reason})"
    return WriteRule(
        type="Corrected Error" if solved else "Unsolved Error",
        content=f"In {scope}: {change}{reason}",
        example=f"{first.episode_id} step {first.start}: {first.failure}"[:EXAMPLE_CHARS],
        validation_logs=[f"{a.episode_id}@{a.start}-{a.end}" for a in members],
    )


def _from_spans(store: Store, recorded: dict[str, bool]) -> Iterable[WriteRule]:
    for episode in store.iter_episodes(EpisodeFilter()):
        spans = [s for s in store.spans(episode.id) if is_human(s.author) and (s.label or s.note)]
        if spans and _is_recorded(store, episode, recorded):
            for span in spans:
                yield _span_rule(store, episode, span)


def _span_rule(store: Store, episode: Episode | None, span: Span) -> WriteRule:
    steps = [s for s in store.steps(span.episode_id) if span.start <= s.index <= span.end]
    shown = "; ".join(s.action or s.content for s in steps if s.action or s.content)
    scope = (episode.family if episode else "") or "these tasks"
    said = ": ".join(part for part in (span.label, span.note) if part)
    kind = "Unsolved Error" if span.kind == "causal" else "Special Phenomenon"
    return WriteRule(
        type=kind,
        content=f"In {scope}: {said}",
        example=f"{span.episode_id} steps {span.start}–{span.end}: {shown}"[:EXAMPLE_CHARS],
        validation_logs=[f"{span.episode_id}@{span.start}-{span.end}"],
    )
