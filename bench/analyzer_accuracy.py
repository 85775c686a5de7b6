"""Analyzer accuracy: how often the heuristic causal step lands within ±1 step of the scripted
agent's first mistake (its recorded ground truth, which the analyzer never reads).

Runs on a demo database of one environment (built when the file does not exist: the scripted
agent on the families the environment's plugin suggests for its demo, or ``--family``). Prints
the hit rate overall and per mistake mode and per family (target ≥ 80%). Only the environment's
own episodes are measured, so one database may hold several worlds.

    python bench/analyzer_accuracy.py [--env NAME] [--db bench-demo.db] [--family a,b]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from store import EpisodeFilter, Store
from workbench.agents.scripted import TRUTH_KEY
from workbench.analyze.causes import benign_errors, find_cause
from workbench.envs.registry import default_environment, environment_names


def build(
    db: Path, env: str, families: list[str] | None, train: int | None, test: int | None
) -> None:
    """Play the demo's batches of ``env`` into ``db`` (resumed when they exist)."""
    from workbench.demo import demo_configs
    from workbench.executors import LocalPool
    from workbench.runner import run_batch

    with Store(db) as store, LocalPool(2) as executor:
        for name, config in demo_configs(train, test, families, env):
            report = run_batch(store, config, executor=executor, batch=name)
            print(f"{name}: {report.finished} episode(s), {report.failed} failed")


def measure(db: Path, env: str) -> collections.Counter:
    """Hits and totals per key (``all``, ``mode …``, ``family …``, ``by …``)."""
    counts: collections.Counter = collections.Counter()
    benign: dict[str, set[tuple[str, str]]] = {}
    with Store(db) as store:
        for episode in store.iter_episodes(EpisodeFilter(outcome="failed")):
            task = store.task(episode.task_id)
            mistakes = episode.metadata.get(TRUTH_KEY, {}).get("mistakes", [])
            if task is None or task.environment != env or not mistakes:
                continue  # another world, or failed without a mistake (a long gold path)
            if episode.family not in benign:
                benign[episode.family] = benign_errors(store, episode.family)
            found = find_cause(store, episode, benign[episode.family])
            first = mistakes[0]
            hit = abs(found.step - first["step"]) <= 1
            for key in ("all", f"mode {first['mode']}", f"family {episode.family}"):
                counts[("total", key)] += 1
                counts[("hit", key)] += hit
            counts[("total", f"by {found.evidence}")] += 1
            counts[("hit", f"by {found.evidence}")] += hit
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", help="environment plugin (default: the default environment)")
    parser.add_argument("--db", type=Path, default=Path("bench-demo.db"))
    parser.add_argument("--family", help="comma-separated families (default: the demo's)")
    parser.add_argument("--train", type=int, help="train episodes to build (default: the demo's)")
    parser.add_argument("--test", type=int, help="test episodes to build (default: the demo's)")
    args = parser.parse_args()
    env = args.env or default_environment()
    if env not in environment_names():
        sys.exit(f"unknown environment {env!r}; installed: {', '.join(environment_names())}")
    families = args.family.split(",") if args.family else None
    if not args.db.exists() or args.family:
        build(args.db, env, families, args.train, args.test)
    counts = measure(args.db, env)
    keys = sorted({k for _, k in counts}, key=lambda k: (k != "all", k))
    for key in keys:
        hits, total = counts[("hit", key)], counts[("total", key)]
        print(f"{key:32} {hits:4}/{total:<4} {hits / total:6.1%}")
    total = counts[("total", "all")]
    rate = counts[("hit", "all")] / total if total else 0.0
    verdict = "OK" if rate >= 0.8 else "BELOW TARGET"
    print(
        f"{env}: causal step within ±1 of the first mistake: {rate:.1%} (target >= 80%) {verdict}"
    )


if __name__ == "__main__":
    main()
