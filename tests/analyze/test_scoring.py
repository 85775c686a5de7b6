"""Each agent step of an imported log scored on evidence any log has: the reference as a partial
script, errors and the blame traced back, proposals and answers traced to where they were
first said, and the strongest evidence deciding."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from store import Batch, Episode, EpisodeFilter, Outcome, Step, Store, Task
from workbench.analyze.analyzer import analyze
from workbench.analyze.causes import REFERENCE_KEY, build_case, find_cause
from workbench.analyze.heuristic import HeuristicAnalyst
from workbench.analyze.reading import read_steps
from workbench.analyze.scoring import (
    FEATURES,
    HEURISTIC_WEIGHTS,
    best_step,
    case_features,
    check_script,
    top_feature,
)

Turn = tuple
"""One turn of a stored log: ``("user", text)``, ``("say", text)`` (the assistant's reply),
``("call", name, arguments, result)`` or ``("agent", name, role, text)`` (a named speaker)."""


def add_log(
    store: Store,
    episode_id: str,
    turns: Sequence[Turn],
    *,
    environment: str = "tau-airline",
    instruction: str = "",
    reference: list[str] | None = None,
    outputs: list[str] | None = None,
    family: str = "",
    batch: str = "b",
    success: bool = False,
) -> Episode:
    """Store an imported log (its own task, named after the episode) as importers do: messages,
    and each tool call followed by its result."""
    store.put_batch(Batch(id=batch, name=batch))
    metadata: dict[str, list[str]] = {REFERENCE_KEY: reference} if reference else {}
    if outputs:
        metadata["expected_outputs"] = outputs
    store.put_task(
        Task(
            id=f"task-{episode_id}",
            environment=environment,
            family=family,
            instruction=instruction,
            metadata=metadata,
        )
    )
    steps: list[Step] = []

    def add(**fields: object) -> None:
        steps.append(Step(episode_id=episode_id, index=len(steps), **fields))

    for turn in turns:
        if turn[0] == "user":
            add(kind="message", role="user", content=turn[1])
        elif turn[0] == "say":
            add(kind="message", role="assistant", content=turn[1])
        elif turn[0] == "agent":
            add(kind="message", role=turn[2], agent=turn[1], content=turn[3])
        else:
            _, name, arguments, result = turn
            call_id = f"call{len(steps)}"
            add(
                kind="tool_call",
                role="assistant",
                action=f"{name}({json.dumps(arguments)})",
                tool_name=name,
                tool_call_id=call_id,
            )
            add(
                kind="tool_result",
                role="tool",
                observation=result,
                tool_name=name,
                tool_call_id=call_id,
            )
    episode = Episode(
        id=episode_id,
        task_id=f"task-{episode_id}",
        batch_id=batch,
        outcome=Outcome(success=success),
    )
    store.add_episode(episode, steps)
    return store.episode(episode_id)


def features(store: Store, episode: Episode) -> dict[int, set[str]]:
    """Stored step index → the features set at that agent step (``position`` left out)."""
    case = build_case(store, episode)
    rows = case_features(case, lambda step, error: False)
    return {
        step.index: {name for name, value in zip(FEATURES, row, strict=True) if value}
        - {"position"}
        for step, row in zip(case.steps, rows, strict=True)
    }


ASK = ("user", "Hi, please cancel my reservation ABC123. My user id is mia_1.")
LOOK_UP = ("call", "get_user_details", {"user_id": "mia_1"}, '{"reservations": ["ABC123", "XYZ9"]}')
CANCEL = 'cancel_reservation({"reservation_id": "ABC123"})'


def test_an_unlisted_read_is_allowed_and_a_wrongly_argued_change_is_the_deviation(store: Store):
    episode = add_log(
        store,
        "wrong-id",
        [
            ASK,
            LOOK_UP,  # steps 1, 2: a read the reference does not list
            ("call", "get_reservation_details", {"reservation_id": "ABC123"}, '{"cabin": "eco"}'),
            ("call", "cancel_reservation", {"reservation_id": "XYZ9"}, '{"status": "cancelled"}'),
            ("say", "Your reservation has been cancelled."),
            ("user", "Thanks!"),
        ],
        reference=[CANCEL],
    )
    case = build_case(store, episode)
    script = check_script(case, read_steps(case.steps))
    assert [s.index for s in case.steps] == [1, 3, 5, 7]
    assert (script.deviation, script.expected, script.missing_at) == (5, CANCEL, 7)
    marked = features(store, episode)
    assert marked[1] == {"effect_read", "first"}
    assert marked[3] == {"effect_read"}
    assert marked[5] == {"change_deviation", "effect_change"}
    assert marked[7] == {"missing_change_here", "claim", "reply", "last"}
    found = find_cause(store, episode)
    assert (found.step, found.evidence, found.signal) == (5, "divergence", "change_deviation")
    assert found.reference and found.change == CANCEL


def test_listed_changes_made_leave_the_script_silent(store: Store):
    episode = add_log(
        store,
        "right-id",
        [
            ASK,
            ("call", "cancel_reservation", {"reservation_id": "abc123"}, '{"status": "cancelled"}'),
            ("say", "Done."),
        ],
        reference=[CANCEL],  # compared case-folded: abc123 is ABC123
    )
    case = build_case(store, episode)
    script = check_script(case, read_steps(case.steps))
    assert (script.deviation, script.missing_at, script.later) == (None, None, frozenset())


@pytest.mark.parametrize(
    ("decision", "feature"),
    [
        (("say", "I'm sorry, but I cannot cancel a basic economy reservation."), "refusal"),
        (("say", "I am transferring you to a human agent who can help."), "transfer"),
        (("say", "Done: I have cancelled your reservation ABC123."), "unbacked_claim"),
    ],
)
def test_a_missing_change_is_due_at_the_decision_that_replaced_it(
    store: Store, decision: Turn, feature: str
):
    episode = add_log(
        store,
        "missing",
        [ASK, LOOK_UP, ("say", "Let me see."), ("user", "Sure."), decision, ("user", "Bye.")],
        reference=[CANCEL],
    )
    case = build_case(store, episode)
    script = check_script(case, read_steps(case.steps))
    assert [s.index for s in case.steps] == [1, 3, 5]
    assert (script.deviation, script.missing_at, script.expected) == (None, 5, CANCEL)
    assert {"missing_change_here", feature} <= features(store, episode)[5]
    found = find_cause(store, episode)
    assert (found.step, found.signal) == (5, "missing_change_here")
    assert found.evidence == "divergence" and found.change == CANCEL


def test_a_hand_off_call_in_place_of_the_change_is_where_it_was_due(store: Store):
    transfer = ("call", "transfer_to_human_agents", {"summary": "wants to cancel"}, "Transferred")
    episode = add_log(store, "handoff", [ASK, LOOK_UP, transfer], reference=[CANCEL])
    marked = features(store, episode)
    assert {"missing_change_here", "change_deviation", "transfer"} <= marked[3]
    assert find_cause(store, episode).step == 3


def test_a_deviating_change_a_confirm_reply_proposed_is_traced_back_to_that_reply(store: Store):
    episode = add_log(
        store,
        "proposed",
        [
            ASK,
            LOOK_UP,
            ("say", "Would you like me to cancel reservation XYZ9? Please answer yes or no."),
            ("user", "yes"),
            ("call", "cancel_reservation", {"reservation_id": "XYZ9"}, '{"status": "cancelled"}'),
            ("say", "Reservation XYZ9 is cancelled."),
        ],
        reference=[CANCEL],
    )
    marked = features(store, episode)
    assert marked[3] == {"proposed_deviation", "confirm", "reply"}
    assert {"change_deviation", "effect_change"} <= marked[5]
    found = find_cause(store, episode)
    assert (found.step, found.signal, found.evidence) == (3, "proposed_deviation", "decision")


def test_a_confirm_reply_naming_other_ids_is_not_blamed_for_the_change(store: Store):
    episode = add_log(
        store,
        "unasked",
        [
            ASK,
            LOOK_UP,
            ("say", "Would you like me to cancel reservation ABC123?"),
            ("user", "yes"),
            ("call", "cancel_reservation", {"reservation_id": "XYZ9"}, '{"status": "cancelled"}'),
        ],
        reference=[CANCEL],
    )
    marked = features(store, episode)
    assert "proposed_deviation" not in marked[3]
    assert find_cause(store, episode).step == 5


FIX = "Fix add() in src/calc.py so that the tests pass."
READ = ("call", "bash", {"command": "cat src/calc.py"}, "def add(a, b):\n    return a * b\n")


def edit(new: str) -> Turn:
    arguments = {
        "command": "str_replace",
        "path": "src/calc.py",
        "old_str": "return a * b",
        "new_str": f"return {new}\n",
    }
    return ("call", "str_replace_editor", arguments, "The file src/calc.py has been edited.")


def run_tests(result: str) -> Turn:
    return ("call", "bash", {"command": "python -m pytest -q"}, result)


FAILING = "Traceback (most recent call last):\n  File 'tests/test_calc.py'\nAssertionError: -1 != 3"


def test_a_runs_unrecovered_error_is_blamed_on_the_step_that_wrote_the_code(store: Store):
    episode = add_log(
        store,
        "coding",
        [("user", FIX), READ, edit("a - b"), run_tests(FAILING), ("say", "I fixed add().")],
        environment="swe-bench",
        instruction=FIX,
    )
    marked = features(store, episode)
    assert marked[3] == {"blamed_for_error", "effect_change", "code", "first_edit"}
    assert "effect_run" in marked[5] and "blamed_for_error" not in marked[5]
    found = find_cause(store, episode)
    assert (found.step, found.evidence, found.signal) == (3, "error", "blamed_for_error")


def test_a_recovered_error_is_not_blamed(store: Store):
    episode = add_log(
        store,
        "recovered",
        [
            ("user", FIX),
            READ,
            edit("a - b"),
            run_tests(FAILING),
            edit("a + b"),
            run_tests("3 passed in 0.01s"),
            ("say", "Fixed; the tests pass."),
        ],
        environment="swe-bench",
        instruction=FIX,
    )
    marked = features(store, episode)
    assert marked[5] == {"recovered_error", "effect_run"}
    assert not any({"blamed_for_error", "own_error"} & found for found in marked.values())
    assert find_cause(store, episode).signal != "blamed_for_error"


QUESTION = "What is 7 divided by 0, plus 5?"


def chat(store: Store, episode_id: str, printout: str) -> Episode:
    return add_log(
        store,
        episode_id,
        [
            ("agent", "user_proxy", "user", QUESTION),  # states the task: not an agent step
            (
                "agent",
                "assistant",
                "assistant",
                "Let me compute.\n```python\nprint(7 / 0 + 5)\n```",
            ),
            ("agent", "user_proxy", "user", printout),
            ("agent", "assistant", "assistant", "The answer is \\boxed{5}."),
        ],
        environment="math-chat",
        instruction=QUESTION,
    )


CRASHED = (
    "exitcode: 1 (execution failed)\nCode output: Traceback (most recent call last):\n"
    "ZeroDivisionError: division by zero"
)


def test_an_executors_printout_is_not_the_pick_the_agent_whose_code_it_ran_is(store: Store):
    episode = chat(store, "crash", CRASHED)
    marked = features(store, episode)
    assert [*marked] == [1, 2, 3]
    assert "blamed_for_error" in marked[1] and "relay" in marked[2]
    assert {"answer", "answer_source", "last"} <= marked[3]
    found = find_cause(store, episode)
    assert (found.step, found.agent, found.signal) == (1, "assistant", "blamed_for_error")
    proposal = HeuristicAnalyst(store).analyze_failure(build_case(store, episode))
    assert (proposal.start, proposal.agent) == (1, "assistant")
    report = analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    [analysis] = store.analyses(report.run.id)
    assert (analysis.start, analysis.agent, analysis.origin) == (1, "assistant", "analyzer")


def test_a_printout_that_reads_as_a_refusal_is_still_not_the_pick(store: Store):
    episode = chat(store, "quiet", "exitcode: 0 (execution succeeded)\nCode output: unable to")
    assert "relay" in features(store, episode)[2]
    assert find_cause(store, episode).step != 2


def test_the_final_answer_is_traced_to_the_step_that_first_stated_it(store: Store):
    question = "How many legs do 3 spiders have?"
    episode = add_log(
        store,
        "answer",
        [
            ("agent", "admin", "user", question),
            ("agent", "solver", "assistant", "Each spider has 6 legs."),
            ("agent", "critic", "assistant", "Agreed, 6 each."),
            ("agent", "solver", "assistant", "So 3 spiders have 18 legs."),
            ("agent", "critic", "assistant", "Counting again: 3 times 6 makes 18."),
            ("agent", "solver", "assistant", "The final answer is 18."),
        ],
        environment="group-chat",
        instruction=question,
    )
    marked = features(store, episode)
    assert [i for i, found in marked.items() if "answer_source" in found] == [3]
    assert [i for i, found in marked.items() if "answer" in found] == [5]
    case = build_case(store, episode)
    rows = case_features(case, lambda step, error: False)
    assert top_feature(rows[2], HEURISTIC_WEIGHTS) == "answer_source"
    assert case.steps[2].agent == "solver"


def row(**values: float) -> list[float]:
    return [values.get(name, 0.0) for name in FEATURES]


def test_the_strongest_evidence_decides_and_ties_go_to_the_earlier_step():
    weak_hints = row(first=1, agent_first_turn=1, code=1, last=1)  # 1.6 at most, 2.35 in all
    refusal = row(refusal=1)  # 2.0
    assert best_step([weak_hints, refusal], HEURISTIC_WEIGHTS) == 1
    assert best_step([refusal, row(refusal=1, claim=1)], HEURISTIC_WEIGHTS) == 1  # sum breaks
    assert best_step([refusal, refusal], HEURISTIC_WEIGHTS) == 0
    assert top_feature(row(refusal=1, claim=1, relay=1), HEURISTIC_WEIGHTS) == "refusal"
    assert top_feature(row(relay=1), HEURISTIC_WEIGHTS) == ""


def test_a_replys_change_text_quotes_what_it_said_not_the_stored_call(store: Store):
    from workbench.analyze.causes import build_case
    from workbench.analyze.heuristic import HeuristicAnalyst

    episode = add_log(
        store,
        "refused",
        [ASK, ("say", "Unfortunately, I cannot cancel reservations.\n\nAnything else?")],
        reference=[CANCEL],
    )
    proposal = HeuristicAnalyst(store).analyze_failure(build_case(store, episode))
    assert proposal.change == (
        "instead of replying 'Unfortunately, I cannot cancel reservations. Anything else?',"
        f" do '{CANCEL}'"
    )


def test_a_reply_stating_a_figure_in_place_of_the_expected_output_is_the_cause(store: Store):
    """tau-bench's ``outputs`` say what a reply had to say: the first reply that stated a
    figure of that form instead (a count for a count) is where the run went wrong."""
    episode = add_log(
        store,
        "counted",
        [
            ("user", "How many T-shirt options are available, and change my order?"),
            ("call", "get_product_details", {"product_id": "9"}, '{"variants": 10}'),
            ("say", "There are 11 T-shirt options available. Which one would you like?"),
            ("user", "The blue one."),
            ("call", "modify_pending_order_items", {"order_id": "#W1"}, '{"status": "ok"}'),
            ("say", "Your order #W1 now holds the blue T-shirt; 1 item changed."),
        ],
        reference=['modify_pending_order_items({"order_id": "#W1"})'],
        outputs=["10"],
    )
    assert "misstated_output" in features(store, episode)[3]
    found = find_cause(store, episode)
    assert (found.step, found.signal) == (3, "misstated_output")
    # said right, it is no cause
    right = add_log(
        store,
        "counted-right",
        [("user", "How many?"), ("say", "There are 10 options."), ("say", "Anything else?")],
        outputs=["10"],
    )
    assert all("misstated_output" not in f for f in features(store, right).values())


def test_a_proposal_is_to_blame_only_when_the_user_agreed_to_it(store: Store):
    """Asked "shall I?" and answered with another question, the agent went ahead anyway: the
    change was made unconfirmed, so the call is the cause; agreed to, the proposal is."""
    turns = [
        ASK,
        LOOK_UP,
        ("say", "Would you like me to cancel reservation XYZ9?"),
        ("user", "Hmm, what would the refund be?"),
        ("call", "cancel_reservation", {"reservation_id": "XYZ9"}, '{"status": "cancelled"}'),
    ]
    unconfirmed = add_log(store, "unconfirmed", turns, reference=[CANCEL])
    assert "proposed_deviation" not in features(store, unconfirmed)[3]
    assert find_cause(store, unconfirmed).step == 5
    agreed = [*turns[:3], ("user", "Yes, please go ahead."), turns[4]]
    confirmed = add_log(store, "confirmed", agreed, reference=[CANCEL])
    assert "proposed_deviation" in features(store, confirmed)[3]
    assert find_cause(store, confirmed).step == 3
