"""Records of the AutoManual rule system: rules with their type, content, example and
validation log, and the event history of every change made to them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from store.records import Record, utcnow

RuleType = Literal[
    "Special Phenomenon",
    "Special Mechanism",
    "Useful Helper Method",
    "Success Process",
    "Corrected Error",
    "Unsolved Error",
]
RULE_TYPES: tuple[RuleType, ...] = (
    "Special Phenomenon",
    "Special Mechanism",
    "Useful Helper Method",
    "Success Process",
    "Corrected Error",
    "Unsolved Error",
)
"""The six rule types of the AutoManual rule system."""

RuleOp = Literal["write", "update", "delete"]


class ManualRule(Record):
    """One rule of the rule system. Its id is never reused or renumbered."""

    id: str = Field(pattern=r"^rule_\d+$")
    """``rule_<n>``, assigned in order of writing."""

    type: RuleType
    """Which kind of environment knowledge it records."""

    content: str = Field(min_length=1)
    """The rule, beginning with the scope it applies to."""

    example: str = ""
    """An example from a trajectory, with the details that are easy to get wrong."""

    validation_logs: list[str] = Field(default_factory=list)
    """Episode and rule ids that trace its application and updates."""

    form: dict[str, Any] | None = None
    """The executable trigger/response form agents can follow (a guidance rule), if any."""

    deleted: bool = False
    """Whether the rule was deleted (it stays, with its history)."""

    created_at: datetime = Field(default_factory=utcnow)
    """When it was written."""

    updated_at: datetime = Field(default_factory=utcnow)
    """When it last changed."""


class RuleEvent(Record):
    """One change to a rule: who made it, from which episode, and the rule before and after."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    rule_id: str
    """The rule changed."""

    op: RuleOp
    """``write``, ``update`` or ``delete``."""

    actor: str = Field(min_length=1)
    """Who changed it, e.g. ``builder:heuristic``, ``consolidator:openai:<model>`` or ``human``."""

    episode_id: str | None = None
    """The episode whose trajectory motivated the change, if any."""

    before: dict[str, Any] | None = None
    """The rule's fields before the change (``None`` for a write)."""

    after: dict[str, Any] | None = None
    """The rule's fields after the change (``None`` for a delete)."""

    at: datetime = Field(default_factory=utcnow)
    """When the change was made."""


LibraryKind = Literal["skill", "reflection"]


class LibraryEntry(Record):
    """A skill (a procedure that solved a task type) or a reflection (what went wrong on it),
    kept per task type and shown to the agent on the next task of that type."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    kind: LibraryKind
    """``skill`` (from a success) or ``reflection`` (from a failure)."""

    family: str = Field(min_length=1)
    """The task type it belongs to."""

    content: str = Field(min_length=1)
    """The procedure, or the reflection with the faulty step."""

    episode_id: str | None = None
    """The episode it was written from."""

    created_at: datetime = Field(default_factory=utcnow)
    """When it was written."""


class Manual(Record):
    """One formulated version of the manual."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    version: int = Field(ge=1)
    """1, 2, 3... in order of formulation."""

    markdown: str
    """The manual."""

    rules: list[str] = Field(default_factory=list)
    """Ids of the rules it contains (each exactly once)."""

    artifacts: list[int] = Field(default_factory=list)
    """Ids of the active artifact versions it contains."""

    reasoner: str = ""
    """Who formulated it."""

    created_at: datetime = Field(default_factory=utcnow)
    """When it was formulated."""
