"""The model-backed compiler (spec extraction, contract proposals) against the scripted chat
server on 127.0.0.1: the model proposes, the engine's checks decide."""

from __future__ import annotations

import pytest

from store import OBLIGATIONS
from tests.llm_server import refusal
from workbench.analyze.analyst import FailureCase
from workbench.compile import heuristic
from workbench.compile.closure import decide, witnesses
from workbench.compile.contracts import CONTRACT, RETURN_SCHEMA
from workbench.compile.obligations import SpecEvidence
from workbench.compile.openai import (
    NO_ANSWER,
    ActivationAnswer,
    BoundaryAnswer,
    CitationAnswer,
    ClaimAnswer,
    ClosureAnswer,
    DelegateFormAnswer,
    DelegateProbeAnswer,
    ExecutionAnswer,
    InputAnswer,
    InputValue,
    ObligationAnswer,
    ObservedAnswer,
    OpenAICompiler,
    ProbeAnswer,
    ProcedureFormAnswer,
    RuleAnswer,
    RuleFormAnswer,
    RuleSlots,
    ScopeAnswer,
    SkillAnswer,
    SkillSlots,
    SpecAnswer,
    SubagentAnswer,
    SubagentSlots,
    render_attempt,
    to_proposal,
)
from workbench.compile.proposals import MemberCase
from workbench.compile.specs import to_spec
from workbench.llm.steps import CaseStep

INSTRUCTION = "Your task is to boil water. First, focus on the water."
HALL = "This room is called the hallway. You see a door to the kitchen (that is closed)."


def member(analysis_id: int, cluster_id: int, episode: str, contrast: str) -> MemberCase:
    """A run that walks into the closed kitchen door at step 2 (twice); its contrast opens
    the door first. Step 0 is the stored start, as in real episodes."""
    failed = [
        CaseStep(index=1, action="look around", observation=HALL),
        CaseStep(index=2, action="go to kitchen", observation="The door is not open."),
        CaseStep(index=3, action="go to kitchen", observation="The door is not open."),
        CaseStep(index=4, action="wait", observation="Nothing happens.", reward=0.0),
    ]
    success = [
        CaseStep(index=1, action="look around", observation=HALL),
        CaseStep(index=2, action="open door to kitchen", observation="The door is now open."),
        CaseStep(index=3, action="go to kitchen", observation="You move to the kitchen."),
        CaseStep(index=4, action="focus on water", observation="You focus on it.", reward=100.0),
    ]
    case = FailureCase(
        episode_id=episode,
        family="boil",
        instruction=INSTRUCTION,
        outcome="failed: score 0 — ran out of steps",
        steps=failed,
        contrast_id=contrast,
        contrast_same_task=True,
        contrast_steps=success,
    )
    return MemberCase(
        analysis_id=analysis_id,
        cluster_id=cluster_id,
        case=case,
        initial_observation=HALL,
        contrast_initial_observation=HALL,
        start=2,
        change="Open the door to the kitchen before going there.",
        trigger="go to <X> | the door to <X> is closed",
        correction="open door to <X>",
        contrast_step=2,
        regime="Your task is to boil",
    )


MEMBERS = [member(11, 3, "ep-a", "ep-b"), member(12, 3, "ep-c", "ep-d")]
OTHER = member(13, 4, "ep-e", "ep-f")


def cite(episode: str, start: int, end: int | None = None) -> CitationAnswer:
    return CitationAnswer(episode_id=episode, start=start, end=start if end is None else end)


GOOD_SPEC = SpecAnswer(
    supported=True,
    reason="",
    mechanism="Blocked precondition",
    activation=ActivationAnswer(
        trigger=ClaimAnswer(
            text="the agent proposes 'go to <X>'",
            value="go to (.+)",
            citations=[cite("ep-a", 2), cite("ep-c", 2)],
        ),
        observations=[
            ObservedAnswer(
                text="the door to <X> is closed",
                value=r"door to the {1} \(that is closed\)",
                absent=False,
                citations=[cite("ep-a", 1), cite("ep-c", 1)],
            ),
            ObservedAnswer(
                text="'open door to <X>' was just done",
                value=r"> open door to {1}\n",
                absent=True,
                citations=[cite("ep-a", 2), cite("ep-b", 2)],
            ),
        ],
        boundary=BoundaryAnswer(
            text="'go to <X>' once the door is open", citations=[cite("ep-b", 3)]
        ),
    ),
    scope=ScopeAnswer(
        objective=ClaimAnswer(
            text="open the door to <X> before going there",
            value="open door to {1}",
            citations=[cite("ep-a", 2), cite("ep-b", 2)],
        ),
        decisions=[
            ClaimAnswer(
                text="replace 'go to <X>' with 'open door to <X>'",
                value="open door to {1}",
                citations=[cite("ep-b", 2), cite("ep-d", 2)],
            )
        ],
    ),
    execution=ExecutionAnswer(
        state=ClaimAnswer(
            text="none: the closed door is visible", value="", citations=[cite("ep-a", 0, 1)]
        ),
        owner="none",
        lifetime="step",
        completion=ClaimAnswer(
            text="the door opens", value="The door is now open", citations=[cite("ep-b", 2)]
        ),
        failure=None,
        inputs=["{1}"],
    ),
)

UNSUPPORTED = SpecAnswer(
    supported=False,
    reason="analysis 13 needs a different correction",
    mechanism="",
    activation=None,
    scope=None,
    execution=None,
)


def spec_with(**paths) -> SpecAnswer:
    """GOOD_SPEC with the values at dotted ``paths`` (``__`` for dots) replaced."""
    data = GOOD_SPEC.model_dump()
    for path, value in paths.items():
        *parents, last = path.split("__")
        target = data
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value
    return SpecAnswer.model_validate(data)


BAD_CITATION = spec_with(activation__trigger__citations=[cite("ep-a", 9).model_dump()])


def by_id(*members: MemberCase) -> dict[int, MemberCase]:
    return {m.analysis_id: m for m in members}


# -- spec extraction ---------------------------------------------------------------------------


def test_a_well_formed_spec_answer_becomes_a_supported_spec(client, chat_server, store):
    chat_server.queue(GOOD_SPEC)
    reasoner = OpenAICompiler(client)
    [proposal] = reasoner.extract_specs(MEMBERS)
    assert proposal.members == [11, 12] and proposal.supported
    assert proposal.mechanism == "blocked-precondition"
    assert proposal.activation and proposal.activation.trigger.value == "go to (.+)"
    assert proposal.activation.observations[1].absent
    assert proposal.execution and proposal.execution.inputs == ["1"]
    spec = to_spec(proposal, 1, reasoner.name, by_id(*MEMBERS))
    assert (spec.status, spec.reason) == ("supported", "")
    assert spec.sources == ["ep-a", "ep-c"] and spec.contrasts == ["ep-b", "ep-d"]
    [call] = store.calls("compile.spec")
    assert call.request["params"] == {"temperature": 0.0}
    assert call.request["response_format"]["name"] == "SpecAnswer"
    assert call.episode_id is None  # the call is made for a cluster of two episodes


def test_the_spec_prompt_shows_every_member_with_its_runs_and_reading(client, chat_server):
    chat_server.queue(GOOD_SPEC)
    OpenAICompiler(client).extract_specs(MEMBERS)
    system, user = chat_server.requests[0].messages
    assert "does not choose an artifact type" in system["content"]
    assert "`{1}`" in system["content"] and "absent: true" in system["content"]
    text = user["content"]
    assert text.startswith("Cluster 3 holds 2 analysed failure(s).")
    assert '<member analysis="11" episode="ep-a" family="boil">' in text
    assert '<member analysis="12" episode="ep-c" family="boil">' in text
    assert "Named phrases: E1 = boil water" in text
    assert "Every instruction of this family opens with: Your task is to boil" in text
    assert "causal step: 2" in text and "correction: open door to <X>" in text
    assert "successful run's step showing the change: 2" in text
    assert f"[0] (start of the run) -> {HALL}" in text
    assert "[2] go to kitchen -> The door is not open." in text
    assert "[4] wait -> Nothing happens. (reward 0)" in text
    assert '<successful_run episode="ep-b" task="same task" steps="5">' in text
    assert "[2] open door to kitchen -> The door is now open." in text


def test_a_long_member_is_trimmed_around_its_own_causal_step(client, chat_server):
    long = MEMBERS[0].model_copy(deep=True)
    room = "You see a table, a chair and a long list of other things. " * 2
    long.case.steps = [
        CaseStep(index=i, action=f"inspect item {i}", observation=f"{room}(step {i})")
        for i in range(1, 200)
    ]
    long.start = 150
    chat_server.queue(UNSUPPORTED)
    OpenAICompiler(client, max_steps_chars=4000).extract_specs([long, MEMBERS[1]])
    text = chat_server.prompt_text()
    failed = text.split('<failed_run episode="ep-a" steps="200">')[1].split("</failed_run>")[0]
    assert len(failed) <= 2000  # each of the two members gets half the budget
    assert "[150] inspect item 150" in failed and "[199] inspect item 199" in failed
    assert "[0] (start of the run)" in failed and "[60] inspect" not in failed
    assert "steps omitted" in failed
    assert "[4] wait -> Nothing happens." in text  # the short member is shown whole


def test_each_cluster_gets_its_own_call(client, chat_server, store):
    chat_server.responder = lambda body: (
        GOOD_SPEC if "Cluster 3 " in body["messages"][1]["content"] else UNSUPPORTED
    )
    supported, deferred = OpenAICompiler(client).extract_specs([*MEMBERS, OTHER])
    assert supported.members == [11, 12] and supported.supported
    assert deferred.members == [13] and not deferred.supported
    assert deferred.reason == "analysis 13 needs a different correction"
    assert deferred.mechanism == "unrecognised"
    assert chat_server.request_count == 2
    assert [c.episode_id for c in store.calls("compile.spec")] == ["ep-e", None]


def test_a_citation_of_a_missing_step_gets_one_correction(client, chat_server):
    chat_server.queue(BAD_CITATION, GOOD_SPEC)
    [proposal] = OpenAICompiler(client).extract_specs(MEMBERS)
    assert proposal.supported
    retry = chat_server.requests[1].messages
    assert retry[:2] == chat_server.requests[0].messages
    assert (
        retry[2]["role"] == "assistant" and '"episode_id":"ep-a","start":9' in retry[2]["content"]
    )
    correction = retry[3]["content"]
    assert "activation.trigger cites ep-a@9, which is not a step of the runs shown" in correction
    assert "ep-a 0–4; ep-b 0–4; ep-c 0–4; ep-d 0–4" in correction


def test_an_answer_failing_twice_is_deferred_with_the_reason(client, chat_server, store):
    chat_server.queue(BAD_CITATION, BAD_CITATION)
    reasoner = OpenAICompiler(client)
    [proposal] = reasoner.extract_specs(MEMBERS)
    assert not proposal.supported and proposal.members == [11, 12]
    assert proposal.reason == (
        "model answer failed checks: activation.trigger cites ep-a@9, which is not a step of "
        "the runs shown"
    )
    assert chat_server.request_count == 2 and len(store.calls("compile.spec")) == 2
    spec = to_spec(proposal, 1, reasoner.name, by_id(*MEMBERS))
    assert spec.status == "deferred" and spec.reason == proposal.reason


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (
            spec_with(scope__decisions__0__citations=[cite("ep-z", 1).model_dump()]),
            "scope.decisions[0] cites ep-z@1, which is not a step of the runs shown",
        ),
        (
            spec_with(activation__boundary__citations=[cite("ep-b", 7).model_dump()]),
            "activation.boundary cites ep-b@7, which is not a step of the runs shown",
        ),
        (
            spec_with(execution__state__citations=[cite("ep-a", 3, 1).model_dump()]),
            "execution.state cites ep-a@3-1, which is not a step of the runs shown",
        ),
        (
            spec_with(scope__decisions__0__value="open door to {2}"),
            "scope.decisions[0]: uses {2}, which the trigger does not declare",
        ),
        (
            spec_with(activation__trigger__value="go to (.+"),
            "activation.trigger: pattern does not compile",
        ),
        (
            spec_with(execution__completion__citations=[]),
            "execution.completion: no evidence cited",
        ),
        (spec_with(scope=None), "scope is null although supported is true"),
        (spec_with(activation__trigger__value=""), "activation.trigger has no action pattern"),
    ],
)
def test_every_failed_check_is_named_in_the_correction_and_the_reason(
    client, chat_server, bad, problem
):
    chat_server.queue(bad, bad)
    [proposal] = OpenAICompiler(client).extract_specs(MEMBERS)
    assert not proposal.supported
    assert proposal.reason.startswith("model answer failed checks: ")
    assert problem in proposal.reason
    assert problem in chat_server.requests[1].messages[-1]["content"]


def test_a_model_error_defers_the_cluster_instead_of_raising(client, chat_server, store):
    chat_server.responder = lambda body: (
        refusal("No.") if "Cluster 3 " in body["messages"][1]["content"] else UNSUPPORTED
    )
    failed, other = OpenAICompiler(client).extract_specs([*MEMBERS, OTHER])
    assert not failed.supported and failed.members == [11, 12]
    assert "refused: No." in failed.reason
    assert other.members == [13] and other.reason == UNSUPPORTED.reason  # still asked
    assert store.calls("compile.spec")[-1].response["refusal"] == "No."


def test_the_same_cluster_twice_is_answered_from_the_cache(client, chat_server, store):
    chat_server.queue(GOOD_SPEC)
    reasoner = OpenAICompiler(client)
    assert reasoner.extract_specs(MEMBERS) == reasoner.extract_specs(MEMBERS)
    assert chat_server.request_count == 1
    hit, miss = store.calls("compile.spec")
    assert hit.cached and not miss.cached and hit.prompt_hash == miss.prompt_hash


# -- contract proposals ------------------------------------------------------------------------


@pytest.fixture
def spec():
    """The supported spec of GOOD_SPEC (as compilation would store it)."""
    stored = to_spec(to_proposal(GOOD_SPEC, [11, 12]), 1, "openai:test-model", by_id(*MEMBERS))
    assert stored.status == "supported"
    return stored


@pytest.fixture
def evidence(spec) -> SpecEvidence:
    """The spec's runs and what they demand (its patterns read in this process)."""
    return SpecEvidence.of(spec, MEMBERS)


def closed(slot: str, *citations: CitationAnswer) -> ObligationAnswer:
    return ObligationAnswer(status=True, slot=slot, citations=list(citations), witness="")


def opened(witness: str, *citations: CitationAnswer) -> ObligationAnswer:
    return ObligationAnswer(status=False, slot="", citations=list(citations), witness=witness)


RULE_CLOSURE = ClosureAnswer(
    observation=closed("guard", cite("ep-a", 1)),
    state=closed("guard", cite("ep-a", 0, 1)),
    decision=closed("response", cite("ep-b", 2)),
    completion=closed("positive", cite("ep-a", 2), cite("ep-c", 2)),
)

RULE = RuleAnswer(
    contract=RuleSlots(
        name="Open door before go to",
        description="Open a closed door before walking through it.",
        activation="the agent proposes 'go to <X>' while the door to <X> is closed",
        guard="the door to <X> was not just opened",
        response="replace 'go to <X>' with 'open door to <X>'",
        positive=[cite("ep-a", 2), cite("ep-c", 2)],
        negative=[cite("ep-b", 3)],
        form=RuleFormAnswer(
            when_action="go to (.+)",
            when_evidence=r"door to the {1} \(that is closed\)",
            unless_evidence=r"> open door to {1}\n",
            response="replace",
            replacement="open door to {1}",
        ),
    ),
    closure=RULE_CLOSURE,
)


def test_a_rule_with_the_right_slots_and_citations_closes(
    client, chat_server, store, spec, evidence
):
    chat_server.queue(RULE)
    proposal = OpenAICompiler(client).propose_contract(spec, "rule", [], evidence.demands)
    contract = proposal.contract
    assert contract is not None and contract["name"] == "open-door-before-go-to"
    assert contract["positive"] == [
        {"citation": {"episode_id": "ep-a", "start": 2, "end": 2}},
        {"citation": {"episode_id": "ep-c", "start": 2, "end": 2}},
    ]
    assert contract["form"]["kind"] == "rule" and contract["form"]["id"] == contract["name"]
    assert set(contract) == set(heuristic.contract_for(spec, "rule") or {})
    attempt = decide(spec, proposal, 1, [], evidence)
    assert attempt.closed and attempt.missing == []
    assert [(c.obligation, c.slot) for c in attempt.checks] == [
        ("observation", "guard"),
        ("state", "guard"),
        ("decision", "response"),
        ("completion", "positive"),
    ]
    [call] = store.calls("compile.contract.rule")
    assert call.request["response_format"]["name"] == "RuleAnswer"
    assert call.request["params"] == {"temperature": 0.0}


@pytest.mark.parametrize(
    ("changes", "obligation", "witness"),
    [
        (
            {"closure": {"observation": closed("owned_state", cite("ep-a", 1))}},
            "observation",
            "claimed closed by 'owned_state', which is not a slot of this schema",
        ),
        (
            {"closure": {"decision": closed("response", cite("ep-a", 4))}},
            "decision",
            "cites ep-a@4, which the spec's evidence does not contain",
        ),
        (  # the boundary's spans back negative cases, not closure
            {"closure": {"completion": closed("positive", cite("ep-b", 3))}},
            "completion",
            "cites ep-b@3, which the spec's evidence does not contain",
        ),
        (
            {"closure": {"state": closed("guard")}},
            "state",
            "claimed closed without citing evidence",
        ),
        (
            {"contract": {"guard": ""}},
            "observation",
            "claimed closed by slot 'guard', which the contract leaves empty",
        ),
        (
            {"closure": {"decision": closed("response", cite("ep-b", -1))}},
            "decision",
            "the proposal cites malformed spans (ep-b@-1) (the witness cites no step of the "
            "cluster's runs)",
        ),
    ],
)
def test_the_controller_refuses_a_closure_the_contract_does_not_back(
    client, chat_server, spec, evidence, changes, obligation, witness
):
    answer = RULE.model_copy(
        update={
            "contract": RULE.contract.model_copy(update=changes.get("contract", {})),
            "closure": RULE_CLOSURE.model_copy(update=changes.get("closure", {})),
        }
    )
    chat_server.queue(answer)
    proposal = OpenAICompiler(client).propose_contract(spec, "rule", [], evidence.demands)
    assert all(r.status for r in answer.closure.__dict__.values())  # the model claims closure
    attempt = decide(spec, proposal, 1, [], evidence)
    assert not attempt.closed
    check = next(c for c in attempt.checks if c.obligation == obligation)
    assert not check.closed and check.witness == witness
    assert f"{obligation}: {witness}" in witnesses(attempt)


SKILL = SkillAnswer(
    contract=SkillSlots(
        name="open door first",
        description="Open a closed door, then go through it.",
        applicability="the agent proposes 'go to <X>' while the door to <X> is closed",
        inputs=["{1}"],
        procedure=["open door to <X>"],
        recovery="a rejected step ends the procedure; the agent goes on with its plan",
        expected_result="the door is open",
        probes=[ProbeAnswer(episode_id="ep-a", step=2)],
        form=ProcedureFormAnswer(
            when_action="go to (.+)",
            when_evidence=r"door to the {1} \(that is closed\)",
            unless_evidence="",
            steps=["open door to {1}"],
            loop=[],
            until="The door is now open",
            max_rounds=3,
        ),
    ),
    closure=ClosureAnswer(
        observation=closed("applicability", cite("ep-a", 1)),
        state=closed("inputs", cite("ep-a", 1)),
        decision=closed("procedure", cite("ep-b", 2)),
        completion=closed("expected_result", cite("ep-b", 2)),
    ),
)

SUBAGENT = SubagentAnswer(
    contract=SubagentSlots(
        name="reach room",
        description="Reach the room the agent wants to go to, opening doors on the way.",
        invocation="the agent proposes 'go to <X>' and <X> is not adjacent",
        inputs=[InputAnswer(name="room", description="the room to reach", bind="{1}")],
        owned_state="the rooms visited",
        tools=["open door to", "go to"],
        success="the room description names <X>",
        failure="the step budget runs out",
        probes=[
            DelegateProbeAnswer(episode_id="ep-a", step=2, expect="success", inputs=[]),
            DelegateProbeAnswer(
                episode_id="ep-a",
                step=2,
                expect="failure",
                inputs=[InputValue(name="{room}", value="nowhere")],
            ),
        ],
        form=DelegateFormAnswer(
            when_action="go to (.+)",
            when_evidence="",
            unless_evidence="",
            objective="reach the {room}",
            success="This room is called the {room}",
            strategy="search-exits",
            action="",
            prompt="Walk through the doors until you are in the room; open closed ones.",
            max_steps=20,
        ),
    ),
    closure=RULE_CLOSURE,
)


def test_skill_and_subagent_answers_take_the_heuristic_shapes(client, chat_server, spec, evidence):
    chat_server.queue(SKILL, SUBAGENT)
    reasoner = OpenAICompiler(client)
    skill = reasoner.propose_contract(spec, "skill", [], evidence.demands).contract
    assert skill is not None
    assert skill["inputs"] == ["1"] and skill["name"] == "open-door-first"
    assert skill["probes"] == [{"episode_id": "ep-a", "step": 2, "action": ""}]
    assert set(skill) == set(heuristic.contract_for(spec, "skill") or {})
    assert set(heuristic.contract_for(spec, "skill")["form"]) <= set(skill["form"])
    CONTRACT.validate_python(skill)

    subagent = reasoner.propose_contract(spec, "subagent", [], evidence.demands).contract
    assert subagent is not None
    assert subagent["input_schema"] == {
        "type": "object",
        "required": ["room"],
        "properties": {"room": {"type": "string", "description": "the room to reach"}},
        "additionalProperties": False,
    }
    assert subagent["return_schema"] == RETURN_SCHEMA
    assert subagent["probes"][1] == {
        "episode_id": "ep-a",
        "step": 2,
        "action": "",
        "expect": "failure",
        "inputs": {"room": "nowhere"},
    }
    assert subagent["form"]["tools"] == ["open door to", "go to"]
    typed = CONTRACT.validate_python(subagent)
    assert typed.form.objective == "reach the {room}" and typed.form.inputs[0].bind == "{1}"
    assert typed.form.prompt.startswith("Walk through the doors")


def test_the_contract_prompt_shows_the_spec_and_the_carried_witnesses(
    client, chat_server, spec, evidence
):
    chat_server.queue(SKILL)
    carried = ["rule decision: the correction takes two dependent decisions"]
    OpenAICompiler(client).propose_contract(spec, "skill", carried, evidence.demands)
    system, user = chat_server.requests[0].messages
    assert "The schema is a SKILL." in system["content"]
    assert (
        "one of: applicability, inputs, procedure, recovery, expected_result, probes"
        in system["content"]
    )
    text = user["content"]
    assert "Attempt the skill schema (position 2 of rule, skill, subagent)." in text
    assert "activation.trigger: the agent proposes 'go to <X>'\n  value: go to (.+)" in text
    assert "  cites: ep-a@2, ep-c@2" in text
    assert "activation.observations[1]: 'open door to <X>' was just done (must NOT" in text
    assert "activation.boundary (negative cases only): 'go to <X>' once the door is open" in text
    assert "  cites: ep-b@3" in text
    assert "execution.state: none: the closed door is visible\n  cites: ep-a@0-1" in text
    assert "execution: state owner none, lifetime step, declared inputs 1" in text
    assert "<open_witnesses>" in text and f"- {carried[0]}" in text


def test_a_schema_that_cannot_own_the_intervention_proposes_no_contract(
    client, chat_server, store, spec, evidence
):
    witness = "nothing has to stay private: the closed door is visible to the agent"
    chat_server.queue(
        SubagentAnswer(
            contract=None,
            closure=RULE_CLOSURE.model_copy(
                update={"state": opened(witness, cite("ep-a", 1)), "decision": opened("no")}
            ),
        )
    )
    proposal = OpenAICompiler(client).propose_contract(
        spec, "subagent", ["rule state: x"], evidence.demands
    )
    assert proposal.kind == "subagent" and proposal.contract is None
    assert [r.obligation for r in proposal.report] == [
        "observation",
        "state",
        "decision",
        "completion",
    ]
    attempt = decide(spec, proposal, 3, ["rule state: x"], evidence)
    assert not attempt.closed and "form" in attempt.missing
    state = next(c for c in attempt.checks if c.obligation == "state")
    assert state.witness == witness and [c.label() for c in state.citations] == ["ep-a@1"]
    decision = next(c for c in attempt.checks if c.obligation == "decision")
    assert decision.witness == "no (the witness cites no step of the cluster's runs)"
    assert len(store.calls("compile.contract.subagent")) == 1
    assert "No earlier schema" not in chat_server.prompt_text()


def test_the_same_contract_twice_is_answered_from_the_cache(
    client, chat_server, store, spec, evidence
):
    chat_server.queue(RULE)
    reasoner = OpenAICompiler(client)
    first = reasoner.propose_contract(spec, "rule", [], evidence.demands)
    assert reasoner.propose_contract(spec, "rule", [], evidence.demands) == first
    assert chat_server.request_count == 1
    hit, miss = store.calls("compile.contract.rule")
    assert hit.cached and not miss.cached and hit.prompt_hash == miss.prompt_hash


def test_a_failed_contract_call_is_an_attempt_left_open_with_the_error(
    client, chat_server, spec, evidence, store
):
    chat_server.queue(refusal("No."))
    proposal = OpenAICompiler(client).propose_contract(spec, "rule", [], evidence.demands)
    assert proposal.kind == "rule" and proposal.contract is None
    assert {r.obligation for r in proposal.report} == set(OBLIGATIONS)
    assert all(not r.status and "refused: No." in r.witness for r in proposal.report)
    attempt = decide(spec, proposal, 1, [], evidence)
    assert not attempt.closed
    assert any("compile.contract.rule" in check.witness for check in attempt.checks)
    [call] = store.calls()
    assert "refused: No." in call.gave_up
    carried = [f"rule {w}" for w in witnesses(attempt)] + ["rule state: the guard reads nothing"]
    prompt = render_attempt(spec, "skill", carried, evidence.demands)
    assert "the guard reads nothing" in prompt and NO_ANSWER not in prompt
