"""Command-line options that read the plugin registries: ``--env`` and ``--agent`` choose among
the installed plugins, and defaults that depend on the environment come from its plugin.

Everything is read when a command runs or its help is shown, never at import, and listing
names imports no plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from workbench.cli.options import LazyChoice, LazyDefault

if TYPE_CHECKING:
    from workbench.envs.base import EnvironmentPlugin


def environment_names() -> list[str]:
    """The installed environments' names."""
    from workbench.envs.registry import environment_names

    return environment_names()


def default_environment() -> str:
    """The environment used when none is named."""
    from workbench.envs.registry import default_environment

    return default_environment()


def agent_names() -> list[str]:
    """The installed agents' names."""
    from workbench.agents.registry import agent_names

    return agent_names()


def chosen_environment() -> EnvironmentPlugin:
    """The plugin of the environment the command line names so far (``--env`` is declared
    before the options whose defaults depend on it), else the default environment's."""
    from workbench.envs.registry import environment_plugin

    context = click.get_current_context(silent=True)
    name = context.params.get("env") if context else None
    return environment_plugin(name or default_environment())


def env_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--env NAME`` among the installed environments (default: the workbench's own),
    passed as ``env``."""
    return click.option(
        "--env",
        "env",
        type=LazyChoice(environment_names),
        default=LazyDefault(default_environment),
        show_default=True,
        help=help,
    )


def agent_choice() -> LazyChoice:
    """The installed agents' names, as a click choice."""
    return LazyChoice(agent_names)


def families_default(pick: Callable[[EnvironmentPlugin], Sequence[str]]) -> LazyDefault:
    """A ``--family``-like default: the chosen environment's families that ``pick`` names,
    comma-separated."""
    return LazyDefault(lambda: ",".join(pick(chosen_environment())))


def world_families(env: str) -> list[str]:
    """The task families of the world ``env`` (its plugin's list; no simulator started).

    Raises:
        click.BadParameter: no installed plugin is ``env``, or it cannot be loaded.
    """
    from workbench.envs.registry import environment_plugin
    from workbench.plugins import PluginError

    try:
        return environment_plugin(env).families()
    except PluginError as error:
        raise click.BadParameter(str(error), param_hint="--env") from error
