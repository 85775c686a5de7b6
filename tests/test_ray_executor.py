"""The Ray executor on a real Ray cluster started on 127.0.0.1 (``ray start --head``, two
CPUs): it records the same episodes as the local pool, retries an episode whose worker was
killed with no duplicate, ships the workers' model calls back to the driver's database, and a
Ray address that answers nothing is one line."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from store import EpisodeFilter, Store
from tests.llm_server import ChatServer
from workbench.executors import (
    ExecutorChoice,
    ExecutorUnavailable,
    LocalPool,
    RayExecutor,
    make_executor,
)
from workbench.runner import AgentSpec, RunConfig, run_batch

pytestmark = pytest.mark.slow

RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory) -> Iterator[str]:
    """A Ray head node on 127.0.0.1 with two CPUs; yields its address."""
    if not RAY.exists():
        pytest.skip("Ray is not installed (pip install 'trajectory-workbench[ray]')")
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    temp = tmp_path_factory.mktemp("ray")
    start = [
        str(RAY), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}",
        "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]  # fmt: skip
    for _ in range(3):  # Ray gives its raylet 30 s to start: a loaded machine may need more
        started = subprocess.run(start, env=env, capture_output=True, text=True)
        if started.returncode == 0:
            break
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True)
    assert started.returncode == 0, started.stderr[-2000:]
    os.environ["RAY_AUTH_MODE"] = "disabled"
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True)
        shutil.rmtree(temp, ignore_errors=True)


def played(store: Store, batch: str) -> dict[tuple[str, int], tuple[list[str], bool, float]]:
    """Each episode of ``batch`` by (family, variation): its actions and outcome."""
    out = {}
    for episode in store.episodes(EpisodeFilter(batch=batch)):
        task = store.task(episode.task_id)
        actions = [s.action for s in store.steps(episode.id) if s.kind == "action"]
        key = (task.family, task.metadata["variation"])
        out[key] = (actions, episode.outcome.success, episode.outcome.score)
    return out


CONFIG = RunConfig(
    env="textworld", families=["tw-cooking-level2"], episodes=4, seed=7, step_limit=30
)


def test_a_ray_run_records_the_episodes_a_local_run_records(db_path, ray_cluster):
    with Store(db_path) as store:
        with LocalPool(2) as pool:
            run_batch(store, CONFIG, executor=pool, batch="local")
        with RayExecutor(ray_cluster) as ray_executor:
            report = run_batch(store, CONFIG, executor=ray_executor, batch="ray")
        assert report.finished == 4 and not report.lost
        local, remote = played(store, "local"), played(store, "ray")
    assert len(local) == 4 and local == remote
    assert any(not success for _, success, _ in local.values())  # mistakes were made too


KILLER = """\
import json, os, signal, sys
from pathlib import Path

marker = Path(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "reset" and not marker.exists():
        marker.write_text(str(os.getppid()))
        os.kill(os.getppid(), signal.SIGKILL)  # the worker playing this episode dies
    reply = {"action": "look" if message["type"] == "reset" else None}
    print(json.dumps(reply), flush=True)
"""


def test_an_episode_whose_worker_is_killed_is_played_again_and_recorded_once(
    db_path, tmp_path, ray_cluster
):
    agent = tmp_path / "killer.py"
    agent.write_text(KILLER)
    marker = tmp_path / "killed"
    config = CONFIG.model_copy(
        update={
            "episodes": 2,
            "agent": AgentSpec(kind="command", cmd=[sys.executable, str(agent), str(marker)]),
        }
    )
    with Store(db_path) as store, RayExecutor(ray_cluster, workers=2) as executor:
        report = run_batch(store, config, executor=executor, batch="killed")
        ids = [e.id for e in store.episodes(EpisodeFilter(batch="killed"))]
    assert marker.exists()  # a worker was killed mid-episode
    assert report.finished == 2 and not report.lost
    assert len(ids) == len(set(ids)) == 2


def test_model_calls_made_on_workers_are_logged_in_the_drivers_database(
    db_path, ray_cluster, monkeypatch
):
    with ChatServer(lambda request: {"thought": "look first", "action": "look"}) as server:
        for name, value in {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": server.api_key,
            "WORKBENCH_MODEL": "test-model",
        }.items():
            monkeypatch.setenv(name, value)
        config = CONFIG.model_copy(
            update={"episodes": 1, "step_limit": 2, "agent": AgentSpec(kind="openai")}
        )
        with Store(db_path) as store, RayExecutor(ray_cluster, workers=1) as executor:
            run_batch(store, config, executor=executor, batch="llm")
            (episode,) = store.episodes(EpisodeFilter(batch="llm"))
            calls = store.calls(purpose="agent.act")
    assert calls and all(c.episode_id == episode.id for c in calls)
    assert sorted(episode.metadata["call_ids"]) == sorted(c.id for c in calls)


def test_an_unreachable_ray_address_is_one_line():
    executor = make_executor(ExecutorChoice("ray", address=f"127.0.0.1:{_free_port()}"))
    with pytest.raises(ExecutorUnavailable, match=r"cannot connect to Ray at 127\.0\.0\.1"):
        list(executor.run([_job()]))


def _job():
    from workbench.runner import EpisodeJob, PlannedEpisode

    planned = PlannedEpisode(
        id="x", family="tw-cooking-level2", variation=0, split="train", trial=0, seed=0
    )
    return EpisodeJob(planned=planned, config=CONFIG, batch_id="x")
