"""Plugins found through Python entry points, loaded only when one is used.

An installed package adds an environment or an agent by naming an object in its own
``pyproject.toml`` (the workbench registers its built-ins the same way)::

    [project.entry-points."workbench.environments"]
    counter = "counter_world:PLUGIN"

Listing the names reads the installed packages' metadata and imports nothing, so a command's
``--help`` never starts a simulator or loads a model client.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any


class PluginError(ValueError):
    """A plugin that cannot be used, said in one line."""


class UnknownPlugin(PluginError):
    """A name no installed package registers (the message lists the known ones)."""


class Plugins:
    """The entry points of one group, by name.

    Args:
        group: the entry-point group, e.g. ``workbench.environments``.
        noun: what one plugin is, for messages (``environment``, ``agent``).
    """

    def __init__(self, group: str, noun: str) -> None:
        self.group, self.noun = group, noun

    def entries(self) -> dict[str, EntryPoint]:
        """The registered entry points by name (read once per process)."""
        return _entries(self.group)

    def names(self) -> list[str]:
        """Registered names, sorted; nothing is imported."""
        return sorted(self.entries())

    def builtin(self) -> list[str]:
        """Names whose object lives in the workbench itself, sorted."""
        return [n for n, e in sorted(self.entries().items()) if e.module.startswith("workbench.")]

    def load(self, name: str) -> Any:
        """The object registered under ``name`` (its module is imported now).

        Raises:
            UnknownPlugin: no installed package registers ``name``.
            PluginError: its module cannot be imported or lacks the object.
        """
        entry = self.entries().get(name)
        if entry is None:
            known = ", ".join(self.names()) or "none installed"
            raise UnknownPlugin(f"unknown {self.noun} {name!r}; known: {known}")
        try:
            return _load(entry)
        except Exception as error:
            raise PluginError(
                f"{self.noun} {name!r} cannot be loaded from {entry.value}: {error}"
            ) from error


@cache
def _entries(group: str) -> dict[str, EntryPoint]:
    return {entry.name: entry for entry in entry_points(group=group)}


@cache
def _load(entry: EntryPoint) -> Any:
    return entry.load()
