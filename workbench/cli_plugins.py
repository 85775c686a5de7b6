"""Command-line options that read the plugin registries: ``--env`` and ``--agent`` choose among
the installed plugins, and defaults that depend on the environment come from its plugin.

Everything is read when a command runs or its help is shown, never at import, and listing
names imports no plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from workbench.agents.registry import agent_names
from workbench.envs.base import EnvironmentPlugin
from workbench.envs.registry import default_environment, environment_names, environment_plugin
from workbench.plugins import PluginError


class Registered(click.Choice):
    """A choice among the names a registry lists, read when first needed."""

    def __init__(self, names: Callable[[], list[str]]) -> None:
        self._names = names
        super().__init__([])

    @property
    def choices(self) -> Sequence[str]:  # type: ignore[override]
        return self._names()

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        """Click sets the choices it was built with: the registry's win."""


class Lazy:
    """An option's default read when needed, shown in ``--help`` by its value; a plugin that
    cannot be used is a usage error (one line)."""

    def __init__(self, read: Callable[[], str]) -> None:
        self.read = read

    def __call__(self) -> str:
        try:
            return self.read()
        except PluginError as error:
            raise click.UsageError(str(error)) from error

    def __str__(self) -> str:
        return self.read()


def chosen_environment() -> EnvironmentPlugin:
    """The plugin of the environment the command line names so far (``--env`` is declared
    before the options whose defaults depend on it), else the default environment's."""
    context = click.get_current_context(silent=True)
    name = context.params.get("env") if context else None
    return environment_plugin(name or default_environment())


def env_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--env NAME`` among the installed environments (default: the workbench's own),
    passed as ``env``."""
    return click.option(
        "--env",
        "env",
        type=Registered(environment_names),
        default=Lazy(default_environment),
        show_default=True,
        help=help,
    )


def agent_choice() -> Registered:
    """The installed agents' names, as a click choice."""
    return Registered(agent_names)


def families_default(pick: Callable[[EnvironmentPlugin], Sequence[str]]) -> Lazy:
    """A ``--family``-like default: the chosen environment's families that ``pick`` names,
    comma-separated."""
    return Lazy(lambda: ",".join(pick(chosen_environment())))
