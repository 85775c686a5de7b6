"""Runner scaling: episodes per minute with 1 worker process against one per core.

Both runs play the same plan (the scripted agent on real ScienceWorld tasks) through the same
local process pool, each into a fresh database, so worker start-up (one JVM each) is paid in
both. Prints the rates and the parallel efficiency, rate(K) / (K · rate(1)) (target ≥ 0.8).

    python bench/runner_scaling.py [--episodes 48] [--families use-thermometer,find-living-thing]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from store import Store
from workbench.executors import LocalPool
from workbench.runner import RunConfig, run_batch


def rate(config: RunConfig, workers: int, folder: Path) -> float:
    """Episodes per minute for one run of ``config`` on ``workers`` processes."""
    with Store(folder / f"w{workers}.db") as store, LocalPool(workers) as executor:
        started = time.perf_counter()
        report = run_batch(store, config, batch="bench", executor=executor)
        elapsed = time.perf_counter() - started
    assert report.finished == config.episodes
    return config.episodes / elapsed * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=48)
    parser.add_argument("--families", default="use-thermometer,find-living-thing")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="K (default: cores)"
    )
    args = parser.parse_args()
    config = RunConfig(families=args.families.split(","), episodes=args.episodes, seed=11)
    with tempfile.TemporaryDirectory() as tmp:
        one = rate(config, 1, Path(tmp))
        many = rate(config, args.workers, Path(tmp))
    efficiency = many / (args.workers * one)
    print(f"{args.episodes} episodes of {args.families}")
    print(f"1 worker : {one:6.1f} episodes/min")
    print(f"{args.workers} workers: {many:6.1f} episodes/min")
    verdict = "OK" if efficiency >= 0.8 else "BELOW TARGET"
    print(f"parallel efficiency: {efficiency:.2f} (target >= 0.8) {verdict}")


if __name__ == "__main__":
    main()
