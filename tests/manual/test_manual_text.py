"""What the manual says its rules mean, read from the formulated Markdown of rules the offline
Builder wrote from real recorded episodes (a boil and a use-thermometer success of
ScienceWorld, a cooking success of TextWorld, as the demo played them), and the N_max limit
held by the evidence of the rules' validation logs."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from store import Episode, ManualRule, Outcome, RuleEvent, Store, Task
from workbench.ingest.imports import import_paths
from workbench.manual.build import BuildReport, consolidate, learn_from
from workbench.manual.evidence import evidence_of, weakest_first
from workbench.manual.formulate import formulate
from workbench.manual.heuristic import HeuristicFormulator
from workbench.manual.heuristic_builder import HeuristicBuilder
from workbench.manual.operations import DeleteRule

RECORDED = Path(__file__).parents[1] / "data" / "workbench" / "manual_successes.jsonl"
BOIL = "demo-train:boil:10"
THERMOMETER = "demo-train:use-thermometer:29"
COOKING = "demo-textworld-train:tw-cooking-level2:212"


@pytest.fixture
def learnt(store: Store) -> tuple[Store, str]:
    """The rules the offline Builder learns from the three recorded successes, and the
    manual formulated from them."""
    import_paths(store, [RECORDED])
    builder = HeuristicBuilder(store)
    for episode_id in (BOIL, THERMOMETER, COOKING):
        learn_from(store, builder, episode_id, n_max=12)
    return store, formulate(store, HeuristicFormulator()).markdown


def rule_section(text: str, rule: ManualRule) -> str:
    return text.split(f"### {rule.id} ({rule.type})", 1)[1].split("\n### ", 1)[0]


def test_a_success_process_lists_phases_not_the_raw_path(learnt):
    store, text = learnt
    processes = {r.content.split(" tasks:", 1)[0]: r for r in store.manual_rules()}
    assert {"boil", "use-thermometer", "tw-cooking-level2"} <= set(processes)
    boil = rule_section(text, processes["boil"])
    assert re.search(r"solved in \d+ phases", boil)
    assert "repeat ×9: examine \\<E1\\>; use thermometer in inventory on \\<E1\\>" in boil
    assert "chocolate" not in boil.split("**Example.**")[0]  # the task's object is abstracted
    raw = [s.action for s in store.steps(BOIL) if s.action]
    assert boil.count("use thermometer") == 1 and len(raw) > 20
    cooking = rule_section(text, processes["tw-cooking-level2"])
    assert "take banana" in cooking and "reach" in cooking


def test_a_cycle_whose_result_changes_is_a_special_mechanism(learnt):
    store, text = learnt
    [mechanism] = [r for r in store.manual_rules() if r.type == "Special Mechanism"]
    assert mechanism.content.startswith("In boil tasks: what 'examine <E1>' shows changes")
    assert "repeating 'examine <E1>; use thermometer in inventory on <E1>'" in mechanism.content
    section = rule_section(text, mechanism)
    assert "keep repeating it until the result changes" in section
    # the example quotes the recorded results it was read from, first and last
    assert "showed 'chocolate' at first and 'liquid chocolate' at the end" in section


def test_a_recurring_pair_is_a_useful_helper_method_with_its_code(learnt):
    store, text = learnt
    [helper] = [r for r in store.manual_rules() if r.type == "Useful Helper Method"]
    assert helper.example.splitlines() == [
        "def open_door_to_then_go_to(place):",
        '    act(f"open door to {place}")',
        '    act(f"go to {place}")',
    ]
    # both ScienceWorld successes did it: the second widened its scope and joined its log
    assert helper.content.startswith("In any task: open_door_to_then_go_to")
    assert {e.split("@")[0] for e in helper.validation_logs} == {BOIL, THERMOMETER}
    assert "'open door to \\<place\\>' then 'go to \\<place\\>'" in rule_section(text, helper)


# -- the limit, held by the validation logs' evidence -----------------------------------------


def episode(store: Store, eid: str, score: float, used: list[tuple[str, int]] = ()) -> None:
    store.put_task(Task(id=f"t:{eid}", environment="scienceworld", family="boil"))
    store.add_episode(
        Episode(
            id=eid,
            task_id=f"t:{eid}",
            agent="scripted",
            batch_id="b",
            family="boil",
            outcome=Outcome(success=score > 0, score=score),
            metadata={"guidance_uses": [{"artifact": a, "step": s} for a, s in used]},
        ),
        [],
    )


def rules_with_a_protector(store: Store) -> list[ManualRule]:
    """Five rules: rule_1 warns of a critical failure and then prevented one; rule_2 warns
    of one but never acted; the others are weaker."""
    from store import Batch

    store.put_batch(Batch(id="b", name="b", kind="run"))
    episode(store, "crit", -100.0)
    episode(store, "saved", 100.0, [("rule_1", 4)])
    episode(store, "plain", 100.0)
    rules = [
        ManualRule(
            id="rule_1",
            type="Unsolved Error",
            content="In boil tasks: 'focus on <X>' ended the task (critical); what to do instead is still unknown.",
            validation_logs=["crit", "saved@4"],
            form={"kind": "rule", "id": "x", "when_action": "focus on (.+)"},
        ),
        ManualRule(
            id="rule_2",
            type="Unsolved Error",
            content="In boil tasks: 'move <X>' ended the task (critical).",
            validation_logs=["crit"],
        ),
        ManualRule(id="rule_3", type="Special Phenomenon", content="In boil tasks: a.", validation_logs=["plain"]),
        ManualRule(id="rule_4", type="Special Mechanism", content="In melt tasks: b.", validation_logs=["plain"]),
        ManualRule(id="rule_5", type="Success Process", content="boil tasks: c.", validation_logs=["plain"]),
    ]  # fmt: skip
    for rule in rules:
        store.put_rule(rule, RuleEvent(rule_id=rule.id, op="write", actor="test"))
    return rules


def test_the_evidence_ranks_a_rule_that_prevented_a_critical_failure_last(store: Store):
    rules = rules_with_a_protector(store)
    assert evidence_of(store, rules[0]).prevented == ["saved"]
    assert not evidence_of(store, rules[1]).protects and evidence_of(store, rules[1]).critical
    order = [r.id for r in weakest_first(store, rules)]
    assert order[-2:] == [
        "rule_2",
        "rule_1",
    ]  # critical warnings go last, the protector last of all


class Stubborn:
    """A Consolidator (as a model might answer) that deletes the protector and nothing else."""

    name = "stubborn"

    def consolidate(self, rules, n_max):
        return [DeleteRule(rule_id="rule_1")]


def test_n_max_holds_whatever_the_consolidator_answers(store: Store):
    rules_with_a_protector(store)
    report = BuildReport(batch_id="b")
    consolidate(store, Stubborn(), 2, report, None)
    kept = store.manual_rules()
    assert [r.id for r in kept] == ["rule_1", "rule_2"]
    assert report.refused == [
        "delete rule_1: its log shows it preventing a critical failure while weaker rules remain"
    ]
    deleted = Counter(e.actor for e in store.rule_events() if e.op == "delete")
    assert deleted == {"consolidator:n-max": 3}


def test_the_heuristic_consolidator_merges_then_deletes_the_weakest(store: Store):
    rules = rules_with_a_protector(store)
    store.put_rule(
        extra := ManualRule(
            id="rule_6", type="Special Phenomenon", content="In boil tasks: d.", example="e6"
        ),
        RuleEvent(rule_id="rule_6", op="write", actor="test"),
    )
    report = BuildReport(batch_id="b")
    consolidate(store, HeuristicBuilder(store), 3, report, None)
    kept = {r.id: r for r in store.manual_rules()}
    assert len(kept) == 3 and {"rule_1", "rule_2"} <= set(kept)
    assert extra.id not in kept and not report.refused
    merged = next(r for r in rules if r.id == "rule_3")
    assert merged.id not in kept or kept[merged.id].content == "In boil tasks: a; d."


class Eager:
    """A Builder (as a model might answer) that calls every rule corrected."""

    name = "eager"

    def build_rules(self, case):
        from workbench.manual.builder import BuilderAnswer
        from workbench.manual.operations import UpdateRule

        ops = [UpdateRule(rule_id=r.id, type="Corrected Error") for r in case.rules]
        return BuilderAnswer("imperfect rules", ops)

    def consolidate(self, rules, n_max):
        return []


def test_an_error_is_called_corrected_only_by_a_run_of_its_own_task_type(store: Store):
    import_paths(store, [RECORDED])
    melt = ManualRule(id="rule_1", type="Unsolved Error", content="In melt tasks: 'x' failed.")
    boil = ManualRule(id="rule_2", type="Unsolved Error", content="In boil tasks: 'y' failed.")
    for rule in (melt, boil):
        store.put_rule(rule, RuleEvent(rule_id=rule.id, op="write", actor="test"))
    report = learn_from(store, Eager(), BOIL)
    assert report.refused == [
        f"{BOIL}: rule_1 called corrected by a boil run, but it is about melt tasks"
    ]
    assert [r.type for r in store.manual_rules()] == ["Unsolved Error", "Corrected Error"]
