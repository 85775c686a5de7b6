"""The agent registry: the built-in agents are plugins, built from a spec by name."""

from __future__ import annotations

import sys

import pytest

from workbench.agents.base import AgentSpec
from workbench.agents.command import CommandAgent
from workbench.agents.mistakes import default_rates
from workbench.agents.registry import agent_names, make_agent
from workbench.agents.scripted import ScriptedAgent
from workbench.plugins import UnknownPlugin


def test_the_built_in_agents_are_registered():
    assert {"scripted", "command", "openai", "exemplar"} <= set(agent_names())


def test_agents_are_built_from_their_spec():
    scripted = make_agent(AgentSpec(rates={"stop-early": 1.0}), None)
    assert isinstance(scripted, ScriptedAgent) and scripted.rates == {"stop-early": 1.0}
    assert make_agent(AgentSpec(), None).rates == default_rates()
    command = make_agent(AgentSpec(kind="command", cmd=[sys.executable, "a.py"], timeout=5), None)
    assert isinstance(command, CommandAgent)
    assert (command.cmd, command.timeout) == ([sys.executable, "a.py"], 5)


def test_the_llm_agent_needs_the_database():
    with pytest.raises(ValueError, match="needs the database"):
        make_agent(AgentSpec(kind="openai"), None)


def test_an_unknown_agent_lists_the_installed_ones():
    with pytest.raises(
        UnknownPlugin, match="unknown agent 'oracle'; known: command, exemplar, openai, "
    ):
        make_agent(AgentSpec(kind="oracle"), None)
