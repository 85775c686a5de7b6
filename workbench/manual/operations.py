"""The rule system's functions as typed tool calls: ``write_rule``, ``update_rule``,
``delete_rule`` and ``stop_generating``.

A Builder or Consolidator (heuristic or model) answers with a list of these; each is
validated by pydantic and applied here — nothing a model writes is ever executed. A batch of
operations from one trajectory is one transaction: an invalid operation (an unknown rule id,
say) leaves the rule system as it was. Every change is stored as a rule event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from store import ManualRule, RuleEvent, RuleType, Store
from store.records import utcnow
from workbench.agents.guidance import RuleForm

SUCCESS_ONLY = ("Success Process", "Useful Helper Method")
"""Rule types only a successful run may produce (the Builder's guard for failed runs)."""


class _Operation(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WriteRule(_Operation):
    """Write down a new rule with its four attributes."""

    op: Literal["write_rule"] = "write_rule"
    type: RuleType
    content: str = Field(min_length=1)
    """The rule, beginning with the scope it applies to."""
    example: str = ""
    validation_logs: list[str] = Field(default_factory=list)
    form: RuleForm | None = None
    """An executable trigger/response form agents can follow, if the rule has one."""


class UpdateRule(_Operation):
    """Rewrite attributes of an existing rule (attributes left out keep their value)."""

    op: Literal["update_rule"] = "update_rule"
    rule_id: str
    type: RuleType | None = None
    content: str | None = Field(default=None, min_length=1)
    example: str | None = None
    validation_logs: list[str] | None = None
    form: RuleForm | None = None


class DeleteRule(_Operation):
    """Delete a rule (its history stays; its id is never given to another rule)."""

    op: Literal["delete_rule"] = "delete_rule"
    rule_id: str


class StopGenerating(_Operation):
    """The trajectory supports no more rule changes."""

    op: Literal["stop_generating"] = "stop_generating"


Operation = Annotated[
    WriteRule | UpdateRule | DeleteRule | StopGenerating, Field(discriminator="op")
]
OPERATIONS = TypeAdapter(list[Operation])
"""Parses a list of tool calls (``{"op": "write_rule", ...}``) into operations."""


class OperationError(ValueError):
    """An operation that cannot be applied (the message names the operation and the rule)."""


def _snapshot(rule: ManualRule) -> dict:
    return rule.model_dump(mode="json", exclude={"created_at", "updated_at"})


def apply(
    store: Store,
    operations: Sequence[WriteRule | UpdateRule | DeleteRule | StopGenerating],
    actor: str,
    episode_id: str | None = None,
) -> list[ManualRule]:
    """Apply operations in order, up to the first ``stop_generating``, in one transaction.

    Returns the rules written, updated or deleted. Raises :class:`OperationError` (and writes
    nothing) when an operation names a rule that does not exist or was deleted.
    """
    changed: list[ManualRule] = []
    with store.transaction():
        for position, operation in enumerate(operations, start=1):
            if isinstance(operation, StopGenerating):
                break
            changed.append(_apply_one(store, operation, actor, episode_id, position))
    return changed


def _apply_one(
    store: Store,
    operation: WriteRule | UpdateRule | DeleteRule,
    actor: str,
    episode_id: str | None,
    position: int,
) -> ManualRule:
    if isinstance(operation, WriteRule):
        rule = ManualRule(
            id=store.next_rule_id(),
            type=operation.type,
            content=operation.content,
            example=operation.example,
            validation_logs=operation.validation_logs,
            form=operation.form.model_dump() if operation.form else None,
        )
        event = RuleEvent(
            rule_id=rule.id, op="write", actor=actor, episode_id=episode_id, after=_snapshot(rule)
        )
        return store.put_rule(rule, event)
    current = store.manual_rule(operation.rule_id)
    if current is None or current.deleted:
        state = "was deleted" if current is not None else "does not exist"
        raise OperationError(
            f"operation {position} ({operation.op}): rule {operation.rule_id} {state}"
        )
    if isinstance(operation, DeleteRule):
        rule = current.model_copy(update={"deleted": True, "updated_at": utcnow()})
        event = RuleEvent(
            rule_id=rule.id,
            op="delete",
            actor=actor,
            episode_id=episode_id,
            before=_snapshot(current),
        )
        return store.put_rule(rule, event)
    changes = operation.model_dump(exclude={"op", "rule_id"}, exclude_none=True)
    if operation.form is not None:
        changes["form"] = operation.form.model_dump()
    rule = current.model_copy(update={**changes, "updated_at": utcnow()})
    rule = ManualRule.model_validate(rule.model_dump())
    event = RuleEvent(
        rule_id=rule.id,
        op="update",
        actor=actor,
        episode_id=episode_id,
        before=_snapshot(current),
        after=_snapshot(rule),
    )
    return store.put_rule(rule, event)
