"""Repository evolution, the issue's claim checked on a fresh database: under the gated regime
held-out success rises over the stream and signed degradation stays ≤ 0 at every checkpoint,
while the regime without the replay gate loses capability at some checkpoint.

Runs ``workbench evolve`` with its defaults (all three regimes; about 8 minutes on 2 cores on
the default world) in a temporary database, or resumes ``--db``; ``--env`` learns in another
installed world (its plugin's default families, 60 learning and 30 held-out tasks), and
``--regime`` limits the regimes. Prints the checkpoints, each regime's final/reference
pass-rate ratio measured in this run, the artifact types that became active, and whether each
claim held.

    python bench/evolution.py [--db evolution.db] [--env NAME] [--regime R ...] [--workers 2]
        [--plot DIR]
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
from workbench.evolution.experiment import workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--workers", default="2")
    parser.add_argument("--plot", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--env", default=None, help="the world to learn in (default: the default)")
    parser.add_argument("--regime", action="append", default=[], help="repeatable (default: all)")
    args = parser.parse_args()
    options = ["--env", args.env] if args.env else []
    for regime in args.regime:
        options += ["--regime", regime]
    with tempfile.TemporaryDirectory() as folder:
        db = args.db or Path(folder) / "evolution.db"
        started = time.perf_counter()
        _demo.workbench(db, "evolve", "--workers", args.workers, *options)
        print(f"evolve: {time.perf_counter() - started:.0f} s")
        if args.plot:
            print(_demo.workbench(db, "plot", "evolution", "--out", str(args.plot)).strip())
        with Store(db) as store:
            checkpoints = store.checkpoints("evolve")
        active = {regime: _active_kinds(db, regime) for regime in {c.regime for c in checkpoints}}
    by_regime: dict[str, list] = {}
    for c in checkpoints:
        by_regime.setdefault(c.regime, []).append(c)
    for regime, own in by_regime.items():
        rates = " → ".join(f"{c.passed}/{c.total}" for c in own)
        worst = max(c.degradation for c in own)
        ratio = own[-1].passed / max(1, own[0].passed)
        print(f"{regime:>16}: {rates}; max signed degradation {worst:+.1%}; ratio {ratio:.2f}")
    for regime, kinds in sorted(active.items()):
        print(f"{regime:>16}: active at the end: {', '.join(kinds) or 'nothing'}")
    gated = by_regime["gated"]
    rises = gated[-1].passed > gated[0].passed
    held = all(c.degradation <= 0 for c in gated)
    print(f"gated pass rate rises over the stream: {'yes' if rises else 'NO'}")
    print(f"gated signed degradation ≤ 0 at every checkpoint: {'yes' if held else 'NO'}")
    kinds = active.get("gated", [])
    print(f"gated artifact types active: {len(kinds)} (target ≥ 2 on a second world)")
    if "no-replay-gate" in by_regime:
        loses = any(c.degradation > 0 for c in by_regime["no-replay-gate"])
        print(f"no-replay-gate positive at some checkpoint: {'yes' if loses else 'NO'}")


def _active_kinds(db: Path, regime: str) -> list[str]:
    """The artifact kinds active in a regime's workspace at the end of the experiment."""
    with Store(db, workspace=workspace("evolve", regime)) as store:
        return sorted({v.kind for v in store.versions(status="active")})


if __name__ == "__main__":
    main()
