"""Pydantic records: one model per kind of row the store keeps.

Every model maps to one table. Nested models (``Outcome``, ``Usage``, ``Source``) are
flattened into prefixed columns; dicts and lists are stored as JSON text (see ``rows.py``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Split = Literal["train", "dev", "test", "other"]
StepKind = Literal[
    "system", "message", "thought", "action", "observation", "tool_call", "tool_result", "error"
]
Role = Literal["system", "user", "assistant", "tool", "environment", "agent"]
SpanKind = Literal["causal", "contrast", "evidence", "note"]
BatchKind = Literal["import", "run", "replay", "synth"]


def utcnow() -> datetime:
    """The current time in UTC, to the microsecond."""
    return datetime.now(UTC)


class Record(BaseModel):
    """Base of all stored records: strict about unknown fields, never coerces silently."""

    # defer_build: a model's validator is built when it is first used, not when the store is
    # imported (the TUI's first paint or ``workbench ls`` use a few of the ~30 models). The
    # first-use build is thread-safe from pydantic 2.14 on (the TUI validates in worker
    # threads), hence pyproject's floor.
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)


class Task(Record):
    """One task an agent can be run on (a benchmark instance)."""

    id: str = Field(min_length=1)
    """Stable id, unique across environments, e.g. ``<environment>:boil:3``."""

    environment: str = Field(min_length=1)
    """Environment or benchmark the task belongs to, e.g. an environment plugin's name or
    ``swe-bench``."""

    family: str = ""
    """Task type or family (e.g. ``boil``); empty when the source does not say."""

    instruction: str = ""
    """The task description the agent was given."""

    split: Split = "other"
    """Which partition the task belongs to."""

    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the source recorded about the task."""


class Batch(Record):
    """A named set of episodes: one import or one run, with its parameters."""

    id: str = Field(min_length=1)
    """Stable id; imports use ``import-<timestamp>`` unless named."""

    name: str = Field(min_length=1)
    """Human-readable name, unique in a database."""

    kind: BatchKind = "import"
    """Whether the batch came from importing logs, running an agent, or replaying a candidate."""

    params: dict[str, Any] = Field(default_factory=dict)
    """Parameters that produced the batch (paths and formats, or the run's plan)."""

    created_at: datetime = Field(default_factory=utcnow)
    """When the batch was created."""


class Outcome(Record):
    """What the environment or evaluator said about an episode."""

    success: bool | None = None
    """Whether the episode solved its task; ``None`` when the source does not say."""

    score: float | None = None
    """The numeric score or reward the evaluator gave, if any."""

    message: str = ""
    """The evaluator-visible message (exit status, error, final feedback)."""


class Usage(Record):
    """Token and cost usage of an episode, when the source records it."""

    prompt_tokens: int | None = None
    """Tokens sent to the model over the whole episode."""

    completion_tokens: int | None = None
    """Tokens the model produced over the whole episode."""

    cost: float | None = None
    """Cost in US dollars."""


class Source(Record):
    """Where an imported episode came from."""

    path: str = ""
    """The file the episode was read from (as given on the command line)."""

    format: str = ""
    """The importer that read it, e.g. ``openai-chat``."""

    hash: str = ""
    """SHA-256 of the file's content (and of a joined results file, if any)."""

    record: str = ""
    """Where in the file: line number, array index or archive member."""


class Episode(Record):
    """One trajectory: an agent attempting one task once."""

    id: str = Field(min_length=1)
    """Stable id; deterministic for imports so re-importing is idempotent."""

    task_id: str = Field(min_length=1)
    """The task attempted."""

    agent: str = ""
    """Name of the agent (or model) that produced the trajectory."""

    batch_id: str = Field(min_length=1)
    """The import or run this episode belongs to."""

    seed: int | None = None
    """Random seed of the run, when known."""

    outcome: Outcome = Field(default_factory=Outcome)
    """Success, score and evaluator message."""

    n_steps: int = Field(default=0, ge=0)
    """Number of steps stored for the episode."""

    usage: Usage = Field(default_factory=Usage)
    """Token and cost usage, if known."""

    source: Source = Field(default_factory=Source)
    """File, format and content hash the episode was imported from."""

    family: str = ""
    """Copy of the task's family, kept on the episode so filtered failure lists use one index."""

    split: Split = "other"
    """Copy of the task's split, for the same reason."""

    started_at: datetime | None = None
    """When the episode started, if the source says."""

    ended_at: datetime | None = None
    """When the episode ended, if the source says."""

    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the source recorded (trial number, model settings, ...)."""


class Step(Record):
    """One step of a trajectory: a message, a decision, or what came back from the world."""

    episode_id: str = Field(min_length=1)
    """The episode this step belongs to."""

    index: int = Field(ge=0)
    """Position in the episode, from 0."""

    kind: StepKind
    """What the step is: an ``action`` carries the agent's decision (and often its thought
    and the observation it produced); messages and tool calls keep chat structure."""

    role: Role = "agent"
    """Who produced the step."""

    agent: str = ""
    """The agent that spoke or acted at this step, in a log of several agents (a group chat's
    speaker, an orchestrator's sub-agent, a sidechain's agent); empty in a single agent's
    log."""

    content: str = ""
    """Free text of a message (system prompt, user turn, assistant reply)."""

    thought: str = ""
    """The agent's reasoning before acting."""

    action: str = ""
    """The action or tool call, rendered as text."""

    observation: str = ""
    """What the environment or tool returned."""

    tool_name: str = ""
    """Name of the tool called or answering, for tool steps."""

    tool_call_id: str = ""
    """Id linking a tool call to its result."""

    reward: float | None = None
    """Reward the environment gave for this step, if any."""

    timestamp: datetime | None = None
    """When the step happened, if known."""

    raw: Any = None
    """The original record the step was read from, kept verbatim."""


class Span(Record):
    """A marked range of steps in one episode: a causal decision, a contrast, evidence, a note."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    episode_id: str = Field(min_length=1)
    """The episode the span marks."""

    start: int = Field(ge=0)
    """First step index of the span (inclusive)."""

    end: int = Field(ge=0)
    """Last step index of the span (inclusive)."""

    kind: SpanKind
    """Why the span was marked."""

    label: str = ""
    """Short label, reused across spans to group them (e.g. ``premature-focus``)."""

    note: str = ""
    """Free-text note."""

    author: str = Field(default="human", pattern=r"^(human(:.+)?|analyzer:.+)$")
    """``human``, a named labeller as ``human:<name>``, or ``analyzer:<name>``."""

    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    """How sure the author is, from 0 to 1 (analyzers set it; humans may)."""

    created_at: datetime = Field(default_factory=utcnow)
    """When the span was created."""

    updated_at: datetime = Field(default_factory=utcnow)
    """When the span was last changed."""

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.end < self.start:
            raise ValueError(f"span end {self.end} is before its start {self.start}")
        return self


class LLMCall(Record):
    """One language-model call: what was asked, what came back, what it cost."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    purpose: str = Field(min_length=1)
    """Which step asked, e.g. ``agent.act`` or ``analyze.episode``."""

    model: str
    """Model name sent to the endpoint."""

    prompt_hash: str = Field(min_length=1)
    """SHA-256 of the model, messages and parameters: the cache key."""

    request: dict[str, Any] = Field(default_factory=dict)
    """Messages and parameters sent (never headers or keys)."""

    response: dict[str, Any] | None = None
    """The reply (message content, finish reason), or ``None`` when the call failed."""

    prompt_tokens: int | None = None
    """Tokens in the prompt, as the endpoint reported."""

    completion_tokens: int | None = None
    """Tokens in the completion, as the endpoint reported."""

    latency_ms: float = 0.0
    """Wall time of the call in milliseconds (0 for a cache hit)."""

    cached: bool = False
    """Whether the reply came from the cache instead of the endpoint."""

    error: str = ""
    """What went wrong, if the call failed."""

    turn: int = Field(default=0, ge=0)
    """Correction turns in the conversation sent: 0 for a first ask, 1 after one correction
    (of output that did not fit the schema, or of an answer its stage's check rejected)."""

    gave_up: str = ""
    """The :class:`~workbench.llm.client.ModelError` its question ended with, on the call that
    ended it (empty when the question was answered or asked again)."""

    episode_id: str | None = None
    """The episode the call was made for, if any (not enforced: calls precede the episode row)."""

    created_at: datetime = Field(default_factory=utcnow)
    """When the call was made."""


AnalysisStatus = Literal["proposed", "accepted", "edited", "rejected"]
AnalysisOrigin = Literal["analyzer", "human", "learned"]
ClusterStatus = Literal["supported", "deferred"]


class AnalysisRun(Record):
    """One pass of an analyzer over a set of failed episodes."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    reasoner: str = Field(min_length=1)
    """Which reasoner judged (``heuristic`` or ``openai:<model>``)."""

    scope: dict[str, Any] = Field(default_factory=dict)
    """The episode filter the run covered (batch, family, ...)."""

    created_at: datetime = Field(default_factory=utcnow)
    """When the run started."""


class Analysis(Record):
    """What an analyzer concluded about one failed episode; every claim cites steps."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    run_id: int
    """The analysis run this belongs to."""

    episode_id: str = Field(min_length=1)
    """The failed episode."""

    failure: str = ""
    """The evaluator-visible failure (what the environment or evaluator reported)."""

    start: int = Field(ge=0)
    """First step of the earliest causal span."""

    end: int = Field(ge=0)
    """Last step of the earliest causal span (inclusive)."""

    change: str = ""
    """The behavioural change required at that point, in words."""

    trigger: str = ""
    """The observable condition at the decision point, normalised (for clustering)."""

    correction: str = ""
    """The corrective action, normalised (for clustering); empty when unknown."""

    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    """How sure the analyzer is."""

    rationale: str = ""
    """Why the analyzer concluded this."""

    citations: list[int] = Field(default_factory=list)
    """Step indices of the episode (and of ``contrast_id``, see ``contrast_citations``) backing the claims."""

    contrast_id: str | None = None
    """The successful episode compared with, if any."""

    contrast_citations: list[int] = Field(default_factory=list)
    """Step indices of ``contrast_id`` backing the required change."""

    contrastive: bool = False
    """Whether a successful run of the same regime backs the analysis (else: error signals only)."""

    span_id: int | None = None
    """The analyzer-authored causal span written with this analysis."""

    agent: str = ""
    """The agent held responsible, in a log of several agents (empty for one agent's log)."""

    origin: AnalysisOrigin = "analyzer"
    """Where the causal span came from: the analyzer's judgment, a person's causal span of the
    episode (``human``), or the step scorer learned from people's spans (``learned``)."""

    status: AnalysisStatus = "proposed"
    """``proposed`` by the analyzer; ``accepted``, ``edited`` or ``rejected`` by a human."""

    created_at: datetime = Field(default_factory=utcnow)
    """When the analysis was made."""


class Cluster(Record):
    """Failures that need the same correction under the same observable conditions."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    run_id: int
    """The analysis run whose analyses were grouped."""

    family: str = ""
    """The task family (the regime) the members share."""

    trigger: str = ""
    """The normalised observable condition the members share."""

    correction: str = ""
    """The normalised correction the members share."""

    status: ClusterStatus = "supported"
    """``supported``, or ``deferred`` when no single trigger/correction/completion holds."""

    reason: str = ""
    """Why the cluster is deferred (empty when supported)."""

    members: list[int] = Field(default_factory=list)
    """Ids of the member analyses."""

    contrasts: list[str] = Field(default_factory=list)
    """Successful episodes of the same regime: contrastive evidence and preservation candidates."""
