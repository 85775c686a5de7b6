"""The model-backed analyst against the scripted chat-completions server on 127.0.0.1."""

from __future__ import annotations

import re

import pytest

from tests.llm_server import malformed, refusal
from workbench.analyze.analyst import Analyst, FailureCase, Proposal
from workbench.analyze.openai import OpenAIAnalyst, render_case
from workbench.llm import ModelError
from workbench.llm.steps import CaseStep

INSTRUCTION = "Your task is to boil water. First, focus on the water."


def case(steps: int = 6, contrast: int | None = 5, **changes) -> FailureCase:
    """A failed run that walks into a closed door at step 2; its contrast opens it first."""
    failed = [
        CaseStep(index=0, action="look around", observation="This room is called the hallway."),
        CaseStep(index=1, action="go to kitchen", observation="The door to the kitchen is closed."),
        CaseStep(index=2, action="go to kitchen", observation="The door is not open."),
        *(
            CaseStep(index=i, action="wait", observation="Nothing happens.", reward=0.0)
            for i in range(3, steps)
        ),
    ]
    success = [
        CaseStep(index=0, action="look around", observation="This room is called the hallway."),
        CaseStep(index=1, action="open door to kitchen", observation="The door is now open."),
        CaseStep(index=2, action="go to kitchen", observation="You move to the kitchen."),
        CaseStep(index=3, action="focus on water", observation="You focus on the water."),
        CaseStep(index=4, action="boil water", observation="The water boils.", reward=100.0),
    ]
    fields = {
        "episode_id": "ep-failed",
        "family": "boil",
        "instruction": INSTRUCTION,
        "outcome": "failed: score 0 — ran out of steps",
        "steps": failed[:steps],
        "contrast_id": "ep-success" if contrast else None,
        "contrast_same_task": True,
        "contrast_steps": success[:contrast] if contrast else [],
    }
    return FailureCase(**{**fields, **changes})


GOOD = Proposal(
    failure="The run ended without boiling the water.",
    start=1,
    end=2,
    change="Open a closed door before walking through it.",
    trigger="go to <X> | the door to <X> is closed",
    correction="open door to <X>",
    confidence=0.8,
    rationale="Step 1 shows the door closed; step 2 walks into it and nothing progresses.",
    citations=[1, 2, 5],
    contrast_citations=[1, 2],
)


def answer(**changes) -> dict:
    return GOOD.model_copy(update=changes).model_dump()


def test_a_well_formed_answer_becomes_a_proposal_and_is_logged(client, chat_server, store):
    chat_server.queue(GOOD)
    reasoner = OpenAIAnalyst(client)
    assert reasoner.name == "openai:test-model"
    proposal = reasoner.analyze_failure(case())
    assert proposal == GOOD
    [call] = store.calls("analyze.failure")
    assert call.episode_id == "ep-failed"
    assert call.error == "" and not call.cached
    assert call.request["params"] == {"temperature": 0.0}
    assert call.request["response_format"]["name"] == "Proposal"
    body = chat_server.requests[0].body
    assert body["temperature"] == 0.0
    assert body["response_format"]["json_schema"]["name"] == "Proposal"


def test_it_is_a_reasoner(client):
    reasoner: Analyst = OpenAIAnalyst(client)
    assert callable(reasoner.analyze_failure)


def test_the_prompt_carries_the_instruction_and_both_runs(client, chat_server):
    chat_server.queue(GOOD)
    OpenAIAnalyst(client).analyze_failure(case())
    system, user = chat_server.requests[0].messages
    assert system["role"] == "system" and "EARLIEST" in system["content"]
    assert "<X>" in system["content"] and "contrast_citations" in system["content"]
    text = user["content"]
    assert INSTRUCTION in text
    assert "ran out of steps" in text
    assert "[1] go to kitchen -> The door to the kitchen is closed." in text
    assert "[5] wait -> Nothing happens. (reward 0)" in text
    assert "[1] open door to kitchen -> The door is now open." in text
    assert "[4] boil water -> The water boils. (reward 100)" in text
    assert 'task="same task"' in text
    assert "omitted" not in text


def test_without_a_contrast_the_prompt_says_so(client, chat_server):
    chat_server.queue(answer(contrast_citations=[]))
    OpenAIAnalyst(client).analyze_failure(case(contrast=None))
    text = chat_server.prompt_text()
    assert "No successful run" in text and "<successful_run" not in text


def listing(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}[^>]*>\n(.*?)\n</{tag}>", text, re.DOTALL)
    assert found, f"no <{tag}> in the prompt"
    return found.group(1)


def long_case() -> FailureCase:
    """200 steps on each side, identical up to step 120, with long observations."""
    room = "You see a table, a chair and a long list of other things. " * 2

    def run(prefix: str) -> list[CaseStep]:
        return [
            CaseStep(
                index=i,
                action=f"inspect item {i}" if i < 120 else f"{prefix} {i}",
                observation=f"{room}(step {i})",
            )
            for i in range(200)
        ]

    return case().model_copy(update={"steps": run("drop"), "contrast_steps": run("take")})


def test_a_long_case_is_trimmed_under_the_budget(client, chat_server):
    chat_server.queue(GOOD)
    OpenAIAnalyst(client, max_steps_chars=4000).analyze_failure(long_case())
    text = chat_server.prompt_text()
    failed, success = listing(text, "failed_run"), listing(text, "successful_run")
    assert len(failed) + len(success) <= 4000
    assert 'steps="200"' in text
    for run in (failed, success):
        shown = [int(i) for i in re.findall(r"^\[(\d+)\]", run, re.MULTILINE)]
        assert {0, 199, 120, 119, 121} <= set(shown)  # ends and where the runs first differ
        assert 60 not in shown
        [(omitted, total)] = re.findall(r"\((\d+) of (\d+) steps omitted", run)
        assert (int(omitted), int(total)) == (200 - len(shown), 200)
        gaps = [int(n) for n in re.findall(r"\[\.\.\. (\d+) steps omitted", run)]
        assert sum(gaps) == int(omitted)
    assert "[120] drop 120" in failed and "[120] take 120" in success


def test_a_short_budget_keeps_the_first_and_last_steps(client):
    text = render_case(long_case().model_copy(update={"contrast_steps": []}), 1000)
    failed = listing(text, "failed_run")
    assert len(failed) <= 1000
    assert failed.startswith("[0] inspect item 0")
    assert "[199] drop 199" in failed


def test_a_budget_below_the_minimum_is_refused(client):
    with pytest.raises(ValueError, match="max_steps_chars"):
        OpenAIAnalyst(client, max_steps_chars=10)


def test_a_malformed_answer_is_retried(client, chat_server, store):
    chat_server.queue(malformed(), GOOD)
    assert OpenAIAnalyst(client).analyze_failure(case()) == GOOD
    assert chat_server.request_count == 2
    success, failure = store.calls("analyze.failure")
    assert failure.error.startswith("malformed structured output") and success.error == ""


def test_a_citation_of_a_missing_step_gets_one_correction(client, chat_server, store):
    chat_server.queue(answer(citations=[1, 2, 9]), GOOD)
    assert OpenAIAnalyst(client).analyze_failure(case()) == GOOD
    assert chat_server.request_count == 2
    retry = chat_server.requests[1].messages
    assert retry[:2] == chat_server.requests[0].messages
    assert retry[2]["role"] == "assistant" and '"citations": [1, 2, 9]' in retry[2]["content"]
    correction = retry[3]["content"]
    assert "citations 9 are not steps of the failed run" in correction
    assert "failed run's steps are 0–5" in correction
    assert "successful run's steps are 0–4" in correction
    assert len(store.calls("analyze.failure")) == 2


@pytest.mark.parametrize(
    ("changes", "contrast", "problem"),
    [
        ({"citations": [1, 40]}, 5, "citations 40 are not steps of the failed run"),
        ({"start": 3, "end": 1}, 5, "start (3) is after end (1)"),
        ({"end": 6}, 5, "end (6) is not a step of the failed run"),
        ({"contrast_citations": [7]}, 5, "contrast_citations 7 are not steps of the successful"),
        ({}, None, "contrast_citations must be empty: there is no successful run"),
    ],
)
def test_a_repeated_violation_raises(client, chat_server, store, changes, contrast, problem):
    bad = answer(**changes)
    chat_server.queue(bad, bad)
    with pytest.raises(ModelError, match=re.escape(problem)) as raised:
        OpenAIAnalyst(client).analyze_failure(case(contrast=contrast))
    assert "after a correction" in str(raised.value)
    assert raised.value.purpose == "analyze.failure"
    assert raised.value.call is not None and raised.value.call == store.calls()[0]
    assert chat_server.request_count == 2
    assert problem in chat_server.requests[1].messages[-1]["content"]


def test_a_refusal_raises(client, chat_server):
    chat_server.queue(refusal("No."))
    with pytest.raises(ModelError, match=r"refused: No\."):
        OpenAIAnalyst(client).analyze_failure(case())
    assert chat_server.request_count == 1


def test_the_same_case_twice_is_answered_from_the_cache(client, chat_server, store):
    chat_server.queue(GOOD)
    reasoner = OpenAIAnalyst(client)
    assert reasoner.analyze_failure(case()) == reasoner.analyze_failure(case()) == GOOD
    assert chat_server.request_count == 1
    hit, miss = store.calls("analyze.failure")
    assert hit.cached and not miss.cached and hit.prompt_hash == miss.prompt_hash


def test_a_case_without_steps_is_refused(client, chat_server):
    with pytest.raises(ValueError, match="no steps"):
        OpenAIAnalyst(client).analyze_failure(case(steps=0))
    assert chat_server.request_count == 0


def test_a_tasks_reference_is_shown_as_expected_actions_not_as_a_successful_run():
    case = FailureCase(
        episode_id="e",
        family="retail",
        instruction="Cancel order #W1.",
        outcome="failed",
        steps=[CaseStep(index=0, action='get_order({"id": "#W1"})')],
        contrast_reference=True,
        contrast_same_task=True,
        contrast_steps=[CaseStep(index=0, action='cancel_order({"id": "#W1"})')],
    )
    text = render_case(case)
    assert '<expected_actions steps="1"' in text and "partial script" in text
    assert "successful_run" not in text and 'cancel_order({"id": "#W1"})' in text
