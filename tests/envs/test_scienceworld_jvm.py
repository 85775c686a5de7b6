"""The simulator's JVM starts with the world's own options (fewer threads, a bounded heap)
and from a class-data archive made the first time, an environment variable replaces both, and
the same plan plays the same actions and outcomes with them as with the JVM's defaults."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from scienceworld.constants import JAR_PATH

from store import EpisodeFilter, Store
from workbench.envs.class_archive import QUIET
from workbench.envs.scienceworld import (
    JVM_LOG,
    JVM_OPTIONS,
    JVM_OPTIONS_VARIABLE,
    ScienceWorld,
    class_archive,
)
from workbench.executors import InProcess
from workbench.runner import RunConfig, run_batch

PLAN = RunConfig(
    families=["find-living-thing", "use-thermometer"], episodes=4, seed=5, step_limit=40
)


def java_command(env: ScienceWorld) -> list[str]:
    """The command line the simulator's JVM runs with."""
    pid = env._env._gateway.java_process.pid
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


@pytest.fixture
def own_options(monkeypatch, tmp_path):
    """The world's own JVM options and class-data archive, the archive in a cache of the
    test's own."""
    monkeypatch.delenv(JVM_OPTIONS_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))


def started_and_played() -> list[str]:
    """Start a simulator, play a reset and stop it; its JVM's command line."""
    env = ScienceWorld()
    try:
        assert env.reset(env.tasks("find-living-thing", "train")[0], 0).observation
        return java_command(env)
    finally:
        env.close()


def test_the_jvm_starts_with_the_worlds_options_and_the_variable_replaces_them(
    own_options, monkeypatch
):
    env = ScienceWorld()
    try:
        command = java_command(env)
        assert [option for option in command if option in JVM_OPTIONS] == list(JVM_OPTIONS)
        assert command.index(JVM_OPTIONS[0]) < command.index("py4j.GatewayServer")
    finally:
        env.close()
    monkeypatch.setenv(JVM_OPTIONS_VARIABLE, "-Xmx700m")
    command = started_and_played()
    assert "-Xmx700m" in command and not set(JVM_OPTIONS) & set(command)
    assert not [option for option in command if "SharedArchiveFile" in option]


def test_the_first_simulator_makes_the_class_archive_and_every_later_one_starts_from_it(
    own_options, tmp_path
):
    archive = class_archive().path
    assert archive.is_relative_to(tmp_path) and not archive.exists()
    made = []
    for family in ("use-thermometer", "find-living-thing"):
        env = ScienceWorld()
        try:
            command = java_command(env)  # (starts the simulator)
            assert f"-XX:SharedArchiveFile={archive}" in command
            made.append(archive.stat().st_mtime_ns)
            assert env.reset(env.tasks(family, "train")[0], 0).observation
        finally:
            env.close()
    assert made[0] == made[1]  # made once, by the first


def stale_archive(path: Path, folder: Path) -> Path:
    """An archive at ``path`` the simulator's JVM cannot use: made from a copy of its jar, so
    the class path differs, which the JVM warns about."""
    path.parent.mkdir(parents=True, exist_ok=True)
    copy = folder / "copy.jar"
    shutil.copy(JAR_PATH, copy)
    gateway = ["py4j.GatewayServer", "--die-on-broken-pipe", "0"]
    dump = [f"-XX:ArchiveClassesAtExit={path}", "-cp", str(copy), *gateway]
    subprocess.run(["java", *dump], stdin=subprocess.DEVNULL, capture_output=True, check=True)
    assert path.stat().st_size > 0
    return path


def test_an_archive_the_jvm_cannot_use_is_ignored_without_a_word(own_options, tmp_path):
    archive = stale_archive(class_archive().path, tmp_path)
    assert f"-XX:SharedArchiveFile={archive}" in started_and_played()
    for quiet, says in (((), True), (QUIET, False)):
        options = [*JVM_LOG, *quiet, f"-XX:SharedArchiveFile={archive}"]
        shown = subprocess.run(["java", *options, "-cp", JAR_PATH, "-version"], capture_output=True)
        assert (b"Unable to use shared archive" in shown.stdout + shown.stderr) is says
        assert b"Unable to use" not in shown.stdout  # (py4j reads the gateway's port there)


def test_a_jvm_warning_does_not_stop_the_simulators_start(monkeypatch, tmp_path):
    """A stale archive named in the variable (so without :data:`QUIET`): the JVM warns, on
    standard error (:data:`JVM_LOG`), and the simulator starts; on standard output, where py4j
    reads the gateway's port, the warning stopped its start."""
    archive = stale_archive(tmp_path / "given.jsa", tmp_path)
    monkeypatch.setenv(JVM_OPTIONS_VARIABLE, f"-XX:SharedArchiveFile={archive}")
    command = started_and_played()
    assert command.index(JVM_LOG[-1]) < command.index(f"-XX:SharedArchiveFile={archive}")


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
