"""The demo database: the scripted agent on the default environment's real tasks, offline.
The CLI's ``workbench demo``, the terminal UI's first start and the example notebooks all build
it here."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the runner is imported when a demo is built: the CLI reads the sizes cheaply
    from store import Store
    from workbench.progress import Progress
    from workbench.runner import Executor, RunConfig, RunReport

DEMO_TRAIN, DEMO_TEST = 120, 40
"""Episodes the demo runs on train and on test variations by default."""


def demo_rates() -> dict[str, float]:
    """The demo agent's mistake rates: the defaults, with deciding before measuring (the
    failure AutoRefine's running example is known for) as common as it is in LLM agents."""
    from workbench.agents.mistakes import default_rates

    return {**default_rates(), "decide-before-check": 0.2}


def demo_families(env: str | None = None) -> list[str]:
    """The families the demo plays in ``env`` (default: the workbench's default environment),
    as its plugin suggests them."""
    from workbench.envs.registry import default_environment, environment_plugin

    return list(environment_plugin(env or default_environment()).demo_families)


def demo_configs(
    train: int = DEMO_TRAIN,
    test: int = DEMO_TEST,
    families: list[str] | None = None,
    env: str | None = None,
) -> list[tuple[str, RunConfig]]:
    """The demo's runs: the scripted agent on train and on test variations of ``env``
    (default: the workbench's default environment)."""
    from workbench.envs.registry import default_environment
    from workbench.runner import AgentSpec, RunConfig

    agent = AgentSpec(rates=demo_rates())
    env = env or default_environment()
    families = families or demo_families(env)
    return [
        (
            "demo-train",
            RunConfig(
                env=env, families=families, split="train", episodes=train, seed=1, agent=agent
            ),
        ),
        (
            "demo-test",
            RunConfig(env=env, families=families, split="test", episodes=test, seed=2, agent=agent),
        ),
    ]


def build_demo(
    store: Store,
    train: int = DEMO_TRAIN,
    test: int = DEMO_TEST,
    *,
    executor: Executor,
    families: list[str] | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> list[RunReport]:
    """Run (or resume) the demo's batches into ``store``, playing them on ``executor``."""
    from workbench.runner import run_batch

    return [
        run_batch(store, config, executor=executor, batch=name, progress=progress, cancel=cancel)
        for name, config in demo_configs(train, test, families)
    ]
