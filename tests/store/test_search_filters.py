"""Search under a filter: a narrow one reads its steps first, a broad one walks the matches and
stops when its episodes are older than its share would say; either way the page is the best of
the newest window of matches that pass the filter, or of all of them when there are no more."""

from __future__ import annotations

import random

import pytest

import store.db
from store import EpisodeFilter, Store
from store.db import _window_sql
from tests.store.test_search_index import episode_line, write_jsonl
from tests.store.test_search_ranking import QUERIES, as_rows, full_rank
from workbench.ingest import import_paths

BATCHES = [("old", 12), ("mid", 18), ("new", 30)]
"""Imported oldest first: shares 0.2 (narrow), 0.3 and 0.5 of the episodes."""


@pytest.fixture(scope="module")
def batched(tmp_path_factory) -> Store:
    folder = tmp_path_factory.mktemp("filters")
    rng = random.Random(7)
    with Store(folder / "workbench.db") as opened:
        number = 0
        for name, size in BATCHES:
            lines = []
            for _ in range(size):
                line = episode_line(number, rng)
                line["batch"] = {"id": name, "name": name, "kind": "run"}
                line["episode"]["batch_id"] = name
                line["episode"]["outcome"] = {"success": number % 4 == 0}
                lines.append(line)
                number += 1
            import_paths(opened, [write_jsonl(folder / f"{name}.jsonl", lines)])
        yield opened


def newest_ranked(store: Store, query: str, where: EpisodeFilter, window: int) -> list[tuple]:
    """The best 10 of the newest ``window`` matches that pass ``where``, ties by rowid."""
    clause, params = store.scoped(where).where()
    joined = (
        "FROM steps_fts JOIN steps s ON s.id = steps_fts.rowid "
        f"JOIN episodes e ON e.id = s.episode_id WHERE steps_fts MATCH ? AND {clause}"
    )
    newest = store.conn.execute(
        f"SELECT steps_fts.rowid {joined} ORDER BY steps_fts.rowid DESC LIMIT ?",
        [query, *params, window],
    ).fetchall()
    rows = store.conn.execute(
        f'SELECT s.episode_id, s."index" {joined} AND steps_fts.rowid >= ? '
        "ORDER BY rank, steps_fts.rowid LIMIT 10",
        [query, *params, newest[-1][0]],
    )
    return [tuple(r) for r in rows]


FILTERS = [
    EpisodeFilter(batch="old"),
    EpisodeFilter(batch="old", outcome="failed"),
    EpisodeFilter(batch="mid"),
    EpisodeFilter(batch="new", outcome="passed"),
    EpisodeFilter(outcome="failed"),
]


@pytest.mark.parametrize("where", FILTERS)
def test_every_match_ranked_while_the_filter_leaves_no_more_than_the_window(batched, where):
    assert store.db.FILTER_FIRST_SHARE == 0.25  # "old" below it, the others above
    for query in QUERIES:
        page = batched.search_page(query, where, limit=1000)
        assert page.ranked_all
        assert as_rows(page) == full_rank(batched, query, where, 1000), query


@pytest.mark.parametrize("where", FILTERS)
@pytest.mark.parametrize("window", [10, 25])
def test_beyond_the_window_the_page_is_the_best_of_the_newest_that_pass(batched, where, window):
    beyond = 0
    for query in QUERIES:
        page = batched.search_page(query, where, limit=10, window=window)
        every = full_rank(batched, query, where, 10_000)
        if len(every) <= window:
            assert page.ranked_all, query
            assert as_rows(page) == every[:10], query
            continue
        beyond += 1
        assert not page.ranked_all, query
        assert [(h.episode_id, h.index) for h in page.hits] == newest_ranked(
            batched, query, where, window
        ), query
    assert beyond >= 3


def test_a_filter_that_names_nothing_finds_nothing(batched):
    page = batched.search_page("stove", EpisodeFilter(batch="nothing"))
    assert page.hits == [] and page.ranked_all


def test_a_walk_from_the_matches_that_stops_short_reads_the_filters_steps(batched):
    """ "mid" is older than the newest matches its share would need: the walk from the matches
    stops, and the filter's steps give the same page the unbounded walk would have."""
    where = EpisodeFilter(batch="mid")
    clause, params = batched.scoped(where).where()
    bounded = batched._search_rows("stove", clause, params, 10, 10, bound=4)
    walked = batched.conn.execute(_window_sql(clause), ["stove", 0, *params, 11, 10, 10, "stove"])
    assert [tuple(r) for r in bounded[0]] == [tuple(r) for r in walked]
    assert bounded[1] is False and len(bounded[0]) == 10


def test_reading_the_filters_steps_first_never_searches_the_index_by_rowid(batched):
    clause, params = batched.scoped(EpisodeFilter(batch="old")).where()
    plan = batched.conn.execute(
        "EXPLAIN QUERY PLAN " + _window_sql(clause, filter_first=True),
        ["stove", *params, 11, 10, 10, "stove"],
    ).fetchall()
    scans = [row[3] for row in plan if "steps_fts VIRTUAL TABLE" in row[3]]
    assert len(scans) == 2
    # FTS5's plan string names a rowid equality as '='; ranges ('>', '<') are one pass
    assert all("=" not in scan.split(":", 1)[1] for scan in scans), scans


@pytest.mark.parametrize("where", [EpisodeFilter(), *FILTERS])
def test_a_window_exactly_as_large_as_the_matches_says_it_ranked_them_all(batched, where):
    every = full_rank(batched, "stove", where, 10_000)
    exact = batched.search_page("stove", where, limit=10, window=len(every))
    assert exact.ranked_all and as_rows(exact) == every[:10]
    # one fewer: all ranked only where FTS5 ranked every match itself (then it says so)
    short = batched.search_page("stove", where, limit=10, window=len(every) - 1)
    assert not short.ranked_all or as_rows(short) == every[:10]
