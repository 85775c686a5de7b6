"""The ScienceWorld adapter on the real simulator."""

from __future__ import annotations

import pytest

from workbench.envs.base import EnvTask
from workbench.envs.scienceworld import JavaMissing, ScienceWorld, task_names


def test_thirty_families_and_disjoint_official_splits(scienceworld):
    assert len(task_names()) == 30 and "boil" in task_names()
    train = {t.variation for t in scienceworld.tasks("boil", "train")}
    test = {t.variation for t in scienceworld.tasks("boil", "test")}
    assert len(train) == 14 and len(test) == 9 and not train & test
    assert all(t.split == "test" and t.family == "boil" for t in scienceworld.tasks("boil", "test"))


def test_unknown_family_is_a_clear_error(scienceworld):
    with pytest.raises(ValueError, match="unknown ScienceWorld family 'bake'"):
        scienceworld.tasks("bake", "train")


def test_gold_path_solves_the_task_and_success_comes_from_the_score(scienceworld):
    reset = scienceworld.reset(EnvTask("find-living-thing", 0, "train"), seed=1)
    assert "living thing" in reset.instruction
    assert "This room is called" in reset.observation
    assert reset.info["variation"] == 0 and reset.info["simplifications"] == ""
    assert not scienceworld.success()
    transitions = [scienceworld.step(action) for action in scienceworld.gold_path()]
    assert transitions[-1].done and transitions[-1].score == 100
    assert sum(t.reward for t in transitions) == 100
    assert scienceworld.success()


def test_focusing_on_the_wrong_object_is_a_critical_failure(scienceworld):
    scienceworld.reset(EnvTask("find-living-thing", 0, "train"), seed=1)
    result = scienceworld.step("focus on air")
    assert result.done and result.score < 0
    assert not scienceworld.success()


def test_views_without_taking_a_step(scienceworld):
    scienceworld.reset(EnvTask("use-thermometer", 0, "train"), seed=1)
    assert "hallway" in scienceworld.look()
    assert "inventory" in scienceworld.inventory().lower()
    assert "open door to kitchen" in scienceworld.valid_actions()
    assert scienceworld.step("open door to kitchen").observation == "The door is now open."


def test_valid_actions_are_the_simulators_own_list_in_its_order(scienceworld):
    # read as one JSON document, they must be what the simulator's list call gives, in order
    scienceworld.reset(EnvTask("use-thermometer", 0, "train"), seed=1)
    for action in ("look around", "open door to kitchen", "go to kitchen"):
        scienceworld.step(action)
        own = [str(a) for a in scienceworld._env.get_valid_action_object_combinations()]
        assert len(own) > 100 and scienceworld.valid_actions() == own


def test_missing_java_is_reported_with_the_install_command(monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(JavaMissing, match="default-jre-headless"):
        ScienceWorld()


def test_shipped_splits_are_the_simulators_own(scienceworld):
    from workbench.envs.scienceworld import splits

    sim = scienceworld._env
    for family in ("boil", "use-thermometer", "chemistry-mix"):
        sim.load(family, 0, "")
        assert splits()[family] == {
            "train": list(sim.get_variations_train()),
            "dev": list(sim.get_variations_dev()),
            "test": list(sim.get_variations_test()),
        }


def test_listing_tasks_starts_no_simulator():
    env = ScienceWorld()
    assert len(env.tasks("use-thermometer", "test")) == 135
    assert env._sim is None
    env.close()


class _Calls:
    """The simulator's Java side, each call's method name written down before it is made."""

    def __init__(self, server: object) -> None:
        self._server, self.names = server, []

    def __getattr__(self, name: str) -> object:
        self.names.append(name)
        return getattr(self._server, name)


def test_a_reset_builds_the_world_once_even_after_a_gold_path_was_generated(monkeypatch):
    """The simulator's own ``reset`` is a second whole load (and, once any load generated a
    gold path, a second gold-path search): a reset loads once, and the world it starts is
    fresh — the previous episode's open door is closed again — and of its own task, whatever
    the simulator loaded in between."""
    from workbench.envs.scienceworld import shipped_gold_path

    env = ScienceWorld(step_limit=100)
    try:
        unshipped = next(
            t
            for t in env.tasks("find-living-thing", "train")
            if shipped_gold_path(t.task_id(env.name)) is None
        )
        env.reset(unshipped, seed=0)  # no gold path known: the simulator searches one
        assert env.gold_path() and env.step(env.gold_path()[0]).observation
        calls = _Calls(env._env.server)
        monkeypatch.setattr(env._env, "server", calls)
        task = EnvTask("use-thermometer", 0, "train")
        for _ in range(3):
            calls.names.clear()
            reset = env.reset(task, seed=1)
            assert calls.names.count("load") == 1 and "reset" not in calls.names
            assert "hallway" in reset.observation and "thermometer" in reset.instruction
            assert env.step("open door to kitchen").observation == "The door is now open."
            env._env.load("boil", 0, "")  # another user of the simulator loads another task
        assert "getGoldActionSequence" not in calls.names  # a known path is not searched again
    finally:
        env.close()
