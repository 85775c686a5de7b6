"""Small recorded databases of real episodes: the scripted agent on one task of each world,
once without mistakes and once per seeded mistake, then analysed and compiled offline (the
session fixtures ``scienceworld_runs`` and ``textworld_runs`` in ``tests/conftest.py``).

Each mistake is one the scripted agent makes on the task's gold path (see
:mod:`workbench.agents.mistakes`), fired with certainty; an episode's id is
``<mode>:<family>:<variation>``, so the failed runs are ``wrong-focus:...`` and the like and
the success is ``clean:...``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from store import EpisodeFilter, Store
from workbench.analyze.analyzer import analyze
from workbench.analyze.heuristic import HeuristicAnalyst
from workbench.compile.compiler import CompileReport, compile_run
from workbench.compile.heuristic import HeuristicCompiler
from workbench.demo import demo_rates
from workbench.envs.base import Environment
from workbench.executors import InProcess
from workbench.runner import AgentSpec, PlannedEpisode, RunConfig, episode_seed, run_batch

SEED = 1
STEP_LIMIT = 60


@dataclass(frozen=True)
class Recorded:
    """A recorded, analysed and compiled database."""

    path: Path
    """The database file."""
    report: CompileReport
    """What compiling its analysis did."""

    def mechanism(self, name: str, source: str = ""):
        """The compiled spec of mechanism ``name`` (whose sources include ``source``)."""
        return next(
            c
            for c in self.report.compiled
            if c.spec.mechanism == name and (not source or source in c.spec.sources)
        )


def record(
    env: Environment, env_name: str, path: Path, episodes: list[tuple[str, int, str]]
) -> Recorded:
    """Play ``(family, variation, mode)`` episodes on ``env`` (``mode``: ``clean``, ``demo``
    for the demo's mistake rates, or a mistake that fires for sure), then analyse every
    failure and compile the clusters offline."""
    with Store(path) as store:
        executor = InProcess(env=env)
        for family, variation, mode in episodes:
            rates = {} if mode == "clean" else demo_rates() if mode == "demo" else {mode: 1.0}
            config = RunConfig(
                env=env_name,
                families=[family],
                episodes=1,
                seed=SEED,
                step_limit=STEP_LIMIT,
                agent=AgentSpec(rates=rates),
            )
            planned = PlannedEpisode(
                id=f"{mode}:{family}:{variation}",
                family=family,
                variation=variation,
                split="train",
                trial=0,
                seed=episode_seed(SEED, family, variation, 0),
            )
            run_batch(store, config, batch=f"{mode}-{family}", executor=executor, plan=[planned])
        analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
        report = compile_run(store, HeuristicCompiler())
    return Recorded(path, report)


SCIENCEWORLD = [
    ("use-thermometer", 1, "clean"),
    ("use-thermometer", 1, "decide-before-check"),
    ("use-thermometer", 1, "skip-route"),
    ("use-thermometer", 1, "wrong-focus"),
]
"""One use-thermometer task: placing the substance before measuring it, heading for the
kitchen two rooms away, focusing on an object the task does not name."""

TEXTWORLD = [
    ("tw-coin_collector-level2", 3, "clean"),
    ("tw-coin_collector-level2", 3, "skip-route"),
    ("tw-coin_collector-level2", 888, "demo"),
]
"""One coin-collector game played cleanly and with a move through an exit its room lacks, and
a game of the demo's where a wrong turn leaves the coin rooms away."""
