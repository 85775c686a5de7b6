"""Skill and subagent contract gates execute the artifact on the real simulator, from a
recorded decision point, with only its declared inputs."""

from __future__ import annotations

import copy

import pytest

from store import ArtifactVersion, Store
from workbench.admit.gates import contract_gate
from workbench.agents.subagents import RETURN_SCHEMA_V1
from workbench.compile.contracts import CONTRACT, RETURN_SCHEMA
from workbench.executors import InProcess
from workbench.runner import AgentSpec, RunConfig, run_batch

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, int]:
    """A database with one mistake-free use-thermometer run: ``(path, episode, step)`` of
    the step where it moves the substance into a box."""
    path = str(tmp_path_factory.mktemp("gates") / "workbench.db")
    with Store(path) as store:
        config = RunConfig(
            families=["use-thermometer"], episodes=1, seed=3, agent=AgentSpec(rates={})
        )
        with InProcess() as executor:
            report = run_batch(store, config, batch="clean", executor=executor)
        [episode] = store.episode_ids(report.batch_id)
        step = next(
            s for s in store.steps(episode) if s.action.startswith("move ") and " box" in s.action
        )
    return path, episode, step.index


def version(store: Store, contract: dict) -> ArtifactVersion:
    return store.stage_version(
        ArtifactVersion(
            artifact=contract["name"], version=1, kind=contract["kind"], contract=contract
        )
    )


def skill(episode: str, step: int, until: str) -> dict:
    return {
        "kind": "skill",
        "name": "measure-before-placing",
        "description": "Measure the substance before placing it in a box.",
        "applicability": "about to move the task's substance into a box",
        "inputs": ["E2", "E4"],
        "procedure": ["use the thermometer on the substance"],
        "recovery": "the parent continues with its plan",
        "expected_result": "a temperature reading",
        "probes": [{"episode_id": episode, "step": step, "action": ""}],
        "form": {
            "kind": "skill",
            "id": "x",
            "when_action": "move {E2}.* to .+",
            "steps": ["use {E4} in inventory on {E2} in inventory"],
            "until": until,
        },
    }


def test_a_skill_that_reaches_its_result_passes(recorded):
    path, episode, step = recorded
    with Store(path) as store:
        gate = contract_gate(
            store, version(store, skill(episode, step, r"measures a temperature of -?\d+"))
        )
    assert gate.passed, gate.checks
    assert "reached the expected result" in gate.checks[-1].detail


def test_a_skill_that_never_reaches_its_result_fails(recorded):
    path, episode, step = recorded
    with Store(path) as store:
        gate = contract_gate(store, version(store, skill(episode, step, "the substance sings")))
    assert not gate.passed and "did not reach the expected result" in gate.checks[-1].detail


def test_a_skill_whose_condition_does_not_hold_there_fails(recorded):
    path, episode, step = recorded
    contract = skill(episode, step, r"measures a temperature")
    contract["form"]["when_action"] = "pour (.+)"
    with Store(path) as store:
        gate = contract_gate(store, version(store, contract))
    assert not gate.passed and "applicability condition does not hold" in gate.checks[-1].detail


def subagent(episode: str, step: int, tools: list[str]) -> dict:
    return {
        "kind": "subagent",
        "name": "reach-the-kitchen",
        "description": "Walk to the kitchen through whatever rooms lie between.",
        "invocation": "the agent wants to be in the kitchen",
        "input_schema": {
            "type": "object",
            "required": ["room"],
            "properties": {"room": {"type": "string", "description": "where to go"}},
            "additionalProperties": False,
        },
        "owned_state": "rooms visited",
        "tools": tools,
        "success": "arrives in the room",
        "failure": "every reachable room explored or the budget spent",
        "return_schema": copy.deepcopy(RETURN_SCHEMA),
        "probes": [
            {"episode_id": episode, "step": step, "action": "", "inputs": {"room": "kitchen"}},
            {
                "episode_id": episode,
                "step": step,
                "action": "",
                "expect": "failure",
                "inputs": {"room": "nowhere"},
            },
        ],
        "form": {
            "kind": "subagent",
            "id": "x",
            "when_action": "go to (.+)",
            "inputs": [{"name": "room", "description": "where to go", "bind": "{1}"}],
            "objective": "reach the {room}",
            "tools": tools,
            "success": r"This (?:room|outside location) is called the {room}\.",
            "max_steps": 60,
        },
    }


def first_format(contract: dict) -> dict:
    """``contract`` as the first subagent format stored it: its input numbered, its
    templates on the parent's group, its strategy by its old name, the old return schema."""
    old = copy.deepcopy(contract)
    old["input_schema"] = {
        "type": "object",
        "required": ["1"],
        "properties": {"1": {"type": "string"}},
    }
    for probe in old["probes"]:
        probe["inputs"] = {"1": probe["inputs"]["room"]}
    form = old["form"]
    del form["inputs"]
    form["objective"], form["strategy"] = "reach the {1}", "explore-rooms"
    form["success"] = form["success"].replace("{room}", "{1}")
    old["return_schema"] = copy.deepcopy(RETURN_SCHEMA_V1)
    return old


def test_a_subagent_reaching_both_terminations_with_conforming_returns_passes(recorded):
    path, episode, step = recorded
    with Store(path) as store:
        gate = contract_gate(
            store, version(store, subagent(episode, step, ["open door to", "go to", "look around"]))
        )
    assert gate.passed, gate.checks
    assert gate.checks[-1].detail == "reached failure, success"
    success = gate.checks[-3].detail
    assert success.startswith("search-exits: returned success after")
    assert "found 'This room is called the kitchen." in success


def test_a_subagent_stored_in_the_first_format_still_loads_and_passes(recorded):
    path, episode, step = recorded
    old = first_format(subagent(episode, step, ["open door to", "go to"]))
    with Store(path) as store:
        stored = version(store, old)
        gate = contract_gate(store, stored)
    assert gate.passed, gate.checks
    typed = CONTRACT.validate_python(stored.contract)  # how every reader takes it
    assert list(typed.input_schema["properties"]) == ["target"]
    assert typed.form.objective == "reach the {target}" and typed.form.strategy == "search-exits"
    assert typed.return_schema == RETURN_SCHEMA


def test_an_action_outside_its_scoped_tools_is_refused_and_shown_in_its_return(recorded):
    path, episode, step = recorded
    with Store(path) as store:
        gate = contract_gate(
            store, version(store, subagent(episode, step, ["go to", "look around"]))
        )
    [failure] = [c for c in gate.checks if "failure expected" in c.name]
    # the runtime enforced its scope: the doors it may not open were refused, never taken
    assert "refused 'open door to" in failure.detail and failure.passed
