"""README's times and numbers are the figures ``scripts/readme_figures.py`` measured: every
marked passage and every time in the Example is what the script writes from
``scripts/readme_figures.json``, and that file measured the Example README shows."""

from __future__ import annotations

import difflib
import json
import re

from scripts.readme_figures import (
    FIGURES,
    README,
    REGIONS,
    example,
    example_block,
    rewritten,
    skipped,
)

TEXT = README.read_text()
FIGURES_DATA = json.loads(FIGURES.read_text())
AGAIN = (
    "README and scripts/readme_figures.json disagree: measure again with "
    "`.venv/bin/python scripts/readme_figures.py` (or, for a passage edited by hand, rewrite "
    "README from the file with `--readme`)"
)


def test_the_figures_file_measured_the_example_readme_shows():
    commands = [line.command for line in example(TEXT)]
    assert [c["command"] for c in FIGURES_DATA["commands"]] == commands, AGAIN
    for measured in FIGURES_DATA["commands"]:
        if skipped(measured["command"]):
            assert "wall_s" not in measured
        else:
            assert measured["returncode"] == 0 and measured["wall_s"] > 0, measured
    assert {"cpu", "cores"} <= FIGURES_DATA["machine"].keys()
    assert re.fullmatch(r"[0-9a-f]{40}", FIGURES_DATA["commit"])
    assert len(FIGURES_DATA["load"]["before"]) == len(FIGURES_DATA["load"]["after"]) == 3


def test_every_figures_passage_is_marked_once():
    for name in REGIONS:
        assert TEXT.count(f"<!-- figures: {name} -->") == 1, name
    assert TEXT.count("<!-- /figures -->") == len(REGIONS)


def test_readme_says_what_the_figures_file_holds():
    written = rewritten(TEXT, FIGURES_DATA)
    diff = "\n".join(difflib.unified_diff(TEXT.splitlines(), written.splitlines(), lineterm=""))
    assert written == TEXT, f"{AGAIN}\n{diff}"


def test_a_time_edited_by_hand_is_caught():
    [line] = [
        text for text in example_block(TEXT).splitlines() if text.startswith("$ workbench demo ")
    ]
    edited = TEXT.replace(line, re.sub(r"\d+ min(?: \d+ s)?$|\d+ s$", "6 min", line), 1)
    assert edited != TEXT and rewritten(edited, FIGURES_DATA) != edited
