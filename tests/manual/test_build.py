"""The building stage on the real simulator, and the offline Builder's and Consolidator's rules."""

from __future__ import annotations

import ast
import re

import pytest

from store import ManualRule, Store
from workbench.executors import InProcess
from workbench.llm.steps import CaseStep
from workbench.manual.build import build
from workbench.manual.builder import BuildCase
from workbench.manual.heuristic_builder import HeuristicBuilder, build_rules
from workbench.manual.operations import UpdateRule
from workbench.runner import RunConfig


def steps(*rows: tuple[str, str]) -> list[CaseStep]:
    return [
        CaseStep(index=i, action=a, observation=o, reward=0.0) for i, (a, o) in enumerate(rows, 1)
    ]


def case(success: bool, rows, rules=(), fired=()) -> BuildCase:
    return BuildCase(
        episode_id="ep",
        family="boil",
        instruction="Your task is to boil water.",
        steps=steps(*rows),
        success=success,
        rules=list(rules),
        fired=list(fired),
    )


def test_a_direct_success_writes_a_success_process_and_a_skill(store: Store):
    answer = build_rules(store, case(True, [("go to kitchen", "You move to the kitchen.")]))
    [write] = answer.operations
    assert write.type == "Success Process" and write.content.startswith("boil tasks:")
    assert [e.kind for e in answer.library] == ["skill"]


def test_an_indirect_success_records_what_it_corrected_and_what_it_met(store: Store):
    rows = [
        ("go to kitchen", "The door is not open."),
        ("open door to kitchen", "The door is now open."),
        ("go to kitchen", "You move to the kitchen."),
        ("activate sink", "The sink appears broken, and can't be activated or deactivated."),
    ]
    answer = build_rules(store, case(True, rows))
    corrected, phenomenon = answer.operations
    assert corrected.type == "Corrected Error" and corrected.form.replacement == "open door to {1}"
    assert phenomenon.type == "Special Phenomenon" and "sink" in phenomenon.example


def acted_rule(content: str) -> ManualRule:
    return ManualRule(
        id="rule_3",
        type="Unsolved Error",
        content=content,
        form={"kind": "rule", "id": "x", "when_action": "go to (.+)"},
    )


def test_a_rule_that_acted_in_a_success_of_its_task_type_becomes_a_corrected_error(
    store: Store,
):
    rule = acted_rule("In boil tasks: 'go to <X>' met 'The door is not open.'")
    answer = build_rules(
        store,
        case(True, [("open door to kitchen", "The door is now open.")], [rule], ["rule_3"]),
    )
    update = answer.operations[0]
    assert update.rule_id == "rule_3" and update.type == "Corrected Error"
    assert update.validation_logs == ["ep"]
    assert "Corrected in ep" in update.example


def test_a_rule_that_acted_in_another_task_types_success_stays_unsolved(store: Store):
    """The correction is shown working only in its own task type: elsewhere the run goes in
    the rule's log and its type stays."""
    rule = acted_rule("In melt tasks: 'go to <X>' met 'The door is not open.'")
    answer = build_rules(
        store,
        case(True, [("open door to kitchen", "The door is now open.")], [rule], ["rule_3"]),
    )
    assert answer.operations[0] == UpdateRule(rule_id="rule_3", validation_logs=["ep"])


@pytest.mark.slow
def test_building_alternates_episodes_and_rule_updates_and_resumes(db_path):
    config = RunConfig(families=["use-thermometer", "find-living-thing"], episodes=8, seed=1)
    with Store(db_path) as store, InProcess() as executor:
        report = build(store, HeuristicBuilder(store), config, executor=executor, n_max=4)
        assert report.episodes == 8 and sum(report.outcomes.values()) == 8
        rules = store.manual_rules()
        assert 0 < len(rules) <= 4
        assert any(r.type == "Success Process" for r in rules)
        for rule in rules:  # phases, not the run's raw path
            assert rule.type != "Success Process" or re.search(
                r"solved in \d+ phases?", rule.content
            )
        written = {e.after["type"] for e in store.rule_events() if e.op == "write"}
        assert "Useful Helper Method" in written  # doors opened, then walked through
        events = store.rule_events()
        assert {e.actor for e in events} >= {"builder:heuristic"}
        assert all(e.episode_id for e in events if e.actor.startswith("builder"))
        assert store.library("skill")
        again = build(store, HeuristicBuilder(store), config, executor=executor, n_max=4)
        assert again.episodes == 0 and again.skipped == 8


@pytest.mark.slow
def test_build_then_formulate_from_the_command_line(db_path, tmp_path):
    from click.testing import CliRunner

    from workbench.cli import main

    def cli(*args: str) -> str:
        result = CliRunner().invoke(main, ["--db", str(db_path), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    built = cli("manual", "build", "--family", "use-thermometer", "--episodes", "4", "--n-max", "6")
    assert "batch manual-build: 4 episode(s)" in built
    cli("manual", "formulate")
    cli("manual", "export", "--out", str(tmp_path / "manual.md"))
    text = (tmp_path / "manual.md").read_text()
    with Store(db_path) as store:
        for rule in store.manual_rules():
            assert text.count(f"### {rule.id} ({rule.type})") == 1
        # the Planner (the default) played: its code that solved a task is the skill
        episodes = store.episodes()
        assert all(
            e.agent == "planner:scripted" and e.metadata["planner"]["cycles"] for e in episodes
        )
        skills = store.library("skill")
        assert skills and all("act(" in s.content and ast.parse(s.content) for s in skills)


def test_build_plays_the_world_it_is_given(db_path, tmp_path):
    """``manual build --env`` plays that world's tasks (its families by default) and the
    rules learnt there are formulated like any others."""
    from click.testing import CliRunner

    from workbench.cli import main

    def cli(*args: str) -> str:
        result = CliRunner().invoke(main, ["--db", str(db_path), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    built = cli(
        "manual", "build", "--env", "textworld", "--family", "tw-cooking-level2",
        "--episodes", "4", "--n-max", "6",
    )  # fmt: skip
    assert "batch manual-build: 4 episode(s)" in built
    with Store(db_path) as store:
        assert store.batch("manual-build").params["config"]["env"] == "textworld"
        episodes = store.episodes()
        assert {store.task(e.task_id).environment for e in episodes} == {"textworld"}
        assert store.manual_rules()
    cli("manual", "formulate")
    cli("manual", "export", "--out", str(tmp_path / "manual.md"))
    assert "tw-cooking-level2" in (tmp_path / "manual.md").read_text()
