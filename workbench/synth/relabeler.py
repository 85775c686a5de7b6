"""The judgments of backward construction and of the committee filter — the
:class:`Relabeler` protocol — and the case both are asked about.

A relabeler writes, after the fact, the instruction a span of a trajectory accomplished (the
paper's backward construction: a summary of a sub-trajectory's steps, or an abstraction of a
whole trajectory's purpose), and votes as a committee member on whether an instruction and its
span make a good example (aligned, coherent, natural, reasonable).

Backends: :class:`~workbench.synth.heuristic_relabeler.HeuristicRelabeler` (offline: the
instruction is composed from the span's observable effects, the vote is a deterministic check
of refusals and detours) and :class:`~workbench.synth.openai_relabeler.OpenAIRelabeler` (any
OpenAI-compatible endpoint, structured answers checked mechanically).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from workbench.llm.steps import CaseStep

Purpose = Literal["summary", "abstraction"]
"""``summary``: what a sub-trajectory's steps did; ``abstraction``: what a whole trajectory
was for (the paper's two kinds of new instruction)."""


@dataclass(frozen=True)
class SpanCase:
    """A span of an episode as a relabeler sees it."""

    episode_id: str
    env: str
    family: str
    start: int
    """First action step of the span (stored index)."""
    end: int
    """Last action step (inclusive)."""
    purpose: Purpose
    played: str
    """The instruction the trajectory was played with."""
    before: str
    """The observation the span starts from."""
    steps: list[CaseStep] = field(default_factory=list)
    """The span's action steps (after repeated pairs were removed)."""
    effects: list[str] = field(default_factory=list)
    """What the span observably did (:mod:`workbench.synth.effects`), in order."""
    step_effects: dict[int, list[str]] = field(default_factory=dict)
    """The same effects by step (stored index)."""
    places: dict[int, str] = field(default_factory=dict)
    """Where the agent was when it took each step (empty when never known)."""
    refused: dict[int, str] = field(default_factory=dict)
    """Steps of the span the world refused, with the refusal it reported."""
    revisits: dict[int, int] = field(default_factory=dict)
    """Steps after which the observed state is one the span was already in: step → the
    earlier step (``start - 1`` for the state the span began in)."""


@dataclass(frozen=True)
class Vote:
    """One committee member's verdict on an instruction and its span."""

    member: str
    """Who voted: ``heuristic`` or ``openai:<model>``."""
    keep: bool
    reason: str = ""
    """Why not (or the member's short justification)."""

    def as_check(self) -> dict[str, object]:
        """The vote as stored in an example's ``checks``."""
        return {"vote": "yes" if self.keep else "no", "reason": self.reason}


class Relabeler(Protocol):
    """Who writes instructions backward and votes on examples."""

    name: str
    """Recorded on every example it relabels (``heuristic`` or ``openai:<model>``)."""

    def relabel(self, case: SpanCase) -> str:
        """The instruction ``case``'s span accomplished."""
        ...

    def vote(self, case: SpanCase, instruction: str) -> Vote:
        """Whether ``instruction`` and ``case``'s span make a good example."""
        ...
