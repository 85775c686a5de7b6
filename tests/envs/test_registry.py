"""The environment registry: ScienceWorld is found through its entry point like any plugin,
and nothing outside a world's own module names it."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from workbench.envs import scienceworld
from workbench.envs.base import EnvOptions
from workbench.envs.registry import (
    ENVIRONMENTS,
    default_environment,
    environment_names,
    environment_plugin,
    make_environment,
    task_cells,
    task_label,
)
from workbench.plugins import PluginError, UnknownPlugin

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ("store", "workbench", "tui")
"""The packages in which only a world's own module may name it."""


def test_scienceworld_is_registered_and_is_the_default():
    assert "scienceworld" in environment_names()
    assert default_environment() == "scienceworld"
    assert environment_plugin("scienceworld") is scienceworld.PLUGIN
    assert scienceworld.PLUGIN.families() == scienceworld.task_names()
    assert set(scienceworld.PLUGIN.demo_families) <= set(scienceworld.task_names())
    assert "use-thermometer" not in scienceworld.PLUGIN.evolve_defaults()


def test_the_plugin_builds_the_adapter_with_the_run_options():
    env = make_environment("scienceworld", EnvOptions(step_limit=7, simplifications="easy"))
    assert isinstance(env, scienceworld.ScienceWorld)
    assert (env.name, env.step_limit, env.simplifications) == ("scienceworld", 7, "easy")
    env.close()


def test_an_unknown_environment_lists_the_installed_ones():
    with pytest.raises(UnknownPlugin, match=r"unknown environment 'abacus'; known: .*scienceworld"):
        environment_plugin("abacus")


def test_an_entry_point_that_is_no_plugin_is_one_line(monkeypatch):
    odd = EntryPoint("odd", "os.path:sep", "workbench.environments")
    monkeypatch.setattr(ENVIRONMENTS, "entries", lambda: {"odd": odd})
    with pytest.raises(PluginError, match=r"environment 'odd' \(os.path:sep\) is not an Environ"):
        environment_plugin("odd")


def test_task_labels_drop_an_installed_environments_prefix_only():
    assert task_label("scienceworld:boil:3") == "boil:3"
    assert task_label("react-text:boil-water") == "react-text:boil-water"
    assert task_label("no-prefix") == "no-prefix"


def test_tables_show_a_task_through_its_worlds_own_columns():
    """A world that names its columns shows them (family, then level and seed); one that does
    not shows its family and variation; a world not installed, what was stored."""
    assert task_cells("textworld:tw-cooking-level2:17", "tw-cooking-level2") == (
        "tw-cooking",
        "level 2 seed 17",
    )
    assert task_cells("scienceworld:boil:3", "boil") == ("boil", "boil:3")
    assert task_cells("react-text:boil-water", "boil") == ("boil", "react-text:boil-water")


def test_nothing_outside_a_worlds_own_module_names_it():
    for name in ENVIRONMENTS.builtin():
        module = ENVIRONMENTS.entries()[name].module
        own = ROOT / (module.replace(".", "/") + ".py")
        assert own.exists(), own
        pattern = re.compile(re.escape(name), re.IGNORECASE)
        naming = [
            f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for package in SOURCE
            for path in sorted((ROOT / package).rglob("*.py"))
            if path != own
            for number, line in enumerate(path.read_text().splitlines(), start=1)
            if pattern.search(line)
        ]
        assert not naming, f"{name} is named outside {own.name}:\n" + "\n".join(naming)
