"""The contract gate (per type, malformed artifacts first) and the replay verdict."""

from __future__ import annotations

import json

import pytest

from store import ArtifactVersion, LedgerEntry, Store
from workbench.admit.gates import conforms, contract_gate, judge
from workbench.admit.repository import admit
from workbench.compile.contracts import RETURN_SCHEMA
from workbench.executors import LocalPool

INSTRUCTION = "Your task is to boil water."
CLOSED = "This room is called the hallway.\nYou also see:\n\tA door to the kitchen (that is closed)"


def rule_contract(**form: str) -> dict:
    return {
        "kind": "rule",
        "name": "open-door-first",
        "description": "Open a closed door before walking through it.",
        "activation": "the agent proposes 'go to <X>'",
        "guard": "the door to <X> is closed",
        "response": "replace with 'open door to <X>'",
        "positive": [{"action": "go to kitchen", "instruction": INSTRUCTION, "look": CLOSED}],
        "negative": [
            {
                "action": "go to kitchen",
                "instruction": INSTRUCTION,
                "look": CLOSED.replace("closed", "open"),
            },
            {"action": "look around", "instruction": INSTRUCTION, "look": CLOSED},
        ],
        "form": {
            "kind": "rule",
            "id": "open-door-first",
            "when_action": "go to (.+)",
            "when_evidence": r"door to (?:the )?{1} \(that is closed\)",
            "response": "replace",
            "replacement": "open door to {1}",
            **form,
        },
    }


def staged(store: Store, contract: dict) -> ArtifactVersion:
    return store.stage_version(
        ArtifactVersion(
            artifact=contract["name"], version=1, kind=contract["kind"], contract=contract
        )
    )


def test_a_rule_passes_when_it_fires_on_positives_and_not_on_negatives(store: Store):
    gate = contract_gate(store, staged(store, rule_contract()))
    assert gate.passed, gate.checks
    assert [c.name for c in gate.checks][-2:] == [
        "fires on positive triggers",
        "silent on negative triggers",
    ]


def test_a_rule_that_fires_on_a_negative_trigger_fails(store: Store):
    gate = contract_gate(store, staged(store, rule_contract(when_evidence="")))
    failed = [c for c in gate.checks if not c.passed]
    assert not gate.passed and [c.name for c in failed] == ["silent on negative triggers"]


def test_a_rule_silent_on_its_positive_trigger_fails(store: Store):
    gate = contract_gate(store, staged(store, rule_contract(when_action="walk to (.+)")))
    assert not gate.passed
    assert "silent at go to kitchen" in next(c.detail for c in gate.checks if not c.passed)


def test_a_malformed_artifact_is_rejected_before_any_replay(store: Store):
    contract = rule_contract(when_evidence="door to ({1}")
    version = staged(store, contract)
    with LocalPool(1) as executor:
        result = admit(store, version.id, executor=executor)
    assert result.status == "rejected" and result.replay is None
    assert [c.name for c in result.contract.checks if not c.passed] == ["patterns"]
    assert store.ledger(version.id) == []
    assert store.version(version.id).contract_gate.passed is False


def test_templates_must_not_read_undeclared_parent_state(store: Store):
    gate = contract_gate(store, staged(store, rule_contract(replacement="open door to {2}")))
    check = next(c for c in gate.checks if c.name == "declared inputs")
    assert not check.passed and "{2}" in check.detail


def test_a_contract_missing_required_slots_fails_the_schema_check(store: Store):
    contract = rule_contract()
    contract["negative"] = []
    gate = contract_gate(store, staged(store, contract))
    schema = gate.checks[0]
    assert not gate.passed and schema.name == "schema" and "negative" in schema.detail


def test_an_invalid_contract_fails_with_the_field_named(store: Store):
    contract = rule_contract()
    contract["form"]["response"] = "explode"
    gate = contract_gate(store, staged(store, contract))
    assert not gate.passed and "rule.form.response" in gate.checks[0].detail


def entry(case: str, role: str, before: bool, after: bool) -> LedgerEntry:
    return LedgerEntry(
        version_id=1, case=case, role=role, baseline_success=before, candidate_success=after
    )


def test_replay_passes_when_corrections_improve_and_nothing_regresses():
    gate = judge(
        [
            entry("a", "correction", False, True),
            entry("b", "correction", False, True),
            entry("c", "correction", False, False),
            entry("d", "preservation", True, True),
        ]
    )
    assert gate.passed
    assert gate.stats["fixed"] == 2 and gate.stats["broken"] == 0
    assert gate.stats["mcnemar_p"] == pytest.approx(0.5)
    assert gate.stats["correction_candidate"]["successes"] == 2


def test_replay_fails_when_a_preservation_case_regresses():
    gate = judge(
        [
            entry("a", "correction", False, True),
            entry("b", "correction", False, True),
            entry("d", "preservation", True, False),
            entry("e", "preservation", True, True),
        ]
    )
    assert not gate.passed
    failed = [c for c in gate.checks if not c.passed]
    assert [c.name for c in failed] == ["no preservation regression"] and "d" in failed[0].detail


def test_replay_fails_when_no_correction_improves():
    gate = judge([entry("a", "correction", False, False), entry("d", "preservation", True, True)])
    assert not gate.passed and gate.checks[0].detail == "0 fixed, 0 broken of 1"


def test_return_values_are_checked_against_their_schema():
    good = {
        "status": "success",
        "steps": 3,
        "found": "This room is called the kitchen.",
        "where": "kitchen",
        "visited": ["hallway", "kitchen"],
        "refused": [],
        "reason": "reached",
    }
    assert conforms(good, RETURN_SCHEMA) == []
    bad = {"status": "done", "steps": -1, "visited": [3], "extra": True}
    problems = conforms(bad, RETURN_SCHEMA)
    assert any("not one of" in p for p in problems)
    assert "return.reason: missing" in problems and "return.extra: not declared" in problems
    assert "return.visited[0]: expected string, got int" in problems
    assert json.dumps(good)  # the schema's subset is plain JSON


def test_without_the_preservation_check_a_regression_does_not_block():
    ledger = [entry("a", "correction", False, True), entry("d", "preservation", True, False)]
    assert not judge(ledger).passed
    ablated = judge(ledger, preservation=False)
    assert ablated.passed and ablated.checks[1].detail == "not checked (ablation)"


def test_the_no_replay_gate_regime_admits_on_the_contract_gate_alone(store: Store):
    passing = staged(store, rule_contract())
    executor = LocalPool(1)  # never started: no replay under this regime
    admission = admit(store, passing.id, executor=executor, regime="no-replay-gate")
    assert admission.status == "active" and admission.replay is None
    assert store.version(passing.id).replay_gate is None
    broken = rule_contract(when_evidence="(")  # does not compile: the contract gate still rules
    broken["name"] = broken["form"]["id"] = "broken-rule"
    rejected = admit(store, staged(store, broken).id, executor=executor, regime="no-replay-gate")
    assert rejected.status == "rejected"
