"""The building stage on the real simulator, and the offline Builder's and Consolidator's rules."""

from __future__ import annotations

import pytest

from store import ManualRule, Store
from workbench.executors import InProcess
from workbench.llm.steps import CaseStep
from workbench.manual.build import build
from workbench.manual.builder import BuildCase
from workbench.manual.heuristic_builder import HeuristicBuilder, build_rules, consolidate
from workbench.manual.operations import DeleteRule, UpdateRule
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


def test_a_rule_that_acted_in_a_success_turns_its_error_into_a_corrected_one(store: Store):
    rule = ManualRule(
        id="rule_3",
        type="Unsolved Error",
        content="In boil tasks: 'go to <X>' met 'The door is not open.'",
        form={"kind": "rule", "id": "x", "when_action": "go to (.+)"},
    )
    answer = build_rules(
        store, case(True, [("open door to kitchen", "The door is now open.")], [rule], ["rule_3"])
    )
    assert answer.operations[0] == UpdateRule(
        rule_id="rule_3",
        type="Corrected Error",
        validation_logs=["ep"],
        example="\nCorrected in ep: the rule acted and the task succeeded.",
    )


def test_consolidation_merges_repeats_keeping_their_evidence_and_respects_the_limit():
    rules = [
        ManualRule(
            id="rule_1",
            type="Special Phenomenon",
            content="In boil: sink broken 1",
            example="a",
            validation_logs=["e1"],
        ),
        ManualRule(
            id="rule_2",
            type="Special Phenomenon",
            content="In boil: sink broken 2",
            example="b",
            validation_logs=["e2"],
        ),
        ManualRule(
            id="rule_3", type="Unsolved Error", content="x; what to do instead is still unknown."
        ),
        ManualRule(id="rule_4", type="Success Process", content="boil tasks: ..."),
    ]
    operations = consolidate(rules, n_max=2)
    assert (
        UpdateRule(rule_id="rule_1", example="a\nb", validation_logs=["e1", "e2", "rule_2"])
        in operations
    )
    deleted = [op.rule_id for op in operations if isinstance(op, DeleteRule)]
    assert deleted == ["rule_2", "rule_3"]


@pytest.mark.slow
def test_building_alternates_episodes_and_rule_updates_and_resumes(db_path):
    config = RunConfig(families=["use-thermometer", "find-living-thing"], episodes=8, seed=1)
    with Store(db_path) as store, InProcess() as executor:
        report = build(store, HeuristicBuilder(store), config, executor=executor, n_max=4)
        assert report.episodes == 8 and sum(report.outcomes.values()) == 8
        rules = store.manual_rules()
        assert 0 < len(rules) <= 4
        assert any(r.type == "Success Process" for r in rules)
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
