"""The comparison engine: action normalisation, alignment, first divergence, contrast choice."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import ClassVar

import pytest

from store import Batch, Episode, Outcome, Step, Store, Task
from workbench.compare import (
    ACTION_CHARS,
    Pair,
    actions_of,
    align,
    compare_episodes,
    contrast_for,
    episode_actions,
    is_reply,
    normalize_action,
    reply_action,
    shape,
    tool_call,
    verb_of,
)
from workbench.envs.lexicon import PLAIN, Lexicon, Role

THERMO_A = (
    "Your task is to measure the temperature of unknown substance B, which is located around "
    "the kitchen. First, focus on the thermometer. Next, focus on the unknown substance B. If the "
    "unknown substance B temperature is above 50.0 degrees, place it in the red box. If the "
    "unknown substance B temperature is below 50.0 degrees, place it in the green box."
)
THERMO_B = (
    "Your task is to measure the temperature of orange juice, which is located around the "
    "bathroom. First, focus on the thermometer. Next, focus on the orange juice. If the orange "
    "juice temperature is above 23.0 degrees, place it in the blue box. If the orange juice "
    "temperature is below 23.0 degrees, place it in the orange box."
)
RUN_A = [
    "go to kitchen",
    "pick up thermometer",
    "focus on thermometer",
    "focus on unknown substance B",
    "use thermometer on unknown substance B",
    "move unknown substance B to red box",
]
RUN_B = [
    "go to bathroom",
    "pick up thermometer",
    "focus on thermometer",
    "focus on orange juice",
    "use thermometer on orange juice",
    "move orange juice to blue box",
]


# -- normalisation --------------------------------------------------------------------------


def test_normalize_lowercases_and_collapses_whitespace():
    assert normalize_action("  Open   DOOR to\tKitchen ") == "open door to kitchen"


def test_normalize_abstracts_numbers():
    assert normalize_action("wait 10 ticks") == "wait <N> ticks"
    assert normalize_action("set dial to 3.5") == "set dial to <N>"
    assert normalize_action("wait1") == "wait1"  # a number inside a word stays


def test_normalize_abstracts_instruction_entities_by_their_order():
    assert normalize_action("move unknown substance B to red box", THERMO_A) == (
        normalize_action("move orange juice to blue box", THERMO_B)
    )
    normalized = normalize_action("move unknown substance B to red box", THERMO_A)
    assert normalized.startswith("move <E") and " to <E" in normalized
    assert "red" not in normalized and "substance" not in normalized


def test_normalize_keeps_words_the_instruction_does_not_name():
    assert normalize_action("open door to hallway", THERMO_A) == "open door to hallway"
    # the head noun of an entity phrase is recognised on its own
    assert normalize_action("pick up box", THERMO_A) == normalize_action(
        "pick up red box", THERMO_A
    )


def test_different_variations_differ_without_abstraction():
    assert normalize_action(RUN_A[0]) != normalize_action(RUN_B[0])


# -- alignment ----------------------------------------------------------------------------


def test_identical_runs_have_no_divergence():
    alignment = align(RUN_A, RUN_A)
    assert alignment.first_divergence is None
    assert all(pair.op == "match" for pair in alignment.pairs)
    assert [pair.failed for pair in alignment.pairs] == list(range(len(RUN_A)))
    assert alignment.matched == len(RUN_A)
    assert alignment.divergences() == []


def test_substituted_action_diverges_at_it():
    failed = [*RUN_A[:3], "focus on red box", *RUN_A[4:]]
    alignment = align(failed, RUN_A)
    divergence = alignment.first_divergence
    assert divergence is not None
    assert (divergence.pair, divergence.op) == (3, "substitute")
    assert (divergence.failed_step, divergence.success_step) == (3, 3)
    assert alignment.pairs[3] == Pair(3, 3, "substitute")
    assert [p.op for p in alignment.pairs].count("match") == len(RUN_A) - 1


def test_extra_inserted_action_in_failed_run():
    failed = [*RUN_A[:2], "look around", *RUN_A[2:]]
    alignment = align(failed, RUN_A)
    divergence = alignment.first_divergence
    assert divergence is not None
    assert divergence.op == "insert"
    assert alignment.pairs[divergence.pair] == Pair(2, None, "insert")
    # the success side resumes at its step 2, which the failed run's step 3 matches
    assert (divergence.failed_step, divergence.success_step) == (2, 2)
    assert alignment.pairs[divergence.pair + 1] == Pair(3, 2, "match")
    assert alignment.matched == len(RUN_A)


def test_missing_action_in_failed_run():
    failed = [RUN_A[0], *RUN_A[2:]]
    alignment = align(failed, RUN_A)
    divergence = alignment.first_divergence
    assert divergence is not None
    assert divergence.op == "delete"
    assert alignment.pairs[divergence.pair] == Pair(None, 1, "delete")
    assert (divergence.failed_step, divergence.success_step) == (1, 1)


def test_failed_run_stopping_early_diverges_at_the_end():
    alignment = align(RUN_A[:3], RUN_A)
    divergence = alignment.first_divergence
    assert divergence is not None
    assert divergence.op == "delete"
    assert (divergence.failed_step, divergence.success_step) == (None, 3)


def test_entity_abstraction_makes_two_variations_align():
    plain = align(RUN_B, RUN_A, normalize=normalize_action)
    assert plain.first_divergence is not None and plain.first_divergence.pair == 0

    def norm_b(action: str) -> str:
        return normalize_action(action, THERMO_B)

    def norm_a(action: str) -> str:
        return normalize_action(action, THERMO_A)

    abstracted = align(RUN_B, RUN_A, normalize=(norm_b, norm_a))
    assert abstracted.first_divergence is None
    # and a real mistake still shows through the abstraction
    wrong = [*RUN_B[:5], "move orange juice to orange box"]
    divergence = align(wrong, RUN_A, normalize=(norm_b, norm_a)).first_divergence
    assert divergence is not None and (divergence.failed_step, divergence.success_step) == (5, 5)


def test_alignment_keeps_stored_step_indices():
    failed = [(1, "go to kitchen"), (3, "pick up thermometer"), (5, "focus on box")]
    success = [(1, "go to kitchen"), (2, "pick up thermometer"), (3, "focus on thermometer")]
    alignment = align(failed, success)
    assert alignment.pairs[:2] == [Pair(1, 1, "match"), Pair(3, 2, "match")]
    divergence = alignment.first_divergence
    assert divergence is not None
    assert (divergence.failed_step, divergence.success_step) == (5, 3)
    assert alignment.failed_keys[5] == "focus on box"


def test_divergences_lists_each_run_of_differences():
    failed = ["a", "x", "b", "c", "y", "z", "d"]
    success = ["a", "b", "c", "d"]
    alignment = align(failed, success)
    starts = alignment.divergences()
    assert [alignment.pairs[i].failed for i in starts] == [1, 4]


def test_empty_runs():
    assert align([], []).pairs == []
    assert align([], []).first_divergence is None
    only_success = align([], ["a"])
    assert only_success.pairs == [Pair(None, 0, "delete")]


# -- with a store ---------------------------------------------------------------------------

WHEN = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def _episode(store: Store, eid: str, task: str, agent: str, success: bool, actions: list[str]):
    episode = Episode(
        id=eid,
        task_id=task,
        agent=agent,
        batch_id="b",
        outcome=Outcome(success=success, score=100.0 if success else 0.0),
        started_at=WHEN,
    )
    steps = [
        Step(episode_id=eid, index=0, kind="observation", role="environment", observation="hi")
    ]
    steps += [
        Step(episode_id=eid, index=i, kind="action", action=a, observation="ok")
        for i, a in enumerate(actions, start=1)
    ]
    store.add_episode(episode, steps)
    return store.episode(eid)


@pytest.fixture
def runs(store: Store) -> Store:
    store.put_batch(Batch(id="b", name="b", created_at=WHEN))
    store.put_task(
        Task(id="sw:thermo:1", environment="scienceworld", family="thermo", instruction=THERMO_A)
    )
    store.put_task(
        Task(id="sw:thermo:2", environment="scienceworld", family="thermo", instruction=THERMO_B)
    )
    store.put_task(
        Task(id="sw:boil:1", environment="scienceworld", family="boil", instruction="boil water")
    )
    _episode(store, "fail-1", "sw:thermo:1", "scripted", False, RUN_A[:3])
    _episode(store, "other-task-pass", "sw:thermo:2", "scripted", True, RUN_B)
    _episode(store, "same-task-llm", "sw:thermo:1", "llm", True, RUN_A)
    _episode(store, "same-task-same-agent", "sw:thermo:1", "scripted", True, RUN_A)
    _episode(store, "boil-fail", "sw:boil:1", "scripted", False, ["go to kitchen"])
    _episode(store, "boil-fail-2", "sw:boil:1", "llm", False, ["go to kitchen"])
    return store


def test_contrast_prefers_same_task_and_agent(runs: Store):
    chosen = contrast_for(runs, runs.episode("fail-1"))
    assert chosen is not None and chosen.id == "same-task-same-agent"


def test_contrast_falls_back_to_same_task_then_family(runs: Store):
    llm_failure = _episode(runs, "fail-llm", "sw:thermo:1", "other-agent", False, RUN_A[:1])
    assert contrast_for(runs, llm_failure).id == "same-task-llm"  # earliest stored of the task
    runs.put_task(
        Task(id="sw:thermo:3", environment="scienceworld", family="thermo", instruction="x")
    )
    new_task = _episode(runs, "fail-3", "sw:thermo:3", "scripted", False, RUN_A[:1])
    assert contrast_for(runs, new_task).id == "other-task-pass"  # same family, same agent


def test_contrast_is_never_an_outcome_without_steps(runs: Store):
    """A success imported alone (a results file) has nothing to compare with: passed over."""
    for eid, task in (("result-task", "sw:thermo:1"), ("result-family", "sw:thermo:2")):
        outcome = Outcome(success=True, score=100.0)
        runs.add_episode(
            Episode(id=eid, task_id=task, agent="other", batch_id="b", outcome=outcome), []
        )
    failed = _episode(runs, "fail-other", "sw:thermo:1", "other", False, RUN_A[:1])
    assert contrast_for(runs, failed).id == "same-task-llm"
    runs.put_task(
        Task(id="sw:thermo:3", environment="scienceworld", family="thermo", instruction="x")
    )
    new_task = _episode(runs, "fail-3", "sw:thermo:3", "other", False, RUN_A[:1])
    assert contrast_for(runs, new_task).id == "other-task-pass"


def test_contrast_none_when_nothing_succeeded(runs: Store):
    assert contrast_for(runs, runs.episode("boil-fail")) is None


def test_contrast_is_deterministic(runs: Store):
    failed = runs.episode("fail-1")
    assert len({contrast_for(runs, failed).id for _ in range(5)}) == 1


def test_compare_episodes_across_variations(runs: Store):
    comparison = compare_episodes(
        runs, runs.episode("same-task-same-agent"), runs.episode("other-task-pass")
    )
    assert comparison.alignment.first_divergence is None  # entities abstracted per instruction
    failed = runs.episode("fail-1")
    comparison = compare_episodes(runs, failed, contrast_for(runs, failed))
    divergence = comparison.alignment.first_divergence
    assert divergence is not None
    assert (divergence.op, divergence.failed_step, divergence.success_step) == ("delete", None, 4)


def test_episode_actions_reads_in_ranges_and_skips_non_actions(runs: Store):
    episode = runs.episode("same-task-llm")
    assert episode_actions(runs, episode, chunk=2) == list(enumerate(RUN_A, start=1))
    assert actions_of(runs.steps(episode.id, 0, 2)) == [(1, RUN_A[0])]


def test_a_step_of_megabytes_is_aligned_by_a_window_of_its_action(runs: Store):
    huge = "echo " + "x" * 3_000_000
    failed = _episode(runs, "fail-huge", "sw:thermo:1", "scripted", False, [*RUN_A[:2], huge])
    actions = episode_actions(runs, failed)
    assert actions == [(1, RUN_A[0]), (2, RUN_A[1]), (3, huge[:ACTION_CHARS])]
    comparison = compare_episodes(runs, failed, runs.episode("same-task-same-agent"))
    divergence = comparison.alignment.first_divergence
    assert (divergence.op, divergence.failed_step, divergence.success_step) == ("substitute", 3, 3)
    assert dict(comparison.failed_actions)[3] == huge[:ACTION_CHARS]


class SpellLexicon(Lexicon):
    """A world whose verbs are spells of more than one word."""

    verbs: ClassVar[Mapping[str, Role]] = {**Lexicon.verbs, "cast light on": "other"}


def test_verbs_are_read_through_the_worlds_lexicon():
    assert verb_of("cast light on the orb", SpellLexicon()) == "cast light on"
    assert shape("cast light on orb", "Find the orb.", SpellLexicon()) == ("cast light on <E1>")
    assert verb_of("cast light on the orb", PLAIN) == "cast"  # the plain reading: first word
    assert verb_of("look around", PLAIN) == "look around"  # a particle belongs to the verb
    assert verb_of("go to kitchen", PLAIN) == "go to"


def test_tool_calls_are_read_from_their_rendering():
    assert tool_call('get_order({"order_id": "#W1"})') == ("get_order", {"order_id": "#W1"})
    assert tool_call("list_flights()") == ("list_flights", {})
    assert tool_call("go to kitchen") is None
    assert tool_call("f(not json)") is None
    assert tool_call('f(["a list"])') is None


def test_tool_calls_shape_by_name_and_keys_and_keep_the_task_entities():
    instruction = "Cancel order #W123 for Ada."
    shaped = shape('cancel({"reason": "no longer needed", "order_id": "#W123"})', instruction)
    assert shaped == "cancel(order_id=<E2>, reason)"
    other = shape('cancel({"order_id": "#W9", "reason": "ordered by mistake"})', "Cancel #W9.")
    assert other.split("(")[0] == "cancel" and "reason" in other


def test_one_tool_call_normalises_alike_whatever_its_key_order_and_spacing():
    one = normalize_action('pay({"amount": 10, "card": "c-1"})')
    other = normalize_action('pay({ "card":"c-1",  "amount":10 })')
    assert one == other == 'pay({"amount": <N>, "card": "c-<N>"})'


def test_text_replies_are_marked_as_replies():
    reply = reply_action("I cannot do that.")
    assert is_reply(reply) and tool_call(reply) == ("reply", {"text": "I cannot do that."})
    assert shape(reply, "") == "reply(text)"
    assert not is_reply('get_order({"order_id": "1"})')
