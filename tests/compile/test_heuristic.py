"""The offline compiler reads mechanisms off the evidence and proposes contracts from them."""

from __future__ import annotations

import re

import pytest

from store import InterventionSpec
from tests.compile.cases import blocked, premature, repeated, stopped, unnamed
from workbench.agents.guidance import (
    Bindings,
    Evidence,
    Guidance,
    ProcedureForm,
    RuleForm,
    match,
    review,
)
from workbench.compile import heuristic
from workbench.compile.closure import decide
from workbench.compile.compiler import first_closure
from workbench.compile.obligations import SpecEvidence
from workbench.compile.specs import to_spec


class Offline:
    """The heuristic reasoner's compile methods without a store (what the tests exercise)."""

    name = "heuristic"

    def extract_specs(self, members):
        return heuristic.extract_specs(members)

    def propose_contract(self, spec, kind, carried, demands):
        return heuristic.propose(spec, kind, demands)


def specs_of(*members) -> list[InterventionSpec]:
    by_id = {m.analysis_id: m for m in members}
    return [to_spec(p, 1, "heuristic", by_id) for p in heuristic.extract_specs(list(members))]


def closure(spec: InterventionSpec, *members, compiler=None):
    """First closure of ``spec`` against the runs of ``members``."""
    return first_closure(compiler or Offline(), spec, SpecEvidence.of(spec, members))


def proposed(spec: InterventionSpec, kind: str, *members):
    """The heuristic's proposal for ``kind`` and the evidence it was read against."""
    found = SpecEvidence.of(spec, members)
    return heuristic.propose(spec, kind, found.demands), found


def test_pattern_of_abstracts_names_and_numbers():
    pattern = heuristic.pattern_of("the thermometer measures 19.5 degrees", {"thermometer": "E4"})
    assert pattern == r"the {E4} measures -?\d+(?:\.\d+)? degrees"
    filled = pattern.replace("{E4}", "thermometer")
    assert re.search(filled, "the thermometer measures -3 degrees")
    assert not re.search(filled, "the stopwatch measures 3 degrees")


def test_repeated_rejections_from_two_clusters_make_one_spec():
    [spec] = specs_of(repeated(1, 10), repeated(2, 11, garbled="try to open door"))
    assert spec.status == "supported" and spec.mechanism == "repeated-rejection"
    assert spec.clusters == [10, 11] and spec.sources == ["f1", "f2"]
    [seen] = spec.activation.observations
    rule = RuleForm(id="r", when_action=spec.activation.trigger.value, when_evidence=seen.value)
    history = [("look around carefully", "No known action matches that input.")]
    assert review(Guidance(forms=[rule]), "look around carefully", evidence(history=history))
    assert review(Guidance(forms=[rule]), "look around", evidence(history=history)) is None
    assert review(Guidance(forms=[rule]), "look around carefully", evidence()) is None


def evidence(history=None, look="", instruction="Your task is to boil water.") -> Evidence:
    return Evidence(instruction=instruction, observation="", look=look, history=history or [])


def test_blocked_precondition_becomes_a_replacing_rule_with_a_visible_guard():
    case = blocked(1, 10)
    [spec] = specs_of(case)
    assert spec.mechanism == "blocked-precondition"
    [attempt] = closure(spec, case)
    assert attempt.kind == "rule" and attempt.closed
    form = attempt.contract["form"]
    assert form["response"] == "replace" and form["replacement"] == "open door to {1}"
    rule = RuleForm(**{**form, "id": "r"})
    closed = (
        "This room is called the hallway.\nYou also see:\n\tA door to the kitchen (that is closed)"
    )
    verdict = review(Guidance(forms=[rule]), "go to kitchen", evidence(look=closed))
    assert verdict is not None and verdict.action == "open door to kitchen"
    opened = closed.replace("closed", "open")
    assert review(Guidance(forms=[rule]), "go to kitchen", evidence(look=opened)) is None
    just_opened = [("open door to kitchen", "The door is now open.")]
    assert review(Guidance(forms=[rule]), "go to kitchen", evidence(just_opened, closed)) is None


def test_premature_decision_fails_the_rule_and_closes_as_a_skill():
    case = premature(1, 10)
    [spec] = specs_of(case)
    assert spec.mechanism == "premature-decision" and spec.execution.lifetime == "procedure"
    rule, skill = closure(spec, case)
    assert not rule.closed and skill.closed and skill.kind == "skill"
    open_rule = {c.obligation for c in rule.checks if not c.closed}
    assert {"decision", "state", "completion"} <= open_rule
    assert all(w.startswith("rule ") for w in skill.carried) and len(skill.carried) == len(
        open_rule
    )
    form = skill.contract["form"]
    assert form["steps"] == ["use {E4} on {E2}"]
    instruction = premature(1, 10).case.instruction
    bound = match(
        heuristic_form(form),
        "move unknown substance B to green box",
        evidence(instruction=instruction),
    )
    assert isinstance(bound, Bindings) and bound.entities["E2"] == "unknown substance B"
    measured = [
        (
            "use thermometer on unknown substance B",
            "the thermometer measures a temperature of 3 degrees celsius",
        )
    ]
    assert (
        match(
            heuristic_form(form),
            "move unknown substance B to green box",
            evidence(measured, instruction=instruction),
        )
        is None
    )


def heuristic_form(form: dict) -> ProcedureForm:
    return ProcedureForm(**{**form, "id": "s"})


def test_unnamed_commitment_vetoes_only_unnamed_objects_in_its_regime():
    case = unnamed(1, 10)
    [spec] = specs_of(case)
    [attempt] = closure(spec, case)
    rule = RuleForm(**{**attempt.contract["form"], "id": "r"})
    instruction = premature(1, 10).case.instruction
    guidance = Guidance(forms=[rule])
    assert review(guidance, "focus on chair", evidence(instruction=instruction)).response == "veto"
    assert review(guidance, "focus on thermometer", evidence(instruction=instruction)) is None
    assert (
        review(guidance, "focus on chair", evidence(instruction="Your task is to boil water."))
        is None
    )


def test_members_without_an_observable_trigger_are_deferred_with_reasons():
    [spec] = specs_of(stopped(1, 10))
    assert spec.status == "deferred" and spec.clusters == [10]
    assert "no mechanism with an observable trigger" in spec.reason


def test_traceability_defers_a_spec_citing_a_step_that_does_not_exist():
    member = blocked(1, 10)
    [proposal] = heuristic.extract_specs([member])
    proposal.activation.trigger.citations[0] = proposal.activation.trigger.citations[0].model_copy(
        update={"start": 99, "end": 99}
    )
    spec = to_spec(proposal, 1, "heuristic", {1: member})
    assert spec.status == "deferred" and "f1@99 is not a step of the evidence" in spec.reason


def test_traceability_defers_a_template_reading_undeclared_state():
    member = blocked(1, 10)
    [proposal] = heuristic.extract_specs([member])
    proposal.scope.decisions[0].value = "open door to {2}"
    spec = to_spec(proposal, 1, "heuristic", {1: member})
    assert spec.status == "deferred" and "undeclared parent state" in spec.reason


@pytest.mark.parametrize(
    ("change", "witness"),
    [
        ({"slot": "tools"}, "not a slot of this schema"),
        ({"citations": []}, "without citing evidence"),
        ({"status": False, "witness": "cannot see it"}, "cannot see it"),
    ],
)
def test_closure_is_decided_by_the_controller_not_by_the_proposer(change, witness):
    case = blocked(1, 10)
    [spec] = specs_of(case)
    proposal, found = proposed(spec, "rule", case)
    proposal.report[0] = proposal.report[0].model_copy(update=change)
    attempt = decide(spec, proposal, 1, [], found)
    assert not attempt.closed
    assert witness in attempt.checks[0].witness


def test_a_citation_outside_the_spec_evidence_does_not_close():
    case = blocked(1, 10)
    [spec] = specs_of(case)
    proposal, found = proposed(spec, "rule", case)
    stray = proposal.report[0].citations[0].model_copy(update={"episode_id": "elsewhere"})
    proposal.report[0] = proposal.report[0].model_copy(update={"citations": [stray]})
    attempt = decide(spec, proposal, 1, [], found)
    assert not attempt.closed and "elsewhere@1" in attempt.checks[0].witness


def test_a_missing_required_slot_keeps_the_schema_open():
    case = blocked(1, 10)
    [spec] = specs_of(case)
    proposal, found = proposed(spec, "rule", case)
    proposal.contract["negative"] = []
    attempt = decide(spec, proposal, 1, [], found)
    assert not attempt.closed and "negative" in attempt.missing


def test_compiling_twice_writes_nothing_new(store):
    from store import Analysis, AnalysisRun, Batch, Cluster, Episode, Outcome, Step, Task
    from workbench.compile.compiler import compile_run

    member = blocked(1, 10)
    store.put_batch(Batch(id="b", name="b", kind="run"))
    for case, steps, success in (
        (member.case.episode_id, member.case.steps, False),
        (member.case.contrast_id, member.case.contrast_steps, True),
    ):
        store.put_task(
            Task(
                id=f"t-{case}",
                environment="env",
                family="use-thermometer",
                instruction=member.case.instruction,
                split="train",
            )
        )
        store.add_episode(
            Episode(
                id=case,
                task_id=f"t-{case}",
                agent="a",
                batch_id="b",
                outcome=Outcome(success=success),
            ),
            [
                Step(
                    episode_id=case,
                    index=0,
                    kind="observation",
                    observation=member.initial_observation,
                )
            ]
            + [
                Step(
                    episode_id=case,
                    index=s.index,
                    kind="action",
                    action=s.action,
                    observation=s.observation,
                    reward=s.reward,
                )
                for s in steps
            ],
        )
    run = store.add_analysis_run(AnalysisRun(reasoner="heuristic"))
    analysis = store.add_analysis(
        Analysis(
            run_id=run.id,
            episode_id="f1",
            start=1,
            end=1,
            trigger="go to <X> | is not open",
            correction="open door to <X>",
            contrast_id="s1",
            contrast_citations=[1],
        )
    )
    store.replace_clusters(
        run.id,
        [
            Cluster(
                run_id=run.id,
                family="use-thermometer",
                trigger="go to <X> | is not open",
                correction="open door to <X>",
                members=[analysis.id],
                contrasts=["s1"],
            )
        ],
    )
    first = compile_run(store, Offline())
    again = compile_run(store, Offline())
    assert [c.spec.mechanism for c in first.compiled] == ["blocked-precondition"]
    assert [c.reused for c in again.compiled] == [True]
    assert len(store.specs()) == 1 and len(store.versions()) == len(first.staged)
