"""The step scorer learned from people's causal spans: fitted on marked failures, it picks the
kind of step people marked in a failure nobody marked; too few labels say so; its
cross-validation scores each failure by a scorer that never saw it."""

from __future__ import annotations

import pytest

from store import Episode, EpisodeFilter, Span, Store
from tests.analyze.test_scoring import add_log
from workbench.analyze.analyzer import analyze
from workbench.analyze.causes import build_case, find_cause
from workbench.analyze.heuristic import learned_analyst
from workbench.analyze.learned import (
    MIN_LABELLED,
    Labelled,
    NotEnoughLabels,
    StepScorer,
    cross_validated,
    labelled,
)
from workbench.analyze.scoring import position_of
from workbench.llm.steps import CaseStep


def no_benign(step: CaseStep, error: str) -> bool:
    return False


def confirming(store: Store, n: int, reads: int) -> tuple[Episode, int]:
    """A failure whose agent looks ``reads`` reservations up, asks to confirm a cancellation,
    makes it and says so; returns it with the stored index of the confirming reply (agent
    steps sit at odd indices: 1, 3, 5, ...)."""
    turns = [("user", f"Please cancel reservation R{n}0.")]
    turns += [
        ("call", "get_reservation_details", {"reservation_id": f"R{n}{k}"}, '{"cabin": "eco"}')
        for k in range(reads)
    ]
    turns += [
        ("say", f"Would you like me to cancel reservation R{n}0?"),
        ("user", "yes"),
        ("call", "cancel_reservation", {"reservation_id": f"R{n}0"}, '{"status": "cancelled"}'),
        ("say", "Done: it has been cancelled."),
        ("user", "Thanks."),
    ]
    return add_log(store, f"e{n}", turns), 1 + 2 * reads


def examples(store: Store, count: int) -> list[Labelled]:
    """``count`` failures with their confirming reply marked, its position varying."""
    found = []
    for n in range(count):
        episode, marked = confirming(store, n, 1 + n % 3)
        example = labelled(build_case(store, episode), marked, no_benign)
        assert example is not None
        found.append(example)
    return found


def test_a_span_on_a_user_turn_marks_the_agent_step_it_answered():
    steps = [CaseStep(index=i) for i in (1, 3, 5, 7)]
    assert [position_of(steps, i) for i in (0, 1, 3, 4, 5, 6, 9)] == [0, 0, 1, 1, 2, 2, 3]


def test_labelled_targets_the_marked_step(store: Store):
    assert [e.target for e in examples(store, 6)] == [1, 2, 3, 1, 2, 3]


def test_the_scorer_picks_the_kind_of_step_people_marked(store: Store):
    scorer = StepScorer(examples(store, 6))
    new, marked = confirming(store, 9, 4)  # agent steps 1, 3, 5, 7, 9 (the confirm), 11, 13
    case = build_case(store, new)
    assert find_cause(store, new).step != marked  # the heuristic alone looks elsewhere
    rows = labelled(case, 0, no_benign).rows
    assert case.steps[scorer.pick(rows)].index == marked == 9
    weights = scorer.weights()
    assert weights["confirm"] > 0 and weights["confirm"] > weights["claim"]
    assert scorer.labelled == 6


def test_fewer_than_four_labelled_failures_fit_no_scorer(store: Store):
    assert MIN_LABELLED == 4
    with pytest.raises(NotEnoughLabels, match=r"^3 failure\(s\) .* at least 4$"):
        StepScorer(examples(store, 3))


def test_failures_of_one_agent_step_each_teach_nothing(store: Store):
    single = []
    for n in range(4):
        episode = add_log(store, f"one{n}", [("user", "Hi"), ("say", "I cannot help.")])
        example = labelled(build_case(store, episode), 1, no_benign)
        assert example is not None and example.target == 0
        single.append(example)
    with pytest.raises(NotEnoughLabels, match="single agent step"):
        StepScorer(single)


def test_cross_validation_gives_one_pick_per_failure_the_same_each_time(store: Store):
    labelled_failures = examples(store, 8)
    picks = cross_validated(labelled_failures, 2)
    assert picks == [1, 2, 3, 1, 2, 3, 1, 2] == [e.target for e in labelled_failures]
    assert cross_validated(labelled_failures, 2) == picks
    with pytest.raises(NotEnoughLabels, match="9-fold cross-validation needs at least 9"):
        cross_validated(labelled_failures, 9)


def test_too_few_for_the_folds_is_said_with_the_number_of_labelled_failures(store: Store):
    with pytest.raises(NotEnoughLabels, match=r"^5 failure\(s\)"):
        cross_validated(examples(store, 5), 2)


def test_the_learned_analyst_analyses_the_unmarked_failures_at_the_learned_step(store: Store):
    for n in range(5):
        episode, marked = confirming(store, n, 1 + n % 3)
        if n < 4:
            store.add_span(Span(episode_id=episode.id, start=marked, end=marked, kind="causal"))
    analyst = learned_analyst(store, EpisodeFilter())
    assert analyst.scorer.labelled == 4
    report = analyze(store, EpisodeFilter(), analyst)
    assert (report.analyzed, report.marked) == (5, 4)
    found = {a.episode_id: (a.start, a.origin) for a in store.analyses(report.run.id)}
    assert found == {
        "e0": (3, "human"),
        "e1": (5, "human"),
        "e2": (7, "human"),
        "e3": (3, "human"),
        "e4": (5, "learned"),
    }
