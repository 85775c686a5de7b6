"""Search scaling: the first page of ``workbench search`` at 1k, 10k and 50k episodes.

Grows one synthetic database (two steps per episode; "stove" is in every step's observation,
"thermometer" in a third of the steps; each growth its own batch, so the first batch holds the
oldest 1,000 episodes) and at each size times the CPU of the first page of 50 hits —
``Store.search_page``, the newest 2,000 matches ranked — against the query search ran before
(every match ranked by bm25), in the same run and on the same file, unfiltered and with filters
narrow (``--failed --family boil``, ``--family boil``, the oldest batch) and broad (the next
batch, 9,000 episodes; ``--failed``). Each page is checked against every match ranked (ties by rowid): "exact" when
it is the same page, else how many of its hits that page shares. Target: every first page
≤ 50 ms at 50k episodes.

    python bench/search_scaling.py [--sizes 1000,10000,50000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _synthetic

from store import EpisodeFilter, Store
from workbench.ingest import import_paths

FULL_RANK = (
    'SELECT s.episode_id, s."index", s.kind, '
    "snippet(steps_fts, -1, '[', ']', '…', 12) AS snippet "
    "FROM steps_fts JOIN steps s ON s.id = steps_fts.rowid "
    "JOIN episodes e ON e.id = s.episode_id "
    "WHERE steps_fts MATCH ? AND {clause} ORDER BY rank LIMIT ?"
)
"""The search before the window: every match ranked."""

EXACT = (
    's.episode_id, s."index" FROM steps_fts JOIN steps s ON s.id = steps_fts.rowid '
    "JOIN episodes e ON e.id = s.episode_id "
    "WHERE steps_fts MATCH ? AND {clause} ORDER BY rank, steps_fts.rowid LIMIT ?"
)
"""Every match ranked, ties by rowid as ``Store.search_page`` breaks them: the exact page."""

CASES = (
    ("stove", EpisodeFilter()),
    ("thermometer", EpisodeFilter()),
    ("stove --failed --family boil", EpisodeFilter(outcome="failed", family="boil")),
    ("stove --family boil", EpisodeFilter(family="boil")),
    ("stove --batch bench-0", EpisodeFilter(batch="bench-0")),
    ("stove --batch bench-1000", EpisodeFilter(batch="bench-1000")),
    ("stove --failed", EpisodeFilter(outcome="failed")),
)


def cpu_ms(work: Callable[[], object], repeat: int) -> float:
    """Best-of-``repeat`` CPU milliseconds of ``work``."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best * 1e3


def grow(store: Store, folder: Path, start: int, stop: int) -> None:
    """Import episodes ``start`` to ``stop`` (exclusive) of the synthetic set, as batch
    ``bench-<start>``."""
    path = folder / f"episodes-{start}.jsonl"
    with open(path, "w") as handle:
        for number in range(start, stop):
            line = _synthetic.episode_line(number, n_steps=2)
            line["batch"]["id"] = line["batch"]["name"] = line["episode"]["batch_id"] = (
                f"bench-{start}"
            )
            handle.write(json.dumps(line) + "\n")
    import_paths(store, [path])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print("episodes  query                          matches  first page  full rank  ratio   page")
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "search.db") as store:
        held, slowest = 0, (0.0, "")
        for size in sizes:
            grow(store, Path(tmp), held, size)
            held = size
            for label, where in CASES:
                term = label.split()[0]
                clause, params = store.scoped(where).where()
                old = FULL_RANK.format(clause=clause)
                matches = store.conn.execute(
                    f"SELECT count(*) FROM steps_fts JOIN steps s ON s.id = steps_fts.rowid "
                    f"JOIN episodes e ON e.id = s.episode_id WHERE steps_fts MATCH ? AND {clause}",
                    [term, *params],
                ).fetchone()[0]
                page = store.search_page(term, where)
                new_ms = cpu_ms(lambda t=term, w=where: store.search_page(t, w), args.repeat)
                old_ms = cpu_ms(
                    lambda t=term, p=params, sql=old: store.conn.execute(
                        sql, [t, *p, 50]
                    ).fetchall(),
                    args.repeat,
                )
                if size == sizes[-1]:
                    slowest = max(slowest, (new_ms, label))
                exact = [
                    tuple(r)
                    for r in store.conn.execute(
                        f"SELECT {EXACT.format(clause=clause)}", [term, *params, 50]
                    )
                ]
                shown = [(h.episode_id, h.index) for h in page.hits]
                same = "exact" if shown == exact else f"{len(set(shown) & set(exact))}/50 shared"
                ranked = "all ranked" if page.ranked_all else f"newest {page.window:,} ranked"
                print(
                    f"{size:8,}  {label:29}  {matches:7,}  {new_ms:7.1f} ms  {old_ms:6.1f} ms  "
                    f"{old_ms / new_ms:5.1f}×  {same:13} ({ranked})"
                )
    verdict = "OK" if slowest[0] <= 50 else "BELOW TARGET"
    print(
        f"slowest first page at {sizes[-1]:,} episodes: {slowest[0]:.1f} ms CPU ({slowest[1]}; "
        f"target <= 50 ms) {verdict}"
    )


if __name__ == "__main__":
    main()
