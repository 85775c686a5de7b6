"""Synthesis statistics: backward construction and the filters on a small synth batch.

Plays a batch of episodes per world with the scripted agent (its default mistake rates) in the
synth workspace of a fresh database, then runs backward construction (heuristic relabeler) and
the filters (replays on a local pool). Prints relabel calls, examples by kind, kept and
rejected by reason, and the seconds per 100 episodes of each stage, with the ratio of the
synthesis time (backward + filter) to the time it took to play the episodes in the same run
(the filter replays every episode once, so about 1 is what executing instead of trusting
costs).

    python bench/synthesis_stats.py [--episodes 10] [--workers 2] [--keep DIR]
        [--family scienceworld=find-living-thing --family textworld=tw-treasure_hunter-level2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

from store import Store
from store.synth import SYNTH_WORKSPACE
from workbench.executors import LocalPool
from workbench.runner import RunConfig, run_batch
from workbench.synth.backward import construct
from workbench.synth.filters import filter_examples
from workbench.synth.heuristic_relabeler import HeuristicRelabeler

FAMILIES = {"scienceworld": "find-living-thing", "textworld": "tw-treasure_hunter-level2"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10, help="episodes per world")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--step-limit", type=int, default=40)
    parser.add_argument("--family", action="append", default=[], metavar="WORLD=FAMILY")
    parser.add_argument("--keep", type=Path, help="keep the database in this folder")
    args = parser.parse_args()
    families = dict(FAMILIES) | dict(f.split("=", 1) for f in args.family)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="synthesis-stats-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "synth.db"
    with Store(path, workspace=SYNTH_WORKSPACE) as store, LocalPool(args.workers) as pool:
        started = time.perf_counter()
        for world, family in families.items():
            config = RunConfig(
                env=world,
                families=[family],
                episodes=args.episodes,
                seed=7,
                step_limit=args.step_limit,
            )
            run_batch(store, config, executor=pool, batch=f"explore-{world}")
        explored = time.perf_counter() - started
        episodes = store.count_episodes()
        started = time.perf_counter()
        backward = construct(store, relabeler=HeuristicRelabeler())
        built = time.perf_counter() - started
        started = time.perf_counter()
        filtered = filter_examples(store, executor=pool)
        judged = time.perf_counter() - started
        by_world = Counter((e.env, e.kind, e.verdict) for e in store.synth_examples())
    per100 = 100 / max(1, episodes)
    print(f"database: {path}")
    print(f"episodes: {episodes} ({', '.join(f'{w}/{f}' for w, f in families.items())})")
    print(
        f"backward: {backward.relabel_calls} relabel calls "
        f"({backward.relabel_calls / max(1, backward.episodes):.1f} per episode), "
        f"{backward.examples} backward + {backward.whole} whole examples, "
        f"{backward.trimmed} trimmed; of {backward.all_spans} sub-trajectories "
        f"{backward.no_effect} had no observable effect, {backward.capped} left out by the cap"
    )
    rejected = sum(filtered.rejected.values())
    print(
        f"filter: {filtered.kept} kept, {rejected} rejected, {filtered.pending} pending; "
        f"{filtered.replays_played} replays"
    )
    for reason, count in filtered.rejected.most_common():
        print(f"  rejected {count:4d}  {reason}")
    for (world, kind, verdict), count in sorted(by_world.items()):
        print(f"  {world:14s} {kind:9s} {verdict:9s} {count:4d}")
    print(
        f"seconds per 100 episodes: playing {explored * per100:.1f}, backward "
        f"{built * per100:.2f}, filter {judged * per100:.1f}"
    )
    print(f"ratio synthesis / playing: {(built + judged) / explored:.2f}")


if __name__ == "__main__":
    main()
