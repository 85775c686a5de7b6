"""The one interface every judgment of the pipeline goes through, and what it exchanges.

A :class:`Reasoner` turns a :class:`FailureCase` (everything an analyst may look at about one
failed episode) into a :class:`Proposal`, a cluster's members into intervention specs, and a
spec into a contract proposal for each schema compilation attempts. Backends: ``heuristic``
(:class:`workbench.analyze.heuristic.HeuristicReasoner`, offline and deterministic) and
``openai`` (:class:`workbench.llm.openai_reasoner.OpenAIReasoner`, any OpenAI-compatible
endpoint). Whatever the backend, the analyzer checks a proposal mechanically before storing it:
every cited step must exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from store import ArtifactKind, InterventionSpec, ManualRule
    from workbench.compile.proposals import AttemptProposal, MemberCase, SpecProposal
    from workbench.manual.formulate import RuleGroup


class CaseStep(BaseModel):
    """One step of an episode as a reasoner sees it."""

    model_config = ConfigDict(extra="forbid")

    index: int
    action: str = ""
    observation: str = ""
    reward: float | None = None


class FailureCase(BaseModel):
    """One failed episode with its contrastive evidence."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    family: str
    instruction: str
    outcome: str
    """The evaluator-visible message and score."""
    steps: list[CaseStep]
    contrast_id: str | None = None
    """A successful episode of the same regime, if any."""
    contrast_same_task: bool = False
    contrast_instruction: str = ""
    """The contrast's own instruction (another variation's, for a family-level contrast)."""
    contrast_steps: list[CaseStep] = Field(default_factory=list)


class Proposal(BaseModel):
    """A reasoner's analysis of one failure. Every claim cites steps."""

    model_config = ConfigDict(extra="forbid")

    failure: str
    """The evaluator-visible failure, in one sentence."""
    start: int
    """First step index of the earliest causal span."""
    end: int
    """Last step index of that span (inclusive)."""
    change: str
    """The behavioural change required at that point."""
    trigger: str
    """The observable condition at the decision point, abstracted (e.g. ``go to <X> | is not open``)."""
    correction: str
    """The corrective action, abstracted (e.g. ``open door to <X>``); empty when unknown."""
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str
    citations: list[int]
    """Step indices of the failed episode backing the claims."""
    contrast_citations: list[int] = Field(default_factory=list)
    """Step indices of the contrast episode backing the required change."""


class Reasoner(Protocol):
    """Judges failures. Implementations must be deterministic for the same case and settings."""

    name: str
    """Recorded on analysis runs and as the span author (``analyzer:<name>``)."""

    def analyze_failure(self, case: FailureCase) -> Proposal:
        """Propose the failure, its earliest causal span and the required change."""
        ...

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

    def group_rules(self, rules: list[ManualRule]) -> list[RuleGroup]:
        """The Formulator: group ``rules`` by the scenario they target, each group with a
        title and an introduction summarising its key points. Every rule must appear in
        exactly one group (the formulating stage checks)."""
        ...
