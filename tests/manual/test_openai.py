"""The model-backed Formulator against the scripted chat server on 127.0.0.1: the model
groups, the mechanical check decides."""

from __future__ import annotations

import pytest

from store import ManualRule, Store
from tests.llm_server import ChatServer
from tests.manual.test_formulate import anchors, fill, headings, links
from workbench.llm import ModelError
from workbench.manual.formulate import RuleGroup, formulate
from workbench.manual.openai import PURPOSE, GroupingAnswer, OpenAIFormulator

RULES = [
    ManualRule(
        id="rule_1",
        type="Corrected Error",
        content="When the door is closed: open it first.",
        example="go to kitchen -> The door is not open.",
    ),
    ManualRule(id="rule_2", type="Special Mechanism", content="In boil tasks: heat needs fuel."),
    ManualRule(id="rule_3", type="Unsolved Error", content="Loops: the agent repeats itself."),
]


def answer(*groups: tuple[str, list[str]]) -> GroupingAnswer:
    return GroupingAnswer(
        groups=[
            RuleGroup(title=title, introduction=f"What {title} is about.", rule_ids=ids)
            for title, ids in groups
        ]
    )


GOOD = answer(("Moving between rooms", ["rule_1", "rule_3"]), ("Heating", ["rule_2"]))
DROPS_RULE_2 = answer(("Moving between rooms", ["rule_1", "rule_3"]))


def test_the_prompt_shows_every_rule_and_a_good_grouping_is_returned(client, chat_server, store):
    chat_server.queue(GOOD)
    groups = OpenAIFormulator(client).group_rules(RULES)
    assert [(g.title, g.rule_ids) for g in groups] == [
        ("Moving between rooms", ["rule_1", "rule_3"]),
        ("Heating", ["rule_2"]),
    ]
    prompt = chat_server.prompt_text()
    assert "The rule system holds 3 rule(s): rule_1, rule_2, rule_3." in prompt
    assert '<rule id="rule_1" type="Corrected Error">' in prompt
    assert "When the door is closed: open it first." in prompt
    assert "<example>\ngo to kitchen -> The door is not open.\n</example>" in prompt
    assert "exactly one group" in prompt
    request = chat_server.requests[-1].body
    assert request["response_format"]["json_schema"]["name"] == "GroupingAnswer"
    [call] = store.calls(purpose=PURPOSE)
    assert call.purpose == "manual.formulate" and not call.cached


def test_a_grouping_that_drops_a_rule_gets_one_correction(client, chat_server):
    chat_server.queue(DROPS_RULE_2, GOOD)
    groups = OpenAIFormulator(client).group_rules(RULES)
    assert [g.title for g in groups] == ["Moving between rooms", "Heating"]
    assert chat_server.request_count == 2
    correction = chat_server.requests[1].messages[-1]["content"]
    assert "rule_2 is in no group" in correction
    assert chat_server.requests[1].messages[-2]["role"] == "assistant"


def test_a_grouping_failing_twice_fails_clearly(client, chat_server, store):
    repeats = answer(("Rooms", ["rule_1", "rule_3"]), ("More", ["rule_3", "rule_2", "rule_9"]))
    chat_server.queue(DROPS_RULE_2, repeats)
    with pytest.raises(ModelError) as raised:
        OpenAIFormulator(client).group_rules(RULES)
    message = str(raised.value)
    assert message.startswith("manual.formulate: the model's grouping still does not place")
    assert "rule_3 appears 2 times (in 'Rooms', 'More')" in message
    assert "rule_9 (in 'More') is not a rule of the rule system" in message
    assert raised.value.call is not None and raised.value.purpose == PURPOSE
    assert chat_server.request_count == 2


def test_an_empty_grouping_fails_clearly_and_ends_on_the_call_that_wrote_it(
    client, chat_server, store
):
    # SmolLM2-135M, for real, twice over (bench/real_model.py)
    wrote = (
        '{ "groups": [ { "title" : "rules.json", "introduction" : "JSON-LD (JSDELD) (10 bytes)", '
        '"rule_ids" : [ ] } ] }'
    )
    chat_server.queue(wrote, wrote)
    with pytest.raises(
        ModelError, match=r"group 'rules\.json' has no rules; rule_1 is in no group"
    ):
        OpenAIFormulator(client).group_rules(RULES)
    first, second = reversed(store.calls())
    assert (first.turn, second.turn) == (0, 1)
    assert not first.gave_up and "rule_3 is in no group" in second.gave_up


def test_formulating_with_the_model_stores_its_groups(client, chat_server, store: Store):
    fill(store)
    chat_server.queue(
        answer(
            ("Doors and rooms", ["rule_1"]),
            ("Boiling water", ["rule_3", "rule_2"]),
            ("Open problems", ["rule_4"]),
        )
    )
    manual = formulate(store, OpenAIFormulator(client))
    assert manual.reasoner == "openai:test-model"
    assert manual.rules == ["rule_1", "rule_3", "rule_2", "rule_4"]
    assert [text for level, text in headings(manual.markdown) if level == 2][1:4] == [
        "1. Doors and rooms",
        "2. Boiling water",
        "3. Open problems",
    ]
    assert "What Boiling water is about." in manual.markdown
    assert set(links(manual.markdown)) <= anchors(manual.markdown)
    # the same rules again: answered from the cache, no new version
    assert formulate(store, OpenAIFormulator(client)).version == 1
    assert chat_server.request_count == 1


def test_formulating_fails_clearly_when_the_model_keeps_dropping_a_rule(
    client, chat_server: ChatServer, store: Store
):
    fill(store)
    drops = answer(("All", ["rule_1", "rule_2", "rule_3"]))
    chat_server.queue(drops, drops)
    with pytest.raises(ModelError, match="rule_4 is in no group"):
        formulate(store, OpenAIFormulator(client))
    assert store.manuals() == []
    assert "rule_4 is in no group" in chat_server.prompt_text()
