"""The installed environments (entry-point group ``workbench.environments``).

Each entry point names an :class:`~workbench.envs.base.EnvironmentPlugin`. The workbench's own
worlds are registered in its ``pyproject.toml`` exactly as another package registers its own.
"""

from __future__ import annotations

from workbench.envs.base import Environment, EnvironmentPlugin, EnvOptions
from workbench.plugins import PluginError, Plugins, UnknownPlugin

ENVIRONMENTS = Plugins("workbench.environments", "environment")
"""Every installed environment plugin, by name."""


def environment_names() -> list[str]:
    """The installed environments' names, sorted (nothing is imported)."""
    return ENVIRONMENTS.names()


def default_environment() -> str:
    """The environment used when none is named: the first (by name) of the workbench's own.

    Raises:
        UnknownPlugin: the workbench's own registration is missing (a broken install).
    """
    builtin = ENVIRONMENTS.builtin()
    if not builtin:
        raise UnknownPlugin(
            "the workbench registers no environment of its own; reinstall it (pip install -e .)"
        )
    return builtin[0]


def environment_plugin(name: str) -> EnvironmentPlugin:
    """The plugin registered as ``name``.

    Raises:
        UnknownPlugin: no installed package registers ``name`` (the message lists the known).
        PluginError: it cannot be loaded, or is not an ``EnvironmentPlugin``.
    """
    plugin = ENVIRONMENTS.load(name)
    if not isinstance(plugin, EnvironmentPlugin):
        entry = ENVIRONMENTS.entries()[name].value
        raise PluginError(f"environment {name!r} ({entry}) is not an EnvironmentPlugin")
    return plugin


def make_environment(name: str, options: EnvOptions) -> Environment:
    """A new environment of the plugin ``name``, built with the run's ``options``."""
    return environment_plugin(name).make(options)


def task_label(task_id: str) -> str:
    """A task id as tables show it: without its environment's prefix when that environment is
    installed (``<environment>:boil:3`` → ``boil:3``), whole otherwise."""
    prefix, sep, rest = task_id.partition(":")
    return rest if sep and prefix in ENVIRONMENTS.entries() else task_id
