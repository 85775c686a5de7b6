"""Every episode of an evolution checkpoint — learning, replays, held-out scoring — is played
on the executor the caller passes, and the replays carry their limits with them."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store
from tests.recording import RecordingExecutor
from workbench.admit.gates import REPLAY_LIMITS
from workbench.backends import heuristic_backends
from workbench.demo import demo_rates
from workbench.evolution.experiment import EvolveConfig, evolve, workspace
from workbench.executors import LocalPool
from workbench.runner import AgentSpec

pytestmark = pytest.mark.slow

CONFIG = EvolveConfig(
    stream=["boil"],
    stream_size=2,
    every=2,
    heldout=["boil"],
    heldout_size=1,
    agent=AgentSpec(rates={**demo_rates(), "act-on-closed": 1.0}),
)
"""One checkpoint after two boil tasks whose closed doors give a rule to replay and admit."""


def test_every_episode_of_a_checkpoint_goes_through_the_callers_executor(tmp_path: Path):
    db = str(tmp_path / "workbench.db")
    with LocalPool(1) as pool:
        recording = RecordingExecutor(pool)
        evolve(db, "small", CONFIG, heuristic_backends, executor=recording, regimes=["gated"])
    stored, replays = set(), set()
    for place in ("gated", "heldout"):
        with Store(db, workspace=workspace("small", place)) as store:
            for batch in store.batches():
                episodes = {(batch.id, e) for e in store.episode_ids(batch.id)}
                stored |= episodes
                replays |= episodes if batch.kind == "replay" else set()
    sent = [(job.batch_id, job.planned.id) for job in recording.jobs]
    assert sorted(sent) == sorted(stored)
    assert replays, "the checkpoint admitted nothing: no replay went through the executor"
    for job in recording.jobs:
        replayed = (job.batch_id, job.planned.id) in replays
        assert job.limits == (REPLAY_LIMITS if replayed else None)
