"""The rule system's typed operations: stable ids, a history of every change, all or nothing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from store import Store
from workbench.manual.operations import OPERATIONS, OperationError, apply

CALLS = [
    {
        "op": "write_rule",
        "type": "Corrected Error",
        "content": "When walking into a room whose door is closed: open the door first.",
        "example": "go to kitchen -> 'The door is not open.'; open door to kitchen, then go to kitchen",
        "validation_logs": ["demo-train:boil:9"],
        "form": {
            "kind": "rule",
            "id": "open-door-first",
            "when_action": "go to (.+)",
            "when_evidence": r"door to (?:the )?{1} \(that is closed\)",
            "response": "replace",
            "replacement": "open door to {1}",
        },
    },
    {
        "op": "write_rule",
        "type": "Special Phenomenon",
        "content": "In ScienceWorld kitchens: the sink can be broken and cannot be activated.",
    },
]


def test_rules_get_stable_ids_and_every_change_is_an_event(store: Store):
    first, second = apply(store, OPERATIONS.validate_python(CALLS), "builder:heuristic", "ep-1")
    assert (first.id, second.id) == ("rule_1", "rule_2")
    assert first.form["replacement"] == "open door to {1}"
    [updated] = apply(
        store,
        OPERATIONS.validate_python(
            [{"op": "update_rule", "rule_id": "rule_2", "example": "activate sink -> broken"}]
        ),
        "consolidator:heuristic",
    )
    assert updated.content == second.content and updated.example == "activate sink -> broken"
    apply(store, OPERATIONS.validate_python([{"op": "delete_rule", "rule_id": "rule_1"}]), "human")
    [written] = apply(store, OPERATIONS.validate_python(CALLS[1:]), "builder:heuristic", "ep-2")
    assert written.id == "rule_3"  # never reuses rule_1
    assert [r.id for r in store.manual_rules()] == ["rule_2", "rule_3"]
    assert store.manual_rule("rule_1").deleted
    history = store.rule_events("rule_2")
    assert [(e.op, e.actor, e.episode_id) for e in history] == [
        ("write", "builder:heuristic", "ep-1"),
        ("update", "consolidator:heuristic", None),
    ]
    assert (
        history[1].before["example"] == ""
        and history[1].after["example"] == "activate sink -> broken"
    )
    assert [e.op for e in store.rule_events("rule_1")] == ["write", "delete"]


def test_a_batch_with_an_invalid_operation_writes_nothing(store: Store):
    calls = [*CALLS, {"op": "update_rule", "rule_id": "rule_9", "content": "x"}]
    with pytest.raises(
        OperationError, match="operation 3 \\(update_rule\\): rule rule_9 does not exist"
    ):
        apply(store, OPERATIONS.validate_python(calls), "builder:heuristic")
    assert store.manual_rules() == [] and store.rule_events() == []


def test_stop_generating_ends_the_batch(store: Store):
    calls = [CALLS[0], {"op": "stop_generating"}, CALLS[1]]
    assert [r.id for r in apply(store, OPERATIONS.validate_python(calls), "builder:heuristic")] == [
        "rule_1"
    ]


def test_operations_are_validated_not_executed():
    with pytest.raises(ValidationError, match="type"):
        OPERATIONS.validate_python([{**CALLS[1], "type": "Vague Insight"}])
    with pytest.raises(ValidationError, match="exec"):
        OPERATIONS.validate_python([{"op": "exec", "code": "import os"}])
