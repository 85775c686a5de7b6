"""Compilation's judgment — the :class:`Compiler` — and what it exchanges: the evidence it
reads and what it proposes.

A compiler proposes; the engine decides. Spec proposals pass a traceability check (every
field cites steps of the evidence, templates read only declared inputs) and attempt
proposals pass the closure controller (:mod:`workbench.compile.closure`) before anything is
stored as closed.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from store import (
    Activation,
    ArtifactKind,
    Citation,
    Execution,
    InterventionSpec,
    ObligationName,
    Scope,
)
from workbench.analyze.analyst import FailureCase


class MemberCase(BaseModel):
    """One analysed failure of a cluster, as spec extraction sees it."""

    model_config = ConfigDict(extra="forbid")

    analysis_id: int
    cluster_id: int
    case: FailureCase
    """The failed run (action steps) and its contrast."""
    initial_observation: str = ""
    """Stored step 0: what the run started from."""
    contrast_initial_observation: str = ""
    start: int
    """The analyzer's causal step."""
    change: str = ""
    """The analyzer's required change, in words."""
    trigger: str = ""
    """The analyzer's normalised trigger."""
    correction: str = ""
    """The analyzer's normalised correction."""
    contrast_step: int | None = None
    """The contrast's step that shows the change (the analyzer's contrast citation)."""
    regime: str = ""
    """The opening every instruction of the member's task family shares (empty if short)."""
    recorded: bool = False
    """The run cannot be replayed (an imported log: no run configuration to play it again);
    only rules checked on the recorded trajectories can come of it."""


class SpecProposal(BaseModel):
    """A proposed intervention over some of the members (type-neutral)."""

    model_config = ConfigDict(extra="forbid")

    members: list[int]
    """Analysis ids it covers."""
    mechanism: str
    """The failure mechanism, in a few words."""
    supported: bool = True
    reason: str = ""
    """Why the members do not support one intervention (when not supported)."""
    activation: Activation | None = None
    scope: Scope | None = None
    execution: Execution | None = None


class ObligationReport(BaseModel):
    """The proposer's claim about one obligation for one schema."""

    model_config = ConfigDict(extra="forbid")

    obligation: ObligationName
    status: bool
    """Whether the proposer claims the schema closes it."""
    slot: str = ""
    """The contract slot that owns it."""
    citations: list[Citation] = Field(default_factory=list)
    witness: str = ""
    """Why not (when ``status`` is false)."""


class AttemptProposal(BaseModel):
    """A proposed contract for one schema and its four-field closure report."""

    model_config = ConfigDict(extra="forbid")

    kind: ArtifactKind
    contract: dict[str, Any] | None = None
    """The type-specific contract fields (``None``: the schema cannot be instantiated)."""
    report: list[ObligationReport] = Field(default_factory=list)


class KindChoice(BaseModel):
    """A type chosen directly for a spec, without closure checks (the ``no-closure``
    ablation)."""

    model_config = ConfigDict(extra="forbid")

    kind: ArtifactKind
    why: str = ""
    """The chooser's reason, in words."""


class Compiler(Protocol):
    """Proposes intervention specs and contracts. Backends:
    :class:`~workbench.compile.heuristic.HeuristicCompiler` (offline) and
    :class:`~workbench.compile.openai.OpenAICompiler` (any OpenAI-compatible endpoint)."""

    name: str
    """Recorded on specs (their ``reasoner``)."""

    def extract_specs(self, members: list[MemberCase]) -> list[SpecProposal]:
        """Group cluster members that need one intervention and propose its type-neutral
        spec (activation, behavioural scope, execution obligation), citing steps."""
        ...

    def propose_contract(
        self, spec: InterventionSpec, kind: ArtifactKind, carried: list[str]
    ) -> AttemptProposal:
        """Propose ``kind``'s contract for ``spec`` and a closure report per obligation;
        ``carried`` are the earlier schemas' witnesses this one must also close."""
        ...

    def select_kind(self, spec: InterventionSpec) -> KindChoice:
        """Pick the artifact type for ``spec`` directly, as a compiler without closure
        would (the ``no-closure`` ablation); nothing checks the choice."""
        ...
