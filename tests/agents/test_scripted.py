"""The scripted baseline on the real simulator: its mistakes, determinism, and guidance."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from workbench.agents.base import Interaction
from workbench.agents.guidance import DelegateForm, Guidance, ProcedureForm, RuleForm
from workbench.agents.mistakes import known_modes, plan_mistakes, world_modes
from workbench.agents.scripted import TRUTH_KEY, ScriptedAgent
from workbench.envs.base import EnvOptions, EnvTask

MODES = known_modes()

OPEN_DOOR_FIRST = RuleForm(
    id="open-door-first",
    description="Before walking into a room whose door is closed, open the door.",
    when_action=r"go to (.+)",
    when_evidence=r"door to (?:the )?{1} \(that is closed\)",
    response="replace",
    replacement="open door to {1}",
)
FOCUS_ONLY_ON_NAMED = RuleForm(
    id="focus-only-on-named",
    description="Only focus on an object the task names.",
    when_action=r"focus on (.+?)(?: in inventory)?",
    unless_evidence=r"instruction: [^\n]*{1}",
    response="veto",
)
WAIT_FOR_BOIL = ProcedureForm(
    id="wait-for-boil",
    description="Keep heating and checking the substance until it turns to steam.",
    when_action=r"examine steam",
    unless_evidence=r"(?i)look: .*\bsteam\b",
    loop=[
        "examine substance in metal pot",
        "use thermometer in inventory on substance in metal pot",
    ],
    until=r"(?i)steam|gas",
    max_rounds=15,
)
NAVIGATE = DelegateForm(
    id="navigate",
    description="Reach a room through closed doors.",
    when_action=r"go to (.+)",
    when_evidence=r"door to (?:the )?{1} \(that is closed\)",
    objective="reach the {1}",
    success=r"This room is called the {1}\.",
)


def play(env, family, rates, guidance=None, variation=0, seed=1, limit=100):
    reset = env.reset(EnvTask(family, variation, "train"), seed=seed)
    interaction = Interaction(env, reset, limit)
    meta = ScriptedAgent(rates).play(interaction, random.Random(seed), guidance or Guidance())
    return interaction, meta[TRUTH_KEY], env.success()


def test_without_mistakes_it_solves_the_task(scienceworld):
    interaction, truth, success = play(scienceworld, "use-thermometer", {})
    assert success and truth["mistakes"] == []
    assert [t.action for t in interaction.taken] == scienceworld.gold_path()[
        : len(interaction.taken)
    ]


@pytest.mark.parametrize(
    ("mode", "family", "check"),
    [
        ("act-on-closed", "use-thermometer", lambda a: a.startswith("go to ")),
        ("wrong-focus", "use-thermometer", lambda a: a.startswith("focus on ")),
        ("no-wait", "boil", lambda a: "steam" in a),
        ("decide-before-check", "use-thermometer", lambda a: " box" in a),
        ("wrong-object", "boil", lambda a: a.startswith("move ") and not a.endswith(" box")),
        (
            "repeat-invalid",
            "find-living-thing",
            lambda a: a.endswith(("carefully", "now please")) or a.startswith("try to"),
        ),
    ],
)
def test_each_mistake_is_made_and_recorded_at_its_step(scienceworld, mode, family, check):
    interaction, truth, _ = play(scienceworld, family, {mode: 1.0})
    [fired] = truth["mistakes"]
    assert fired["mode"] == mode
    mistaken = interaction.taken[fired["step"] - 1]  # stored step 0 is the first observation
    assert check(mistaken.action), mistaken.action
    assert mistaken.action != scienceworld.gold_path()[fired["step"] - 1]


def test_stop_early_ends_short_of_the_goal(scienceworld):
    interaction, truth, success = play(scienceworld, "use-thermometer", {"stop-early": 1.0})
    assert not success and truth["mistakes"][0]["mode"] == "stop-early"
    assert truth["mistakes"][0]["step"] == len(interaction.taken) + 1
    assert len(interaction.taken) < len(scienceworld.gold_path())


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown mistake modes"):
        ScriptedAgent({"daydream": 0.5})


def test_same_seed_same_trajectory(scienceworld):
    rates = dict.fromkeys(MODES, 0.5)
    first, _, _ = play(scienceworld, "boil", rates, seed=7)
    second, _, _ = play(scienceworld, "boil", rates, seed=7)
    assert [(t.action, t.observation) for t in first.taken] == [
        (t.action, t.observation) for t in second.taken
    ]


def test_mistakes_are_planned_from_the_seed():
    gold = [
        "open door to kitchen",
        "go to kitchen",
        "focus on water",
        "use thermometer in inventory on water",
        "wait",
        "wait",
        "look around",
        "move water to red box",
    ]
    lexicon, modes = world_modes("scienceworld")
    rates = dict.fromkeys(MODES, 0.7)

    def planned(seed, instruction="red box or green box"):
        return plan_mistakes(gold, instruction, rates, random.Random(seed), modes, lexicon)

    assert len({str(planned(s)) for s in range(3)}) > 1
    assert planned(5) == planned(5)
    every = {(m.mode, m.index, m.proposed) for s in range(60) for m in planned(s)}
    assert ("act-on-closed", 0, "go to kitchen") in every
    assert ("decide-before-check", 3, "move water to green box") in every
    assert ("no-wait", 4, "look around") in every
    assert ("wrong-focus", 2, "") in every
    assert not {m for m, *_ in every} - {m.name for m in modes}


def test_former_mode_names_play_as_the_current_ones(scienceworld):
    old, _, _ = play(scienceworld, "use-thermometer", {"closed-door": 1.0})
    new, truth, _ = play(scienceworld, "use-thermometer", {"act-on-closed": 1.0})
    assert [t.action for t in old.taken] == [t.action for t in new.taken]
    assert [m["mode"] for m in truth["mistakes"]] == ["act-on-closed"]


def _counter_world():
    """The plugin test's toy world, built directly: no installed plugin registers it here."""
    path = Path(__file__).parents[1] / "plugins" / "counter_world" / "counter_world.py"
    spec = importlib.util.spec_from_file_location("counter_world_for_scripted_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Counter(EnvOptions())


def test_a_world_without_a_plugin_gets_the_generic_mistakes():
    env = _counter_world()
    interaction, truth, success = play(env, "count-up", {"act-on-closed": 1.0})
    assert not success
    assert truth["mistakes"] == [{"mode": "act-on-closed", "step": 1}]
    assert interaction.taken[0].action == "go to workshop"
    assert "not open" in interaction.taken[0].observation
    _, truth, success = play(env, "count-up", {"wrong-focus": 1.0})  # not a mode of this world
    assert success and truth["mistakes"] == []


@pytest.mark.parametrize(
    ("family", "mode", "guidance", "source"),
    [
        (
            "use-thermometer",
            "act-on-closed",
            Guidance(forms=[OPEN_DOOR_FIRST]),
            "rule:open-door-first",
        ),
        (
            "use-thermometer",
            "wrong-focus",
            Guidance(forms=[FOCUS_ONLY_ON_NAMED]),
            "rule:focus-only-on-named",
        ),
        ("boil", "no-wait", Guidance(forms=[WAIT_FOR_BOIL]), "skill:wait-for-boil"),
        ("use-thermometer", "act-on-closed", Guidance(forms=[NAVIGATE]), "subagent:navigate"),
    ],
)
def test_following_guidance_turns_a_failure_into_a_success(
    scienceworld, family, mode, guidance, source
):
    _, truth, success = play(scienceworld, family, {mode: 1.0})
    assert not success and truth["mistakes"]
    guided, guided_truth, guided_success = play(scienceworld, family, {mode: 1.0}, guidance)
    assert guided_success
    assert guided_truth["mistakes"] == []
    assert any(t.source == source for t in guided.taken)
    assert guided.uses and guided.uses[0]["artifact"] == guidance.forms[0].id
    if source.startswith("subagent:"):  # its typed return is recorded with the episode
        delegation = guided.delegations[0]
        assert delegation["status"] == "success" and delegation["inputs"] == {"target": "kitchen"}
        assert delegation["found"].startswith("This room is called the kitchen")


def test_a_harmful_rule_breaks_a_run_that_succeeded(scienceworld):
    never_open_doors = RuleForm(id="never-open", when_action=r"open door to .*", response="veto")
    _, _, success = play(
        scienceworld, "use-thermometer", {}, Guidance(forms=[never_open_doors]), limit=40
    )
    assert not success
