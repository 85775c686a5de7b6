"""AutoRefine's Table 2 offline: every regime of ``workbench evolve`` on the same stream and
held-out set, in each world, printed as the paper prints it — held-out pass at the end of the
stream, Δ against the full method (gated) in points with the paired exact McNemar p over the
held-out cases, the final repository's R/S/A, and the largest signed degradation — with the
paper's TravelPlanner Δ beside each row.

Runs ``workbench evolve`` with every regime in a temporary database per world (or resumes
``--db``, one file per world: ``--db DIR``). A masking regime (rules-only, no-subagent) scores
the gated repository of the same checkpoint with those types taken away, as the paper masks a
frozen repository; the others learn on their own.

    python bench/ablations.py [--db DIR] [--env NAME ...] [--workers 2] [--stream-size N]
        [--heldout-size N] [--every N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _demo

from store import REGIMES, Checkpoint, Store
from workbench.admit.stats import mcnemar_exact

PAPER = {
    "gated": ("80.56", "full method"),
    "no-closure": ("−15.00", "w/o closure; direct type selection −6.11"),
    "no-contract-gate": ("−5.56", "w/o contract gate"),
    "no-replay-gate": ("−16.11", "w/o replay gate"),
    "no-preservation": ("−10.56", "w/o preservation cases"),
    "rules-only": ("–", "no such row; w/o skills −20.00 and w/o subagents −8.33 apart"),
    "no-subagent": ("−8.33", "w/o subagents"),
}
"""The paper's Table 2 (TravelPlanner, pass rate in % and Δ in points against 80.56)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None, help="a folder: one database per world")
    parser.add_argument("--env", action="append", default=[], help="repeatable (default: both)")
    parser.add_argument("--workers", default="2")
    parser.add_argument("--stream-size", default=None)
    parser.add_argument("--heldout-size", default=None)
    parser.add_argument("--every", default=None)
    args = parser.parse_args()
    sizes = []
    for option in ("stream_size", "heldout_size", "every"):
        if getattr(args, option) is not None:
            sizes += [f"--{option.replace('_', '-')}", getattr(args, option)]
    regimes = [arg for regime in REGIMES for arg in ("--regime", regime)]
    with tempfile.TemporaryDirectory() as folder:
        root = args.db or Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        for env in args.env or ["scienceworld", "textworld"]:
            db = root / f"ablations-{env}.db"
            started = time.perf_counter()
            _demo.workbench(db, "evolve", "--env", env, "--workers", args.workers, *regimes, *sizes)
            print(
                f"\n{env}: evolve with all {len(REGIMES)} regimes: "
                f"{time.perf_counter() - started:.0f} s"
            )
            with Store(db) as store:
                checkpoints = store.checkpoints("evolve")
            table(checkpoints)


def table(checkpoints: list[Checkpoint]) -> None:
    """The paper-style table of one world's experiment."""
    final: dict[str, Checkpoint] = {}
    worst: dict[str, float] = {}
    for c in checkpoints:
        if c.regime not in final or c.position > final[c.regime].position:
            final[c.regime] = c
        worst[c.regime] = max(worst.get(c.regime, 0.0), c.degradation)
    full = final["gated"]
    print(
        f"{'regime':<17} {'held-out pass':>14} {'Δ pts':>7} {'McNemar p':>9} "
        f"{'R/S/A':>7} {'max deg.':>8}   paper Δ (TravelPlanner)"
    )
    for regime in REGIMES:
        if regime not in final:
            continue
        c = final[regime]
        delta = 100 * (c.pass_rate - full.pass_rate)
        fixed = sum(c.outcomes[k] and not v for k, v in full.outcomes.items())
        broken = sum(v and not c.outcomes[k] for k, v in full.outcomes.items())
        p = "–" if regime == "gated" else f"{mcnemar_exact(fixed, broken):.3f}"
        sizes = "/".join(str(c.sizes.get(k, 0)) for k in ("rule", "skill", "subagent"))
        paper, what = PAPER[regime]
        print(
            f"{regime:<17} {c.passed:>5}/{c.total:<3} {c.pass_rate:>4.0%} "
            f"{'' if regime == 'gated' else f'{delta:+.1f}':>7} {p:>9} {sizes:>7} "
            f"{worst[regime]:>+8.1%}   {paper} ({what})"
        )


if __name__ == "__main__":
    main()
