"""The analysis stage's judgment and what it exchanges.

An :class:`Analyst` turns a :class:`FailureCase` (everything an analyst may look at about
one failed episode) into a :class:`Proposal`: the evaluator-visible failure, the earliest
causal span and the behavioural change required there. Backends:
:class:`~workbench.analyze.heuristic.HeuristicAnalyst` (offline and deterministic) and
:class:`~workbench.analyze.openai.OpenAIAnalyst` (any OpenAI-compatible endpoint). Whatever
the backend, the analyzer checks a proposal mechanically before storing it: every cited
step must exist.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from workbench.llm.steps import CaseStep


class FailureCase(BaseModel):
    """One failed episode with its contrastive evidence."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    environment: str = ""
    """The world the episode was played in (its lexicon reads the actions and observations);
    empty when unknown (e.g. imported logs)."""
    family: str
    instruction: str
    outcome: str
    """The evaluator-visible message and score."""
    score: float | None = None
    """The run's final score, when its log gives one (a critical score with no step rewards
    marks the last step as the critical one)."""
    steps: list[CaseStep]
    """Every step the agent took: actions, tool calls (with their results as observations)
    and text replies (``reply({"text": ...})``)."""
    contrast_id: str | None = None
    """A successful episode of the same regime, if any."""
    contrast_same_task: bool = False
    contrast_reference: bool = False
    """Whether the contrast is the task's reference (its expected actions, numbered from 0)
    rather than a successful episode (then ``contrast_id`` is ``None``)."""
    contrast_instruction: str = ""
    """The contrast's own instruction (another variation's, for a family-level contrast)."""
    contrast_steps: list[CaseStep] = Field(default_factory=list)
    expected_outputs: list[str] = Field(default_factory=list)
    """What the agent's replies had to say, when the task's log gives it (tau-bench's
    ``outputs``: a count, a price, a tracking number)."""
    marked: list[int] = Field(default_factory=list)
    """A person's causal span of the episode (``[start, end]``), when one was marked: the
    analysis explains that span instead of looking for another."""


class Proposal(BaseModel):  # the docstring is part of the answer's schema (and cache key)
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
    """The corrective action, abstracted, in the run's own action grammar (e.g. ``open <X>``);
    empty when unknown."""
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str
    citations: list[int]
    """Step indices of the failed episode backing the claims."""
    contrast_citations: list[int] = Field(default_factory=list)
    """Step indices of the contrast episode backing the required change."""
    agent: str = ""
    """In a log of several agents, the agent responsible for the failure (the one that took
    the causal step, not one that only relayed or executed its output); empty otherwise."""


class Analyst(Protocol):
    """Judges failures. Implementations must be deterministic for the same case and settings."""

    name: str
    """Recorded on analysis runs and as the span author (``analyzer:<name>``)."""

    def analyze_failure(self, case: FailureCase) -> Proposal:
        """Propose the failure, its earliest causal span and the required change."""
        ...
