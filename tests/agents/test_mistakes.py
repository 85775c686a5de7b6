"""The mistake kinds on gold paths of plain text adventures (read with the plain lexicon or a
small quiz lexicon), the mode names, and the fallback for worlds that register no modes."""

from __future__ import annotations

import random

import pytest

from workbench.agents.guidance import STOP
from workbench.agents.mistakes import (
    ALIASES,
    Mistake,
    choose_when_reached,
    current_rates,
    known_modes,
    mode_name,
    plan_mistakes,
    world_modes,
)
from workbench.agents.scripted import THOUGHTS, ScriptedAgent, thought_for
from workbench.envs.lexicon import GENERIC_MODES, PLAIN, Lexicon, MistakeMode

KITCHEN = ["open fridge", "take apple from fridge", "go east", "slice apple with knife", "eat meal"]
"""A cooking game's gold path: open, take from what was opened, walk, prepare, decide."""


class QuizLexicon(Lexicon):
    """The plain reading, plus the answers a quiz allows: the colours its instruction names."""

    def choices(self, decision: str, instruction: str) -> list[str]:
        chosen = decision.removeprefix("answer ")
        named = [w.strip(".,?") for w in instruction.split() if w.strip(".,?") in COLOURS]
        return [f"answer {c}" for c in named if c != chosen]


COLOURS = ("red", "green", "blue")


def plan(gold, mode, instruction="", lexicon=PLAIN, seed=0):
    """Every mistake ``mode`` can plan on ``gold`` (its planner's candidates, one per seed)."""
    found = set()
    for s in range(seed, seed + 40):
        for m in plan_mistakes(
            gold, instruction, {mode.name: 1.0}, random.Random(s), (mode,), lexicon
        ):
            found.add((m.mode, m.index, m.proposed, m.resume, m.persistent))
    return found


def generic(name):
    return next(m for m in GENERIC_MODES if m.name == name)


def test_act_on_closed_takes_what_was_behind_the_door_without_opening_it():
    assert plan(KITCHEN, generic("act-on-closed")) == {
        ("act-on-closed", 0, "take apple from fridge", 2, False)
    }
    doors = ["open door to workshop", "go to workshop", "focus on counter"]
    assert plan(doors, generic("act-on-closed")) == {
        ("act-on-closed", 0, "go to workshop", 2, False)
    }


def test_act_on_closed_needs_a_step_that_uses_what_was_opened():
    assert plan(["open fridge", "go east", "take knife"], generic("act-on-closed")) == {
        ("act-on-closed", 0, "go east", 2, False)
    }  # walking on: through what was opened
    assert plan(["open fridge", "take knife", "eat meal"], generic("act-on-closed")) == set()


def test_wrong_object_plans_on_steps_that_act_on_something_and_chooses_when_reached():
    planned = plan(KITCHEN, generic("wrong-object"))
    assert {index for _, index, *_ in planned} == {0, 1, 2, 3, 4}
    assert all(proposed == "" for _, _, proposed, *_ in planned)
    mistake = Mistake("wrong-object", 2, "", 3, choose=generic("wrong-object"))
    valid = ["go east", "go west", "go north", "look", "take knife"]
    chosen = {
        choose_when_reached(
            Mistake("wrong-object", 2, "", 3, choose=generic("wrong-object")),
            "go east",
            valid,
            PLAIN,
            random.Random(s),
        )
        for s in range(20)
    }
    assert chosen == {"go west", "go north"}  # the wrong exit, never another verb
    assert (
        choose_when_reached(mistake, "go east", ["go east", "look"], PLAIN, random.Random(0))
        is None
    )


def test_wrong_object_keeps_the_object_when_asked_and_honours_its_verbs_and_exclusions():
    mode = MistakeMode(
        "wrong-place", "wrong-object", verbs=("put",), exclude=r"bin$", same_target=True
    )
    gold = ["take apple", "put apple on table", "put knife in bin", "eat meal"]
    assert plan(gold, mode) == {("wrong-place", 1, "", 2, False)}
    valid = ["put apple on table", "put apple on counter", "put apple in bin", "put knife on table"]
    mistake = Mistake("wrong-place", 1, "", 2, choose=mode)
    assert choose_when_reached(mistake, "put apple on table", valid, PLAIN, random.Random(0)) == (
        "put apple on counter"
    )
    assert mistake.proposed == "put apple on counter"


def test_skip_step_leaves_out_a_step_later_steps_depend_on():
    assert plan(KITCHEN, generic("skip-step")) == {
        ("skip-step", 0, "take apple from fridge", 2, False),  # the fridge is never opened
        ("skip-step", 1, "go east", 3, False),  # the apple is never taken
    }
    looks = ["look", "examine apple", "take apple", "eat apple"]
    assert plan(looks, generic("skip-step")) == {("skip-step", 2, "eat apple", 4, False)}


def test_skip_route_walks_to_the_last_room_of_a_walk_through_two_or_more():
    gold = ["take key", "go east", "open wooden door", "go north", "take lamp"]
    assert plan(gold, generic("skip-route")) == {("skip-route", 1, "go north", 4, False)}
    assert plan(["go east", "take lamp", "go west"], generic("skip-route")) == set()


def test_no_wait_goes_on_before_the_change_is_over():
    no_wait = MistakeMode("no-wait", "no-wait")
    waits = ["put egg in pot", "wait", "wait", "take egg"]
    assert plan(waits, no_wait) == {("no-wait", 1, "take egg", 4, False)}
    watching = ["heat pot", *["examine pot", "check thermometer"] * 3, "take pot"]
    assert plan(watching, no_wait) == {("no-wait", 1, "take pot", 8, False)}


def test_decide_before_check_guesses_another_allowed_answer_at_the_first_check():
    gold = ["go to lab", "examine sample", "read scale", "answer red"]
    found = plan(gold, generic("decide-before-check"), "Is it red, green or blue?", QuizLexicon())
    assert found == {
        ("decide-before-check", 1, "answer green", 4, False),
        ("decide-before-check", 1, "answer blue", 4, False),
    }
    assert plan(gold, generic("decide-before-check"), "Is it red, green or blue?") == set()
    unchecked = ["go to lab", "answer red"]
    assert plan(unchecked, generic("decide-before-check"), "red or blue", QuizLexicon()) == set()


def test_repeat_invalid_and_stop_early():
    repeats = plan(KITCHEN, generic("repeat-invalid"))
    assert {index for _, index, *_ in repeats} == {1, 2, 3}
    assert all(persistent and proposed != KITCHEN[i] for _, i, proposed, _, persistent in repeats)
    assert plan(KITCHEN, generic("stop-early")) == {
        ("stop-early", i, STOP, len(KITCHEN), False) for i in (1, 2, 3)
    }


def test_planning_follows_the_seed_in_the_worlds_mode_order():
    rates = dict.fromkeys(known_modes(), 0.6)
    plans = {str(plan_mistakes(KITCHEN, "", rates, random.Random(s))) for s in range(6)}
    assert len(plans) > 1
    assert plan_mistakes(KITCHEN, "", rates, random.Random(3)) == plan_mistakes(
        KITCHEN, "", rates, random.Random(3)
    )
    reordered = tuple(reversed(GENERIC_MODES))
    assert any(
        plan_mistakes(KITCHEN, "", rates, random.Random(s))
        != plan_mistakes(KITCHEN, "", rates, random.Random(s), reordered)
        for s in range(6)
    )


def test_a_mode_of_an_unknown_kind_is_one_clear_line():
    with pytest.raises(
        ValueError, match=r"mistake mode 'daydream' has unknown kind 'nap'; kinds: "
    ):
        plan_mistakes(
            KITCHEN, "", {"daydream": 1.0}, random.Random(0), (MistakeMode("daydream", "nap"),)
        )


def test_former_names_are_accepted_and_unknown_ones_list_the_known():
    assert {mode_name(old) for old in ALIASES} == set(ALIASES.values())
    assert current_rates({"closed-door": 0.3, "skip-step": 0.1}) == {
        "act-on-closed": 0.3,
        "skip-step": 0.1,
    }
    assert {m.name for m in GENERIC_MODES} <= set(known_modes())
    with pytest.raises(
        ValueError, match=r"unknown mistake modes \['daydream'\]; known: act-on-closed"
    ):
        ScriptedAgent({"daydream": 0.5, "closed-door": 0.5})
    assert ScriptedAgent({"closed-door": 0.5}).rates == {"act-on-closed": 0.5}


def test_a_world_without_a_plugin_gets_the_plain_reading_and_the_generic_modes():
    assert world_modes("no-such-world") == (PLAIN, GENERIC_MODES)


def test_thoughts_follow_the_actions_role():
    assert thought_for("go east") != thought_for("take apple") != thought_for("eat meal")
    assert thought_for("go east").endswith("go east.")
    assert thought_for("examine apple") == THOUGHTS["check"].format(a="examine apple")
