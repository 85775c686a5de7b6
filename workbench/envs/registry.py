"""The installed environments (entry-point group ``workbench.environments``).

Each entry point names an :class:`~workbench.envs.base.EnvironmentPlugin`. The workbench's own
worlds are registered in its ``pyproject.toml`` exactly as another package registers its own.
"""

from __future__ import annotations

from functools import cache

from workbench.envs.base import Environment, EnvironmentPlugin, EnvOptions
from workbench.envs.lexicon import PLAIN, Lexicon, Scene
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


@cache
def lexicon_of(name: str) -> Lexicon:
    """How the environment ``name`` reads actions and room texts: its plugin's lexicon, or
    the plain reading when it is not installed or does not load (e.g. imported logs)."""
    try:
        return environment_plugin(name).lexicon
    except PluginError:  # UnknownPlugin is one
        return PLAIN


@cache
def installed_lexicons() -> tuple[Lexicon, ...]:
    """The lexicons of every installed environment that loads, by name, then the plain one."""
    found = [lexicon_of(name) for name in environment_names()]
    return tuple(dict.fromkeys([*(x for x in found if x is not PLAIN), PLAIN]))


def read_scene(text: str, lexicon: Lexicon | None = None) -> Scene | None:
    """The scene a room text shows, read by ``lexicon``; without one, by the first installed
    world's lexicon that reads it (for evidence whose world is not known)."""
    if lexicon is not None:
        return lexicon.scene(text)
    return next((s for x in installed_lexicons() if (s := x.scene(text)) is not None), None)
