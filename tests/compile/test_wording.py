"""What exported artifacts say: guards with their polarity, skill inputs by role, expected
results as patterns — read from the RULES.md and SKILL.md that the offline compiler's
contracts export to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from store import ArtifactVersion, Gate, Store
from tests.compile.cases import blocked, premature, unnamed
from tests.compile.test_heuristic import closure, specs_of
from workbench.admit.repository import export
from workbench.compile.wording import as_pattern, input_names, readable


@pytest.fixture
def exported(store: Store, tmp_path: Path) -> Path:
    """RULES.md and SKILL.md of the contracts compiled from three failure shapes."""
    for member in (blocked(1, 10), premature(2, 11), unnamed(3, 12)):
        [spec] = specs_of(member)
        closed = [a for a in closure(spec, member) if a.closed][-1]
        version = store.stage_version(
            ArtifactVersion(
                artifact=closed.contract["name"],
                version=1,
                kind=closed.kind,
                contract=closed.contract,
            )
        )
        store.record_gate(version.id, "replay", Gate(passed=True), "active")
    export(store, tmp_path / "out")
    return tmp_path / "out"


def shown(text: str) -> str:
    """``text`` as the exported files write it: placeholders' ``<`` escaped (``\\<X>``), so that
    a renderer shows them rather than taking them for HTML tags."""
    return text.replace("<", "\\<")


def section(text: str, heading: str) -> str:
    return text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def test_a_guard_that_must_not_hold_reads_unless(exported: Path):
    rules = (exported / "RULES.md").read_text()
    [named] = [h for h in re.findall(r"^## (\S+)", rules, re.M) if "named" in h]
    assert shown("- Guard: unless the task names <X>;") in section(rules, named)
    [door] = [h for h in re.findall(r"^## (\S+)", rules, re.M) if h.startswith("open-door")]
    guard = next(line for line in section(rules, door).splitlines() if line.startswith("- Guard"))
    assert guard == shown(
        "- Guard: an earlier observation says 'A door to the <X> (that is closed)' about that "
        "<X>; unless 'open door to <X>' was just done"
    )


def test_a_skill_names_its_inputs_by_role_and_expects_a_pattern(exported: Path):
    [path] = (exported / "skills").glob("*/SKILL.md")
    text = path.read_text()
    for instance in ("orange juice", "unknown substance B", "19", "thermometer on"):
        assert instance not in text, instance
    assert not re.search(r"\bE\d+\b", text)
    inputs = text.split("**Inputs.**", 1)[1].split("**Procedure.**", 1)[0]
    assert (
        shown("- <use-target>: a phrase the task names; used in 'use <use-target> on <use-on>'")
        in inputs
    )
    assert shown("- <use-on>: a phrase the task names") in inputs
    assert shown("1. use <use-target> on <use-on>") in text
    expected = next(line for line in text.splitlines() if line.startswith("**Expected result.**"))
    assert (
        shown("'the <use-target> measures a temperature of <number> degrees celsius'") in expected
    )


def test_wording_reads_roles_from_the_action_not_from_the_world():
    names = input_names(["open door to {1}", "go to {1}", "take {E2} from {E3}"])
    assert names == {"1": "place", "E2": "item", "E3": "take-from"}
    assert readable("take {E2} from {E3}", names) == "take <item> from <take-from>"
    assert (
        as_pattern("You take the red key from the 2 boxes.", {"red key": "E2"}, names)
        == "You take the <item> from the <number> boxes."
    )
