"""People's causal spans take part in analysis: a marked failure is analysed at the person's
span, marking one later redoes its analysis, ``analyze --learn`` fits a scorer on the marked
failures for the others, and ``analyze --agreement --cv K`` reports that scorer's
cross-validated agreement."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from store import EpisodeFilter, Span, Store
from tests.analyze.test_learned import confirming
from workbench.analyze.analyzer import analyze, human_span
from workbench.analyze.heuristic import HeuristicAnalyst
from workbench.cli import main


def mark(store: Store, episode_id: str, start: int, end: int, author: str = "human") -> Span:
    return store.add_span(
        Span(episode_id=episode_id, start=start, end=end, kind="causal", author=author)
    )


def invoke(db_path: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db_path), *args])


def test_a_persons_span_is_the_analysis_span_with_no_analyzer_span_added(store: Store):
    episode, _ = confirming(store, 0, 2)  # agent steps 1, 3, 5 (the confirm), 7, 9
    span = mark(store, episode.id, 4, 5)  # from the user's turn before the confirm
    report = analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    assert (report.analyzed, report.marked, report.skipped) == (1, 1, 0)
    [analysis] = store.analyses(report.run.id)
    assert (analysis.start, analysis.end) == (4, 5)
    assert (analysis.origin, analysis.span_id) == ("human", span.id)
    assert [(s.author, s.start, s.end) for s in store.spans(episode.id)] == [("human", 4, 5)]


def test_the_earliest_persons_span_stands(store: Store):
    episode, _ = confirming(store, 0, 2)
    first = mark(store, episode.id, 5, 5, "human:ann")
    mark(store, episode.id, 1, 1, "human:bob")
    mark(store, episode.id, 3, 3, "analyzer:heuristic")
    assert human_span(store, episode.id).id == first.id
    report = analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    [analysis] = store.analyses(report.run.id)
    assert (analysis.start, analysis.span_id, analysis.origin) == (5, first.id, "human")


def test_marking_after_a_first_analysis_redoes_that_analysis_only(store: Store):
    for n in range(3):
        confirming(store, n, 1)  # agent steps 1, 3 (the confirm), 5, 7
    first = analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    assert (first.analyzed, first.marked, first.skipped) == (3, 0, 0)
    before = {a.episode_id: a for a in store.analyses(first.run.id)}
    assert {a.origin for a in before.values()} == {"analyzer"}
    span = mark(store, "e1", 3, 3)

    again = analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    assert again.run.id == first.run.id
    assert (again.analyzed, again.marked, again.skipped) == (1, 1, 2)
    after = {a.episode_id: a for a in store.analyses(first.run.id)}
    assert len(after) == 3
    assert (after["e1"].start, after["e1"].origin, after["e1"].span_id) == (3, "human", span.id)
    for other in ("e0", "e2"):
        assert after[other] == before[other]
    analyzer_spans = [s for s in store.spans("e1") if s.author == "analyzer:heuristic"]
    assert len(analyzer_spans) == 1  # what was proposed first stays on record, none added

    third = analyze(store, EpisodeFilter(), HeuristicAnalyst(store))
    assert (third.analyzed, third.marked, third.skipped) == (0, 0, 3)


def test_learn_with_too_few_marked_failures_says_so_in_one_line(db_path: Path):
    with Store(db_path) as store:
        for n in range(3):
            episode, confirm = confirming(store, n, 1)
            mark(store, episode.id, confirm, confirm)
    done = invoke(db_path, "analyze", "--learn")
    assert done.exit_code == 1
    assert done.output == (
        "Error: --learn: 3 failure(s) with a person's causal span; a scorer needs at least 4"
        " (mark causal spans in the TUI or the notebook, or load them with `workbench spans"
        " import`)\n"
    )
    with Store(db_path) as store:
        assert store.analysis_runs() == []


def test_learn_analyses_the_unmarked_failures_with_the_learned_scorer(db_path: Path):
    confirms = {}
    with Store(db_path) as store:
        for n in range(6):
            episode, confirms[episode.id] = confirming(store, n, 1 + n % 3)
            if n < 4:
                mark(store, episode.id, confirms[episode.id], confirms[episode.id])
    done = invoke(db_path, "analyze", "--learn")
    assert done.exit_code == 0, done.output
    assert "analysis run 1 (heuristic+learned): 6 failure(s) analysed (4 at a person's" in (
        " ".join(done.output.split())
    )
    with Store(db_path) as store:
        found = {a.episode_id: (a.start, a.origin) for a in store.analyses(1)}
        spans = {e: [s.author for s in store.spans(e)] for e in found}
    assert found == {e: (confirms[e], "human" if e < "e4" else "learned") for e in confirms}
    assert spans["e4"] == spans["e5"] == ["analyzer:heuristic+learned"]
    assert spans["e0"] == ["human"]


def test_learn_goes_with_no_reasoner(db_path: Path):
    Store(db_path).close()
    done = invoke(db_path, "analyze", "--learn", "--reasoner", "heuristic")
    assert done.exit_code == 2 and "--learn fits an offline scorer" in done.output


def test_agreement_with_cross_validation_prints_the_learned_row(db_path: Path):
    with Store(db_path) as store:
        for n in range(8):
            episode, confirm = confirming(store, n, 1 + n % 3)
            mark(store, episode.id, confirm, confirm)
    done = invoke(db_path, "analyze", "--agreement", "--cv", "2")
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert text.startswith("scope: all episodes")
    # each fold's scorer finds the confirming reply the other fold's people marked
    learned = r"learned \(2-fold\)\s+(?:episodes:\s+)?8\s+(?:exact:\s+)?100%"
    assert re.search(learned, text), text
    for method in ("heuristic", "first step", "last step", "random"):
        assert method in text


def test_cv_goes_with_agreement(db_path: Path):
    Store(db_path).close()
    done = invoke(db_path, "analyze", "--cv", "2")
    assert done.exit_code == 2 and "--cv goes with --agreement" in done.output
