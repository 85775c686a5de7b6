"""Regenerate workbench/envs/scienceworld_gold.json from the installed simulator.

.venv/bin/python scripts/scienceworld_gold.py

The simulator's gold-path generator is slow (0.4 to 8 s a variation, against about 0.2 s for
an episode played on it) and not deterministic, so the world keeps each variation's gold path
once made (in the run's database). This file ships the gold paths of the variations that the
demo and runs with the default seed play first — the first ones of each family's seeded
order (:func:`workbench.runner.plan_run`) — so that the demo, README's Example and the example
notebooks follow the same routes on every machine and spend no time generating them. A
variation not in the file has its gold path generated as before.
"""

from __future__ import annotations

import json
import random
import sys
import time

from workbench.envs.scienceworld import GOLD_FILE, PLUGIN, ScienceWorld, _version

PREFIXES = (
    (0, "train", 20),  # `workbench run` with the default seed (README's Example)
    (0, "test", 10),
    (1, "train", 30),  # the demo's train batch: 120 episodes over 4 families
    (2, "test", 10),  # its test batch: 40 episodes
)
"""``(seed, split, variations)``: the first variations of each demo family's seeded order."""


def wanted(env: ScienceWorld) -> list[tuple[str, int, str]]:
    """``(family, variation, split)`` of every variation to generate, in a stable order."""
    seen: dict[tuple[str, int], str] = {}
    for seed, split, count in PREFIXES:
        for family in PLUGIN.demo_families:
            tasks = env.tasks(family, split)
            order = random.Random(f"{seed}:{family}").sample(tasks, len(tasks))
            for task in order[:count]:
                seen.setdefault((family, task.variation), split)
    return [(family, variation, split) for (family, variation), split in sorted(seen.items())]


def main() -> None:
    env = ScienceWorld(step_limit=100)
    simulator = env._env
    paths: dict[str, list[str]] = {}
    todo = wanted(env)
    started = time.monotonic()
    try:
        for done, (family, variation, _) in enumerate(todo, start=1):
            simulator.load(family, variation, "", generateGoldPath=True)
            paths[f"scienceworld:{family}:{variation}"] = [
                str(action) for action in simulator.get_gold_action_sequence()
            ]
            elapsed = time.monotonic() - started
            print(f"{done}/{len(todo)} {family} {variation} ({elapsed:.0f} s)", file=sys.stderr)
    finally:
        env.close()
    document = {
        "scienceworld_version": _version(),
        "simplifications": "",
        "made_by": "scripts/scienceworld_gold.py",
        "paths": paths,
    }
    GOLD_FILE.write_text(json.dumps(document, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(paths)} gold paths to {GOLD_FILE}")


if __name__ == "__main__":
    main()
