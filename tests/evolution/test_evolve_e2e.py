"""``workbench evolve`` end to end on the real simulator: checkpoints for two regimes on the
same stream and held-out set, held-out episodes kept out of learning, resume without new
work, and the plot written from the stored checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from store import EpisodeFilter, Store
from workbench.cli import main

ARGS = [
    "evolve",
    "--stream",
    "boil,test-conductivity",
    "--stream-size",
    "6",
    "--every",
    "3",
    "--heldout-size",
    "4",
    "--regime",
    "gated",
    "--regime",
    "no-replay-gate",
    "--rate",
    "act-on-closed=0.5",
    "--name",
    "small",
    "--workers",
    "1",
]


def cli(db: Path, *args: str, ok: bool = True) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert (result.exit_code == 0) == ok, result.output
    return result.output


@pytest.fixture(scope="module")
def evolved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("evolve") / "workbench.db"
    return db, cli(db, *ARGS)


@pytest.mark.slow
def test_every_regime_gets_a_checkpoint_per_stretch_of_the_same_stream(evolved):
    db, output = evolved
    with Store(db) as store:
        checkpoints = store.checkpoints("small")
        assert [(c.regime, c.position, c.tasks) for c in checkpoints] == [
            ("gated", 0, 0),
            ("gated", 1, 3),
            ("gated", 2, 6),
            ("no-replay-gate", 0, 0),
            ("no-replay-gate", 1, 3),
            ("no-replay-gate", 2, 6),
        ]
        reference = [c for c in checkpoints if c.position == 0]
        assert reference[0].outcomes == reference[1].outcomes  # one shared reference
        assert all(
            c.total == 4 and set(c.outcomes) == set(reference[0].outcomes) for c in checkpoints
        )
        for c in checkpoints:
            assert c.ledger == reference[0].passed
            assert c.stored == sum(c.sizes.values()) and c.used <= c.stored
            # the checkpoint's degradation is what its outcomes say against the previous one
            before = next(
                p
                for p in checkpoints
                if p.regime == c.regime and p.position == max(c.position - 1, 0)
            )
            ledger = [k for k, v in reference[0].outcomes.items() if v]
            lost = sum(before.outcomes[k] and not c.outcomes[k] for k in ledger)
            assert c.lost == (lost if c.position else 0)
        # the regimes learned the same stream: same tasks and seeds in their learning batches
        plans = []
        for regime in ("gated", "no-replay-gate"):
            with Store(db, workspace=f"evolve/small/{regime}") as scoped:
                plans.append(
                    sorted(
                        (e.task_id, e.seed)
                        for e in scoped.iter_episodes(EpisodeFilter(replays=False))
                    )
                )
        assert plans[0] == plans[1] and len(plans[0]) == 6
    assert "gated: held-out pass" in output and "no-replay-gate: held-out pass" in output


@pytest.mark.slow
def test_held_out_episodes_never_reach_learning_or_the_main_workspace(evolved):
    db, _ = evolved
    with Store(db) as main_store:
        assert main_store.count_episodes() == 0 and main_store.versions() == []
    for regime in ("gated", "no-replay-gate"):
        with Store(db, workspace=f"evolve/small/{regime}") as scoped:
            assert scoped.count_episodes(EpisodeFilter(split="test")) == 0
            assert all(s.sources for s in scoped.specs() if s.status == "supported")
    with Store(db, workspace="evolve/small/heldout") as heldout:
        # the reference and 2 checkpoints per regime, 4 cases each
        assert heldout.count_episodes(EpisodeFilter(split="test")) == 4 * 5


@pytest.mark.slow
def test_running_again_resumes_without_new_work_and_a_changed_setup_is_refused(evolved):
    db, _ = evolved
    with Store(db) as store:
        before = (
            store._rows("SELECT count(*) FROM episodes")[0][0],
            [c.id for c in store.checkpoints("small")],
        )
    cli(db, *ARGS)
    with Store(db) as store:
        after = (
            store._rows("SELECT count(*) FROM episodes")[0][0],
            [c.id for c in store.checkpoints("small")],
        )
    assert after == before
    output = cli(db, *[a if a != "6" else "9" for a in ARGS], ok=False)
    assert "exists with another configuration" in output


@pytest.mark.slow
def test_the_plot_is_written_from_the_stored_checkpoints(evolved, tmp_path: Path):
    db, _ = evolved
    output = cli(db, "plot", "evolution", "--name", "small", "--out", str(tmp_path), "--no-png")
    html = tmp_path / "evolution.html"
    assert str(html) in output and html.stat().st_size > 100_000
    assert "no-replay-gate" in html.read_text(encoding="utf-8")
