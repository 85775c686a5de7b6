"""The Ray executor on a real Ray cluster started on 127.0.0.1 (``ray start --head``, two
CPUs): it records the same episodes as the local pool, retries an episode whose worker was
killed with no duplicate, ships the workers' model calls back to the driver's database, and a
Ray address that answers nothing is one line. On a Ray instance of its own (killing the
cluster's raylet would end it for the tests after): a run whose raylet is killed stops in one
line naming it, keeping the episodes it recorded."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest

from store import EpisodeFilter, Store
from tests.llm_server import ChatServer
from workbench.executors import (
    ClusterLost,
    ExecutorChoice,
    ExecutorUnavailable,
    InProcess,
    LocalPool,
    RayExecutor,
    _Flight,
    _Watch,
    forwarded_env,
    make_executor,
)
from workbench.runner import AgentSpec, EpisodeJob, PlannedEpisode, Played, RunConfig, run_batch

RAY = Path(sys.executable).with_name("ray")
WORKBENCH = Path(sys.executable).with_name("workbench")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_head(command: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """``ray start --block`` in a process group of its own (Ray's head processes join it),
    returned once Ray says it runs; with what it said, if it ended before."""
    head = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    said = []
    for line in head.stdout:
        said.append(line)
        if "Ray runtime started" in line:
            threading.Thread(target=head.stdout.read, daemon=True).start()  # keep it flowing
            return head, ""
    head.wait()
    return head, "".join(said)


def _stop_head(head: subprocess.Popen) -> None:
    """End the head's process group: this test's Ray only, never another's on the machine
    (``ray stop`` ends every Ray instance of the machine, a helper's benchmark too)."""
    for signal_number, patience in ((signal.SIGTERM, 10), (signal.SIGKILL, 60)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal_number)
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(timeout=patience)
            return


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory) -> Iterator[str]:
    """A Ray head node on 127.0.0.1 with two CPUs; yields its address."""
    if not RAY.exists():
        pytest.skip("Ray is not installed (pip install 'trajectory-workbench[ray]')")
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    temp = tmp_path_factory.mktemp("ray")
    start = [
        str(RAY), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
        "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]  # fmt: skip
    for _ in range(3):  # Ray gives its raylet 30 s to start: a loaded machine may need more
        head, failed = _start_head(start, env)
        if not failed:
            break
        _stop_head(head)
    assert not failed, failed[-2000:]
    os.environ["RAY_AUTH_MODE"] = "disabled"
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _stop_head(head)
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_worker_follows_each_databases_own_reference_solution(tmp_path, ray_cluster):
    """A worker keeps no reference solution from one job to the next: the one a database
    keeps is followed even when the worker found another for an earlier database, and a
    database that keeps none gets the one its own episode found."""
    config = CONFIG.model_copy(update={"episodes": 1, "agent": AgentSpec(rates={})})
    with RayExecutor(ray_cluster, workers=1) as executor:
        with Store(tmp_path / "first.db") as first:
            run_batch(first, config, executor=executor, batch="b")
            (key,) = first.gold_path_keys()
            found = first.gold_path(key)
        with Store(tmp_path / "own.db") as own:
            own.put_gold_path(key, ["look", "inventory"])
            run_batch(own, config, executor=executor, batch="b")
            (episode,) = own.episodes(EpisodeFilter(batch="b"))
            followed = [s.action for s in own.steps(episode.id) if s.kind == "action"]
        with Store(tmp_path / "none.db") as none:
            run_batch(none, config, executor=executor, batch="b")
            kept = none.gold_path(key)
    assert followed == ["look", "inventory"]
    assert kept == found and found


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


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert all(c.model == "test-model" for c in calls)  # WORKBENCH_* reached the worker too
    assert sorted(episode.metadata["call_ids"]) == sorted(c.id for c in calls)


class RayletKiller:
    """Progress that kills the raylet of this process's own Ray instance once the first
    episode is recorded, keeping what was recorded by then."""

    def __init__(self, store: Store, batch: str) -> None:
        self.store, self.batch = store, batch
        self.recorded: set[str] = set()
        self.orphans: list | None = None
        """The raylet's processes (its workers), left without it."""

    def start(self, total: float | None, description: str = "") -> None:
        pass

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        if self.orphans is not None:
            return
        import psutil

        self.recorded = self.store.episode_ids(self.batch)
        # ray.init's own raylet is a child of this process (the cluster's, a grandchild)
        (raylet,) = [p for p in psutil.Process().children() if p.name() == "raylet"]
        self.orphans = raylet.children(recursive=True)
        raylet.kill()
        raylet.wait()  # gone, not only signalled

    def finish(self) -> None:
        pass

    def end_orphans(self) -> None:
        """Kill the raylet's workers that outlived it (closing the executor kills its actors,
        not the idle workers Ray started beforehand)."""
        import psutil

        for process in self.orphans or []:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()  # psutil checks it is still the same process


@pytest.mark.slow
def test_a_run_whose_raylet_is_killed_stops_in_one_line_and_keeps_what_it_recorded(db_path):
    """Ray alone would wait forever for the episodes in flight: the run stops naming the
    raylet, the episodes recorded stay, and the batch resumes from them."""
    config = CONFIG.model_copy(update={"episodes": 4})
    with Store(db_path) as store:
        killer = RayletKiller(store, "lost")
        try:
            with (
                RayExecutor(workers=2, watch_every=0.2) as executor,  # a Ray instance of its own
                pytest.raises(ClusterLost) as lost,
            ):
                run_batch(store, config, executor=executor, batch="lost", progress=killer)
        finally:
            killer.end_orphans()
        kept = store.episode_ids("lost")
        with InProcess() as here:
            report = run_batch(store, config, executor=here, batch="lost")
        ids = [e.id for e in store.episodes(EpisodeFilter(batch="lost"))]
    message = str(lost.value)
    assert re.fullmatch(r"lost the Ray node \S+: its raylet at \S+:\d+ is gone \(.+\)", message)
    assert killer.recorded and killer.recorded <= kept and len(kept) < 4
    assert (report.skipped, report.finished) == (len(kept), 4 - len(kept))
    assert len(ids) == len(set(ids)) == 4


RAYLET_KILLER = """\
import json, os, sqlite3, sys

import psutil

database = sys.argv[1]


def recorded() -> bool:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return connection.execute("SELECT count(*) FROM episodes").fetchone()[0] > 0


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "reset" and recorded():
        raylet = psutil.Process(os.getppid()).parent()  # the raylet of this agent's worker
        if raylet.name() == "raylet":
            raylet.kill()
    reply = {"action": "look" if message["type"] == "reset" else None}
    print(json.dumps(reply), flush=True)
"""


@pytest.mark.slow
def test_the_run_command_says_in_one_line_that_its_raylet_is_gone(db_path, tmp_path):
    """``workbench run --executor ray`` on a Ray instance of its own, whose raylet the agent
    kills once the database holds an episode: one line, the episodes recorded kept."""
    agent = tmp_path / "raylet_killer.py"
    agent.write_text(RAYLET_KILLER)
    command = [
        str(WORKBENCH), "--db", str(db_path), "run", "--executor", "ray", "--workers", "2",
        "--env", "textworld", "--family", "tw-cooking-level2", "--episodes", "6",
        "--step-limit", "30", "--batch", "lost", "--agent", "command",
        "--cmd", shlex.join([sys.executable, str(agent), str(db_path)]),
    ]  # fmt: skip
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    run = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = run.communicate()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)  # a Ray process the raylet left behind
    with Store(db_path) as store:
        kept = store.episode_ids("lost")
    assert run.returncode == 1, out + err
    assert re.fullmatch(
        r"Error: lost the Ray node \S+: its raylet at \S+:\d+ is gone \(.+\); finished "
        r"episodes are kept — `workbench run --resume lost` plays the rest",
        err.strip().splitlines()[-1],
    )
    assert "Traceback" not in out + err
    assert 0 < len(kept) < 6


class Cluster:
    """What a watch asks Ray for: the nodes, as the GCS lists them."""

    def __init__(self, *nodes: dict) -> None:
        self.listed = list(nodes)

    def nodes(self) -> list[dict]:
        return self.listed


def _node(name: str, address: str, cpus: float = 2, reason: str = "") -> dict:
    """A node as ``ray.nodes()`` lists it (dead if it has a reason)."""
    resources = {"CPU": cpus} if cpus else {}
    return {
        "NodeID": name, "Alive": not reason, "NodeManagerAddress": address,
        "Resources": resources, "DeathReasonMessage": reason,
    }  # fmt: skip


def test_a_gcs_that_answers_nothing_is_a_lost_cluster():
    watch = _Watch(node="head", gcs=f"127.0.0.1:{_free_port()}", raylet=None)
    with pytest.raises(
        ClusterLost, match=r"^lost the Ray cluster: its GCS at 127\.0\.0\.1:\d+ is gone \(.+\)$"
    ):
        watch.check(Cluster(_node("head", "127.0.0.1")))


def test_the_drivers_node_marked_dead_is_named_with_the_reason():
    watch = _Watch(node="head", gcs=None, raylet=None)
    cluster = Cluster(_node("head", "10.0.0.5", reason="missed heartbeats"), _node("w", "10.0.0.6"))
    with pytest.raises(
        ClusterLost,
        match=r"^lost the Ray node 10\.0\.0\.5 this process plays through: missed heartbeats$",
    ):
        watch.check(cluster)


def test_a_run_goes_on_while_a_node_with_cpus_is_left():
    """The head plays nothing (no CPUs); losing one of two workers leaves one to play on
    (the executor replaces the actors lost), losing both stops the run."""
    watch = _Watch(node="head", gcs=None, raylet=None)
    head = _node("head", "10.0.0.5", cpus=0)
    watch.check(Cluster(head, _node("w1", "10.0.0.6"), _node("w2", "10.0.0.7")))
    watch.check(Cluster(head, _node("w1", "10.0.0.6", reason="gone"), _node("w2", "10.0.0.7")))
    both_lost = Cluster(
        head, _node("w1", "10.0.0.6", reason="gone"), _node("w2", "10.0.0.7", reason="gone")
    )
    with pytest.raises(
        ClusterLost, match=r"^lost every Ray node with CPUs to play on: 10\.0\.0\.6, 10\.0\.0\.7$"
    ):
        watch.check(both_lost)


def test_a_worker_gets_the_drivers_endpoint_and_workbench_settings_only(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("WORKBENCH_SCIENCEWORLD_JVM", "-Xmx1g")
    monkeypatch.setenv("UNRELATED_SECRET", "kept here")
    env = forwarded_env()
    assert env["OPENAI_API_KEY"] == "sk-test" and env["WORKBENCH_SCIENCEWORLD_JVM"] == "-Xmx1g"
    assert "UNRELATED_SECRET" not in env and "PATH" not in env


class Handle:
    """What the driver holds of a Ray actor, as far as sending it jobs goes: ``play.remote``
    keeps what it was sent and hands back a call reference."""

    def __init__(self) -> None:
        self.play, self.sent = self, []

    def remote(self, job_json: str, gold_paths: dict[str, list[str]]) -> object:
        self.sent.append((EpisodeJob.model_validate_json(job_json).planned.id, gold_paths))
        return object()


def _calls(flight: _Flight) -> dict[str, object]:
    return {job.planned.id: ref for ref, (job, _) in flight.running.items()}


def test_jobs_of_a_task_with_no_reference_solution_go_to_one_actor_at_a_time():
    """Two actors, two jobs each at most: the second episode of a task waits until the
    first brings back the solution it found, and then goes with it."""
    jobs = [_job(f"x{i}", variation) for i, variation in enumerate([0, 0, 1])]
    first, second = Handle(), Handle()
    flight = _Flight(jobs, [first, second])
    flight.send()
    assert sorted(_calls(flight)) == ["x0", "x2"] and [j.planned.id for j in flight.queue] == ["x1"]
    ref = _calls(flight)["x0"]
    job, actor = flight.running.pop(ref)
    key = job.planned.task.task_id(job.config.env)
    flight.done(job, actor, ref, Played(task={}, episode={}, gold_paths={key: ["look"]}))
    flight.send()
    assert ("x1", {key: ["look"]}) in first.sent + second.sent and not flight.queue


def test_only_the_job_a_dead_actor_was_playing_counts_a_retry():
    """An actor holds two jobs and dies: the one it was playing is retried once, the one
    waiting behind it goes back as it was."""
    jobs = [_job("x0", 0), _job("x1", 1)]
    only = Handle()
    flight = _Flight(jobs, [only])
    flight.send()
    playing, waiting = _calls(flight)["x0"], _calls(flight)["x1"]
    for ref in (waiting, playing):  # in whichever order the failures arrive
        job, actor = flight.running.pop(ref)
        assert flight.died(actor) == (ref is waiting)  # replaced once
        assert flight.requeued(job, ref)
    assert flight.retried == {"x0"}
    flight.held[Handle()] = deque()
    flight.send()
    job, actor = flight.running.pop(ref := _calls(flight)["x0"])
    assert flight.died(actor) and not flight.requeued(job, ref)  # its second death: lost


def test_an_unreachable_ray_address_is_one_line():
    executor = make_executor(ExecutorChoice("ray", address=f"127.0.0.1:{_free_port()}"))
    with pytest.raises(ExecutorUnavailable, match=r"cannot connect to Ray at 127\.0\.0\.1"):
        list(executor.run([_job()]))


def _job(name: str = "x", variation: int = 0) -> EpisodeJob:
    planned = PlannedEpisode(
        id=name, family="tw-cooking-level2", variation=variation, split="train", trial=0, seed=0
    )
    return EpisodeJob(planned=planned, config=CONFIG, batch_id="x")


def test_the_terminal_uis_jobs_play_on_the_executor_the_command_line_chose(db_path):
    from tui.app import make_app

    app = make_app(db_path, executor=ExecutorChoice("ray", 3, "10.0.0.5:6379"))
    ray_pool = app.session.make_executor()
    assert isinstance(ray_pool, RayExecutor) and ray_pool.workers == 3
    assert ray_pool.address == "10.0.0.5:6379"
    one = app.session.make_executor(1)
    assert isinstance(one, RayExecutor) and one.workers == 1
    with make_app(db_path).session.make_executor(1) as local:
        assert isinstance(local, LocalPool) and local.workers == 1
