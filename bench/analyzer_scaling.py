"""Analyzer scaling: heuristic analysis + clustering of 1,000 against 10,000 failures.

Failures are synthesised from a demo database's real ScienceWorld runs: each failed episode
(with its steps) is copied under new ids as often as needed, alongside the demo's successes,
into a fresh database per size. Prints the time for each size and their ratio (target ≤ 12,
i.e. close to linear).

    python bench/analyzer_scaling.py [--db bench-demo.db] [--small 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from store import EpisodeFilter, Store
from workbench.analyze.analyzer import analyze
from workbench.analyze.heuristic import HeuristicAnalyst


def synthesise(demo: Store, target: Path, failures: int) -> None:
    """A database with the demo's successes and ``failures`` copies of its failures."""
    with Store(target) as store:
        for batch in demo.batches():
            store.put_batch(batch)
        for episode in demo.iter_episodes():
            store.put_task(demo.task(episode.task_id))
        with store.transaction():
            for episode in demo.iter_episodes(EpisodeFilter(outcome="passed")):
                store.add_episode(episode, demo.steps(episode.id))
        originals = demo.episodes(EpisodeFilter(outcome="failed"))
        with store.transaction():
            for n in range(failures):
                source = originals[n % len(originals)]
                copy = source.model_copy(update={"id": f"{source.id}#{n}"})
                steps = [
                    s.model_copy(update={"episode_id": copy.id}) for s in demo.steps(source.id)
                ]
                store.add_episode(copy, steps)


def timed_analysis(path: Path) -> tuple[float, int, int]:
    """Seconds to analyse and cluster every failure in ``path``; analyses and clusters made."""
    with Store(path) as store:
        started = time.perf_counter()
        report = analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
        return time.perf_counter() - started, report.analyzed, report.clusters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", type=Path, default=Path("bench-demo.db"), help="demo database (built if missing)"
    )
    parser.add_argument("--small", type=int, default=1000)
    args = parser.parse_args()
    if not args.db.exists():
        subprocess.run(
            [sys.executable, "-m", "workbench", "demo", "--db", str(args.db)], check=True
        )
    results = []
    with tempfile.TemporaryDirectory() as tmp, Store(args.db) as demo:
        for size in (args.small, 10 * args.small):
            path = Path(tmp) / f"f{size}.db"
            synthesise(demo, path, size)
            seconds, analyzed, clusters = timed_analysis(path)
            print(f"{size:6} failures: {seconds:7.2f} s ({analyzed} analyses, {clusters} clusters)")
            results.append(seconds)
    ratio = results[1] / results[0]
    print(f"ratio 10N/N: {ratio:.1f} (target <= 12) {'OK' if ratio <= 12 else 'ABOVE TARGET'}")


if __name__ == "__main__":
    main()
