"""Repository evolution, the issue's claim checked on a fresh database: under the gated regime
held-out success rises over the stream and signed degradation stays ≤ 0 at every checkpoint,
while the regime without the replay gate loses capability at some checkpoint.

Runs ``workbench evolve`` with its defaults (all three regimes; about 8 minutes on 2 cores)
in a temporary database, or resumes ``--db``. Prints the checkpoints, each regime's
final/reference pass-rate ratio measured in this run, and whether each claim held.

    python bench/evolution.py [--db evolution.db] [--workers 2] [--plot DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _demo

from store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--workers", default="2")
    parser.add_argument("--plot", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = args.db or Path(folder) / "evolution.db"
        started = time.perf_counter()
        _demo.workbench(db, "evolve", "--workers", args.workers)
        print(f"evolve: {time.perf_counter() - started:.0f} s")
        if args.plot:
            print(_demo.workbench(db, "plot", "evolution", "--out", str(args.plot)).strip())
        with Store(db) as store:
            checkpoints = store.checkpoints("evolve")
    by_regime: dict[str, list] = {}
    for c in checkpoints:
        by_regime.setdefault(c.regime, []).append(c)
    for regime, own in by_regime.items():
        rates = " → ".join(f"{c.passed}/{c.total}" for c in own)
        worst = max(c.degradation for c in own)
        ratio = own[-1].passed / max(1, own[0].passed)
        print(f"{regime:>16}: {rates}; max signed degradation {worst:+.1%}; ratio {ratio:.2f}")
    gated = by_regime["gated"]
    rises = gated[-1].passed > gated[0].passed
    held = all(c.degradation <= 0 for c in gated)
    loses = any(c.degradation > 0 for c in by_regime["no-replay-gate"])
    print(f"gated pass rate rises over the stream: {'yes' if rises else 'NO'}")
    print(f"gated signed degradation ≤ 0 at every checkpoint: {'yes' if held else 'NO'}")
    print(f"no-replay-gate positive at some checkpoint: {'yes' if loses else 'NO'}")


if __name__ == "__main__":
    main()
