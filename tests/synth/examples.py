"""Synthesized examples for tests: recorded as the synthesis stage records them, from
episodes in the store (written by hand for retrieval tests, played on the real simulators for
the agents)."""

from __future__ import annotations

from collections.abc import Sequence

from store import Batch, Episode, Outcome, Step, Store, Task
from store.synth import ExampleKind, SynthExample


def record_episode(
    store: Store,
    episode_id: str,
    instruction: str,
    first: str,
    steps: Sequence[tuple[str, str]],
    env: str = "plainworld",
) -> str:
    """An episode of ``(action, observation)`` steps after the observation ``first``, stored
    with its task and batch (the batch and task are created when missing)."""
    if store.batch("synth-test") is None:
        store.put_batch(Batch(id="synth-test", name="synth-test", kind="run"))
    task = Task(id=f"{env}:{episode_id}", environment=env, family="fam", instruction=instruction)
    store.put_task(task)
    rows = [Step(episode_id=episode_id, index=0, kind="observation", observation=first)]
    rows += [
        Step(episode_id=episode_id, index=i, kind="action", action=a, observation=o)
        for i, (a, o) in enumerate(steps, start=1)
    ]
    episode = Episode(
        id=episode_id, task_id=task.id, batch_id="synth-test", outcome=Outcome(success=True)
    )
    store.add_episode(episode, rows)
    return episode_id


def example_of(
    store: Store,
    episode_id: str,
    instruction: str | None = None,
    start: int = 1,
    end: int | None = None,
    kind: ExampleKind = "whole",
    verdict: str = "kept",
) -> SynthExample:
    """The example of steps ``start``..``end`` of a stored episode (default: all of it, under
    its task's instruction), stored with ``verdict``."""
    episode = store.episode(episode_id)
    assert episode is not None
    task = store.task(episode.task_id)
    assert task is not None
    steps = [s for s in store.steps(episode_id) if s.kind == "action"]
    end = steps[-1].index if end is None else end
    span = [s for s in steps if start <= s.index <= end]
    example = SynthExample(
        episode_id=episode_id,
        start=start,
        end=end,
        kind=kind,
        env=task.environment,
        instruction=instruction or task.instruction,
        actions=[s.action for s in span],
        observations=[s.observation for s in span],
        relabeler="heuristic",
        verdict=verdict,  # type: ignore[arg-type]
    )
    [stored] = store.add_synth_examples([example])
    return stored
