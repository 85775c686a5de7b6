"""The simulator's JVM starts with the world's own options (fewer threads, a bounded heap),
an environment variable replaces them, and the same plan plays the same actions and
outcomes with them as with the JVM's defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import EpisodeFilter, Store
from workbench.envs.scienceworld import JVM_OPTIONS, JVM_OPTIONS_VARIABLE, ScienceWorld
from workbench.executors import InProcess
from workbench.runner import RunConfig, run_batch

PLAN = RunConfig(
    families=["find-living-thing", "use-thermometer"], episodes=4, seed=5, step_limit=40
)


def java_command(env: ScienceWorld) -> list[str]:
    """The command line the simulator's JVM runs with."""
    pid = env._env._gateway.java_process.pid
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_the_jvm_starts_with_the_worlds_options_and_the_variable_replaces_them(monkeypatch):
    monkeypatch.delenv(JVM_OPTIONS_VARIABLE, raising=False)
    env = ScienceWorld()
    try:
        command = java_command(env)
        assert [option for option in command if option in JVM_OPTIONS] == list(JVM_OPTIONS)
        assert command.index(JVM_OPTIONS[0]) < command.index("py4j.GatewayServer")
    finally:
        env.close()
    monkeypatch.setenv(JVM_OPTIONS_VARIABLE, "-Xmx700m")
    env = ScienceWorld()
    try:
        command = java_command(env)
        assert "-Xmx700m" in command and not set(JVM_OPTIONS) & set(command)
        assert env.reset(env.tasks("find-living-thing", "train")[0], 0).observation
    finally:
        env.close()


def trajectories(store: Store, batch: str) -> dict[str, tuple]:
    """Per task: the actions taken and the outcome."""
    return {
        e.task_id: ([s.action for s in store.steps(e.id)], e.outcome.success, e.outcome.score)
        for e in store.episodes(EpisodeFilter(batch=batch))
    }


@pytest.mark.slow
def test_the_same_plan_plays_the_same_with_the_jvms_defaults(store, monkeypatch):
    """Gold paths kept in the store (the simulator's search for one is not deterministic),
    the world's options change neither an action nor an outcome."""
    played = {}
    for batch, options in (("ours", None), ("defaults", "")):
        if options is None:
            monkeypatch.delenv(JVM_OPTIONS_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(JVM_OPTIONS_VARIABLE, options)
        with InProcess() as executor:
            assert run_batch(store, PLAN, batch=batch, executor=executor).finished == 4
        played[batch] = trajectories(store, batch)
    assert played["ours"] == played["defaults"]
    assert len(played["ours"]) == 4
