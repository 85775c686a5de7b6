"""Environment speed: reset time and steps per second of each world, through its plugin.

For each world it plays the gold paths of a few train tasks of one family: the first reset of
a task (a world may start its simulator or generate the game then), a second reset of the same
task (what every later episode pays), and steps per second along the gold path (each step with
what the world reports per step, e.g. the admissible commands). Prints a table; no target.

    python bench/env_step.py [--worlds scienceworld,textworld] [--tasks 3] [--family W=F ...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass

from workbench.envs.base import EnvOptions
from workbench.envs.registry import environment_names, environment_plugin


@dataclass
class Speed:
    """One world's measurements."""

    world: str
    family: str
    first_reset: float
    """Median seconds of a task's first reset."""
    reset: float
    """Median seconds of a later reset of the same task."""
    steps_per_second: float
    steps: int


def measure(world: str, family: str, tasks: int, cache_dir: str) -> Speed:
    """Reset and step ``tasks`` train tasks of ``family`` in ``world``."""
    env = environment_plugin(world).make(EnvOptions(step_limit=1000, cache_dir=cache_dir))
    first, again, stepping, steps = [], [], 0.0, 0
    try:
        for task in env.tasks(family, "train")[:tasks]:
            first.append(_timed(lambda t=task: env.reset(t, 0)))
            again.append(_timed(lambda t=task: env.reset(t, 0)))
            gold = env.gold_path()
            started = time.perf_counter()
            for action in gold:
                env.step(action)
            stepping += time.perf_counter() - started
            steps += len(gold)
    finally:
        env.close()
    return Speed(
        world,
        family,
        statistics.median(first),
        statistics.median(again),
        steps / stepping if stepping else 0.0,
        steps,
    )


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", default=",".join(environment_names()))
    parser.add_argument("--tasks", type=int, default=3, help="train tasks per world")
    parser.add_argument(
        "--family",
        action="append",
        default=[],
        metavar="WORLD=FAMILY",
        help="family to play in a world (default: its first demo family)",
    )
    args = parser.parse_args()
    chosen = dict(item.split("=", 1) for item in args.family)
    print(f"{'world':<14}{'family':<28}{'1st reset s':>12}{'reset s':>9}{'steps/s':>9}{'steps':>7}")
    with tempfile.TemporaryDirectory() as cache_dir:
        for world in args.worlds.split(","):
            family = chosen.get(world) or environment_plugin(world).demo_families[0]
            s = measure(world, family, args.tasks, cache_dir)
            print(
                f"{s.world:<14}{s.family:<28}{s.first_reset:>12.2f}{s.reset:>9.3f}"
                f"{s.steps_per_second:>9.1f}{s.steps:>7}"
            )


if __name__ == "__main__":
    main()
