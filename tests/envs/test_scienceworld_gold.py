"""The gold paths shipped for the variations the demo plays (``scripts/scienceworld_gold.py``):
made for the pinned simulator, covering the demo's plans, used before generating, and solving
their tasks on the real simulator."""

from __future__ import annotations

import json
from importlib.metadata import version

from workbench.demo import demo_configs
from workbench.envs.base import EnvTask, MemoryGoldPaths
from workbench.envs.scienceworld import GOLD_FILE, ScienceWorld, shipped_gold_path
from workbench.runner import plan_run

DOCUMENT = json.loads(GOLD_FILE.read_text())


def test_they_were_made_for_the_pinned_simulator_without_simplifications():
    assert DOCUMENT["scienceworld_version"] == version("scienceworld")
    assert DOCUMENT["simplifications"] == ""
    assert all(key.startswith("scienceworld:") and path for key, path in DOCUMENT["paths"].items())


def test_every_variation_the_demo_plays_has_one(scienceworld):
    for _, config in demo_configs(env="scienceworld"):
        for planned in plan_run(config, scienceworld, "demo"):
            key = f"scienceworld:{planned.family}:{planned.variation}"
            assert shipped_gold_path(key) is not None, f"{key}: run scripts/scienceworld_gold.py"


def test_a_world_follows_the_shipped_one_and_keeps_it(scienceworld: ScienceWorld):
    key, shipped = next(iter(DOCUMENT["paths"].items()))
    _, family, variation = key.split(":")
    kept = MemoryGoldPaths()
    world = ScienceWorld(step_limit=100, gold_paths=kept)
    world._sim = scienceworld._env  # the session's simulator (one JVM)
    world.reset(EnvTask(family, int(variation), "train"), seed=1)
    assert world.gold_path() == shipped and kept.gold_path(key) == shipped


def test_shipped_gold_paths_solve_their_tasks(scienceworld: ScienceWorld):
    by_family: dict[str, str] = {}
    for key in sorted(DOCUMENT["paths"]):
        by_family.setdefault(key.split(":")[1], key)
    for key in by_family.values():
        _, family, variation = key.split(":")
        scienceworld.reset(EnvTask(family, int(variation), "train"), seed=1)
        transitions = [scienceworld.step(action) for action in shipped_gold_path(key)]
        assert transitions[-1].done and transitions[-1].score == 100, key
        assert scienceworld.success()
