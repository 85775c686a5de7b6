"""The demo database: the scripted agent on the real tasks of every world the workbench ships,
offline. The CLI's ``workbench demo``, the terminal UI's first start and the example notebooks
all build it here.

The default world's batches are ``demo-train`` and ``demo-test``; another world's are
``demo-<world>-train`` and ``demo-<world>-test``."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the runner is imported when a demo is built: the CLI reads the sizes cheaply
    from store import Store
    from workbench.progress import Progress
    from workbench.runner import Executor, RunConfig, RunReport

DEMO_TRAIN, DEMO_TEST = 120, 40
"""Episodes the demo runs on train and on test variations of a world that gives no size of
its own (:attr:`~workbench.envs.base.EnvironmentPlugin.demo_size`)."""


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


def demo_worlds() -> list[str]:
    """The worlds the demo plays: the workbench's own, the default first."""
    from workbench.envs.registry import ENVIRONMENTS, default_environment

    first = default_environment()
    return [first, *(name for name in ENVIRONMENTS.builtin() if name != first)]


def demo_size(env: str) -> tuple[int, int]:
    """Train and test episodes the demo plays in ``env`` when no size is given."""
    from workbench.envs.registry import environment_plugin

    return environment_plugin(env).demo_size


def demo_configs(
    train: int | None = None,
    test: int | None = None,
    families: list[str] | None = None,
    env: str | None = None,
) -> list[tuple[str, RunConfig]]:
    """The demo's runs: the scripted agent on train and on test tasks of ``env`` (default:
    every world of :func:`demo_worlds`), ``train`` and ``test`` episodes in each world
    (default: the world's own :func:`demo_size`). ``families`` needs one ``env``."""
    from workbench.envs.registry import default_environment
    from workbench.runner import AgentSpec, RunConfig

    if families and env is None:
        env = default_environment()
    agent = AgentSpec(rates=demo_rates())
    configs = []
    for world in [env] if env else demo_worlds():
        own_train, own_test = demo_size(world)
        prefix = "demo" if world == default_environment() else f"demo-{world}"
        chosen = families or demo_families(world)
        for split, episodes, seed in (
            ("train", train or own_train, 1),
            ("test", test or own_test, 2),
        ):
            config = RunConfig(
                env=world, families=chosen, split=split, episodes=episodes, seed=seed, agent=agent
            )
            configs.append((f"{prefix}-{split}", config))
    return configs


def build_demo(
    store: Store,
    train: int | None = None,
    test: int | None = None,
    *,
    executor: Executor,
    families: list[str] | None = None,
    env: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> list[RunReport]:
    """Run (or resume) the demo's batches into ``store``, playing them on ``executor``
    (arguments as :func:`demo_configs`)."""
    from workbench.runner import run_batch

    return [
        run_batch(store, config, executor=executor, batch=name, progress=progress, cancel=cancel)
        for name, config in demo_configs(train, test, families, env)
    ]
