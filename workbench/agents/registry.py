"""The installed agents (entry-point group ``workbench.agents``).

Each entry point names an :class:`~workbench.agents.base.AgentFactory`; the workbench's own
agents (scripted, command, openai) are registered in its ``pyproject.toml`` as any package's.
"""

from __future__ import annotations

from workbench.agents.base import Agent, AgentSpec
from workbench.plugins import Plugins

AGENTS = Plugins("workbench.agents", "agent")
"""Every installed agent plugin, by name."""


def agent_names() -> list[str]:
    """The installed agents' names, sorted (nothing is imported)."""
    return AGENTS.names()


def make_agent(spec: AgentSpec, db_path: str | None, manual: str = "") -> Agent:
    """The agent ``spec`` names, built by its plugin.

    Raises:
        UnknownPlugin: no installed package registers ``spec.kind`` (the message lists them).
    """
    return AGENTS.load(spec.kind)(spec, db_path, manual)
