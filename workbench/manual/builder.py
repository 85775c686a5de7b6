"""The building stage's judgments — the :class:`Builder` (an episode read into rule
operations) and its Consolidator — and what they exchange.

Backends: :class:`~workbench.manual.heuristic_builder.HeuristicBuilder` (offline) and
:class:`~workbench.manual.openai_builder.OpenAIBuilder` (any OpenAI-compatible endpoint).
Whatever the backend, the building stage refuses what the case does not allow (a success-type
rule from a failed run) before applying anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from store import LibraryEntry, ManualRule
from workbench.analyze.causes import error_signature, is_critical
from workbench.llm.steps import CaseStep
from workbench.manual.operations import DeleteRule, UpdateRule, WriteRule

Outcome = Literal["direct success", "indirect success", "failure"]
Cause = Literal["imperfect rules", "imperfect agent"]


@dataclass
class BuildCase:
    """One finished episode of the building stage, as the Builder sees it."""

    episode_id: str
    family: str
    instruction: str
    steps: list[CaseStep]
    success: bool
    rules: list[ManualRule]
    """The rule system when the episode ran."""
    fired: list[str] = field(default_factory=list)
    """Ids of rules that acted in the episode."""
    fired_at: dict[str, int] = field(default_factory=dict)
    """The stored step index where each rule that acted first did."""
    environment: str = ""
    """The world the episode was played in (its lexicon reads the steps)."""
    plan_code: str = ""
    """The Planner's code blocks that ran, when a Planner played the episode."""
    thoughts: dict[int, str] = field(default_factory=dict)
    """The Planner's thought at each step (by stored step index)."""

    @property
    def outcome(self) -> Outcome:
        if not self.success:
            return "failure"
        troubled = any(error_signature(s.observation) for s in self.steps)
        return "indirect success" if troubled else "direct success"

    @property
    def conclusion(self) -> str:
        """The Planner's conclusion for the Builder, by outcome: the organised procedure of a
        direct success, the mistakes of an indirect one, a reflection with the faulty step of
        a failure (composed from the run, so every Planner has one)."""
        if self.outcome == "direct success":
            return "Procedure that solved the task: " + "; ".join(s.action for s in self.steps)
        errors = [s for s in self.steps if error_signature(s.observation) or is_critical(s)]
        listed = "; ".join(
            f"step {s.index} '{s.action}' → '{s.observation.splitlines()[0] if s.observation else ''}'"
            for s in errors[:5]
        )
        if self.outcome == "indirect success":
            return f"Succeeded after mistakes: {listed or 'none visible'}."
        faulty = errors[0] if errors else (self.steps[-1] if self.steps else None)
        where = f"step {faulty.index} '{faulty.action}'" if faulty else "the start"
        return (
            f"Failed. The faulty step looks like {where}. Errors met: {listed or 'none visible'}."
        )


@dataclass
class BuilderAnswer:
    """The Builder's case analysis and its operations on the rule system."""

    cause: Cause
    operations: list[WriteRule | UpdateRule | DeleteRule] = field(default_factory=list)
    library: list[LibraryEntry] = field(default_factory=list)


class Builder(Protocol):
    """Who reads an episode into rule operations and consolidates the rules."""

    name: str
    """Recorded as the actor of rule events (``builder:<name>``, ``consolidator:<name>``)."""

    def build_rules(self, case: BuildCase) -> BuilderAnswer:
        """The case analysis and the operations (and library notes) one episode teaches."""
        ...

    def consolidate(self, rules: list[ManualRule], n_max: int) -> list[UpdateRule | DeleteRule]:
        """Merges and deletions that bring ``rules`` towards ``n_max``."""
        ...
