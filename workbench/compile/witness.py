"""What the faces show of compilation: the latest run's specs with their attempts and staged
versions, and each attempt's obligation table (closed by a slot, or open with a witness)."""

from __future__ import annotations

from dataclasses import dataclass, field

from store import AnalysisRun, ArtifactVersion, Citation, CompileAttempt, InterventionSpec, Store


@dataclass(frozen=True)
class SpecData:
    """What the screen shows: the latest analysis run, its specs, their attempts and the
    versions staged from them."""

    run: AnalysisRun | None = None
    specs: list[InterventionSpec] = field(default_factory=list)
    attempts: dict[int, list[CompileAttempt]] = field(default_factory=dict)
    staged: dict[int, ArtifactVersion] = field(default_factory=dict)
    """Spec id → the version staged from it."""

    def spec_covering(self, cluster_id: int) -> InterventionSpec | None:
        """The first listed spec that covers the cluster."""
        return next((s for s in self.specs if cluster_id in s.clusters), None)


def read_specs(store: Store) -> SpecData:
    """The latest analysis run's specs (newest first), their attempts and staged versions."""
    runs = store.analysis_runs()
    if not runs:
        return SpecData()
    run = runs[0]
    specs = store.specs(run.id)
    attempts = {s.id: store.attempts(s.id) for s in specs if s.id is not None}
    staged = {v.spec_id: v for v in store.versions() if v.spec_id in attempts}
    return SpecData(run, specs, attempts, staged)


@dataclass(frozen=True)
class ObligationRow:
    """One obligation of one compile attempt, as a table shows it."""

    schema: str
    """The attempted schema (``rule``, ``skill``, ``subagent``)."""
    position: int
    """Where the schema stands in runtime order (1 = first attempted)."""
    obligation: str
    """``observation``, ``state``, ``decision`` or ``completion``."""
    closed: bool
    """Whether a slot of the schema closes it."""
    slot: str
    """The owning slot (empty when open)."""
    witness: str
    """Why the schema cannot close it (empty when closed)."""
    citations: list[Citation] = field(default_factory=list)
    """The evidence the check cites."""

    @property
    def status(self) -> str:
        """``closed`` or ``open``."""
        return "closed" if self.closed else "open"


def obligation_rows(attempts: list[CompileAttempt]) -> list[ObligationRow]:
    """Every attempt's obligation checks, attempt by attempt in runtime order."""
    return [
        ObligationRow(
            schema=attempt.kind,
            position=attempt.position,
            obligation=check.obligation,
            closed=check.closed,
            slot=check.slot or "",
            witness=check.witness,
            citations=list(check.citations),
        )
        for attempt in attempts
        for check in attempt.checks
    ]
