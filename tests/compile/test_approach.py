"""A subagent's offline strategy is chosen from how the successes carried the correction out,
in terms of what their world offered (read through its lexicon), not fixed in advance."""

from __future__ import annotations

import pytest

from tests.agents.test_guidance_exits import COMPASS
from tests.compile.cases import steps
from workbench.compile.obligations import Correction, Run, approach_of
from workbench.envs.lexicon import PLAIN
from workbench.llm.steps import CaseStep


def correction(*rows: tuple[str, str], lexicon=COMPASS) -> Correction:
    """A run whose world reads room texts headed ``-= Room =-`` (compass exits)."""
    taken = tuple(steps(*rows))
    run = Run("s1", "Find the key.", lexicon, (CaseStep(index=0, observation="start"), *taken))
    return Correction(run, taken, taken[-1].index, frozenset())


@pytest.mark.parametrize(
    ("rows", "strategy", "action", "tools"),
    [
        (
            [("go north", "-= Hall =-"), ("go east", "-= Study =-"), ("take key", "Taken.")],
            "search-exits",
            "",
            ("move", "open"),
        ),
        (
            [("go north", "-= Hall =-"), ("open chest", "Inside: a key."), ("take key", "Ok.")],
            "search-containers",
            "",
            ("move", "open"),
        ),
        (
            [("examine kettle", "Warm."), ("examine kettle", "Hot."), ("examine kettle", "Boils.")],
            "wait-for-change",
            "examine kettle",
            ("check", "wait"),
        ),
        (
            [("test iron wire", "No."), ("test copper wire", "Lights."), ("take copper", "Ok.")],
            "test-candidates",
            "test {candidate}",
            ("other",),
        ),
    ],
)
def test_the_strategy_follows_what_the_run_did(rows, strategy, action, tools):
    found = approach_of(correction(*rows))
    assert found is not None and found.strategy == strategy
    assert (found.action, found.tools) == (action, tools)
    assert found.citations  # it names the steps it was read from


def test_a_correction_of_unrelated_steps_offers_no_strategy():
    assert approach_of(correction(("take key", "Taken."), ("drop key", "Dropped."))) is None


def test_moves_in_a_world_whose_rooms_cannot_be_read_offer_no_search():
    walked = correction(("go north", "-= Hall =-"), ("take key", "Taken."), lexicon=PLAIN)
    assert approach_of(walked) is None
