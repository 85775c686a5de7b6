"""Agreement with people's causal spans, beside the first-step, last-step and random baselines:
every figure below is worked out by hand from two marked failures."""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import EpisodeFilter, Span, Store
from tests.analyze.test_scoring import add_log
from workbench.analyze.agreement import (
    Agreement,
    agreement,
    baseline,
    heuristic_spans,
    labelled_failures,
    summary,
)
from workbench.cli import main

QUESTION = "Compute the sum of the first 10 primes."


def two_failures(store: Store) -> None:
    """``one``: a single agent's chat (agent steps 1, 3, 5, 7), marked at 5 by ``human``;
    ``many``: a group chat (agent steps 1 planner, 2 coder, 3 executor, 4 coder), marked
    2..3 by ``human:ann``. An analyzer ``analyzer:test`` marked 5 and 4."""
    add_log(
        store,
        "one",
        [
            ("user", "Cancel reservation ABC123."),
            ("call", "get_reservation_details", {"reservation_id": "ABC123"}, "{}"),
            ("say", "Shall I cancel ABC123?"),
            ("user", "yes"),
            ("call", "cancel_reservation", {"reservation_id": "ABC9"}, "{}"),
            ("say", "Done."),
        ],
        family="cancel",
        batch="b1",
    )
    add_log(
        store,
        "many",
        [
            ("agent", "admin", "user", QUESTION),
            ("agent", "planner", "assistant", "List the primes, then add them."),
            ("agent", "coder", "assistant", "```python\nprint(sum([2, 3, 5, 7, 11]))\n```"),
            ("agent", "executor", "user", "exitcode: 0\nCode output: 28"),
            ("agent", "coder", "assistant", "The answer is 28."),
        ],
        environment="group-chat",
        instruction=QUESTION,
        family="primes",
        batch="b2",
    )
    for episode_id, start, end, author in [
        ("one", 5, 5, "human"),
        ("many", 2, 3, "human:ann"),
        ("one", 5, 5, "analyzer:test"),
        ("many", 4, 4, "analyzer:test"),
    ]:
        store.add_span(
            Span(episode_id=episode_id, start=start, end=end, kind="causal", author=author)
        )


def by(rows: list[Agreement], key: str, method: str) -> Agreement:
    return next(r for r in rows if r.key == key and r.method == method)


def figures(row: Agreement) -> tuple:
    return (
        row.episodes,
        row.exact,
        row.within_one,
        row.within_three,
        row.iou,
        row.agent,
        row.agent_episodes,
    )


def test_the_labelled_failures_and_their_agent_steps(store: Store):
    two_failures(store)
    items = {item.episode.id: item for item in labelled_failures(store)}
    assert [s.index for s in items["one"].steps] == [1, 3, 5, 7]
    assert [(s.index, s.agent) for s in items["many"].steps] == [
        (1, "planner"),
        (2, "coder"),
        (3, "executor"),
        (4, "coder"),
    ]
    assert not items["one"].agents and items["many"].agents
    assert items["many"].human.author == "human:ann"
    assert {a: s.start for a, s in items["many"].machine.items()} == {"analyzer:test": 4}


def test_each_baseline_on_each_failure(store: Store):
    two_failures(store)
    items = {item.episode.id: item for item in labelled_failures(store)}
    one, many = items["one"], items["many"]
    # one: marked 5; first step 1 (4 away), last 7 (2 away), random over 1, 3, 5, 7
    assert astuple(baseline(one, "first step")) == (0.0, 0.0, 0.0, 0.0, None)
    assert astuple(baseline(one, "last step")) == (0.0, 0.0, 1.0, 0.0, None)
    assert astuple(baseline(one, "random")) == (0.25, 0.25, 0.75, 0.25, None)
    # many: marked 2..3 (the coder); starts 1, 2, 3, 4 are 1, 0, 1, 2 away
    assert astuple(baseline(many, "first step")) == (0.0, 1.0, 1.0, 0.0, 0.0)
    assert astuple(baseline(many, "last step")) == (0.0, 0.0, 1.0, 0.0, 1.0)
    # IoU of 1..1, 2..2, 3..3, 4..4 with 2..3: 0, 1/2, 1/2, 0; agents planner, coder,
    # executor, coder: two of four are the coder
    assert astuple(baseline(many, "random")) == (0.25, 0.75, 1.0, 0.25, 0.5)


def test_random_exact_is_one_over_the_agent_steps(store: Store):
    two_failures(store)
    for item in labelled_failures(store):
        found = baseline(item, "random")
        assert found is not None and found.exact == 1 / len(item.steps)


def test_agreement_overall_and_per_batch_and_family(store: Store):
    two_failures(store)
    rows = agreement(store, baselines=True)
    assert [(r.key, r.method) for r in rows[:4]] == [
        ("all", "analyzer:test"),
        ("all", "first step"),
        ("all", "last step"),
        ("all", "random"),
    ]
    assert list(dict.fromkeys(r.key for r in rows)) == [
        "all",
        "batch b1",
        "batch b2",
        "family cancel",
        "family primes",
    ]
    # analyzer:test: 5 on 5 (exact, IoU 1), 4 against 2..3 (±3, IoU 0, the coder's step)
    assert figures(by(rows, "all", "analyzer:test")) == (2, 0.5, 0.5, 1.0, 0.5, 1.0, 1)
    assert figures(by(rows, "all", "first step")) == (2, 0.0, 0.5, 0.5, 0.0, 0.0, 1)
    assert figures(by(rows, "all", "last step")) == (2, 0.0, 0.0, 1.0, 0.0, 1.0, 1)
    assert figures(by(rows, "all", "random")) == (2, 0.25, 0.5, 0.875, 0.25, 0.5, 1)
    assert figures(by(rows, "batch b1", "random")) == (1, 0.25, 0.25, 0.75, 0.25, None, 0)
    assert figures(by(rows, "family primes", "first step")) == (1, 0.0, 1.0, 1.0, 0.0, 0.0, 1)


def test_one_labellers_spans_only(store: Store):
    two_failures(store)
    rows = agreement(store, author="ann", baselines=True)
    assert {r.key for r in rows} == {"all", "family primes"}  # one batch: no batch group
    assert by(rows, "all", "last step").episodes == 1
    assert figures(by(rows, "all", "analyzer:test")) == (1, 0.0, 0.0, 1.0, 0.0, 1.0, 1)


def test_a_scope_selects_the_failures(store: Store):
    two_failures(store)
    rows = agreement(store, EpisodeFilter(batch="b1"), baselines=True)
    assert {r.key for r in rows} == {"all", "family cancel"}
    assert figures(by(rows, "all", "first step")) == (1, 0.0, 0.0, 0.0, 0.0, None, 0)


def test_the_heuristic_as_it_finds_now_takes_the_stored_analyzer_heuristic_spans_place(
    store: Store,
):
    two_failures(store)
    store.add_span(
        Span(episode_id="one", start=1, end=1, kind="causal", author="analyzer:heuristic")
    )
    items = list(labelled_failures(store))
    found = heuristic_spans(store, items)
    assert [item.episode.id for item, _ in found] == [item.episode.id for item in items]
    rows = agreement(store, baselines=True, heuristic=True)
    overall = [r.method for r in rows if r.key == "all"]
    assert overall == ["heuristic", "analyzer:test", "first step", "last step", "random"]
    assert by(rows, "all", "heuristic").episodes == 2


def test_summary_is_one_line_of_the_overall_group(store: Store):
    two_failures(store)
    assert summary(agreement(store, baselines=True)) == (
        "agreement with 2 marked failure(s): test 50% exact, 50% ±1, agent 100%"
        " · first step 0% exact, 50% ±1, agent 0%"
        " · last step 0% exact, 0% ±1, agent 100%"
        " · random 25% exact, 50% ±1, agent 50%"
    )
    assert summary([]) == ""


@pytest.mark.parametrize(
    ("args", "scope"),
    [
        ((), "all episodes"),
        (("--batch", "b1"), "batch b1"),
        (("--family", "primes"), "family primes"),
    ],
)
def test_the_agreement_command_names_its_scope_and_prints_the_baselines(
    db_path: Path, args: tuple[str, ...], scope: str
):
    with Store(db_path) as store:
        two_failures(store)
    done = CliRunner().invoke(main, ["--db", str(db_path), "analyze", "--agreement", *args])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0] == f"scope: {scope}"
    for method in ("heuristic", "test", "first step", "last step", "random"):
        assert method in done.output
