"""Every command of README's Example runs, in order, on a demo database and prints a result
(see ``tests/readme_example.py`` for how it is played)."""

from __future__ import annotations

import re

import pytest

from scripts.readme_figures import SKIPPED
from tests.readme_example import COMMANDS

EMPTY = re.compile(r"^(0 hit\(s\)|0 of 0 episode|nothing (?:is|to|was) )", re.M)


def test_the_example_block_is_read():
    assert COMMANDS[0] == "workbench demo" and len(COMMANDS) >= 15
    assert all(c.startswith("workbench ") for c in COMMANDS)
    assert sum(any(k in c for k in SKIPPED) for c in COMMANDS) == len(SKIPPED)


@pytest.mark.slow
def test_every_example_command_prints_a_result_on_the_demo_database(readme_example):
    _, played = readme_example
    assert len(played) == len(COMMANDS) - len(SKIPPED)
    for each in played:
        shown = f"$ {each.command}\n{each.printed}"
        assert each.returncode == 0, shown
        assert each.printed.strip(), shown
        assert not EMPTY.search(each.printed), shown
