"""Simulator start-up: ScienceWorld's JVM from its class-data archive against without one.

Starts the simulator ``--starts`` times each way, alternating (which goes first alternates
too, so both meet the same drift of a shared machine), and measures each start from building
the world to its first observation of a task (wall clock), and the CPU of this process and
the JVM from the start until the JVM has exited (``getrusage`` of this process and its
waited-for children). With the archive is the world's default (made first if missing, not
measured); without is the same options given through ``WORKBENCH_SCIENCEWORLD_JVM``, which
replaces the archive. Prints the medians and their ratios; no target.

    python bench/jvm_start.py [--starts 6] [--family use-thermometer]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

from workbench.envs.scienceworld import (
    JVM_OPTIONS,
    JVM_OPTIONS_VARIABLE,
    ScienceWorld,
    class_archive,
    make_class_archive,
)


def cpu_seconds() -> float:
    """CPU of this process and of its children that have exited."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def start(family: str) -> tuple[float, float]:
    """Seconds to the first observation, and CPU seconds until the JVM has exited."""
    began, cpu = time.perf_counter(), cpu_seconds()
    world = ScienceWorld()
    world.reset(world.tasks(family, "train")[0], 0)
    wall = time.perf_counter() - began
    jvm = world._env._gateway.java_process
    world.close()
    jvm.wait()
    return wall, cpu_seconds() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=6)
    parser.add_argument("--family", default="use-thermometer")
    args = parser.parse_args()
    os.environ.pop(JVM_OPTIONS_VARIABLE, None)
    if not make_class_archive():
        parser.exit(1, "no class-data archive could be made (see the warning above)\n")
    print(f"archive: {class_archive().path}")
    ways = {"archive": None, "none": " ".join(JVM_OPTIONS)}
    measured: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
    for k in range(args.starts):
        for way in list(ways) if k % 2 == 0 else list(reversed(ways)):
            if ways[way] is None:
                os.environ.pop(JVM_OPTIONS_VARIABLE, None)
            else:
                os.environ[JVM_OPTIONS_VARIABLE] = ways[way]
            measured[way].append(start(args.family))
    medians = {}
    for way, runs in measured.items():
        medians[way] = tuple(statistics.median(run[i] for run in runs) for i in (0, 1))
        each = " ".join(f"{wall:.2f}/{cpu:.2f}" for wall, cpu in runs)
        print(
            f"{'with the archive' if way == 'archive' else 'without':>17}: first observation "
            f"{medians[way][0]:.2f} s, CPU {medians[way][1]:.2f} s (median; each start {each})"
        )
    (wall, cpu), (wall_none, cpu_none) = medians["archive"], medians["none"]
    print(f"with/without: wall {wall / wall_none:.2f}, CPU {cpu / cpu_none:.2f}")


if __name__ == "__main__":
    main()
