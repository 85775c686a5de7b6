"""The longest write-lock hold of a big import: staged in short transactions vs one transaction.

A synthetic file of ``--records`` one-step episodes (the workbench's own JSON lines) is imported
into a fresh database twice, in the same run: as ``workbench import`` does it now (staged in
chunks, each its own transaction, then published in one, see ``store.staging``), and as it was
done before (the whole import inside one transaction, which is what wrapping it in
``Store.transaction`` does). The store times every write transaction from ``BEGIN IMMEDIATE`` to
``COMMIT`` (``Store.locks``). Both run ``--repeat`` times, in turns, each into a fresh database.
Prints, for each, the longest hold (staged: the longest of every run; one transaction: the
shortest run's, so that the ratio is not flattered by load), the number of write transactions
and the least CPU time (``time.process_time``), then the ratio of the longest holds
(before/now: how much shorter other writers' waits get) and of the CPU times (now/before: what
staging costs).

    python bench/lock_hold.py [--records 100000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from store import Store
from workbench.ingest import import_paths


def synthetic(path: Path, records: int) -> Path:
    """``records`` one-step episodes in the workbench's JSON lines, 50 tasks, 5 families."""
    with open(path, "w") as handle:
        for k in range(records):
            task = f"bulk:t{k % 50}"
            line = {
                "format": "trajectory-workbench",
                "version": 1,
                "task": {
                    "id": task,
                    "environment": "bulk",
                    "family": f"f{k % 5}",
                    "split": "train",
                },
                "batch": {"id": "bulk", "name": "bulk", "kind": "import"},
                "episode": {
                    "id": f"bulk-{k:07d}",
                    "task_id": task,
                    "agent": "bulk",
                    "batch_id": "bulk",
                    "outcome": {"success": k % 3 != 0, "message": ""},
                    "source": {"path": "x", "format": "workbench", "hash": "h", "record": str(k)},
                },
                "steps": [
                    {"index": 0, "kind": "action", "action": f"look {k}", "observation": "ok"}
                ],
            }
            handle.write(json.dumps(line) + "\n")
    return path


def measure(db: Path, source: Path, single: bool) -> tuple[float, int, float]:
    """Longest hold (s), write transactions and CPU seconds of one import into ``db``."""
    with Store(db) as store:
        started = time.process_time()
        if single:
            with store.transaction():
                import_paths(store, [source])
        else:
            import_paths(store, [source])
        cpu = time.process_time() - started
        assert store.count_episodes() > 0
        return store.locks.longest, store.locks.holds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, in turns")
    args = parser.parse_args()
    runs: dict[bool, list[tuple[float, int, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        source = synthetic(Path(tmp) / "bulk.jsonl", args.records)
        for k in range(args.repeat):
            for single in (False, True):
                db = Path(tmp) / f"{k}-{single}.db"
                runs[single].append(measure(db, source, single))
                for path in Path(tmp).glob(f"{k}-{single}.db*"):
                    path.unlink()
    new = (max(r[0] for r in runs[False]), runs[False][0][1], min(r[2] for r in runs[False]))
    old = (min(r[0] for r in runs[True]), 1, min(r[2] for r in runs[True]))
    print(f"{'import of ' + format(args.records, ',') + ' records':32} {'max hold':>9} "
          f"{'writes':>7} {'CPU':>8}")  # fmt: skip
    for name, (hold, writes, cpu) in (("one transaction (before)", old), ("staged (now)", new)):
        print(f"{name:32} {hold:8.3f}s {writes:7,} {cpu:7.1f}s")
    print(
        f"longest hold, before/now: {old[0] / new[0]:.0f}x shorter now "
        f"({new[0]:.3f} s; target about 1 s at most); CPU now/before: {new[2] / old[2]:.2f}"
    )


if __name__ == "__main__":
    main()
