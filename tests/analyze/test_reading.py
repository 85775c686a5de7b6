"""The generic reading of any agent's log: a step's effect, a reply's decision, push-back,
relayed printouts, and words matched as words (a world's phrases only in its own episodes)."""

from __future__ import annotations

import json

import pytest

from store import Batch, Episode, Outcome, Step, Store, Task
from workbench.analyze.causes import build_case, find_cause, lexicon_for, locate
from workbench.analyze.reading import (
    decision_of,
    effect_of,
    is_relay,
    name_words,
    pushes_back,
    read_steps,
)
from workbench.analyze.signals import generic_error, refusal
from workbench.compare import reply_action
from workbench.envs.lexicon import PHRASE_FREE
from workbench.llm.steps import CaseStep


def call(name: str, **arguments: object) -> str:
    """A tool call as importers store it."""
    return f"{name}({json.dumps(arguments)})"


def shell(command: str) -> str:
    return call("bash", command=command)


def editor(command: str, **arguments: object) -> str:
    return call("str_replace_editor", command=command, path="src/app.py", **arguments)


@pytest.mark.parametrize(
    ("action", "effect"),
    [
        (call("get_user_details", user_id="mia_1"), "read"),
        (call("list_all_airports"), "read"),
        (call("getReservationDetails", reservation_id="ABC123"), "read"),
        (call("cancel_reservation", reservation_id="ABC123"), "change"),
        (call("update_reservation_flights", cabin="economy"), "change"),
        (shell("grep -rn 'def add' src"), "read"),
        (shell("cat src/app.py"), "read"),
        (shell("sed -i 's/a - b/a + b/' src/app.py"), "change"),
        (shell("echo 'x = 1' > src/app.py"), "change"),
        (shell("cat header.txt > src/app.py"), "change"),
        (shell("python x.py"), "run"),
        (shell("pytest -q tests/test_app.py"), "run"),
        (shell("cd repo && python -m pytest"), "run"),
        (editor("view"), "read"),
        (editor("str_replace", old_str="a - b", new_str="a + b"), "change"),
        (editor("create", file_text="x = 1\n"), "change"),
        ("ls -la src", "read"),
        (reply_action("Here is your itinerary."), "reply"),
        (call("frobnicate", widget="w1"), "other"),
    ],
)
def test_a_steps_effect_is_read_from_its_tool_or_command(action: str, effect: str):
    assert effect_of(action) == effect


def test_a_tool_whose_name_says_nothing_changes_state_when_its_result_says_so():
    assert effect_of(call("frobnicate", widget="w1"), "Widget w1 has been updated.") == "change"
    assert effect_of(call("frobnicate", widget="w1"), "Widget w1: 3 parts.") == "other"


def test_name_words_split_both_spellings_and_never_find_a_verb_inside_a_word():
    assert (
        name_words("getUserDetails")
        == name_words("get_user_details")
        == [
            "get",
            "user",
            "details",
        ]
    )
    # "set" inside "settings" and "add" inside "address" are not verbs of their own
    assert effect_of(call("settings_view")) == "read"
    assert effect_of(call("address_book")) == "change"  # "book" is the verb here
    assert effect_of(call("settings_address")) == "other"


@pytest.mark.parametrize(
    ("text", "decision"),
    [
        ("I'm sorry, but I cannot change a basic economy reservation.", "refusal"),
        ("Unfortunately, a refund is not possible for this booking.", "refusal"),
        ("I am transferring you to a human agent now.", "transfer"),
        ("Your reservation ABC123 has been cancelled.", "claim"),
        ("I've cancelled the reservation ABC123 for you.", "claim"),
        ("Would you like me to cancel reservation ABC123?", "confirm"),
        ("Please confirm that I should upgrade both passengers.", "confirm"),
        ("So the final answer is 42.", "answer"),
        ("Adding them up gives \\boxed{7}.", "answer"),
        ("What is your user id?", "question"),
        ("Let me look that up for you.", "none"),
    ],
)
def test_a_replys_decision(text: str, decision: str):
    assert decision_of(text) == decision


@pytest.mark.parametrize(
    ("answer", "pushed"),
    [
        ("No, that's not the reservation I meant.", True),
        ("That is wrong: I asked for the later flight.", True),
        ("I didn't ask for an upgrade.", True),
        ("The tests still fail after your change.", True),
        ("Thanks, that is all.", False),
        ("Nothing else today, bye.", False),
        ("Noted. The errorless build was a wrongheaded worry.", False),
    ],
)
def test_push_back(answer: str, pushed: bool):
    assert pushes_back(answer) is pushed


def test_an_executors_printout_is_a_relay():
    assert is_relay("exitcode: 1 (execution failed)\nCode output: ZeroDivisionError")
    assert is_relay("Output: 42")
    assert is_relay("Traceback (most recent call last):\n  File 'x.py', line 1")
    assert not is_relay("The output looks right to me; 42 is the answer.")


def test_a_reply_answering_another_agents_code_is_read_as_its_printout_or_its_own_prose():
    code = reply_action("Let me compute it.\n```python\nprint(6 * 7)\n```")
    steps = [
        CaseStep(index=1, agent="assistant", action=code),
        CaseStep(index=2, agent="executor", action=reply_action("42")),
        CaseStep(index=3, agent="assistant", action=code),
        CaseStep(
            index=4,
            agent="critic",
            action=reply_action(
                "I checked the reasoning behind the multiplication and it answers the question"
                " that was asked, so we can agree on the result and stop here."
            ),
        ),
    ]
    readings = read_steps(steps)
    assert [r.relay for r in readings] == [False, True, False, False]
    assert [r.code for r in readings] == [True, False, True, False]
    assert [r.agent for r in readings] == ["assistant", "executor", "assistant", "critic"]


def test_read_steps_reads_decisions_of_replies_and_errors_of_calls_only():
    steps = [
        CaseStep(
            index=1,
            action=call("get_order", order_id="#W1"),
            observation='{"error": "no such order"}',
        ),
        CaseStep(
            index=3,
            action=reply_action("I'm unable to find that order. Could you check the id?"),
            observation="No, the id is right, look again.",
        ),
        CaseStep(index=5, action=reply_action("Error: I have refunded it."), observation=""),
    ]
    first, second, third = read_steps(steps)
    assert (first.effect, first.decision, first.error, first.pushback) == (
        "read",
        "none",
        "error",
        False,
    )
    assert (second.effect, second.decision, second.error, second.pushback) == (
        "reply",
        "refusal",
        None,
        True,
    )
    # a reply's own words are never an error of what came back
    assert (third.decision, third.error) == ("claim", None)


def test_words_are_matched_as_words_not_inside_other_words():
    assert refusal("I cannotate every span before the review.") is None
    assert decision_of("The cannotation tool tagged 3 spans.") == "none"
    assert refusal("I cannot annotate spans.") == "refusal"
    assert generic_error("Terror: the film starts at 9.") is None
    assert generic_error("Error: the film is sold out.") == "error"


# -- a world's phrases belong to its own episodes -----------------------------------------------

NARRATION = (
    "The hallway stretches east past a coat rack and a painting of a lighthouse. You cannot"
    " go there until the way is clear, so look for the door to the kitchen first.\nA clock"
    " ticks somewhere behind you."
)
"""Free text holding two text-game phrases (``cannot``, ``first.`` at a line's end)."""
TURNS = [
    ("look around", "You see a door to the kitchen."),
    ("go to kitchen", NARRATION),
    ("open door to kitchen", "The cannotation on the door reads: open."),
    ("go to kitchen", "You move to the kitchen."),
]
"""A text-game run: ScienceWorld reads step 2's answer as an error; a log of no installed
world reads no error anywhere (``cannot`` inside a word at step 3 is no word of its own)."""


def add_run(store: Store, episode_id: str, environment: str) -> Episode:
    store.put_batch(Batch(id="b", name="b"))
    store.put_task(Task(id=episode_id, environment=environment, instruction="Boil water."))
    steps = [Step(episode_id=episode_id, index=0, kind="observation", observation="A hallway.")] + [
        Step(episode_id=episode_id, index=i, kind="action", action=action, observation=seen)
        for i, (action, seen) in enumerate(TURNS, start=1)
    ]
    episode = Episode(
        id=episode_id, task_id=episode_id, batch_id="b", outcome=Outcome(success=False)
    )
    store.add_episode(episode, steps)
    return store.episode(episode_id)


def test_a_scienceworld_episode_reads_its_worlds_phrase_as_an_error(store: Store):
    found = find_cause(store, add_run(store, "sw", "scienceworld"))
    assert (found.step, found.evidence) == (2, "error")


@pytest.mark.parametrize("environment", ["some-bench", ""])
def test_an_imported_log_reads_no_worlds_phrase_as_an_error(store: Store, environment: str):
    case = build_case(store, add_run(store, "log", "some-bench"))
    case = case.model_copy(update={"environment": environment})
    assert lexicon_for(case) is PHRASE_FREE
    assert [r.error for r in read_steps(case.steps)] == [None, None, None, None]
    found = locate(case, set())
    assert found.evidence != "error"
    assert found.signal not in {"own_error", "blamed_for_error", "critical"}


def test_a_move_in_a_text_log_is_not_running_code():
    assert effect_of(shell("go test ./...")) == "run"
    assert effect_of("go to fridge 1") != "run"


@pytest.mark.parametrize("answer", ["No, that’s all. Thanks!", "No problem at all, glad to hear."])
def test_a_user_closing_the_conversation_does_not_push_back(answer: str):
    assert not pushes_back(answer)


def test_a_call_whose_arguments_are_not_json_is_read_by_its_name():
    assert effect_of("think({'thought': 'cancel it?'})") == "read"
    assert effect_of("cancel_order({'order_id': '#W1'})") == "change"
    assert effect_of("look at the (red) box") == "read"  # words, not a call


def test_an_orchestrator_forwarding_another_agents_message_is_a_relay():
    plan = (
        "The capital of Australia is Sydney, which is its largest city and the seat of its"
        " government, so the answer is Sydney."
    )
    steps = [
        CaseStep(index=1, agent="Researcher", action=reply_action(plan)),
        CaseStep(index=2, agent="Orchestrator", action=reply_action(f"Researcher says: {plan}")),
        CaseStep(index=3, agent="Orchestrator", action=reply_action("Thanks, done.")),
        CaseStep(index=4, agent="Critic", action=reply_action("Agreed with the answer given.")),
    ]
    # the forward relays the researcher's claim; a short note and a new message do not
    assert [r.relay for r in read_steps(steps)] == [False, True, False, False]


def test_a_speakers_mode_is_not_another_agent():
    from workbench.analyze.causes import speaker

    assert speaker("Orchestrator (thought)") == "Orchestrator"
    assert speaker("Orchestrator (-> Coder)") == "Orchestrator"
    assert speaker("WebSurfer") == "WebSurfer"
    assert speaker("(anonymous)") == "(anonymous)"  # nothing but a mode: kept
