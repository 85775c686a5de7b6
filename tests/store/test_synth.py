"""Synthesized tasks and examples: stored once, kept across a resumed synthesis, verdicts
written together."""

from __future__ import annotations

from pathlib import Path

from store import Store, SynthExample, SynthTask
from tests.store.test_db import add


def task(instruction: str = "boil water") -> SynthTask:
    return SynthTask(
        env="scienceworld",
        family="boil",
        variation=3,
        instruction=instruction,
        source="task:boil",
        passage="Your task is to boil water.",
        entities=["water"],
        proposer="heuristic",
    )


def example(start: int, end: int, episode_id: str = "e1") -> SynthExample:
    return SynthExample(
        episode_id=episode_id,
        start=start,
        end=end,
        env="scienceworld",
        instruction=f"do steps {start} to {end}",
        actions=[f"step {i}" for i in range(start, end + 1)],
        effects=["took pot"],
        relabeler="heuristic",
    )


def test_tasks_are_added_once(tmp_path: Path) -> None:
    with Store(tmp_path / "wb.sqlite") as store:
        first = store.add_synth_tasks([task(), task("melt ice")])
        again = store.add_synth_tasks([task()])
        assert [t.id for t in again] == [first[0].id]
        assert [t.instruction for t in store.synth_tasks("scienceworld")] == [
            "boil water",
            "melt ice",
        ]
        assert store.synth_tasks("textworld") == []
        assert store.synth_task(first[1].id).entities == ["water"]


def test_examples_survive_a_resumed_synthesis_without_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "wb.sqlite"
    with Store(path) as store:
        add(store, "e1", False, n=5)
        stored = store.add_synth_examples([example(0, 1), example(2, 4)])
    with Store(path) as store:  # a second run over the same episode
        again = store.add_synth_examples([example(0, 1), example(1, 3)])
        assert again[0].id == stored[0].id
        assert [(e.start, e.end) for e in store.synth_examples()] == [(0, 1), (2, 4), (1, 3)]
        kept, rejected = again[0], again[1]
        store.set_example_verdicts(
            [
                kept.model_copy(update={"verdict": "kept", "checks": {"replay": "reproduced"}}),
                rejected.model_copy(
                    update={"verdict": "rejected", "reason": "duplicate of example 1"}
                ),
            ]
        )
        assert store.synth_counts() == {"kept": 1, "rejected": 1, "pending": 1}
        assert store.synth_example(kept.id).checks == {"replay": "reproduced"}
        assert [e.reason for e in store.synth_examples(verdict="rejected")] == [
            "duplicate of example 1"
        ]
