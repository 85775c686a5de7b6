"""First-closure compilation: clusters → intervention specs → the first schema, in the order
Rule → Skill → Subagent, that closes every obligation → a staged artifact version.

Every spec, every attempt with its witnesses and every staged version is stored; a spec, its
attempts and its staged version are written in one transaction. Compiling a cluster again does
nothing when an equal spec of that analysis run exists (pass ``again`` to recompile: an
artifact that already has versions then gets a revision).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from store import (
    SCHEMA_ORDER,
    ArtifactVersion,
    Cluster,
    CompileAttempt,
    InterventionSpec,
    Store,
)
from workbench.compile.closure import decide, witnesses
from workbench.compile.contracts import CONTRACT
from workbench.compile.obligations import SpecEvidence
from workbench.compile.proposals import Compiler, MemberCase
from workbench.compile.specs import gather, to_spec
from workbench.progress import NullProgress, Progress, check_cancel

HEURISTIC = "heuristic"
"""The offline reasoner's name: its patterns are escaped text and may run in this process."""


@dataclass
class Compiled:
    """One spec's outcome."""

    spec: InterventionSpec
    attempts: list[CompileAttempt] = field(default_factory=list)
    version: ArtifactVersion | None = None
    reused: bool = False
    """An equal spec existed already; nothing was written."""


@dataclass
class CompileReport:
    """What a compile call did."""

    run_id: int
    compiled: list[Compiled] = field(default_factory=list)
    skipped: list[tuple[Cluster, str]] = field(default_factory=list)
    """The run's clusters the analysis deferred (not compiled), each with why and what to do."""

    @property
    def staged(self) -> list[ArtifactVersion]:
        return [c.version for c in self.compiled if c.version is not None and not c.reused]


def first_closure(
    compiler: Compiler, spec: InterventionSpec, evidence: SpecEvidence
) -> list[CompileAttempt]:
    """Attempt the schemas in runtime order until one closes; each failed attempt's witnesses
    are carried to the next, which must close them as well. ``evidence`` is the spec's runs
    and what they demand (the controller decides against it)."""
    attempts: list[CompileAttempt] = []
    carried: list[str] = []
    for position, kind in enumerate(SCHEMA_ORDER, start=1):
        proposal = compiler.propose_contract(spec, kind, carried, evidence.demands)
        attempt = decide(
            spec, proposal.model_copy(update={"kind": kind}), position, carried, evidence
        )
        attempts.append(attempt)
        if attempt.closed:
            break
        carried = [*carried, *(f"{kind} {w}" for w in witnesses(attempt))]
    return attempts


def direct_selection(
    compiler: Compiler, spec: InterventionSpec, evidence: SpecEvidence
) -> list[CompileAttempt]:
    """The ``no-closure`` ablation: the compiler picks the type and its contract is taken as
    it is. The obligation checks are still recorded (for inspection), but only a missing or
    invalid contract keeps the attempt from being staged."""
    choice = compiler.select_kind(spec)
    proposal = compiler.propose_contract(spec, choice.kind, [], evidence.demands)
    reason = f"no closure: {choice.kind} chosen directly" + (
        f" ({choice.why})" if choice.why else ""
    )
    attempt = decide(spec, proposal.model_copy(update={"kind": choice.kind}), 1, [reason], evidence)
    accepted = proposal.contract is not None and not attempt.missing
    return [attempt.model_copy(update={"closed": accepted})]


def select_clusters(store: Store, run_id: int, cluster_id: int | None) -> list[Cluster]:
    """The supported clusters to compile: all of the run's, or one and those sharing its
    family-independent trigger and correction (they may fall into one spec)."""
    supported = [c for c in store.clusters(run_id) if c.status == "supported"]
    if cluster_id is None:
        return supported
    chosen = store.cluster(cluster_id)
    if chosen is None or chosen.run_id != run_id:
        raise ValueError(f"cluster {cluster_id} is not a cluster of analysis run {run_id}")
    if chosen.status != "supported":
        raise ValueError(f"cluster {cluster_id} is deferred: {chosen.reason}")
    return [chosen] + [c for c in supported if c.id != chosen.id]


def compile_run(
    store: Store,
    compiler: Compiler,
    *,
    run_id: int | None = None,
    cluster_id: int | None = None,
    again: bool = False,
    closure: bool = True,
    stage: Callable[[Store, InterventionSpec, CompileAttempt], ArtifactVersion] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> CompileReport:
    """Compile the supported clusters of an analysis run (default: the newest run).

    Args:
        store: where the analyses are and where specs, attempts and versions go.
        compiler: proposes specs and contracts; closure is decided here, mechanically.
        run_id: the analysis run.
        cluster_id: compile only the spec(s) covering this cluster.
        again: compile even when an equal spec exists (a closed one becomes a revision).
        closure: decide the type by first closure (``False``: the ``no-closure`` ablation,
            :func:`direct_selection`).
        stage: builds the staged version of a closed attempt (default:
            :func:`workbench.admit.repository.staged_version`).
        progress: one unit per spec.
        cancel: stop between specs; finished ones stay stored.
    """
    from workbench.admit.repository import staged_version

    progress = progress or NullProgress()
    stage = stage or staged_version
    runs = store.analysis_runs()
    if run_id is None:
        if not runs:
            raise ValueError("no analysis run yet; run `workbench analyze` first")
        run_id = runs[0].id
    assert run_id is not None
    clusters = select_clusters(store, run_id, cluster_id)
    members, empty = gather(store, clusters)
    by_id = {m.analysis_id: m for m in members}
    proposals = compiler.extract_specs(members) if members else []
    if cluster_id is not None:  # only the spec(s) that cover the chosen cluster
        proposals = [p for p in proposals if _covers(p.members, by_id, cluster_id)]
    report = CompileReport(run_id=run_id)
    if cluster_id is None:
        report.skipped = [
            (c, why_deferred(store, c)) for c in store.clusters(run_id) if c.status != "supported"
        ]
    existing: dict[str, list[InterventionSpec]] = {}
    for stored in store.specs(run_id):
        existing.setdefault(_key(stored), []).append(stored)
    progress.start(len(proposals) + len(empty), "compiling")
    try:
        for proposal in proposals:
            check_cancel(cancel)
            spec = to_spec(proposal, run_id, compiler.name, by_id)
            covered = [by_id[i] for i in proposal.members if i in by_id]
            report.compiled.append(
                _compile_one(store, compiler, spec, existing, again, stage, closure, covered)
            )
            progress.advance(1, f"compiling ({len(report.staged)} staged)")
        for cid, reason in empty.items():
            if cluster_id is not None and cid != cluster_id:
                continue
            spec = InterventionSpec(
                run_id=run_id,
                clusters=[cid],
                reasoner=compiler.name,
                status="deferred",
                reason=reason,
            )
            report.compiled.append(
                _compile_one(store, compiler, spec, existing, again, stage, closure)
            )
            progress.advance(1)
    finally:
        progress.finish()
    return report


IMPORTED_HINT = (
    "these runs are imported logs: import a successful run of the same task or a log that "
    "carries the task's expected actions, or mark the causal span yourself "
    "(`workbench spans import`), then run `workbench analyze` again"
)


def why_deferred(store: Store, cluster: Cluster) -> str:
    """The analysis's reason for deferring ``cluster`` and, for imported logs, what to do."""
    from workbench.compile.specs import is_recorded

    reason = cluster.reason or "the analysis gave no reason"
    episodes = [store.analysis(i) for i in cluster.members]
    recorded = [is_recorded(store, a.episode_id) for a in episodes if a is not None]
    return f"{reason}; {IMPORTED_HINT}" if recorded and all(recorded) else reason


def _covers(analysis_ids: list[int], members: dict[int, MemberCase], cluster_id: int) -> bool:
    return any(members[i].cluster_id == cluster_id for i in analysis_ids if i in members)


def _compile_one(
    store: Store,
    compiler: Compiler,
    spec: InterventionSpec,
    existing: dict[str, list[InterventionSpec]],
    again: bool,
    stage: Callable[[Store, InterventionSpec, CompileAttempt], ArtifactVersion],
    closure: bool = True,
    members: list[MemberCase] | None = None,
) -> Compiled:
    key = _key(spec)
    # specs of one key may differ in their clusters: the one that is the same, if any
    previous = next((s for s in existing.get(key, []) if _same(s, spec)), None)
    if previous is not None and not again:
        attempts = store.attempts(previous.id or 0)
        versions = store.versions(spec_id=previous.id)
        return Compiled(previous, attempts, versions[-1] if versions else None, reused=True)
    select = first_closure if closure else direct_selection
    attempts = []
    if spec.status == "supported":
        trusted = spec.reasoner == HEURISTIC  # the engine's own patterns, not a model's
        attempts = select(compiler, spec, SpecEvidence.of(spec, members or [], trusted))
    if attempts and not attempts[-1].closed and not closure:
        last = attempts[-1]
        spec = spec.model_copy(
            update={
                "status": "deferred",
                "reason": f"the directly chosen {last.kind} has no valid contract ("
                + ("; ".join(last.missing) or "the compiler proposed none")
                + ")",
            }
        )
    elif attempts and not attempts[-1].closed:
        still_open = sorted({c.obligation for a in attempts for c in a.checks if not c.closed})
        spec = spec.model_copy(
            update={
                "status": "deferred",
                "reason": "no schema closes it (open: "
                + ", ".join(still_open)
                + ")"
                + _witness_hint(attempts[-1]),
            }
        )
    with store.transaction():
        stored, attempts = store.add_spec(spec, attempts)
        version = None
        if attempts and attempts[-1].closed:
            version = store.stage_version(stage(store, stored, attempts[-1]))
    existing.setdefault(key, []).append(stored)
    return Compiled(stored, attempts, version)


def _witness_hint(attempt: CompileAttempt) -> str:
    """Why the last schema tried stays open, in the witness's words, and what to try."""
    witnesses = [c.witness for c in attempt.checks if not c.closed and c.witness]
    if not witnesses:
        return ""
    return (
        f": {witnesses[0]} — if the cluster mixes failures that need different corrections, "
        "compile its clusters one at a time (`workbench compile --cluster ID`) or mark the "
        "causal span by hand"
    )


def _key(spec: InterventionSpec) -> str:
    """What makes two specs of one run the same intervention (specs without a mechanism:
    their clusters)."""
    unread = spec.mechanism in ("", "unrecognised")
    return spec.key() + (f"|{spec.clusters}" if unread else "")


def _same(a: InterventionSpec, b: InterventionSpec) -> bool:
    fields = ("clusters", "mechanism", "activation", "scope", "execution", "sources")
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def contract_of(version: ArtifactVersion):
    """A version's contract as its typed model."""
    return CONTRACT.validate_python(version.contract)
