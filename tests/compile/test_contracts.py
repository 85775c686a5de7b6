"""The executable form of a stored contract, as views list it."""

from __future__ import annotations

from workbench.compile.contracts import form_fields


def test_a_contract_that_does_not_parse_lists_its_stored_form() -> None:
    contract = {
        "kind": "rule",
        "form": {"kind": "rule", "id": "x", "when_action": "go to (.+)", "response": ""},
    }
    assert form_fields(contract) == [("when_action", "go to (.+)")]
    assert form_fields({"kind": "rule"}) == []
