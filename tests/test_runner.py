"""The runner on the real simulator: recording, determinism, resume after SIGKILL, crashes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from store import EpisodeFilter, Store
from workbench.agents.guidance import Guidance, RuleForm
from workbench.executors import InProcess, LocalPool
from workbench.runner import AgentSpec, RunConfig, plan_run, run_batch

SMALL = RunConfig(
    families=["find-living-thing", "use-thermometer"], episodes=4, seed=5, step_limit=40
)


def trajectories(store: Store, batch: str) -> dict[str, tuple]:
    """Per task: the actions taken and the outcome. (ScienceWorld's own physics is not
    bit-for-bit reproducible across JVM histories — a measured temperature may differ by a
    degree — so observations are not compared.)"""
    return {
        e.task_id: ([s.action for s in store.steps(e.id)], e.outcome.success, e.outcome.score)
        for e in store.episodes(EpisodeFilter(batch=batch))
    }


def test_plan_is_deterministic_and_spreads_over_families(scienceworld):
    first = plan_run(SMALL, scienceworld, "b")
    assert first == plan_run(SMALL, scienceworld, "b")
    assert [p.family for p in first] == ["find-living-thing", "use-thermometer"] * 2
    assert len({p.id for p in first}) == 4
    repeated = plan_run(RunConfig(families=["boil"], episodes=20), scienceworld, "b")
    assert {p.trial for p in repeated} == {0, 1}  # boil has 14 train variations


def test_run_records_episodes_with_steps_outcomes_and_ground_truth(store, scienceworld):
    report = run_batch(store, SMALL, batch="r1", executor=InProcess(env=scienceworld))
    assert (report.planned, report.finished, report.skipped) == (4, 4, 0)
    for episode in store.episodes(EpisodeFilter(batch="r1")):
        steps = store.steps(episode.id)
        assert episode.n_steps == len(steps) >= 2
        assert steps[0].kind == "observation" and steps[1].kind == "action"
        assert episode.outcome.success == (episode.outcome.score == 100)
        assert "ground_truth" in episode.metadata and episode.metadata["step_limit"] == 40
        assert store.task(episode.task_id).instruction.startswith("Your task is to")
    assert store.batch("r1").params["config"]["seed"] == 5


def test_same_seed_and_guidance_give_the_same_trajectories(tmp_path, scienceworld):
    config = SMALL.model_copy(
        update={"agent": AgentSpec(rates=dict.fromkeys(["wrong-focus", "act-on-closed"], 0.6))}
    )
    runs = []
    for name in ("a", "b"):
        with Store(tmp_path / f"{name}.db") as store:
            run_batch(store, config, batch="same", executor=InProcess(env=scienceworld))
            runs.append(trajectories(store, "same"))
    assert runs[0] == runs[1]


def test_guidance_in_the_config_reaches_the_agent(store, scienceworld):
    veto_doors = Guidance(
        forms=[RuleForm(id="no-doors", when_action=r"open door to .*", response="veto")]
    )
    config = SMALL.model_copy(update={"agent": AgentSpec(rates={}), "guidance": veto_doors})
    run_batch(store, config, batch="g", executor=InProcess(env=scienceworld))
    episodes = store.episodes(EpisodeFilter(batch="g"))
    assert all(not e.outcome.success for e in episodes)
    assert all(e.metadata["guidance_uses"][0]["artifact"] == "no-doors" for e in episodes)


def test_an_existing_batch_with_other_settings_is_refused(store, scienceworld):
    run_batch(store, SMALL, batch="r", executor=InProcess(env=scienceworld))
    again = run_batch(store, SMALL, batch="r", executor=InProcess(env=scienceworld))
    assert (again.skipped, again.finished) == (4, 0)
    with pytest.raises(ValueError, match="different configuration"):
        run_batch(
            store,
            SMALL.model_copy(update={"seed": 6}),
            batch="r",
            executor=InProcess(env=scienceworld),
        )


def test_a_crashing_agent_is_a_recorded_failure_and_the_run_goes_on(store, scienceworld, tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(
        "import sys\nsys.stdin.readline()\nsys.stderr.write('agent exploded\\n')\nsys.exit(3)\n"
    )
    config = SMALL.model_copy(
        update={"agent": AgentSpec(kind="command", cmd=[sys.executable, str(script)], timeout=300)}
    )
    report = run_batch(store, config, batch="crash", executor=InProcess(env=scienceworld))
    assert report.finished == 4 and report.failed == 4
    episode = store.episodes(EpisodeFilter(batch="crash"))[0]
    assert episode.outcome.message.startswith("Agent error:")
    assert "agent exploded" in episode.metadata["error"]


@pytest.mark.slow
def test_worker_processes_record_the_same_episodes_as_one_process(store):
    """Each worker has its own JVM; gold paths kept in the store make their runs agree."""
    with InProcess() as serial, LocalPool(2) as pooled:
        run_batch(store, SMALL, batch="serial", executor=serial)
        run_batch(store, SMALL, batch="pooled", executor=pooled)
    assert trajectories(store, "pooled") == trajectories(store, "serial")


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_without_duplicates_or_losses(db_path):
    command = [
        sys.executable, "-m", "workbench", "run", "--db", str(db_path), "--family", "find-living-thing",
        "--episodes", "30", "--workers", "1", "--seed", "3", "--batch", "killme",
    ]  # fmt: skip
    log = open(db_path.with_suffix(".log"), "w+")  # noqa: SIM115 (read back below)
    process = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=log
    )
    with Store(db_path) as store:
        deadline = time.monotonic() + 900  # a bound for a broken run, not a speed check
        while store.count_episodes() < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, db_path.with_suffix(".log").read_text()
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        log.close()
        before = store.count_episodes()
        assert 3 <= before < 30
        rows = store.conn.execute(
            "SELECT e.id, e.n_steps, count(s.id) FROM episodes e LEFT JOIN steps s ON s.episode_id = e.id GROUP BY e.id"
        )
        assert all(n == count for _, n, count in rows)  # no half-written episode
        finished = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert finished.returncode == 0, finished.stderr
        assert f"{before} already recorded" in finished.stdout
        assert store.count_episodes() == 30
        ids = [r[0] for r in store.conn.execute("SELECT id FROM episodes")]
        assert len(ids) == len(set(ids)) == 30


def test_the_llm_agent_runs_through_the_runner_with_logged_linked_calls(
    store, scienceworld, monkeypatch
):
    from tests.llm_server import serve

    server_gen = serve()
    server = next(server_gen)
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
        config = RunConfig(
            families=["find-living-thing"],
            episodes=1,
            seed=2,
            step_limit=6,
            agent=AgentSpec(kind="openai"),
        )
        server.responder = lambda request: {"thought": "look first", "action": "look around"}
        run_batch(store, config, batch="llm", executor=InProcess(env=scienceworld))
        [episode] = store.episodes(EpisodeFilter(batch="llm"))
        assert episode.agent == "openai:test-model" and episode.n_steps == 7
        assert [s.action for s in store.steps(episode.id)][1:] == ["look around"] * 6
        calls = store.calls(purpose="agent.act")
        assert len(calls) == 6 and {c.episode_id for c in calls} == {episode.id}
        assert episode.usage.prompt_tokens and episode.usage.prompt_tokens > 0
        assert (
            server.api_key
            not in store.conn.execute("SELECT group_concat(request) FROM llm_calls").fetchone()[0]
        )
    finally:
        server_gen.close()
