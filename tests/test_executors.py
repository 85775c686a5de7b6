"""The executors: limits travel with each job, a worker applies and lifts them per job, the
in-process executor refuses limited jobs, and environments are kept per configuration."""

from __future__ import annotations

import resource
import signal
import sys
from pathlib import Path

import pytest

from store import EpisodeFilter
from workbench.executors import InProcess, LimitsUnsupported, LocalPool, _Latest
from workbench.limits import Limits
from workbench.runner import AgentSpec, EpisodeJob, PlannedEpisode, RunConfig, run_batch

GIB = 1024**3

REPORTER = """\
import json, os, resource, sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "reset":
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        reply = {"thought": f"{soft} {os.getppid()}", "action": "look around"}
    elif message["type"] == "step":
        reply = {"action": None}
    else:
        break
    print(json.dumps(reply), flush=True)
"""
"""A command agent that says, as its first thought, the address-space limit it was started
under and which process started it (the worker playing the episode)."""


def _planned(index: int) -> PlannedEpisode:
    return PlannedEpisode(
        id=f"t:{index}", family="find-living-thing", variation=0, split="train", trial=0, seed=index
    )


def test_limits_apply_to_the_block_only(tmp_path: Path):
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = min([64 * GIB, *(b for b in (soft, hard) if b != resource.RLIM_INFINITY)])
    with Limits(seconds=3600, memory_mb=wanted // 1024**2).applied():
        assert resource.getrlimit(resource.RLIMIT_AS) == (wanted, hard)
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0
    assert resource.getrlimit(resource.RLIMIT_AS) == (soft, hard)
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_the_in_process_executor_refuses_limited_jobs_before_playing_any(store):
    config = RunConfig(families=["find-living-thing"], episodes=2)
    with pytest.raises(LimitsUnsupported, match="cannot enforce"):
        run_batch(
            store,
            config,
            executor=InProcess(),
            batch="limited",
            plan=[_planned(1), _planned(2)],
            limits=Limits(),
        )
    assert store.count_episodes(EpisodeFilter(batch="limited")) == 0


def test_what_a_worker_builds_is_kept_for_its_key_and_closed_when_replaced():
    built: list[list[str]] = []

    class Thing(list):
        def close(self) -> None:
            self.append("closed")

    def build(job: EpisodeJob) -> Thing:
        built.append(Thing([job.config.families[0]]))
        return built[-1]

    latest = _Latest(build, lambda job: job.config.families[0])

    def job(family: str) -> EpisodeJob:
        return EpisodeJob(planned=_planned(0), config=RunConfig(families=[family]), batch_id="b")

    first = latest.get(job("boil"))
    assert latest.get(job("boil")) is first and len(built) == 1
    second = latest.get(job("melt"))
    assert first == ["boil", "closed"] and second == ["melt"] and len(built) == 2
    latest.drop()
    assert second == ["melt", "closed"]


@pytest.mark.slow
def test_one_pool_worker_plays_each_job_under_its_own_limits(tmp_path: Path):
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER)
    config = RunConfig(
        families=["find-living-thing"],
        step_limit=2,
        agent=AgentSpec(kind="command", cmd=[sys.executable, str(script)], timeout=60),
    )
    limited = Limits(seconds=600, memory_mb=8192)
    jobs = [
        EpisodeJob(planned=_planned(i), config=config, batch_id="b", limits=limits)
        for i, limits in enumerate([None, limited, None])
    ]
    with LocalPool(1) as pool:
        played = {job.planned.id: result for job, result in pool.run(jobs)}
    said = [played[job.planned.id].steps[1]["thought"].split() for job in jobs]
    assert len({worker for _, worker in said}) == 1  # the same worker process played all three
    unlimited = resource.getrlimit(resource.RLIMIT_AS)[0]
    limit = (
        8192 * 1024**2 if unlimited == resource.RLIM_INFINITY else min(8192 * 1024**2, unlimited)
    )
    assert [int(soft) for soft, _ in said] == [unlimited, limit, unlimited]
