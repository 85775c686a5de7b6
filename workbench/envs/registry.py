"""The installed environments (entry-point group ``workbench.environments``).

Each entry point names an :class:`~workbench.envs.base.EnvironmentPlugin`. The workbench's own
worlds are registered in its ``pyproject.toml`` exactly as another package registers its own.
"""

from __future__ import annotations

from functools import cache, cached_property

from workbench.envs.base import Environment, EnvironmentPlugin, EnvOptions
from workbench.envs.lexicon import PHRASE_FREE, PLAIN, ActionRole, Lexicon, Role, Scene
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


@cache
def lexicon_of(name: str) -> Lexicon:
    """How the environment ``name`` reads actions and room texts: its plugin's lexicon; for
    an environment that is not installed or does not load (e.g. imported logs), every
    installed world's reading at once (:data:`INSTALLED`, which falls back to the plain one)."""
    try:
        return environment_plugin(name).lexicon
    except PluginError:  # UnknownPlugin is one
        return INSTALLED


def world_lexicon(name: str) -> Lexicon:
    """How the analyzer reads an episode's texts: its world's lexicon when ``name`` is an
    installed world, else the plain reading with no world's error phrases
    (:data:`~workbench.envs.lexicon.PHRASE_FREE`): imported logs are read for what any log
    says, never for one world's vocabulary."""
    try:
        return environment_plugin(name).lexicon
    except PluginError:
        return PHRASE_FREE


@cache
def installed_lexicons() -> tuple[Lexicon, ...]:
    """The lexicons of every installed environment that loads, by name, then the plain one."""
    found = []
    for name in environment_names():
        try:
            found.append(environment_plugin(name).lexicon)
        except PluginError:
            continue
    return tuple(dict.fromkeys([*found, PLAIN]))


class InstalledLexicons(Lexicon):
    """The reading of a text whose world is not known: each question is answered by the
    first installed world's lexicon that can (verbs: all of theirs), else the plain one."""

    @cached_property
    def verbs(self) -> dict[str, Role]:  # type: ignore[override]
        merged: dict[str, Role] = {}
        for lexicon in reversed(installed_lexicons()):
            merged |= lexicon.verbs
        return merged

    def role(self, action: str) -> ActionRole:
        text = " ".join(action.lower().split())
        best, length = PLAIN, -1
        for lexicon in installed_lexicons():
            verb = lexicon.known_verb(text)
            if verb is not None and len(verb) > length:
                best, length = lexicon, len(verb)
        return best.role(action)

    def is_navigation(self, action: str) -> bool:
        return any(x.is_navigation(action) for x in installed_lexicons())

    def opens_way(self, opened: str, then: str) -> bool:
        return any(x.opens_way(opened, then) for x in installed_lexicons())

    def scene(self, text: str) -> Scene | None:
        return next((s for x in installed_lexicons() if (s := x.scene(text)) is not None), None)

    def error(self, observation: str) -> str | None:
        return next((e for x in installed_lexicons() if (e := x.error(observation))), None)

    def choices(self, decision: str, instruction: str) -> list[str]:
        return next(
            (c for x in installed_lexicons() if (c := x.choices(decision, instruction))), []
        )


INSTALLED = InstalledLexicons()
"""How texts of a world that is not installed read (see :class:`InstalledLexicons`)."""
