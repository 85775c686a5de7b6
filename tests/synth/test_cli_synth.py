"""`workbench synth tasks` and `workbench synth explore` through click's runner: summaries,
one-line errors, and synthesized episodes kept out of the researcher's own listings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import SYNTH_WORKSPACE, Store
from tests.synthesized import COOKING, beside
from workbench.cli import main


@pytest.fixture
def run(db_path: Path, games: Path):
    beside(db_path, games)
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True):
        result = runner.invoke(main, list(args), env={"WORKBENCH_DB": str(db_path)})
        assert (result.exit_code == 0) is ok, result.output
        assert "Traceback" not in result.output
        return result

    return invoke


def test_synth_tasks_prints_what_each_passage_gave_and_adds_nothing_twice(run, db_path):
    first = run("synth", "tasks", "--env", "textworld", "--family", COOKING, "--n", "2").output
    assert f"intro:{COOKING}:0" in first and "command:take-from" in first
    stored = len(Store(db_path).synth_tasks("textworld"))
    summary = re.search(
        r"textworld: (\d+) task\(s\) proposed by heuristic from \d+ passage\(s\), "
        r"(\d+) new, (\d+) already stored",
        first,
    )
    assert summary is not None, first
    proposed, new, present = map(int, summary.groups())
    assert new == stored and proposed == new + present
    again = run("synth", "tasks", "--env", "textworld", "--family", COOKING, "--n", "2").output
    assert ", 0 new, " in again
    assert len(Store(db_path).synth_tasks("textworld")) == stored


def test_bad_synthesis_input_is_one_line(run):
    unknown = run("synth", "tasks", "--env", "textworld", "--family", "tw-nope", ok=False)
    assert "Error: textworld has no family 'tw-nope'; known: tw-cooking-level1" in unknown.output
    nothing = run("synth", "explore", "--env", "textworld", ok=False)
    assert "Error: textworld has no synthesized task yet; propose some with" in nothing.output


@pytest.mark.slow
def test_synth_explore_records_episodes_only_in_the_synth_workspace(run, db_path):
    run("synth", "tasks", "--env", "textworld", "--family", COOKING, "--n", "1")
    args = ("synth", "explore", "--env", "textworld", "--limit", "2", "--step-limit", "5")
    played = run(*args, "--workers", "1").output
    assert "batch synth/explore-textworld-explorer-1: 2 episode(s) played" in played
    assert run("ls").output.strip() == "0 of 0 episode(s)"
    listed = run("--workspace", SYNTH_WORKSPACE, "ls").output
    assert "synth/explore-textworld-explorer-1:task1" in listed
    with Store(db_path) as store:
        assert store.count_episodes() == 0
    with Store(db_path, workspace=SYNTH_WORKSPACE) as synth:
        assert synth.count_episodes() == 2
