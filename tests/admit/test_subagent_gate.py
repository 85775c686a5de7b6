"""Compiled subagents face their contract gate on the real worlds: invoked from a recorded
decision point in a fresh context with only their named inputs, by their offline strategy or —
written with a prompt — by a model (the scripted chat server), returning what their schema
declares, through both terminations."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from store import ArtifactVersion, Store
from tests.recorded_runs import Recorded
from workbench.admit.gates import SubagentModel, contract_gate
from workbench.compile.contracts import CONTRACT
from workbench.runner import cache_dir_beside

pytestmark = pytest.mark.slow

KEY_VARIABLE = "WORKBENCH_TEST_SUBAGENT_KEY"


def copy_of(recorded: Recorded, folder: Path) -> Path:
    """A private copy of a recorded database (and the games its world generated)."""
    path = folder / "workbench.db"
    shutil.copy(recorded.path, path)
    cache = Path(cache_dir_beside(str(recorded.path)))
    if cache.exists():
        shutil.copytree(cache, cache_dir_beside(str(path)))
    return path


def subagent_of(recorded: Recorded) -> ArtifactVersion:
    [compiled] = [
        c for c in recorded.report.compiled if c.attempts and c.attempts[-1].kind == "subagent"
    ]
    return compiled.version


@pytest.mark.parametrize("world", ["scienceworld_runs", "textworld_runs"])
def test_a_compiled_subagent_has_named_inputs_and_the_strategy_its_runs_show(world, request):
    contract = CONTRACT.validate_python(subagent_of(request.getfixturevalue(world)).contract)
    assert list(contract.input_schema["properties"]) == ["target"]  # named, never "1"
    assert contract.form.strategy == "search-exits" and contract.tools == ["move", "open"]
    assert [i.bind for i in contract.form.inputs] == ["{1}"]
    assert contract.form.objective.endswith("the {target}")


def test_a_compiled_subagent_passes_its_gate_by_its_strategy(textworld_runs, tmp_path):
    """(The ScienceWorld one is admitted through the same gate by README's Example.)"""
    version = subagent_of(textworld_runs)
    with Store(copy_of(textworld_runs, tmp_path)) as store:
        gate = contract_gate(store, store.version(version.id))
    assert gate.passed, gate.checks
    details = [c.detail for c in gate.checks]
    assert any(d.startswith("search-exits: returned success") for d in details), details
    assert any(d.startswith("search-exits: returned failure") for d in details), details


def model_turns(route: list[str]):
    """A scripted model subagent: it walks ``route`` when its input names a place it can
    reach, and gives up at once when it is asked for a place that is nowhere."""

    def respond(request: dict) -> dict:
        prompt = request["messages"][-1]["content"]
        if "- target: nowhere" in prompt:
            return {"thought": "t", "action": "", "status": "failure", "found": "no such place"}
        own = prompt.split("Your steps so far:\n", 1)[1].split("\n\n", 1)[0]
        done = len(re.findall(r"^\d+\. > ", own, re.MULTILINE))
        action = route[min(done, len(route) - 1)]
        return {"thought": "t", "action": action, "status": "continue", "found": ""}

    return respond


def test_a_model_written_subagent_runs_on_the_model_in_a_fresh_context(
    scienceworld_runs, tmp_path, chat_server, monkeypatch
):
    version = subagent_of(scienceworld_runs)
    contract = dict(version.contract)
    contract["form"] = {**contract["form"], "prompt": "Walk through doors to the place."}
    with Store(copy_of(scienceworld_runs, tmp_path)) as store:
        clean = [s.action for s in store.steps("clean:use-thermometer:1") if s.action][:4]
        staged = store.stage_version(
            ArtifactVersion(artifact="walk-by-model", version=1, kind="subagent", contract=contract)
        )
        chat_server.responder = model_turns(clean)
        monkeypatch.setenv(KEY_VARIABLE, chat_server.api_key)
        model = SubagentModel(chat_server.base_url, "test-model", KEY_VARIABLE)
        gate = contract_gate(store, staged, model=model)
        logged = store.calls("agent.subagent")
    assert gate.passed, gate.checks
    assert [c.detail.split(":")[0] for c in gate.checks[-3:-1]] == ["model", "model"]
    first = chat_server.requests[0].messages
    assert first[0]["content"].endswith("Walk through doors to the place.")
    user = first[1]["content"]
    assert "Inputs (all you are given):\n- target: kitchen" in user
    assert "Your steps so far:\n(none yet)" in user
    assert len(logged) == chat_server.request_count  # every call the check process made
