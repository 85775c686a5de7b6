"""The Table 2 regimes of ``workbench evolve`` on a real world: a masking regime scores the
gated repository of the same checkpoint with its types taken away and learns nothing itself;
the ablations that learn do so on the same stream as gated; every regime's checkpoint is
scored on the same held-out cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from store import EpisodeFilter, Store
from workbench.cli import main
from workbench.evolution.experiment import ordered_regimes, workspace

pytestmark = pytest.mark.slow

REGIMES = ("rules-only", "no-subagent", "no-closure", "no-contract-gate")


@pytest.fixture(scope="module")
def ablated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("ablations") / "workbench.db"
    args = ["--db", str(db), "evolve", "--env", "textworld", "--stream-size", "40"]
    args += ["--every", "20", "--heldout-size", "6", "--name", "t2", "--workers", "1"]
    for regime in REGIMES:
        args += ["--regime", regime]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return db, result.output


def test_a_masking_regime_brings_gated_with_it():
    assert ordered_regimes(["no-subagent"]) == ["gated", "no-subagent"]
    assert ordered_regimes(["no-closure", "gated"]) == ["gated", "no-closure"]


def test_masks_score_the_gated_repository_without_their_types(ablated):
    db, output = ablated
    with Store(db) as store:
        checkpoints = {(c.regime, c.position): c for c in store.checkpoints("t2")}
    assert {r for r, _ in checkpoints} == {"gated", *REGIMES}
    gated = [checkpoints["gated", k] for k in (1, 2)]
    assert any(c.sizes.get("subagent") for c in gated), "no subagent to mask: pick another stream"
    for regime, masked in (("rules-only", {"skill", "subagent"}), ("no-subagent", {"subagent"})):
        for k, full in enumerate(gated, start=1):
            own = checkpoints[regime, k]
            assert own.admissions == [] and not masked & set(own.sizes)
            kept = {kind: n for kind, n in full.sizes.items() if kind not in masked and n}
            assert {kind: n for kind, n in own.sizes.items() if n} == kept
            assert set(own.outcomes) == set(full.outcomes)
            if kept == {kind: n for kind, n in full.sizes.items() if n}:
                assert own.outcomes == full.outcomes  # the same repository plays the same
        with Store(db, workspace=workspace("t2", regime)) as scoped:
            assert scoped.count_episodes(EpisodeFilter()) == 0  # nothing learned of its own
    assert "rules-only: held-out pass" in output


def test_the_learning_ablations_walk_the_same_stream_and_record_how_they_chose(ablated):
    db, _ = ablated
    plans = []
    for regime in ("gated", "no-closure", "no-contract-gate"):
        with Store(db, workspace=workspace("t2", regime)) as scoped:
            episodes = scoped.iter_episodes(EpisodeFilter(replays=False))
            plans.append(sorted((e.task_id, e.seed) for e in episodes))
            if regime == "no-closure":
                attempts = [a for s in scoped.specs() for a in scoped.attempts(s.id)]
                assert attempts and all(len(scoped.attempts(s.id)) <= 1 for s in scoped.specs())
                assert all(a.carried[0].startswith("no closure: ") for a in attempts)
            if regime == "no-contract-gate":
                judged = [v for v in scoped.versions() if v.contract_gate is not None]
                assert judged
                assert all(
                    v.contract_gate.checks[0].name in ("skipped", "unchanged") for v in judged
                )
    assert plans[0] == plans[1] == plans[2] and len(plans[0]) == 40
