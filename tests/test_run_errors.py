"""``error_summary``: the one line a run's summary counts for each error that ended episodes."""

from __future__ import annotations

from workbench.agents.command import AgentCrashed
from workbench.runner import error_summary


def test_an_agent_that_exited_by_itself_is_one_line_whichever_way_it_was_noticed():
    stderr = "Traceback (most recent call last):\n  ...\nImportError: no module named x\n"
    noticed = [
        AgentCrashed("the agent exited without replying (exit status 1)", stderr, 1),
        AgentCrashed("the agent stopped reading its input (exit status 1)", stderr, 1),
    ]
    assert {error_summary(e) for e in noticed} == {
        "agent exited with code 1: ImportError: no module named x"
    }


def test_other_errors_keep_their_type_and_first_line():
    killed = AgentCrashed("no reply within 5 s", "thinking...\n", -9)
    assert error_summary(killed) == "AgentCrashed: no reply within 5 s: thinking..."
    assert error_summary(ValueError("bad action\nmore detail")) == "ValueError: bad action"
    assert error_summary(RuntimeError()) == "RuntimeError"
