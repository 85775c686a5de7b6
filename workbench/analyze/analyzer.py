"""The analysis stage: every failed episode in scope gets an analysis and an analyzer span."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from store import Analysis, AnalysisRun, EpisodeFilter, Span, Store
from store.records import AnalysisOrigin
from workbench.analyze.analyst import Analyst, FailureCase, Proposal
from workbench.analyze.causes import build_case
from workbench.analyze.clusters import cluster_run
from workbench.analyze.scoring import agent_at
from workbench.llm.client import ModelError
from workbench.progress import NullProgress, Progress, check_cancel
from workbench.spans_io import is_human

NO_STEPS = "the run has no action step to cite (the agent took none)"


class ProposalRejected(ValueError):
    """A proposal cites steps that do not exist; it is not stored."""


@dataclass
class AnalysisReport:
    """What one analyze call did."""

    run: AnalysisRun
    analyzed: int = 0
    skipped: int = 0
    """Failures already analysed in this run (a resumed or repeated call)."""
    rejected: list[str] = field(default_factory=list)
    """``episode: reason`` for proposals that failed the mechanical checks, and for failures
    whose run has no action step to cite (no analyst is asked)."""
    failed: list[str] = field(default_factory=list)
    """``episode: reason`` for failures the analyst could not judge (its model call failed,
    or its answer still failed the check after a correction): nothing is stored for them, so
    a later call of the same run asks again."""
    clusters: int = 0
    deferred: int = 0
    no_steps: int = 0
    """Failures of no steps at all (outcomes imported alone, e.g. from a results file): left
    out, as nothing in them can be analysed."""
    marked: int = 0
    """Failures analysed at a person's causal span (their span is the analysis's)."""


def scope_of(where: EpisodeFilter) -> dict[str, Any]:
    """The filter as a plain dict of its set fields (what identifies a run's scope)."""
    implied = ("outcome", "replays", "acting")  # (acting: derived by the store)
    return {
        k: v
        for k, v in vars(where).items()
        if v is not None and k not in implied and (k != "held_out" or v)
    }


def failures_in_scope(where: EpisodeFilter) -> EpisodeFilter:
    """The failures :func:`analyze` reads for ``where``. Candidates' replays are evidence for
    their gates and held-out (test) episodes measure what was learned, so neither is analysed
    unless the scope asks for them: a named batch (which may be a replay or test batch), a
    named split, or ``replays``/``held_out`` set explicitly."""
    named = where.batch is not None
    replays = where.replays if where.replays is not None or named else False
    held_out = where.held_out
    if held_out is None and not named and where.split is None:
        held_out = False
    return EpisodeFilter(
        **{**vars(where), "outcome": "failed", "replays": replays, "held_out": held_out}
    )


def check(proposal: Proposal, case: FailureCase) -> None:
    """Raise :class:`ProposalRejected` unless every cited step exists (whatever the backend)."""
    known = {s.index for s in case.steps}
    contrast = {s.index for s in case.contrast_steps}
    problems = []
    if proposal.start > proposal.end:
        problems.append(f"span {proposal.start}..{proposal.end} is reversed")
    problems += [
        f"step {i} is not a step the agent took in the episode"
        for i in (proposal.start, proposal.end, *proposal.citations)
        if i not in known
    ]
    problems += [
        f"contrast step {i} does not exist"
        for i in proposal.contrast_citations
        if i not in contrast
    ]
    if problems:
        raise ProposalRejected("; ".join(dict.fromkeys(problems)))


def analyze(
    store: Store,
    where: EpisodeFilter,
    analyst: Analyst,
    *,
    new_run: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> AnalysisReport:
    """Analyse every failed episode ``where`` selects, then cluster the run's analyses.

    Re-running with the same scope and analyst continues the latest such run (failures it
    already analysed are skipped); ``new_run`` starts a fresh run. Each analysis is stored with
    its analyzer-authored causal span in one transaction. Replays and held-out episodes are left
    out unless the scope asks for them (:func:`failures_in_scope`); failures of no steps at all
    (outcomes imported alone) are left out and counted (:attr:`AnalysisReport.no_steps`).
    """
    progress = progress or NullProgress()
    scope = scope_of(where)
    existing = [] if new_run else store.analysis_runs(analyst.name, scope)
    run = (
        existing[0]
        if existing
        else store.add_analysis_run(AnalysisRun(reasoner=analyst.name, scope=scope))
    )
    assert run.id is not None
    done = {a.episode_id: a for a in store.analyses(run.id)}
    failures = []
    skipped = 0
    for episode in store.iter_episodes(failures_in_scope(where)):
        human = human_span(store, episode.id)
        analysis = done.get(episode.id)
        if analysis is not None and not _stale(analysis, human):
            skipped += 1
            continue
        failures.append((episode, human))
    todo = [(e, h) for e, h in failures if e.n_steps]
    report = AnalysisReport(run=run, skipped=skipped, no_steps=len(failures) - len(todo))
    origin_of = getattr(analyst, "origin_of", None)
    progress.start(len(todo), f"analyzing with {analyst.name}")
    try:
        for episode, human in todo:
            check_cancel(cancel)
            case = build_case(store, episode)
            if not case.steps:  # nothing any analyst could cite: not asked
                report.rejected.append(f"{episode.id}: {NO_STEPS}")
                progress.advance(1)
                continue
            if human is not None:
                case = case.model_copy(update={"marked": [human.start, human.end]})
            try:
                proposal = analyst.analyze_failure(case)
                if human is not None:  # whatever the analyst proposed, the person's span stands
                    proposal = proposal.model_copy(update={"start": human.start, "end": human.end})
                else:
                    check(proposal, case)
            except ProposalRejected as error:
                report.rejected.append(f"{episode.id}: {error}")
            except ModelError as error:
                report.failed.append(f"{episode.id}: {error}")
            else:
                if human is not None:
                    analysis = _analysis(run.id, case, proposal, "human", human.id)
                    store.add_analysis(analysis)
                    report.marked += 1
                else:
                    origin = origin_of(case) if origin_of is not None else "analyzer"
                    analysis = _analysis(run.id, case, proposal, origin)
                    store.add_analysis(analysis, _span(episode.id, analyst.name, proposal))
                report.analyzed += 1
            progress.advance(1)
    finally:
        progress.finish()
    clusters = cluster_run(store, run.id)
    report.clusters = len(clusters)
    report.deferred = sum(c.status == "deferred" for c in clusters)
    return report


def human_span(store: Store, episode_id: str) -> Span | None:
    """The earliest causal span a person marked on the episode, if any."""
    marked = [s for s in store.spans(episode_id) if s.kind == "causal" and is_human(s.author)]
    return min(marked, key=lambda s: s.id or 0) if marked else None


def _stale(analysis: Analysis, human: Span | None) -> bool:
    """Whether a stored analysis no longer stands: a person has marked the episode's causal
    span since (or marked another one)."""
    if human is None:
        return False
    return analysis.origin != "human" or analysis.span_id != human.id


def _analysis(
    run_id: int,
    case: FailureCase,
    proposal: Proposal,
    origin: AnalysisOrigin,
    span_id: int | None = None,
) -> Analysis:
    return Analysis(
        run_id=run_id,
        episode_id=case.episode_id,
        failure=proposal.failure,
        start=proposal.start,
        end=proposal.end,
        change=proposal.change,
        trigger=proposal.trigger,
        correction=proposal.correction,
        confidence=proposal.confidence,
        rationale=proposal.rationale,
        citations=proposal.citations,
        contrast_id=case.contrast_id,
        contrast_citations=[] if case.contrast_reference else proposal.contrast_citations,
        contrastive=case.contrast_id is not None or case.contrast_reference,
        agent=proposal.agent or agent_at(case.steps, proposal.start),
        origin=origin,
        span_id=span_id,
    )


def _span(episode_id: str, reasoner: str, proposal: Proposal) -> Span:
    return Span(
        episode_id=episode_id,
        start=proposal.start,
        end=proposal.end,
        kind="causal",
        label=proposal.trigger,
        note=proposal.change,
        author=f"analyzer:{reasoner}",
        confidence=proposal.confidence,
    )
