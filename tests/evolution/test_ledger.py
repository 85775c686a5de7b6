"""Signed degradation over the baseline-success ledger, and the evolution records."""

from __future__ import annotations

import pytest

from store import Checkpoint, Evolution, Store
from workbench.evolution import evolution_series
from workbench.evolution.experiment import ledger_change

REFERENCE = {"a": True, "b": True, "c": True, "d": True, "e": False}


def test_a_loss_of_what_the_reference_solved_is_positive():
    change = ledger_change(REFERENCE, REFERENCE, {**REFERENCE, "a": False, "b": False})
    assert (change.ledger, change.lost, change.recovered) == (4, 2, 0)
    assert change.degradation == pytest.approx(0.5)


def test_recovering_an_earlier_loss_is_negative_and_gains_outside_the_ledger_do_not_count():
    before = {**REFERENCE, "a": False, "b": False}
    now = {**before, "a": True, "e": True}  # "e" was never solved by the reference
    change = ledger_change(REFERENCE, before, now)
    assert (change.lost, change.recovered) == (0, 1)
    assert change.degradation == pytest.approx(-0.25)


def test_losses_and_recoveries_net_out_and_missing_cases_count_as_failed():
    before = {**REFERENCE, "a": False}
    now = {"a": True, "c": True, "d": True}  # 'b' missing: failed
    change = ledger_change(REFERENCE, before, now)
    assert (change.lost, change.recovered, change.degradation) == (1, 1, 0.0)
    assert ledger_change({"a": False}, {}, {}).degradation == 0.0


def checkpoint(regime: str, position: int, passed: int, degradation: float) -> Checkpoint:
    return Checkpoint(
        evolution="x",
        regime=regime,
        position=position,
        tasks=10 * position,
        passed=passed,
        total=10,
        sizes={"rule": position},
        stored=position,
        used=max(0, position - 1),
        ledger=4,
        lost=0,
        recovered=0,
        degradation=degradation,
        batch_id=f"b{position}",
    )


def test_checkpoints_are_stored_per_regime_and_replaced_in_place(store: Store):
    store.put_evolution(Evolution(name="x", params={"config": {"every": 10}}))
    # a second put with other params returns the stored experiment unchanged
    assert store.put_evolution(Evolution(name="x", params={})).params == {"config": {"every": 10}}
    for regime in ("no-replay-gate", "gated"):
        for position in (1, 0):
            store.put_checkpoint(checkpoint(regime, position, 4 + position, 0.0))
    store.put_checkpoint(checkpoint("gated", 1, 7, -0.25))
    series = evolution_series(store, "x")
    assert [s.regime for s in series] == ["gated", "no-replay-gate"]
    gated = series[0]
    assert gated.tasks == [0, 10] and gated.pass_rate == [0.4, 0.7]
    assert gated.degradation == [0.0, -0.25] and gated.sizes["rule"] == [0, 1]
    assert gated.use_rate == [None, 0.0]
    assert len(store.checkpoints("x", "gated")) == 2
