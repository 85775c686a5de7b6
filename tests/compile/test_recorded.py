"""Rules read off recorded trajectories: action structure, and the reasons a member gives none."""

from __future__ import annotations

import re

import pytest

from workbench.analyze.analyst import FailureCase
from workbench.compile import recorded
from workbench.compile.proposals import MemberCase
from workbench.llm.steps import CaseStep

CANCEL = 'cancel_reservation({"reservation_id": "ZFA04Y"})'
LOOKUP = 'get_reservation_details({"reservation_id": "ZFA04Y"})'


def member(failed: list[str], success: list[str] | None, start: int = 0) -> MemberCase:
    steps = [CaseStep(index=i, action=a, observation="ok") for i, a in enumerate(failed)]
    contrast = [CaseStep(index=i, action=a, observation="ok") for i, a in enumerate(success or [])]
    case = FailureCase(
        episode_id="f",
        family="airline",
        instruction="cancel",
        outcome="failed",
        steps=steps,
        contrast_id="s" if success else None,
        contrast_steps=contrast,
    )
    return MemberCase(analysis_id=1, cluster_id=1, case=case, start=start, recorded=True)


def test_an_action_is_read_as_its_tool_and_argument_keys() -> None:
    assert recorded.head_of(CANCEL) == "cancel_reservation"
    assert recorded.head_of("sed -i 's/a/b/' x.py") == "sed"
    assert recorded.argument_keys(CANCEL) == ["reservation_id"]
    pattern = recorded.action_pattern(CANCEL)
    assert re.fullmatch(pattern, 'cancel_reservation({"reservation_id": "OTHER1"})')
    assert not re.fullmatch(pattern, 'cancel_reservation({"user_id": "mia"})')
    assert not re.fullmatch(pattern, LOOKUP)
    assert re.fullmatch(recorded.action_pattern("sed -n 1p a"), "sed -i 's/x/y/'\nfile")


def test_the_divergence_from_the_success_becomes_a_guarded_veto() -> None:
    found = recorded.read(member([CANCEL], [LOOKUP, CANCEL]))
    assert not isinstance(found, str)
    key, activation, scope, _ = found
    assert key[0] == recorded.MECHANISM
    (guard,) = activation.observations
    assert guard.absent and re.search(guard.value, f"history:\n> {LOOKUP}\nok")
    assert [c.start for c in activation.boundary.citations] == [1]  # the success's cancel
    assert scope.decisions[0].value == "veto"


def test_members_that_give_no_rule_say_what_to_do() -> None:
    assert recorded.read(member([CANCEL], None)) == recorded.NO_CONTRAST
    assert "same kind of action" in recorded.read(member([CANCEL], [CANCEL]))
    assert "already done" in recorded.read(member([LOOKUP, CANCEL], [LOOKUP, CANCEL], start=1))
    assert recorded.read(member([CANCEL], [LOOKUP], start=5)) == recorded.NO_ACTION


@pytest.mark.parametrize(
    ("head", "history", "found"),
    [
        ("get_user", "> get_user(x)", True),
        ("get_user", "> get_username(x)", False),
        ("ls", "> ls -l", True),
        ("fetch!", "> fetch!(x)", True),  # (a head ending in punctuation: '\b' never matched)
        ("fetch!", "> fetch!x", False),
        ("name\u202e", "> name\u202e(1)", True),
    ],
)
def test_the_history_pattern_finds_a_head_whatever_its_last_character(head, history, found):
    assert (re.search(recorded.history_pattern(head), "look\n" + history) is not None) is found
