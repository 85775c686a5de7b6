"""The target-elsewhere mechanism read from evidence any world offers: a hand-built case shaped
like a parser text adventure (compass exits, ``You can't see any such thing.``), read through a
toy lexicon, and the ScienceWorld-shaped case it generalises (rooms named by their doors)."""

from __future__ import annotations

import pytest

from tests.agents.test_guidance_exits import COMPASS, Manor
from tests.compile.cases import member, steps
from tests.compile.test_heuristic import closure, specs_of
from workbench.agents.guidance import (
    DelegateForm,
    Evidence,
    Guidance,
    RuleForm,
    bind_inputs,
    match,
    review,
)
from workbench.agents.subagents import World, run_subagent
from workbench.compile import heuristic, obligations
from workbench.envs.lexicon import PLAIN

KITCHEN = Manor().look()
GARDEN = "-= Garden =-\nYou see an apple.\nThere is an exit leading south."
HALL = (
    "-= Hall =-\nYou see a coat.\nThere is an exit leading west.\nThere is an exit leading north."
)


@pytest.fixture
def compass(monkeypatch):
    """Cases of the ``compass`` world are read through :data:`COMPASS`, of the ``plain`` world
    through the plain reading (which knows no room format)."""
    real = heuristic.lexicon_of
    worlds = {"compass": COMPASS, "plain": PLAIN}
    for module in (heuristic, obligations):  # the mechanisms and the demands read alike
        monkeypatch.setattr(module, "lexicon_of", lambda name: worlds.get(name) or real(name))


def elsewhere(analysis_id: int, environment: str = "compass"):
    """The run takes an apple that is in another room; the success walks to it first."""
    failed = steps(
        ("take apple", "You can't see any such thing."), ("look", KITCHEN), ("wait", "Time passes.")
    )
    contrast = steps(
        ("look", KITCHEN),
        ("open wooden door", "You open the wooden door."),
        ("go east", HALL),
        ("go west", KITCHEN),
        ("go north", GARDEN),
        ("take apple", "You take the apple."),
    )
    case = member(analysis_id, 1, failed, 1, contrast=contrast, contrast_step=1, initial=KITCHEN)
    case.case.environment = environment
    return case


def test_an_object_in_another_room_becomes_a_subagent_that_explores_until_it_sees_it(compass):
    case = elsewhere(1)
    [spec] = specs_of(case)
    assert spec.mechanism == "unreachable-target" and spec.status == "supported", spec.reason
    assert spec.activation.trigger.value == heuristic.escape("take") + heuristic.OBJECT_PART
    assert spec.scope.objective.value == "find the {1}"
    route = [d.value for d in spec.scope.decisions]
    assert route == ["open wooden door", "go east", "go west", "go north", "take apple"]
    *earlier, subagent = closure(spec, case)
    assert [a.kind for a in earlier] == ["rule", "skill"] and not any(a.closed for a in earlier)
    assert subagent.kind == "subagent" and subagent.closed
    contract = subagent.contract
    assert contract["name"] == "find-the-target-before-take"
    assert contract["tools"] == ["move", "open"]  # what its runs walked through
    assert list(contract["input_schema"]["properties"]) == ["target"]  # named, not "1"
    form = DelegateForm.model_validate(contract["form"])
    assert form.strategy == "search-exits" and form.objective == "find the {target}"
    manor = Manor()
    world = World(manor.act, manor.look, list, lambda: False)
    result = run_subagent(form, {"target": "apple"}, world, COMPASS)
    assert result.success and manor.room == "garden"
    here = Evidence("find the apple", "", look=GARDEN, lexicon=COMPASS)
    assert match(form, "take apple from the ground", here) is None  # in sight: not delegated
    elsewhere_ = Evidence("find the apple", "", look=HALL, lexicon=COMPASS)
    groups = match(form, "take apple from the ground", elsewhere_)
    assert bind_inputs(form, groups) == {"target": "apple"}


def test_a_reading_that_knows_no_rooms_sees_no_scene_and_the_mechanism_does_not_fire(compass):
    [spec] = specs_of(elsewhere(1, environment="plain"))
    assert spec.mechanism == "unrecognised"
    assert "no room text before the action shows where the run was" in spec.reason


def test_an_object_in_sight_is_not_elsewhere(compass):
    case = elsewhere(1)
    case.initial_observation = GARDEN  # the apple was in sight: the rejection is something else
    [spec] = specs_of(case)
    assert spec.mechanism != "unreachable-target"
    assert "'apple' was in sight where the run was" in spec.reason


SW_HALL = (
    "This room is called the hallway. In it, you see:\n\tthe agent\n"
    "You also see:\n\tA door to the kitchen (that is open)\n\tA door to the bedroom (that is open)"
)


def test_a_room_two_doors_away_is_reached_through_the_rooms_between():
    failed = steps(("go to foundry", "No known action matches that input."))
    contrast = steps(
        ("go to kitchen", "You move to the kitchen."),
        ("open door to outside", "The door is now open."),
        ("go to outside", "You move to the outside."),
        ("open door to foundry", "The door is now open."),
        ("go to foundry", "You move to the foundry."),
    )
    case = member(1, 1, failed, 1, contrast=contrast, contrast_step=1, initial=SW_HALL)
    [spec] = specs_of(case)
    assert spec.mechanism == "unreachable-target", spec.reason
    assert spec.activation.trigger.value == "go to (.+)"
    assert spec.activation.observations[0].value == r"\nexit: (?i:{1}) \("
    assert spec.execution.completion.value == r"\nhere: (?i:{1})(?:\n|$)"
    assert heuristic.name_for(spec) == "reach-room-through-others"


def test_a_move_through_a_direction_the_room_lacks_becomes_a_veto_where_no_such_exit_is_shown(
    compass,
):
    failed = steps(("go south", "You can't go that way."), ("look", HALL))
    contrast = steps(("go west", KITCHEN), ("go north", GARDEN), ("go south", KITCHEN))
    case = member(1, 1, failed, 1, contrast=contrast, contrast_step=1, initial=HALL)
    case.case.environment = "compass"
    [spec] = specs_of(case)
    assert spec.mechanism == "unreachable-target" and spec.status == "supported", spec.reason
    [attempt] = closure(spec, case)
    assert attempt.kind == "rule" and attempt.closed
    assert attempt.contract["name"] == "go-only-through-shown-exits"
    rule = Guidance(forms=[RuleForm(**{**attempt.contract["form"], "id": "r"})])
    here = Evidence("find the apple", "", look=HALL, lexicon=COMPASS)
    assert review(rule, "go south", here).response == "veto"
    assert review(rule, "go north", here) is None  # the hall shows an exit north
    unread = Evidence("find the apple", "", look=HALL, lexicon=PLAIN)
    assert review(rule, "go south", unread) is None  # no scene read: nothing to judge by


TW_PANTRY = (
    "-= Pantry =-\nYou're now in the pantry.\n\n\n\n"
    "You don't like doors? Why not try going east, that entranceway is unguarded."
)
TW_ROUTE = [
    (
        "go south",
        "-= Pantry =-\nWell, here we are in a pantry.\n\n\n\nThere is an exit to the east. "
        "Don't worry, it is unblocked. There is an unguarded exit to the west.",
    ),
    (
        "go west",
        "-= Parlor =-\nYou are in a parlor.\n\n\n\nThere is an unblocked exit to the east. "
        "There is an unguarded exit to the south.",
    ),
    (
        "go south",
        "-= Closet =-\nYou've entered a closet.\n\n\n\nThere is an exit to the north.\n\n"
        "There is a coin on the floor.",
    ),
    ("take coin", "You pick up the coin from the ground."),
]


def test_textworld_texts_read_through_its_own_lexicon_make_the_same_subagent():
    failed = steps(("take coin", "You can't see any such thing."), ("look", TW_PANTRY))
    case = member(1, 1, failed, 1, contrast=steps(*TW_ROUTE), contrast_step=1, initial=TW_PANTRY)
    case.case.environment = "textworld"  # its plugin's lexicon reads these room texts
    [spec] = specs_of(case)
    assert spec.mechanism == "unreachable-target" and spec.status == "supported", spec.reason
    assert spec.scope.objective.value == "find the {1}"
    assert [d.value for d in spec.scope.decisions] == [a for a, _ in TW_ROUTE]
