"""Both worlds document themselves as passages read without starting a simulator; a world that
documents nothing is one clear error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.synthesized import BOIL, COOKING
from workbench.envs.base import EnvironmentPlugin, EnvOptions
from workbench.envs.registry import environment_plugin
from workbench.envs.scienceworld import splits, task_names
from workbench.envs.textworld import SPLITS, challenge_passage, families
from workbench.synth.tasks import NoDocumentation, documentation

SCIENCEWORLD = """
import json, sys
from workbench.envs.base import EnvOptions
from workbench.envs.registry import environment_plugin
from workbench.envs.scienceworld import JavaMissing, ScienceWorld
try:
    ScienceWorld()
    java = True
except JavaMissing:
    java = False
passages = environment_plugin("scienceworld").documentation(EnvOptions(), [])
print(json.dumps({"java": java, "passages": [p.__dict__ for p in passages]}))
"""


def test_scienceworld_documents_every_family_with_no_java_on_the_path(tmp_path: Path):
    bin_dir = Path(sys.executable).parent  # this interpreter, and nothing else on PATH
    env = {**os.environ, "PATH": str(bin_dir), "JAVA_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", SCIENCEWORLD], capture_output=True, text=True, env=env, check=True
    )
    found = json.loads(out.stdout)
    assert found["java"] is False  # the simulator could not have started
    passages = found["passages"]
    tasks = [p for p in passages if p["kind"] == "task"]
    assert {p["family"] for p in tasks} == set(task_names())
    assert all(p["variation"] in splits()[p["family"]]["train"] for p in tasks)
    boil = next(p for p in tasks if p["id"] == "task:boil:0")
    assert "Your task is to boil water." in boil["text"] and boil["entities"][0] == "water"
    assert "kitchen" in boil["places"]
    actions = {p["template"] for p in passages if p["kind"] == "action"}
    assert {"open OBJ", "pick up OBJ", "move OBJ to OBJ", "focus on OBJ"} <= actions
    assert "reset task" not in actions
    objects = [p for p in passages if p["kind"] == "object"]
    assert any("thermometer" in p["entities"] for p in objects)


def test_the_recorded_task_descriptions_are_the_simulators(scienceworld):
    sim = scienceworld._env
    for passage in documentation(environment_plugin("scienceworld"), families=[BOIL])[:2]:
        if passage.kind == "task":
            sim.load(BOIL, passage.variation, "")
            assert str(sim.get_task_description()).strip() in passage.text


def test_textworld_documents_a_family_from_its_games_without_playing_one(games: Path):
    code = (
        "import json, sys\n"
        "from workbench.envs.base import EnvOptions\n"
        "from workbench.envs.registry import environment_plugin\n"
        "plugin = environment_plugin('textworld')\n"
        f"passages = plugin.documentation(EnvOptions(cache_dir={str(games)!r}), [{COOKING!r}])\n"
        "print(json.dumps({'played': 'textworld' in sys.modules or 'jericho' in sys.modules,\n"
        "                  'passages': [p.__dict__ for p in passages]}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found = json.loads(out.stdout)
    assert found["played"] is False
    passages = {p["id"]: p for p in found["passages"]}
    assert "locate the kitchen, read the cookbook" in passages[f"task:{COOKING}"]["text"]
    intro = passages[f"intro:{COOKING}:0"]
    assert intro["variation"] in SPLITS["train"] and intro["family"] == COOKING
    assert "Check the cookbook in the kitchen" in intro["text"] and "Ingredients:" in intro["text"]
    assert {"fridge", "cookbook"} <= set(intro["entities"]) and intro["places"] == ["kitchen"]
    assert "open fridge" in intro["examples"]
    take = passages["command:take-from"]
    assert take["template"] == "take OBJ from OBJ" and "removing the object" in take["text"]


def test_every_textworld_family_has_its_challenges_description():
    for family in families():
        passage = challenge_passage(family)
        assert passage.family == family and "Level" in passage.text
        assert "References" not in passage.text and ".. _" not in passage.text


def test_a_world_that_documents_nothing_is_one_clear_error():
    bare = EnvironmentPlugin(
        name="counter", make=lambda options: None, families=lambda: ["count-up"], demo_families=()
    )
    with pytest.raises(NoDocumentation, match=r"^counter documents nothing to synthesize"):
        documentation(bare)
    silent = EnvironmentPlugin(
        name="quiet",
        make=lambda options: None,
        families=lambda: ["a"],
        demo_families=(),
        documentation=lambda options, families: [],
    )
    with pytest.raises(NoDocumentation, match=r"^quiet documents nothing for a to synthesize"):
        documentation(silent, EnvOptions(), ["a"])
    with pytest.raises(ValueError, match=r"^quiet has no family 'b'; known: a$"):
        documentation(silent, EnvOptions(), ["b"])
