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
    return task_cells(task_id, "")[1]


def task_cells(task_id: str, family: str) -> tuple[str, str]:
    """A task's family and task cells as tables show them. An installed world that names its
    own columns (:attr:`EnvironmentPlugin.columns`) shows them, e.g. ``tw-cooking`` and
    ``level 2 seed 17``; other worlds show the family and the task id without the world's
    prefix (``boil`` and ``boil:3``); tasks of worlds not installed, as stored."""
    prefix, sep, rest = task_id.partition(":")
    if not sep or prefix not in ENVIRONMENTS.entries():
        return family, task_id
    stored_family, _, variation = rest.rpartition(":")
    try:
        plugin = environment_plugin(prefix)
    except PluginError:
        return family, rest
    if plugin.columns is None or not variation.isdigit():
        return family, rest
    columns = dict(plugin.task_columns(stored_family, int(variation)))
    shown = columns.pop("family", family)
    return shown, " ".join(f"{name} {value}" for name, value in columns.items())
