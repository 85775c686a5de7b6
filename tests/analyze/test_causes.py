"""The offline causal-step finder on small hand-built runs."""

from __future__ import annotations

from store import Batch, Episode, Outcome, Step, Store, Task
from workbench.analyze import causes
from workbench.analyze.causes import benign_errors, build_case, error_signature, find_cause
from workbench.envs.lexicon import Lexicon

INSTRUCTION = "Your task is to boil water. First, focus on the water."


def add(
    store: Store, episode_id: str, task: str, success: bool, turns: list[tuple[str, str]]
) -> Episode:
    store.put_batch(Batch(id="b", name="b"))
    store.put_task(
        Task(
            id=task, environment="scienceworld", family=task.split(":")[1], instruction=INSTRUCTION
        )
    )
    episode = Episode(id=episode_id, task_id=task, batch_id="b", outcome=Outcome(success=success))
    steps = [
        Step(
            episode_id=episode_id,
            index=0,
            kind="observation",
            observation="This room is called the hallway.",
        )
    ]
    for i, (action, observation) in enumerate(turns, start=1):
        reward = -100.0 if observation == "CRITICAL" else 0.0
        steps.append(
            Step(
                episode_id=episode_id,
                index=i,
                kind="action",
                action=action,
                observation=observation,
                reward=reward,
            )
        )
    store.add_episode(episode, steps)
    return store.episode(episode_id)


SUCCESS = [
    ("open door to kitchen", "The door is now open."),
    ("go to kitchen", "You move to the kitchen."),
    ("activate sink", "The sink appears broken, and can't be activated."),
    ("focus on water", "You focus on the water."),
    ("activate stove", "The stove is now activated."),
]


def test_error_signatures():
    assert error_signature("No known action matches that input.") == "no known action matches"
    assert error_signature("The door is not open.") == "is not open"
    assert error_signature("You move to the kitchen.") is None


def test_an_error_the_failed_run_did_not_recover_from(store):
    add(store, "ok", "sw:boil:1", True, SUCCESS)
    failed = add(
        store,
        "bad",
        "sw:boil:1",
        False,
        [("go to kitchen", "The door is not open."), ("go to kitchen", "The door is not open.")],
    )
    found = find_cause(store, failed)
    assert (found.step, found.evidence) == (1, "error")
    assert found.failed_action == "go to kitchen" and found.contrast_id == "ok" and found.same_task
    assert found.change == "open door to kitchen"


def test_errors_successes_also_meet_are_benign(store):
    add(store, "ok", "sw:boil:1", True, SUCCESS)
    assert ("activate sink", "can't") in benign_errors(store, "boil")
    failed = add(store, "bad", "sw:boil:2", False, [*SUCCESS[:3], ("focus on sink", "CRITICAL")])
    found = find_cause(store, failed)
    assert (found.step, found.evidence) == (4, "error")  # the broken sink (step 3) is not the cause
    assert not found.same_task


def test_a_same_task_divergence_before_any_error(store):
    add(store, "ok", "sw:boil:1", True, SUCCESS)
    turns = [
        SUCCESS[0],
        SUCCESS[1],
        ("move pot to table", "You move the pot to the table."),
        ("focus on water", "CRITICAL"),
    ]
    found = find_cause(store, add(store, "bad", "sw:boil:1", False, turns))
    assert (found.step, found.evidence, found.change) == (3, "divergence", "activate sink")


def test_a_run_that_stops_early_is_blamed_on_the_step_it_never_took(store):
    add(store, "ok", "sw:boil:1", True, SUCCESS)
    found = find_cause(store, add(store, "bad", "sw:boil:1", False, SUCCESS[:2]))
    assert (found.step, found.evidence, found.change) == (3, "divergence", "activate sink")


def test_without_contrast_or_error_the_last_step(store):
    found = find_cause(store, add(store, "bad", "sw:boil:9", False, SUCCESS[:2]))
    assert (found.step, found.evidence, found.contrast_id) == (2, "end", None)


class BuzzerLexicon(Lexicon):
    """A world that reports its errors with a buzz (no English error phrase)."""

    def error(self, observation: str) -> str | None:
        return "bzzt" if observation.startswith("BZZT") else None


def test_errors_are_read_through_the_episode_worlds_lexicon(store, monkeypatch):
    real = causes.world_lexicon
    monkeypatch.setattr(
        causes, "world_lexicon", lambda name: BuzzerLexicon() if name == "buzzer" else real(name)
    )
    assert error_signature("BZZT", BuzzerLexicon()) == "bzzt"
    assert error_signature("BZZT") is None  # the plain reading does not know the buzz
    store.put_batch(Batch(id="b", name="b"))
    store.put_task(Task(id="buzzer:t:1", environment="buzzer", family="t", instruction="x"))
    turns = [("push lever", "It moves."), ("pull lever", "BZZT"), ("wait", "Time passes.")]
    episode = Episode(id="bad", task_id="buzzer:t:1", batch_id="b", outcome=Outcome(success=False))
    store.add_episode(
        episode,
        [
            Step(episode_id="bad", index=i, kind="action", action=a, observation=o)
            for i, (a, o) in enumerate(turns, start=1)
        ],
    )
    found = find_cause(store, store.episode("bad"))
    assert (found.step, found.evidence) == (2, "error")
    assert build_case(store, store.episode("bad")).environment == "buzzer"
