"""Compilation's judgment — the :class:`Compiler` — and what it exchanges: the evidence it
reads and what it proposes.

A compiler proposes; the engine decides. Spec proposals pass a traceability check (every
field cites steps of the evidence, templates read only declared inputs) and attempt
proposals pass the closure controller (:mod:`workbench.compile.closure`) before anything is
stored as closed. What the cluster's runs demand of each obligation (:class:`Demands`, read
by :mod:`workbench.compile.obligations`) is given to the compiler with every attempt and is
what the controller decides against.
"""

from __future__ import annotations

from dataclasses import dataclass
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

HISTORY = 6
"""Recent steps the parent's evidence shows (see :meth:`workbench.agents.base.Interaction.evidence`)."""

LEVELS: dict[ObligationName, tuple[str, ...]] = {
    "observation": ("visible", "hidden"),
    "state": ("none", "parent", "private"),
    "decision": ("one", "fixed", "discovered"),
    "completion": ("immediate", "result", "coverage"),
}
"""Each obligation's levels, from the least demanding."""

CAPACITY: dict[ArtifactKind, dict[ObligationName, str]] = {
    "rule": {
        "observation": "visible",
        "state": "none",
        "decision": "one",
        "completion": "immediate",
    },
    "skill": {
        "observation": "visible",
        "state": "parent",
        "decision": "fixed",
        "completion": "result",
    },
    "subagent": {
        "observation": "visible",
        "state": "private",
        "decision": "discovered",
        "completion": "coverage",
    },
}
"""The most each schema can own: a rule keeps nothing and acts at one control point, a skill
keeps what the parent's context holds and runs a fixed procedure to an observable result, a
subagent keeps a private ledger, decides as it discovers and ends on success or exhaustion."""

LIMITS: dict[tuple[ArtifactKind, ObligationName], str] = {
    ("rule", "state"): "a rule keeps nothing between decisions",
    ("rule", "decision"): "a rule owns one control point",
    ("rule", "completion"): "a rule's effect must show where it acts",
    ("skill", "state"): f"the parent's recent history (its last {HISTORY} steps) cannot hold it",
    ("skill", "decision"): "an ordered procedure fixes its steps in advance",
    ("skill", "completion"): "a procedure in the parent's loop ends on an observed result; it "
    "cannot tell failure before every place is covered",
}
"""Why a schema cannot own a demand above its capacity (appended to the evidence)."""

UNSEEN = "no owner can act on what the parent does not see when it decides"


@dataclass(frozen=True)
class Demand:
    """What the evidence demands of one obligation, and the steps that show it."""

    obligation: ObligationName
    level: str
    """One of :data:`LEVELS` ``[obligation]``."""
    text: str
    """What the evidence shows, in words (naming actions, targets and steps)."""
    citations: tuple[Citation, ...] = ()
    """The steps that show it."""

    def exceeds(self, kind: ArtifactKind) -> bool:
        """Whether ``kind`` cannot own this demand."""
        order = LEVELS[self.obligation]
        return order.index(self.level) > order.index(CAPACITY[kind][self.obligation])

    def witness(self, kind: ArtifactKind) -> str:
        """Why ``kind`` cannot own it: the evidence, then the schema's limit."""
        limit = UNSEEN if self.obligation == "observation" else LIMITS[(kind, self.obligation)]
        return f"{self.text}; {limit}"


@dataclass(frozen=True)
class Approach:
    """How the successes carried a correction of several decisions out, as one of the
    strategies a subagent can run offline (see :mod:`workbench.agents.subagents`)."""

    strategy: str
    """``search-exits``, ``search-containers``, ``test-candidates`` or ``wait-for-change``."""
    tools: tuple[str, ...]
    """The action roles it needs."""
    text: str
    """What the runs show, in words."""
    citations: tuple[Citation, ...] = ()
    action: str = ""
    """The action it tries on each candidate (``{candidate}``) or repeats."""


@dataclass(frozen=True)
class Demands:
    """The four demands of one spec (and how its successes went about the correction)."""

    observation: Demand
    state: Demand
    decision: Demand
    completion: Demand
    approach: Approach | None = None
    """How the correction was carried out, when it takes several decisions."""

    def __getitem__(self, obligation: ObligationName) -> Demand:
        return getattr(self, obligation)

    def lines(self) -> list[str]:
        """One line per obligation: level, what shows it, and its citations (then the
        approach, when there is one)."""
        found = [
            f"{d.obligation}: {d.level} — {d.text} (cites "
            + (", ".join(c.label() for c in d.citations) or "nothing")
            + ")"
            for d in (self.observation, self.state, self.decision, self.completion)
        ]
        if self.approach is not None:
            a = self.approach
            found.append(
                f"approach: {a.strategy} (tools {', '.join(a.tools)}"
                + (f"; action {a.action}" if a.action else "")
                + f") — {a.text}"
            )
        return found


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
        self, spec: InterventionSpec, kind: ArtifactKind, carried: list[str], demands: Demands
    ) -> AttemptProposal:
        """Propose ``kind``'s contract for ``spec`` and a closure report per obligation;
        ``carried`` are the earlier schemas' witnesses this one must also close, ``demands``
        what the cluster's evidence demands of each obligation (read off its runs)."""
        ...

    def select_kind(self, spec: InterventionSpec) -> KindChoice:
        """Pick the artifact type for ``spec`` directly, as a compiler without closure
        would (the ``no-closure`` ablation); nothing checks the choice."""
        ...
