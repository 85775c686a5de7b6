"""Backward construction on real episodes of both worlds: spans with effects, a bounded number
of relabel calls, provenance, trimmed repeats, state digests, resumption."""

from __future__ import annotations

import itertools
from pathlib import Path

from store import Step, Store
from store.synth import SYNTH_WORKSPACE
from tests.synthesized import SW_FAMILY, TW_FAMILY, copy_db
from workbench.envs.lexicon import PLAIN
from workbench.synth.backward import (
    DEFAULT_MAX_SPANS,
    choose_spans,
    construct,
    pending_episodes,
    revisits,
    view_of,
)
from workbench.synth.effects import read_trajectory
from workbench.synth.heuristic_relabeler import HeuristicRelabeler


def test_every_episode_gets_its_whole_trajectory_and_spans_that_did_something(constructed_db):
    with Store(constructed_db, workspace=SYNTH_WORKSPACE) as store:
        episodes = store.episodes()
        assert {e.family for e in episodes} == {SW_FAMILY, TW_FAMILY}
        for episode in episodes:
            task = store.task(episode.task_id)
            examples = store.synth_examples(episode_id=episode.id)
            (whole,) = [e for e in examples if e.kind == "whole"]
            assert whole.instruction == task.instruction and whole.relabeler == "played"
            backward = [e for e in examples if e.kind == "backward"]
            assert 1 <= len(backward) <= DEFAULT_MAX_SPANS
            steps = {s.index: s.action for s in store.steps(episode.id) if s.action}
            for example in backward:
                assert example.effects and example.instruction.endswith(".")
                assert example.relabeler == "heuristic" and example.env == task.environment
                removed = example.checks["repeats"]["removed"]
                span = [steps[i] for i in range(example.start, example.end + 1) if i not in removed]
                assert example.actions == span  # provenance: the episode's own actions
                assert len(example.observations) == len(example.actions)


def test_repeated_invalid_steps_are_trimmed_from_the_span(constructed_db):
    with Store(constructed_db, workspace=SYNTH_WORKSPACE) as store:
        episode = next(e for e in store.episodes() if e.family == SW_FAMILY)
        (whole,) = store.synth_examples(episode_id=episode.id, kind="whole")
        removed = whole.checks["repeats"]["removed"]
        assert removed, "the scripted agent repeated an invalid command to the step limit"
        assert len(whole.actions) == whole.end - whole.start + 1 - len(removed)
        pairs = list(zip(whole.actions, whole.observations, strict=True))
        assert all(a != b for a, b in itertools.pairwise(pairs))


def test_adjacent_spans_chain_their_states_and_a_walk_back_returns_to_the_same_state(
    constructed_db,
):
    with Store(constructed_db, workspace=SYNTH_WORKSPACE) as store:
        examples = store.synth_examples(kind="backward")
        ends = {(e.episode_id, e.end): e.end_state for e in examples}
        chained = [e for e in examples if (e.episode_id, e.start - 1) in ends]
        assert chained
        for example in chained:
            assert example.start_state == ends[(example.episode_id, example.start - 1)]
        walked_back = [
            revisits(reading, reading.steps[0].index, reading.steps)
            for reading in (
                view_of(store, e.id).reading for e in store.episodes() if e.family == TW_FAMILY
            )
        ]
        assert any(walked_back), "taking a wrong exit and coming back revisits a state"


def test_calls_are_capped_counted_and_a_second_run_adds_nothing(tmp_path: Path, recorded_db):
    path = copy_db(recorded_db, tmp_path)
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        todo = pending_episodes(store)
        assert len(todo) == 2
        report = construct(store, relabeler=HeuristicRelabeler(), max_spans_per_episode=2)
        backward = store.synth_examples(kind="backward")
        assert report.relabel_calls == report.examples == len(backward) <= 2 * 2
        assert report.whole == 2 and report.episodes == 2
        assert report.capped > 0 and 0 < report.no_effect < report.all_spans
        n_actions = [sum(1 for s in store.steps(e) if s.action) for e in todo]
        assert report.all_spans == sum(n * (n + 1) // 2 for n in n_actions)
        counts = store.synth_counts()
        assert pending_episodes(store) == []
        again = construct(store, relabeler=HeuristicRelabeler(), episodes=todo[:1])
        assert (again.episodes, again.skipped, again.relabel_calls) == (0, 1, 0)
        assert store.synth_counts() == counts


def test_the_cost_is_bounded_by_the_cap_not_the_square_of_the_length():
    steps = [Step(episode_id="e", index=0, kind="observation", observation="start")]
    steps += [
        Step(episode_id="e", index=i, kind="action", action=f"take thing{i}", observation="Taken.")
        for i in range(1, 401)
    ]
    reading = read_trajectory("any:task:0", steps, PLAIN)
    assert all(s.effects == (f"took thing{s.index}",) for s in reading.steps)
    choice = choose_spans(reading, max_spans=8, max_steps=10)
    assert len(choice.spans) == 7 and choice.whole == (1, 400)
    assert choice.candidates <= 400 * 10 and choice.all_spans == 400 * 401 // 2
    assert all(end - start < 10 for start, end in choice.spans)
    assert choice.spans[-1][1] == 400  # spread over the trajectory, the last effect included
