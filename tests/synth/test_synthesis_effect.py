"""``bench/synthesis_effect.py``: its statistics on hand-computed cases, and its core on a
tiny real TextWorld synthesis — three arms on the same held-out episodes (test games, same
seeds), arm (a) with no example, (b) one whole example per explored trajectory, (c) the kept
backward examples."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from store import EpisodeFilter, Store
from store.synth import SYNTH_WORKSPACE
from tests.synthesized import COOKING, beside
from workbench.executors import InProcess

BENCH = Path(__file__).parents[2] / "bench" / "synthesis_effect.py"


@pytest.fixture(scope="module")
def effect():
    """The benchmark's module (``bench/`` is no package)."""
    spec = importlib.util.spec_from_file_location("synthesis_effect", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def arms(c: str, b: str, a: str) -> dict[str, dict[str, bool]]:
    """Outcomes of three arms over the same episodes, from strings like ``"1101"``."""
    return {
        arm: {f"e{k}": flag == "1" for k, flag in enumerate(flags)}
        for arm, flags in (("a", a), ("b", b), ("c", c))
    }


def test_paired_counts_and_mcnemar_match_a_hand_computed_case(effect):
    outcomes = arms(c="11111101", b="00000011", a="00000000")
    pair = effect.paired(outcomes["c"], outcomes["b"])
    assert (pair.fixed, pair.broken) == (6, 1)
    assert pair.p == pytest.approx(2 * (1 + 7) / 2**7)  # 2·P(X ≤ 1), X ~ Bin(7, ½) = 0.125
    assert effect.paired(outcomes["c"], outcomes["a"]).p == pytest.approx(2 / 2**7)  # 7 vs 0
    lines = effect.table("world", outcomes)
    assert lines[2].split()[:5] == ["world", "(c)", "backward", "+", "filtered"]
    assert "7/8" in lines[2] and "[53%, 98%]" in lines[2]  # Wilson 95% of 7 of 8, by hand
    assert "2/8" in lines[1] and "0/8" in lines[0] and "[0%, 32%]" in lines[0]
    assert "(c) vs (b): 6 solved only by (c), 1 only by (b); McNemar exact p = 0.125" in lines[3]
    assert "(c) vs (a): 7 solved only by (c), 0 only by (a); McNemar exact p = 0.0156" in lines[4]


def test_arms_over_other_episodes_are_refused(effect):
    outcomes = arms(c="1100", b="0011", a="0000")
    outcomes["b"]["e9"] = outcomes["b"].pop("e0")
    with pytest.raises(ValueError, match="different episodes"):
        effect.paired(outcomes["c"], outcomes["b"])
    with pytest.raises(ValueError, match="different episodes"):
        effect.table("world", outcomes)


@pytest.mark.slow
def test_the_three_arms_play_the_same_held_out_episodes(effect, db_path, games, textworld_env):
    beside(db_path, games)
    settings = effect.Settings(episodes=2, seed=3, n=1, tasks=3, step_limit=8)
    with InProcess(textworld_env) as executor:
        [result] = effect.measure(db_path, {"textworld": [COOKING]}, settings, executor)
    with Store(db_path) as store, Store(db_path, workspace=SYNTH_WORKSPACE) as synth:
        batches = {
            arm: store.episodes(EpisodeFilter(batch=f"heldout-textworld-{arm}"))
            for arm in effect.ARMS
        }
        played = {
            arm: sorted((e.task_id, e.seed, e.metadata["exemplar"]["examples"]) for e in eps)
            for arm, eps in batches.items()
        }
        tasks = {e.task_id: store.task(e.task_id) for eps in batches.values() for e in eps}
        explored = synth.episodes(EpisodeFilter(batch="synth/effect-textworld"))
        kept = {k: len(synth.synth_examples(verdict="kept", kind=k)) for k in ("whole", "backward")}
    # paired: the same test games with the same seeds in every arm, and no game twice
    same = {arm: [(t, s) for t, s, _ in rows] for arm, rows in played.items()}
    assert same["a"] == same["b"] == same["c"] and len(same["a"]) == 2
    assert len({t for t, _ in same["a"]}) == 2
    assert all(t.split == "test" for t in tasks.values())
    assert {e.task_id for e in explored}.isdisjoint(tasks)  # synthesis never saw them
    assert sorted(result.seeds.items()) == sorted(
        (e.id.removeprefix("heldout-textworld-a:"), e.seed) for e in batches["a"]
    )
    # (a) retrieved from nothing; (b) one whole example per explored trajectory; (c) the kept
    # backward examples
    examples = {arm: {n for _, _, n in rows} for arm, rows in played.items()}
    assert examples == {"a": {0}, "b": {len(explored)}, "c": {kept["backward"]}}
    assert kept["whole"] == len(explored) == 3 and kept["backward"] > 0
    assert result.fallback_share["a"] == 1.0  # with no example the explorer chooses
    # the outcomes are the world's verdicts
    for arm, eps in batches.items():
        assert result.outcomes[arm] == {
            e.id.removeprefix(f"heldout-textworld-{arm}:"): e.outcome.success for e in eps
        }
    lines = effect.report([result], settings)
    assert [line.split()[0] for line in lines[1:4]] == ["textworld"] * 3
    assert [line.split()[0] for line in lines[6:9]] == ["overall"] * 3
    assert "run seed 3" in lines[-1] and all(f"@{s}" in lines[-1] for _, s in same["a"])
