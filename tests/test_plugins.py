"""Entry-point registries: names without imports, one-line errors for unknown or broken plugins."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest

from workbench.plugins import PluginError, Plugins, UnknownPlugin


def test_a_group_nobody_registers_lists_nothing_and_says_so():
    plugins = Plugins("workbench.nothing-here", "widget")
    assert plugins.names() == [] and plugins.builtin() == []
    with pytest.raises(UnknownPlugin, match="unknown widget 'x'; known: none installed"):
        plugins.load("x")


def test_a_plugin_that_cannot_be_imported_is_one_line(monkeypatch):
    plugins = Plugins("workbench.test-group", "widget")
    broken = EntryPoint("gone", "no_such_module_anywhere:THING", "workbench.test-group")
    monkeypatch.setattr(plugins, "entries", lambda: {"gone": broken})
    assert plugins.names() == ["gone"] and plugins.builtin() == []
    with pytest.raises(PluginError, match="widget 'gone' cannot be loaded from no_such_module"):
        plugins.load("gone")


def test_listing_names_and_run_help_import_no_plugin():
    code = """
import sys
from workbench.agents.registry import AGENTS, agent_names
from workbench.cli import main
from workbench.envs.registry import ENVIRONMENTS, default_environment, environment_names, task_label

environment_names(), agent_names(), default_environment(), task_label("x:y:1")
main(["run", "--help"], standalone_mode=False)
modules = {e.module for p in (ENVIRONMENTS, AGENTS) for e in p.entries().values()}
print("plugins:", len(modules), "loaded:", sorted(modules & set(sys.modules)))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "loaded: []" in result.stdout and "plugins: 0" not in result.stdout
