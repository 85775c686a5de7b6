"""The replay gate on the real simulator: every planned case reaches the ledger, whatever run
configuration recorded it, and the ledger never disagrees with the plan."""

from __future__ import annotations

import pytest

from store import ArtifactVersion, LedgerEntry, ReplayCase, Store
from tests.admit.test_gates import rule_contract
from tests.recording import RecordingExecutor
from workbench.admit.evidence import origin_of
from workbench.admit.gates import REPLAY_LIMITS, LedgerMismatch, _write_ledger, replay_gate
from workbench.admit.repository import admit
from workbench.executors import LocalPool
from workbench.runner import AgentSpec, RunConfig, run_batch

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """A database with one find-living-thing episode from each of two run configurations
    (different seeds and mistake rates): ``(path, [episode of the first, of the second])``."""
    path = str(tmp_path_factory.mktemp("replay") / "workbench.db")
    episodes = []
    with Store(path) as store, LocalPool(1) as executor:
        for batch, seed, rates in (("first", 1, {}), ("second", 2, {"stop-early": 0.0})):
            config = RunConfig(
                families=["find-living-thing"], episodes=1, seed=seed, agent=AgentSpec(rates=rates)
            )
            report = run_batch(store, config, batch=batch, executor=executor)
            episodes += store.episode_ids(report.batch_id)
    return path, episodes


def _case(store: Store, episode_id: str, role: str) -> ReplayCase:
    episode = store.episode(episode_id)
    origin = origin_of(store, episode)
    return ReplayCase(
        episode_id=episode_id,
        role=role,
        family=episode.family,
        variation=origin.variation,
        split=episode.split,
        seed=episode.seed,
        why="test",
    )


def _staged(store: Store, name: str, cases: list[ReplayCase]) -> ArtifactVersion:
    contract = rule_contract()
    contract["name"] = contract["form"]["id"] = name
    return store.stage_version(
        ArtifactVersion(artifact=name, version=1, kind="rule", contract=contract, cases=cases)
    )


def test_cases_from_two_run_configurations_are_all_judged(two_runs):
    path, (first, second) = two_runs
    with Store(path) as store:
        version = _staged(
            store,
            "two-groups",
            [_case(store, first, "correction"), _case(store, second, "correction")],
        )
        with LocalPool(1) as executor:
            gate = replay_gate(store, version, executor=executor)
        ledger = store.ledger(version.id)
    assert sorted(e.case for e in ledger) == sorted([first, second])
    assert all(e.baseline_episode and e.candidate_episode for e in ledger)
    assert all(e.change != "pending" for e in ledger)
    assert gate.stats["corrections"] == 2
    assert gate.checks[0].detail.endswith("of 2")


def test_under_the_ablation_the_preservation_cases_stay_in_the_ledger_unreplayed(two_runs):
    path, (first, second) = two_runs
    with Store(path) as store:
        version = _staged(
            store,
            "ablated",
            [_case(store, first, "correction"), _case(store, second, "preservation")],
        )
        with LocalPool(1) as executor:
            gate = replay_gate(store, version, executor=executor, preservation=False)
        ledger = {e.role: e for e in store.ledger(version.id)}
    assert len(ledger) == 2
    assert ledger["correction"].change != "pending"
    assert ledger["preservation"].change == "pending"
    assert ledger["preservation"].candidate_episode is None
    assert gate.stats["corrections"] == 1 and gate.stats["preservation"] == 0


def test_a_ledger_that_disagrees_with_the_plan_fails_loudly(two_runs):
    path, (first, second) = two_runs
    with Store(path) as store:
        version = _staged(store, "stray", [_case(store, first, "correction")])
        store.put_ledger(LedgerEntry(version_id=version.id, case=second, role="preservation"))
        with pytest.raises(LedgerMismatch, match="holds 2 case"):
            _write_ledger(store, version, {}, preservation=True)


def test_every_episode_an_admission_replays_goes_through_the_callers_executor(two_runs):
    path, (first, second) = two_runs
    with Store(path) as store, LocalPool(1) as pool:
        recording = RecordingExecutor(pool)
        version = _staged(
            store,
            "recorded",
            [_case(store, first, "correction"), _case(store, second, "preservation")],
        )
        admission = admit(store, version.id, executor=recording)
        batches = [b.id for b in store.batches() if b.id.startswith(f"replay-v{version.id}-")]
        stored = {(batch, episode) for batch in batches for episode in store.episode_ids(batch)}
    assert admission.replay is not None
    assert len(batches) == 4  # two run configurations, each without and with the candidate
    sent = [(job.batch_id, job.planned.id) for job in recording.jobs]
    assert sorted(sent) == sorted(stored) and len(sent) == 4
    assert all(job.limits == REPLAY_LIMITS for job in recording.jobs)


def test_without_the_contract_gate_a_version_it_would_reject_goes_to_replay(two_runs):
    path, (first, _) = two_runs
    with Store(path) as store, LocalPool(1) as executor:
        versions = {}
        for regime in ("gated", "no-contract-gate"):
            contract = rule_contract()
            contract["name"] = contract["form"]["id"] = f"silent-{regime}"
            contract["form"]["when_action"] = "never proposed (.+)"  # silent where it must act
            version = store.stage_version(
                ArtifactVersion(
                    artifact=contract["name"],
                    version=1,
                    kind="rule",
                    contract=contract,
                    cases=[_case(store, first, "correction")],
                )
            )
            versions[regime] = admit(store, version.id, executor=executor, regime=regime)
    gated, ablated = versions["gated"], versions["no-contract-gate"]
    assert not gated.contract.passed and gated.replay is None
    assert gated.version.status == "rejected"
    assert [c.name for c in ablated.contract.checks] == ["skipped"]
    assert ablated.replay is not None and ablated.version.replay_gate is not None
