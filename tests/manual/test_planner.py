"""AutoManual's Planner on the real simulator: its code runs in a limited child process whose
calls reach the episode through the manual's rules; the scripted Planner writes the plan as
code over library helpers; the model Planner's replies (the paper's four parts) come from the
scripted chat server, including code that never ends, code that eats memory, and a reply
missing a part; the libraries answer with the most similar task's entry."""

from __future__ import annotations

import random
import re

import pytest

from store import Batch, Episode, LibraryEntry, ManualRule, Outcome, RuleEvent, Store, Task
from tests.agents.test_scripted import FOCUS_ONLY_ON_NAMED
from tests.llm_server import serve
from workbench.agents.base import Interaction
from workbench.agents.guidance import Guidance
from workbench.envs.base import EnvTask
from workbench.limits import Limits
from workbench.llm import ChatClient
from workbench.manual.heuristic_planner import ScriptedPlanner
from workbench.manual.library import library_note
from workbench.manual.openai_planner import OpenAIPlanner
from workbench.manual.planner import (
    PlannerAgent,
    PlannerReply,
    PlanTurn,
    Relay,
    helpers_in,
    organised,
)
from workbench.manual.sandbox import run_code

QUICK = Limits(seconds=1.0, memory_mb=200)
HELPER = """def open_door_to_then_go_to(place):
    act(f"open door to {place}")
    act(f"go to {place}")"""


def episode_of(env, limit: int = 100, variation: int = 0) -> Interaction:
    reset = env.reset(EnvTask("use-thermometer", variation, "train"), seed=1)
    return Interaction(env, reset, limit, family="use-thermometer")


def test_the_code_runs_apart_and_its_actions_pass_the_rules(scienceworld, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-seen-by-plan-code")
    io = episode_of(scienceworld)
    code = "\n".join(
        [
            "import os",
            "print(sorted(os.environ))",
            "answer = act('focus on chair')",
            "print(overruled(answer), answer)",
            "print(act('open door to kitchen'))",
            "print(len(valid_actions()) > 0, 'kitchen' in look())",
        ]
    )
    run = run_code(code, Relay(io, Guidance(forms=[FOCUS_ONLY_ON_NAMED])), QUICK)
    assert run.status == "completed", run.error
    assert "sk-never-seen" not in run.printed and "OPENAI_API_KEY" not in run.printed
    assert "True RULE focus-only-on-named vetoed 'focus on chair'" in run.printed
    assert "The door is now open." in run.printed
    assert [t.action for t in io.taken] == ["open door to kitchen"]  # the veto took no step
    assert [u["artifact"] for u in io.uses] == ["focus-only-on-named"]


@pytest.mark.parametrize(
    ("code", "status", "said"),
    [
        ("while True:\n    pass", "timeout", "ran 1 s without calling the environment"),
        ("hoard = []\nwhile True:\n    hoard.append(bytearray(10**7))", "memory", "MemoryError"),
        ("act('look around')\nundefined_name", "error", "line 2: NameError"),
    ],
)
def test_code_stopped_by_its_limits_ends_clearly_and_the_episode_goes_on(
    scienceworld, code, status, said
):
    io = episode_of(scienceworld)
    run = run_code(code, Relay(io, Guidance()), QUICK)
    assert run.status == status and said in run.error
    assert f"Code ended: {status}" in run.feedback()
    after = run_code("print(act('open door to kitchen'))", Relay(io, Guidance()), QUICK)
    assert after.status == "completed" and "The door is now open." in after.printed


def test_code_acting_past_the_step_limit_ends_the_episode_cleanly(scienceworld):
    io = episode_of(scienceworld, limit=3)
    run = run_code("while True:\n    act('look around')", Relay(io, Guidance()), QUICK)
    assert run.status == "episode over" and io.done and len(io.taken) == 3


def turn_for(io: Interaction, helpers=()) -> PlanTurn:
    return PlanTurn(io.instruction, io.observation, [], "", None, list(helpers))


def test_the_scripted_planner_writes_its_plan_as_code_over_library_helpers(scienceworld):
    helpers = helpers_in(HELPER)
    assert [h.templates for h in helpers] == [["open door to {1}", "go to {1}"]]
    io = episode_of(scienceworld)
    first = ScriptedPlanner({}).reply(turn_for(io, helpers), io, random.Random(3))
    again = ScriptedPlanner({}).reply(turn_for(io, helpers), io, random.Random(3))
    assert first == again  # the same seed writes the same code
    assert first.code.startswith(HELPER.replace('"', "'"))
    assert "open_door_to_then_go_to('kitchen')" in first.code
    assert first.code.rstrip().endswith("stop()  # the plan is done")
    assert "reach kitchen" in first.overall_plan
    agent = PlannerAgent(ScriptedPlanner({}), None, limits=QUICK)
    played = agent.play(io, random.Random(3), Guidance())
    assert scienceworld.success()
    [cycle] = played["planner"]["cycles"]
    assert cycle["status"] == "episode over" and played["planner"]["code"] == cycle["code"]
    assert io.taken[0].thought.startswith("Cycle 1. Analysis: The plan has")


def test_the_code_that_ran_is_organised_into_one_block_defining_each_helper_once():
    blocks = [f"{HELPER}\n\nopen_door_to_then_go_to('kitchen')", f"{HELPER}\nact('look around')"]
    assert (
        organised(blocks) == f"{HELPER}\n\nopen_door_to_then_go_to('kitchen')\n\nact('look around')"
    )


def test_a_planned_mistake_overruled_by_a_rule_goes_back_to_the_plan(scienceworld):
    """A wrong focus is chosen when reached (a cycle of its own); the manual's rule
    vetoes it and the code does the planned step instead."""
    io = episode_of(scienceworld)
    agent = PlannerAgent(ScriptedPlanner({"wrong-focus": 1.0}), None, limits=QUICK)
    played = agent.play(io, random.Random(5), Guidance(forms=[FOCUS_ONLY_ON_NAMED]))
    codes = [c["code"] for c in played["planner"]["cycles"]]
    assert any(re.search(r"if overruled\(act\('focus on (?!thermometer)", c) for c in codes)
    assert len(codes) >= 2 and scienceworld.success()  # vetoed, then the plan's own focus
    assert "focus-only-on-named" in {u["artifact"] for u in io.uses}


# -- the model Planner, against the scripted chat server ----------------------------------------


def reply(code: str, rules: list[str] = (), analysis: str = "I am in the hallway.") -> PlannerReply:
    return PlannerReply(
        analysis=analysis,
        related_rules=list(rules),
        overall_plan="Reach the kitchen, take the thermometer, then measure.",
        code=code,
    )


@pytest.fixture
def planner_store(store: Store) -> Store:
    """A rule, and a skill written from a recorded task of the same type."""
    rule = ManualRule(
        id="rule_1", type="Special Phenomenon", content="In use-thermometer tasks: x."
    )
    store.put_rule(rule, RuleEvent(rule_id="rule_1", op="write", actor="test"))
    store.put_batch(Batch(id="b", name="b", kind="run"))
    store.put_task(
        Task(id="t", environment="scienceworld", family="use-thermometer", instruction="measure")
    )
    store.add_episode(
        Episode(id="e", task_id="t", agent="a", batch_id="b", outcome=Outcome(success=True)), []
    )
    store.add_library_entry(
        LibraryEntry(kind="skill", family="use-thermometer", content=HELPER, episode_id="e")
    )
    return store


def test_the_model_planner_answers_in_four_parts_and_survives_bad_code(
    scienceworld, planner_store: Store, db_path
):
    for server in serve():
        server.queue(
            reply("print(act('open door to kitchen'))", ["rule_1"]),
            reply("while True:\n    pass", analysis="The door is open."),
            reply("hoard = []\nwhile True:\n    hoard.append(bytearray(10**7))"),
            {"analysis": "Try again.", "related_rules": []},  # parts missing: one correction
            reply("act('go to kitchen')\nstop()", analysis="Now I walk in and stop."),
        )
        client = ChatClient(
            planner_store, model="m", api_key=server.api_key, base_url=server.base_url, backoff=0
        )
        agent = PlannerAgent(OpenAIPlanner(client), str(db_path), "rule_1: x", limits=QUICK)
        io = episode_of(scienceworld)
        played = agent.play(io, random.Random(0), Guidance())
        cycles = played["planner"]["cycles"]
        assert [c["status"] for c in cycles] == ["completed", "timeout", "memory", "stopped"]
        assert cycles[0]["related_rules"] == ["rule_1"] and io.done
        assert [t.action for t in io.taken] == ["open door to kitchen", "go to kitchen"]
        assert played["library"] is not None
        first = server.requests[0].messages
        for part in ("- analysis:", "- related_rules:", "- overall_plan:", "- code:"):
            assert part in first[0]["content"]
        assert "act(action: str)" in first[0]["content"]
        assert (
            "rule_1: x" in first[1]["content"]
            and "def open_door_to_then_go_to" in first[1]["content"]
        )
        second = server.requests[1].messages[-1]["content"]
        assert "> open door to kitchen\nThe door is now open." in second
        third = server.requests[2].messages[-1]["content"]
        assert "Code ended: timeout (the code ran 1 s without calling the environment)" in third
        correction = server.requests[4].messages[-1]["content"]
        assert "the part 'overall_plan' is missing or empty" in correction
        assert "the part 'code' is missing or empty" in correction
        assert {c.purpose for c in planner_store.calls()} == {"manual.plan"}


def test_a_model_planner_reply_naming_an_unknown_rule_gets_one_correction(
    scienceworld, planner_store: Store, db_path
):
    for server in serve():
        server.queue(reply("stop()", ["rule_9"]), reply("stop()", ["rule_9"]))
        client = ChatClient(
            planner_store, model="m", api_key=server.api_key, base_url=server.base_url, backoff=0
        )
        agent = PlannerAgent(OpenAIPlanner(client), str(db_path), limits=QUICK)
        played = agent.play(episode_of(scienceworld), random.Random(0), Guidance())
        assert played["planner"]["cycles"] == []
        assert (
            "related_rules names rule_9, not rules (the rules: rule_1)"
            in played["planner"]["error"]
        )
        assert len(server.requests) == 2


# -- the libraries -----------------------------------------------------------------------------


def test_the_library_returns_the_most_similar_tasks_entry(store: Store):
    store.put_batch(Batch(id="b", name="b", kind="run"))
    tasks = {
        "juice": "Measure the temperature of orange juice in the kitchen.",
        "metal": "Measure the temperature of a metal fork in the workshop.",
        "water": "Measure the temperature of water in the bathroom.",
    }
    for name, instruction in tasks.items():
        store.put_task(Task(id=name, environment="w", family="f", instruction=instruction))
        store.add_episode(Episode(id=name, task_id=name, agent="a", batch_id="b"), [])
        store.add_library_entry(
            LibraryEntry(kind="skill", family="f", content=f"skill {name}", episode_id=name)
        )
    found = library_note(store, "f", "Measure the temperature of a metal fork in the kitchen.")
    assert found.content == "skill metal"  # not the newest ("water")
    assert library_note(store, "f").content == "skill water"  # no task given: the newest
    store.add_library_entry(
        LibraryEntry(kind="reflection", family="g", content="r", episode_id="juice")
    )
    assert library_note(store, "g", "anything").kind == "reflection"
