"""Failure list speed: the indexed failures-first query against a full table scan.

Builds 20,000 episodes, then times the database work of the failure list — the count and the
first page of 50 rows that ``workbench ls --failed --family boil`` shows, and two neighbours —
on the workbench schema (the count summed from ``episode_counts``, the page walking an index)
and on a copy of the same database with the episode indexes dropped, counting the episodes
themselves (the queries then scan the table). Also shows the count over the index alone, the
workbench before ``episode_counts``, and what ``ls`` spends in all on the workbench schema, the
page's records built (``Store.count_episodes`` and ``Store.listing``), and the page alone on
both schemas (where failures are common, as in ``ls --failed``, the scan finds its first page
about as fast as the index does: the ratio is then at most the scan's count over the page).
Times are CPU (best of ``--repeat`` runs spread over half a second), so that other work on
the machine moves them less. Prints the ratio scan/workbench (target ≥ 20).

    python bench/failure_list.py [--episodes 20000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _synthetic

from store import EpisodeFilter, Store
from workbench.ingest import import_paths


def timed(
    store: Store, where: EpisodeFilter, repeat: int, counted: bool = True, count: bool = True
) -> float:
    """Best-of-``repeat`` CPU seconds for the database work of ``workbench ls`` with ``where``.

    That is the count shown under the list plus the first page of 50 rows, with exactly the
    queries ``Store.count_episodes`` and ``Store.listing`` run: the page reads the listed
    columns the filter leaves open, on both schemas; ``counted=False`` counts the episodes
    themselves, as before ``episode_counts``; ``count=False`` times the page alone. Turning
    rows into records costs the same with or without indexes and is left out, so the ratio
    shows the database.
    """
    where = store.scoped(where)
    page = store.listing_query(where, limit=50)
    page_sql, page_params = page.sql, page.params
    if counted:
        count_sql, params = store.count_query(where)
    else:
        clause, params = where.where()
        count_sql = f"SELECT count(*) FROM episodes e WHERE {clause}"
    cursor = store.conn.cursor()
    cursor.row_factory = None  # as Store.listing reads its page
    return best_of(
        repeat,
        lambda: (
            count and store.conn.execute(count_sql, params).fetchone(),
            cursor.execute(page_sql, page_params).fetchall(),
        ),
    )


SPREAD = 0.5
"""Seconds (wall clock) that each measurement's runs are spread over at least."""


def best_of(repeat: int, work: Callable[[], object]) -> float:
    """The least CPU time, in seconds, of ``repeat`` runs of ``work``, run on until
    :data:`SPREAD` seconds have passed: 200 runs of the indexed queries take a few
    milliseconds, one stretch of a busy machine, where those of the scan take a quarter of a
    second; spread alike, both sides' best runs are ones the machine left alone."""
    best, runs, until = float("inf"), 0, time.perf_counter() + SPREAD
    while runs < repeat or time.perf_counter() < until:
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
        runs += 1
    return best


def listed(store: Store, where: EpisodeFilter, repeat: int) -> float:
    """Best-of-``repeat`` CPU seconds of what ``workbench ls`` asks the store for, in all."""
    return best_of(repeat, lambda: (store.count_episodes(where), store.listing(where, limit=50)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = _synthetic.write(folder / "episodes.jsonl", args.episodes, n_steps=2)
        indexed_db, scan_db = folder / "indexed.db", folder / "scan.db"
        with Store(indexed_db) as store:
            import_paths(store, [source])
        shutil.copy(indexed_db, scan_db)
        with Store(scan_db) as scan:
            names = [
                r[0]
                for r in scan.conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'episodes' AND sql IS NOT NULL"
                )
            ]
            for name in names:
                scan.conn.execute(f"DROP INDEX {name}")
        print(f"{args.episodes:,} episodes; dropped for the scan: {', '.join(names)}")
        with Store(indexed_db) as indexed, Store(scan_db) as scan:
            for label, where in (
                ("ls --failed --family boil", EpisodeFilter(outcome="failed", family="boil")),
                ("ls --family boil (failures first)", EpisodeFilter(family="boil")),
                ("ls --failed", EpisodeFilter(outcome="failed")),
            ):
                fast = timed(indexed, where, args.repeat)
                index_only = timed(indexed, where, args.repeat, counted=False)
                slow = timed(scan, where, args.repeat, counted=False)
                in_all = listed(indexed, where, args.repeat)
                pages = [timed(db, where, args.repeat, count=False) for db in (indexed, scan)]
                verdict = "OK" if slow / fast >= 20 else "BELOW TARGET"
                print(
                    f"{label:34}: {indexed.count_episodes(where):6} matches  workbench {fast * 1e3:6.3f} ms  "
                    f"(count over the index {index_only * 1e3:6.3f} ms; records built "
                    f"{in_all * 1e3:6.3f} ms)  scan {slow * 1e3:6.3f} ms  "
                    f"ratio {slow / fast:6.1f} (target >= 20) {verdict}  "
                    f"[page alone {pages[0] * 1e3:.3f} ms, on the scan {pages[1] * 1e3:.3f} ms]"
                )


if __name__ == "__main__":
    main()
