"""The model-backed Builder and Consolidator against the scripted chat server on 127.0.0.1:
the model labels the case and calls the rule system's functions, the mechanical checks and
the failed-run guard decide."""

from __future__ import annotations

import pytest

from store import ManualRule
from workbench.backends import openai_backends
from workbench.llm import ModelError
from workbench.llm.steps import CaseStep
from workbench.manual.builder import BuildCase
from workbench.manual.openai_builder import (
    CASE_PROMPTS,
    CASE_PURPOSE,
    CONSOLIDATE_PURPOSE,
    RULES_PURPOSE,
    BuildAnswer,
    CaseAnswer,
    ConsolidateAnswer,
    ConsolidateCall,
    LibraryNote,
    OpenAIBuilder,
    RuleCall,
)
from workbench.manual.operations import DeleteRule, UpdateRule, WriteRule

RULES = [
    ManualRule(
        id="rule_1",
        type="Special Mechanism",
        content="In boil tasks: the stove heats only what is on it.",
        example="activate stove -> the pot on it warms",
        validation_logs=["ep_0"],
    ),
    ManualRule(
        id="rule_2",
        type="Corrected Error",
        content="When a door is closed: open it before going through.",
        example="go to kitchen -> The door is not open.",
        validation_logs=["ep_1"],
    ),
]

SMOOTH = [
    CaseStep(index=1, action="open door to kitchen", observation="The door is now open."),
    CaseStep(index=2, action="go to kitchen", observation="You move to the kitchen.", reward=1.0),
]
TROUBLED = [
    CaseStep(index=1, action="go to kitchen", observation="The door is not open."),
    CaseStep(index=2, action="open door to kitchen", observation="The door is now open."),
    CaseStep(index=3, action="go to kitchen", observation="You move to the kitchen.", reward=1.0),
]


def case(steps: list[CaseStep], success: bool, fired: list[str] | None = None) -> BuildCase:
    return BuildCase(
        episode_id="ep_7",
        family="boil",
        instruction="Boil the water in the kitchen.",
        steps=steps,
        success=success,
        rules=RULES,
        fired=fired or [],
    )


def label(text: str) -> CaseAnswer:
    return CaseAnswer(analysis="Step 1 went wrong because no rule warned about it.", label=text)


NOTHING = BuildAnswer(potential_rules="Nothing new.", calls=[RuleCall(function="stop_generating")])


@pytest.mark.parametrize(
    ("steps", "success", "text", "key"),
    [
        (SMOOTH, True, "Imperfect Agent", ("direct success", None)),
        (TROUBLED, True, "Imperfect Rules", ("indirect success", "imperfect rules")),
        (TROUBLED, True, "Imperfect Agent", ("indirect success", "imperfect agent")),
        (TROUBLED, False, "Imperfect Rules", ("failure", "imperfect rules")),
        (SMOOTH, False, "Imperfect Agent", ("failure", "imperfect agent")),
    ],
)
def test_each_case_gets_its_own_prompt(client, chat_server, steps, success, text, key):
    chat_server.queue(label(text), NOTHING)
    answer = OpenAIBuilder(client).build_rules(case(steps, success))
    assert answer.cause == text.lower()
    assert answer.operations == [] and answer.library == []
    first = chat_server.prompt_text(0)
    assert "exactly as `Imperfect Rules` or `Imperfect Agent`" in first
    assert '<trajectory episode="ep_7" steps=' in first
    assert "[1] " in first and '<rule id="rule_2" type="Corrected Error">' in first
    second = chat_server.prompt_text(1)
    assert CASE_PROMPTS[key] in second
    assert all(other not in second for k, other in CASE_PROMPTS.items() if k != key)
    assert f"The cause of the trouble, as analysed: {text}." in second
    assert chat_server.requests[1].body["response_format"]["json_schema"]["name"] == "BuildAnswer"


def test_the_prompt_shows_the_outcome_and_the_rules_that_acted(client, chat_server):
    chat_server.queue(label("Imperfect Rules"), NOTHING)
    OpenAIBuilder(client).build_rules(case(TROUBLED, False, fired=["rule_2"]))
    first = chat_server.prompt_text(0)
    assert "<outcome>failure</outcome>" in first
    assert "Rules that acted in this episode: rule_2" in first
    assert "<validation_logs>ep_1</validation_logs>" in first


def test_a_third_label_gets_one_correction_then_fails(client, chat_server, store):
    chat_server.queue(label("Imperfect Environment"), label("imperfect rules"))
    with pytest.raises(ModelError) as raised:
        OpenAIBuilder(client).build_rules(case(SMOOTH, True))
    assert raised.value.purpose == CASE_PURPOSE
    assert "'imperfect rules' is not one of the two allowed" in str(raised.value)
    assert chat_server.request_count == 2
    correction = chat_server.requests[1].messages[-1]["content"]
    assert "'Imperfect Environment' is not one of the two allowed" in correction
    assert chat_server.requests[1].messages[-2]["role"] == "assistant"


def test_a_corrected_label_is_accepted(client, chat_server):
    chat_server.queue(label("Imperfect Planner"), label("Imperfect Agent"), NOTHING)
    answer = OpenAIBuilder(client).build_rules(case(SMOOTH, True))
    assert answer.cause == "imperfect agent"
    assert chat_server.request_count == 3


def test_calls_convert_to_operations_and_a_failed_run_writes_no_success_rule(client, chat_server):
    calls = BuildAnswer(
        potential_rules="The door rule needs the kitchen case; the run proves no procedure.",
        calls=[
            RuleCall(
                function="write_rule",
                type="Success Process",
                content="boil tasks: go to the kitchen and boil.",
                validation_logs=["ep_7"],
            ),
            RuleCall(
                function="write_rule",
                type="Unsolved Error",
                content="In boil tasks: going through a closed door fails.",
                example="ep_7@1: go to kitchen -> The door is not open.",
                validation_logs=["ep_7"],
            ),
            RuleCall(function="update_rule", rule_id="rule_2", validation_logs=["ep_1", "ep_7"]),
            RuleCall(function="delete_rule", rule_id="rule_1"),
            RuleCall(function="stop_generating"),
            RuleCall(function="delete_rule", rule_id="rule_2"),
        ],
        library=[LibraryNote(kind="reflection", content="Open the door first.", faulty_step=1)],
    )
    chat_server.queue(label("Imperfect Rules"), calls)
    answer = OpenAIBuilder(client).build_rules(case(TROUBLED, False))
    assert answer.operations == [
        WriteRule(
            type="Unsolved Error",
            content="In boil tasks: going through a closed door fails.",
            example="ep_7@1: go to kitchen -> The door is not open.",
            validation_logs=["ep_7"],
        ),
        UpdateRule(rule_id="rule_2", validation_logs=["ep_1", "ep_7"]),
        DeleteRule(rule_id="rule_1"),
    ]
    [entry] = answer.library
    assert (entry.kind, entry.family, entry.episode_id) == ("reflection", "boil", "ep_7")
    assert entry.content == "Step 1: Open the door first."


def test_an_unknown_rule_id_or_a_wrong_library_note_gets_a_correction(client, chat_server):
    bad = BuildAnswer(
        potential_rules="-",
        calls=[RuleCall(function="update_rule", rule_id="rule_9", content="x")],
        library=[LibraryNote(kind="reflection", content="Nothing went wrong.", faulty_step=2)],
    )
    good = BuildAnswer(
        potential_rules="-",
        calls=[RuleCall(function="update_rule", rule_id="rule_2", example="seen again")],
        library=[LibraryNote(kind="skill", content="1. open door\n2. go to kitchen")],
    )
    chat_server.queue(label("Imperfect Agent"), bad, good)
    answer = OpenAIBuilder(client).build_rules(case(TROUBLED, True))
    assert answer.operations == [UpdateRule(rule_id="rule_2", example="seen again")]
    assert [e.kind for e in answer.library] == ["skill"]
    correction = chat_server.requests[2].messages[-1]["content"]
    assert "call 1 (update_rule): 'rule_9' is not a rule id" in correction
    assert "a reflection does not fit a run with outcome 'indirect success'" in correction
    assert "The rule ids are: rule_1, rule_2." in correction


def test_consolidate_merges_with_listed_ids(client, chat_server, store):
    merge = ConsolidateAnswer(
        calls=[
            ConsolidateCall(
                function="update_rule",
                rule_id="rule_2",
                example="go to kitchen -> The door is not open.\nactivate stove -> ...",
                validation_logs=["ep_1", "ep_0", "rule_1"],
            ),
            ConsolidateCall(function="delete_rule", rule_id="rule_1"),
        ]
    )
    chat_server.queue(merge)
    operations = OpenAIBuilder(client).consolidate(RULES, n_max=1)
    assert operations == [
        UpdateRule(
            rule_id="rule_2",
            example="go to kitchen -> The door is not open.\nactivate stove -> ...",
            validation_logs=["ep_1", "ep_0", "rule_1"],
        ),
        DeleteRule(rule_id="rule_1"),
    ]
    prompt = chat_server.prompt_text()
    assert "grown beyond 1 rules" in prompt
    assert '<rule id="rule_1" type="Special Mechanism">' in prompt
    assert "<example>\nactivate stove -> the pot on it warms\n</example>" in prompt
    [call] = store.calls(purpose=CONSOLIDATE_PURPOSE)
    assert not call.cached


def test_consolidate_refuses_an_unknown_id_after_one_correction(client, chat_server):
    unknown = ConsolidateAnswer(calls=[ConsolidateCall(function="delete_rule", rule_id="rule_5")])
    chat_server.queue(unknown, unknown)
    with pytest.raises(ModelError) as raised:
        OpenAIBuilder(client).consolidate(RULES, n_max=1)
    assert raised.value.purpose == CONSOLIDATE_PURPOSE
    assert "'rule_5' is not a rule id" in str(raised.value)
    assert chat_server.request_count == 2
    assert "The rule ids are: rule_1, rule_2." in chat_server.requests[1].messages[-1]["content"]


def test_calls_are_logged_by_purpose_and_cached(client, chat_server, store):
    builder = openai_backends(client).builder
    assert isinstance(builder, OpenAIBuilder) and builder.client is client
    assert builder.name == "openai:test-model"
    chat_server.queue(label("Imperfect Rules"), NOTHING)
    first = builder.build_rules(case(SMOOTH, True))
    assert chat_server.request_count == 2
    assert [c.purpose for c in store.calls(purpose=CASE_PURPOSE)] == [CASE_PURPOSE]
    assert [c.purpose for c in store.calls(purpose=RULES_PURPOSE)] == [RULES_PURPOSE]
    assert all(c.episode_id == "ep_7" for c in store.calls())
    again = builder.build_rules(case(SMOOTH, True))
    assert again == first and chat_server.request_count == 2
    assert all(c.cached for c in store.calls(limit=2))


def test_the_builder_sees_the_planners_thoughts_and_conclusion(client, chat_server):
    chat_server.queue(label("Imperfect Rules"), NOTHING)
    troubled = case(TROUBLED, False)
    troubled.thoughts = {1: "The kitchen is next door, I go there."}
    OpenAIBuilder(client).build_rules(troubled)
    prompt = chat_server.prompt_text(0)
    assert "<planner_thoughts>\n[1] The kitchen is next door, I go there." in prompt
    assert "The faulty step looks like step 1 'go to kitchen'" in prompt


def test_the_consolidator_looks_up_the_trajectories_rules_depend_on(client, chat_server, store):
    from store import Batch, Episode, Outcome, Step, Task

    store.put_task(Task(id="t", environment="scienceworld", family="boil"))
    store.put_batch(Batch(id="b", name="b", kind="run"))
    store.add_episode(
        Episode(
            id="ep_1",
            task_id="t",
            batch_id="b",
            outcome=Outcome(success=False, message="Step limit"),
        ),
        [
            Step(
                episode_id="ep_1",
                index=1,
                kind="action",
                action="go to kitchen",
                observation="The door is not open.",
            )
        ],
    )
    chat_server.queue(ConsolidateAnswer(calls=[]))
    OpenAIBuilder(client).consolidate(RULES, n_max=1)
    prompt = chat_server.prompt_text(0)
    assert '<trajectory episode="ep_1" outcome="Step limit">' in prompt
    assert "[1] go to kitchen -> The door is not open." in prompt
