"""The guidance interpreter, on hand-made evidence (no simulator)."""

from __future__ import annotations

import pytest

from workbench.agents.guidance import (
    DelegateForm,
    Evidence,
    Guidance,
    ProcedureForm,
    RuleForm,
    match,
    review,
    run_procedure,
)
from workbench.agents.subagents import World, run_subagent

HALLWAY = (
    "This room is called the hallway. You also see:\n\tA door to the kitchen (that is closed)\n"
)
KITCHEN = "This room is called the kitchen. In it, you see: a stove\n\tA door to the hallway (that is open)\n"


def evidence(look: str = HALLWAY, instruction: str = "boil water") -> Evidence:
    return Evidence(
        instruction=instruction, observation="ok", look=look, history=[("look around", look)]
    )


def test_groups_fill_escaped_evidence_patterns():
    rule = RuleForm(
        id="r", when_action=r"go to (.+)", when_evidence=r"door to the {1} \(that is closed\)"
    )
    assert match(rule, "go to kitchen", evidence()) == ("kitchen",)
    assert match(rule, "go to kitchen", evidence(KITCHEN)) is None
    assert match(rule, "open door to kitchen", evidence()) is None
    tricky = RuleForm(id="t", when_action=r"focus on (.+)", when_evidence=r"instruction: .*{1}")
    assert match(tricky, "focus on water (liquid)", evidence(instruction="boil water")) is None


def test_guard_blocks_a_rule():
    rule = RuleForm(id="r", when_action=r"focus on (.+)", unless_evidence=r"instruction: [^\n]*{1}")
    assert match(rule, "focus on water", evidence()) is None
    assert match(rule, "focus on air", evidence()) == ("air",)


def test_review_returns_the_first_firing_rule_and_its_replacement():
    guidance = Guidance(
        forms=[
            RuleForm(id="quiet", when_action=r"wait"),
            RuleForm(
                id="open",
                when_action=r"go to (.+)",
                response="replace",
                replacement="open door to {1}",
            ),
            RuleForm(id="later", when_action=r"go to (.+)"),
        ]
    )
    verdict = review(guidance, "go to kitchen", evidence())
    assert (
        verdict.rule.id == "open"
        and verdict.response == "replace"
        and verdict.action == "open door to kitchen"
    )
    assert review(guidance, "look around", evidence()) is None


def test_guidance_round_trips_as_tagged_json_and_reads_as_text():
    guidance = Guidance(
        forms=[
            RuleForm(id="r", description="open doors first"),
            ProcedureForm(id="s", description="wait for it", loop=["wait1"]),
            DelegateForm(id="d", description="find a room"),
        ]
    )
    assert Guidance.model_validate_json(guidance.model_dump_json()) == guidance
    text = guidance.as_text()
    assert "Rule r: open doors first" in text and "repeat wait1" in text and "delegate d" in text
    with pytest.raises(ValueError):
        Guidance.model_validate({"forms": [{"kind": "spell", "id": "x"}]})


def test_procedure_loops_until_its_result_or_its_bound():
    seen: list[str] = []
    observations = iter(["cold", "warm", "boiling"])

    def act(action: str, thought: str) -> str:
        seen.append(action)
        return next(observations, "boiling")

    skill = ProcedureForm(
        id="s", steps=["activate {1}"], loop=["wait1"], until="boiling", max_rounds=5
    )
    assert run_procedure(skill, ("stove",), act, lambda: False)
    assert seen == ["activate stove", "wait1", "wait1"]
    bounded = ProcedureForm(id="b", loop=["wait1"], until="never", max_rounds=3)
    seen.clear()
    assert not run_procedure(bounded, (), act, lambda: False)
    assert seen == ["wait1"] * 3


class House:
    """A two-room world for the subagent: hallway and kitchen behind a closed door."""

    def __init__(self) -> None:
        self.room, self.open, self.actions = "hallway", False, []

    def look(self) -> str:
        if self.room == "kitchen":
            return KITCHEN
        return HALLWAY.replace("closed", "open") if self.open else HALLWAY

    def act(self, action: str, thought: str) -> str:
        self.actions.append(action)
        if action == "open door to kitchen":
            self.open = True
        elif action == "go to kitchen" and self.open:
            self.room = "kitchen"
        return "ok"


def world_of(house: House) -> World:
    """The house as a subagent gets it (no list of valid actions)."""
    return World(house.act, house.look, list, lambda: False)


NAV = DelegateForm(
    id="nav",
    inputs=[{"name": "room", "bind": "{1}"}],
    success=r"This room is called the {room}\.",
    objective="reach the {room}",
)


def test_subagent_explores_with_private_state_and_terminates():
    house = House()
    result = run_subagent(NAV, {"room": "kitchen"}, world_of(house))
    assert result.success and result.visited == ["hallway", "kitchen"]
    assert result.found == "This room is called the kitchen. In it, you see: a stove"
    assert result.where == "kitchen" and result.steps == 2
    assert house.actions == ["open door to kitchen", "go to kitchen"]
    lost = run_subagent(NAV, {"room": "attic"}, world_of(House()))
    assert not lost.success and lost.reason == "covered every reachable place"


def test_an_action_outside_its_tools_is_refused_and_recorded():
    house = House()
    walker = NAV.model_copy(update={"tools": ["go to"]})
    result = run_subagent(walker, {"room": "kitchen"}, world_of(house))
    assert not result.success and result.refused == ["open door to kitchen"]
    assert house.actions == []  # the refused action never reached the world


def test_a_subagent_without_its_inputs_does_not_start():
    house = House()
    result = run_subagent(NAV, {}, world_of(house))
    assert not result.success and result.reason == "missing inputs: room" and not house.actions
