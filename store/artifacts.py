"""Records of compilation and admission: intervention specs, compile attempts with their
closure witnesses, artifact versions with their gate results, and the paired replay ledger.

A contract's type-specific fields (Rule, Skill, Subagent) are defined by the engine
(``workbench.compile.contracts``); the store keeps a contract as validated JSON and never
interprets it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from store.records import Record, Split, utcnow

ArtifactKind = Literal["rule", "skill", "subagent"]
SCHEMA_ORDER: tuple[ArtifactKind, ...] = ("rule", "skill", "subagent")
"""The runtime order first-closure compilation attempts the schemas in."""

ObligationName = Literal["observation", "state", "decision", "completion"]
OBLIGATIONS: tuple[ObligationName, ...] = ("observation", "state", "decision", "completion")
"""The four obligations every attempted schema must close."""

SpecStatus = Literal["supported", "deferred"]
VersionStatus = Literal["staged", "active", "rejected", "superseded"]
CaseRole = Literal["correction", "preservation"]
StateOwner = Literal["none", "parent", "private"]
Lifetime = Literal["step", "procedure", "delegation"]


class Part(BaseModel):
    """A nested part of a record, stored inside its record's JSON column."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on first use, as Record


class Citation(Part):
    """A span of stored steps that backs a claim."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    episode_id: str = Field(min_length=1)
    """The episode cited."""
    start: int = Field(ge=0)
    """First stored step index."""
    end: int = Field(ge=0)
    """Last stored step index (inclusive)."""

    def label(self) -> str:
        """``episode@start`` or ``episode@start-end``."""
        steps = str(self.start) if self.start == self.end else f"{self.start}-{self.end}"
        return f"{self.episode_id}@{steps}"


class Claim(Part):
    """One field of a spec or contract: words for people, a machine value, and evidence."""

    text: str = ""
    """The claim in words."""
    value: str = ""
    """Its machine form when it has one: a regular expression or an action template."""
    citations: list[Citation] = Field(default_factory=list)
    """The trajectory spans that support it."""


class Observed(Claim):
    """A required observation: a pattern that must be (or must not be) visible."""

    absent: bool = False
    """``True``: the pattern must *not* be visible (a guard)."""


class Activation(Part):
    """When the intervention applies."""

    trigger: Claim
    """The decision point: ``value`` is a regex the proposed action matches in full."""
    observations: list[Observed] = Field(default_factory=list)
    """What must (or must not) be visible in the parent's evidence there."""
    boundary: Claim | None = None
    """Decision points where the trigger is observable but behaviour must not change (the
    negative boundary), cited."""


class Scope(Part):
    """What the intervention changes."""

    objective: Claim
    """The corrective objective."""
    decisions: list[Claim] = Field(default_factory=list)
    """The dependent decisions, in order; ``value`` is an action template or ``veto``."""


class Execution(Part):
    """What carrying out the intervention obliges its owner to keep and to observe."""

    state: Claim
    """The state that must persist (``text`` says what; empty ``value`` when none)."""
    owner: StateOwner = "none"
    """Who can hold that state: nobody needs to, the parent's visible context, or a private
    ledger the parent does not own."""
    lifetime: Lifetime = "step"
    """How long the state must live: one decision, a procedure inside the parent's loop, or a
    loop of its own that ends on its own terms."""
    completion: Claim
    """How completion is observed: ``value`` is a regex on the latest observation."""
    failure: Claim | None = None
    """How a failure to complete is observed (needed for a delegated objective)."""
    inputs: list[str] = Field(default_factory=list)
    """Declared inputs: the template groups the trigger binds (``{1}``, ``{E2}``...)."""


class InterventionSpec(Record):
    """A type-neutral intervention derived from a cluster of failures; every field cites spans."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    run_id: int
    """The analysis run whose clusters it came from."""

    clusters: list[int] = Field(default_factory=list)
    """The clusters it covers (several when their members share one mechanism)."""

    reasoner: str = Field(min_length=1)
    """Which reasoner extracted it."""

    mechanism: str = ""
    """The failure mechanism the evidence shows, e.g. ``blocked-precondition``."""

    families: list[str] = Field(default_factory=list)
    """The task families (regimes) of its evidence."""

    status: SpecStatus = "supported"
    """``supported``, or ``deferred`` when the evidence does not support one intervention."""

    reason: str = ""
    """Why it is deferred (empty when supported)."""

    activation: Activation | None = None
    """When it applies."""

    scope: Scope | None = None
    """What it changes."""

    execution: Execution | None = None
    """What carrying it out requires."""

    sources: list[str] = Field(default_factory=list)
    """Failed episodes (learning partition) whose causal spans it would correct."""

    contrasts: list[str] = Field(default_factory=list)
    """Successful episodes of the same regimes: behaviour to preserve."""

    created_at: datetime = Field(default_factory=utcnow)
    """When it was extracted."""

    def key(self) -> str:
        """What identifies the intervention across recompilation: mechanism and trigger."""
        trigger = self.activation.trigger.value if self.activation else ""
        return f"{self.mechanism}|{trigger}|{','.join(sorted(self.families))}"


class ObligationCheck(Part):
    """One obligation of one attempted schema, as the controller decided it."""

    obligation: ObligationName
    closed: bool
    """Whether the schema closes this obligation."""
    slot: str = ""
    """The contract slot that owns it (when closed)."""
    citations: list[Citation] = Field(default_factory=list)
    """Evidence the proposal cited for it."""
    witness: str = ""
    """Why the schema cannot close it (the insufficiency witness), or why the controller
    refused the proposal's claim."""


class CompileAttempt(Record):
    """One schema attempted for a spec, with its per-obligation closure report."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    spec_id: int
    """The spec compiled."""

    kind: ArtifactKind
    """The schema attempted."""

    position: int = Field(ge=1)
    """1, 2, 3: where it stands in the runtime order."""

    closed: bool = False
    """Whether every obligation closed, every required slot is present and every citation
    resolves (decided mechanically)."""

    checks: list[ObligationCheck] = Field(default_factory=list)
    """The four obligations, each closed or with its witness."""

    carried: list[str] = Field(default_factory=list)
    """Witnesses of earlier attempts this schema had to close as well."""

    missing: list[str] = Field(default_factory=list)
    """Required contract slots the proposal left empty."""

    contract: dict[str, Any] | None = None
    """The proposed contract (type-specific fields), if the reasoner proposed one."""

    created_at: datetime = Field(default_factory=utcnow)
    """When it was attempted."""


class ReplayCase(Part):
    """One case of a replay set: a learning-partition episode to run again, same seed."""

    episode_id: str
    """The recorded episode the case reproduces."""
    role: CaseRole
    """``correction``: must improve; ``preservation``: must not regress."""
    family: str
    variation: int
    split: Split
    seed: int
    why: str = ""
    """Why it is in the set (source failure, contrastive success, negative boundary...)."""


class GateCheck(Part):
    """One check a gate ran."""

    name: str
    passed: bool
    detail: str = ""


class Gate(Part):
    """A gate's verdict with the checks behind it."""

    passed: bool
    checks: list[GateCheck] = Field(default_factory=list)
    stats: dict[str, Any] = Field(default_factory=dict)
    """Numbers behind the verdict (replay: counts, McNemar p, Wilson intervals)."""
    decided_at: datetime = Field(default_factory=utcnow)


class ArtifactVersion(Record):
    """One version of an artifact in the repository. Only gates change its status."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    artifact: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9-]*$")
    """The artifact's name (stable across versions; lowercase, digits, dashes)."""

    version: int = Field(ge=1)
    """1 for the first version, then 2, 3..."""

    kind: ArtifactKind
    """Rule, Skill or Subagent."""

    status: VersionStatus = "staged"
    """``staged`` until the gates decide: ``active`` or ``rejected``; a newer active version
    makes the older one ``superseded``."""

    contract: dict[str, Any]
    """The type-specific contract (validated by the engine)."""

    spec_id: int | None = None
    """The spec it was compiled from (``None`` when staged by hand)."""

    attempt_id: int | None = None
    """The compile attempt that closed."""

    parent: int | None = None
    """The version this one revises."""

    origin: Literal["compiled", "hand", "revision"] = "compiled"
    """How it was staged."""

    cases: list[ReplayCase] = Field(default_factory=list)
    """Its correction and preservation sets (a revision adds its predecessor's)."""

    contract_gate: Gate | None = None
    """The contract gate's verdict, once run."""

    replay_gate: Gate | None = None
    """The replay gate's verdict, once run."""

    created_at: datetime = Field(default_factory=utcnow)
    """When it was staged."""


class LedgerEntry(Record):
    """One paired replay case: the same task and seed without and with the candidate."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    version_id: int
    """The artifact version replayed."""

    case: str
    """The recorded episode the case reproduces."""

    role: CaseRole
    """Correction or preservation."""

    baseline_episode: str | None = None
    """The replayed episode without the candidate."""

    candidate_episode: str | None = None
    """The replayed episode with the candidate."""

    baseline_success: bool | None = None
    """Whether the environment counted the run without the candidate a success."""

    candidate_success: bool | None = None
    """Whether it counted the run with the candidate a success."""

    fired: bool = False
    """Whether the candidate acted in its run."""

    @property
    def change(self) -> str:
        """``fixed``, ``regressed``, ``same`` or ``pending``."""
        if self.baseline_success is None or self.candidate_success is None:
            return "pending"
        if self.baseline_success == self.candidate_success:
            return "same"
        return "fixed" if self.candidate_success else "regressed"
