"""Search ranks the newest matches only: the same hits as ranking every match while they are
no more than the window, the best of the newest window by bm25 beyond it (and says so), and
queries that are not FTS5 syntax still searched as a phrase."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

import store.db
from store import EpisodeFilter, Store
from tests.store.test_search_index import WORDS, episode_line, write_jsonl
from workbench.cli import main
from workbench.ingest import import_paths

FULL_RANK = (
    'SELECT s.episode_id, s."index", s.kind, '
    "snippet(steps_fts, -1, '[', ']', '…', 12) FROM steps_fts "
    "JOIN steps s ON s.id = steps_fts.rowid JOIN episodes e ON e.id = s.episode_id "
    "WHERE steps_fts MATCH ? AND {clause} ORDER BY rank, steps_fts.rowid LIMIT ?"
)
"""The search as it was: every match ranked (ties by rowid, as the window's order)."""

QUERIES = [*WORDS, "steam OR ice", "pot kitchen", "kettle NOT stove", '"boil melt"']


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> Store:
    folder = tmp_path_factory.mktemp("search")
    rng = random.Random(3)
    lines = [episode_line(k, rng) for k in range(60)]
    for number, line in enumerate(lines):
        line["episode"]["outcome"] = {"success": number % 3 == 0}
    with Store(folder / "workbench.db") as opened:
        import_paths(opened, [write_jsonl(folder / "runs.jsonl", lines)])
        yield opened


def full_rank(store: Store, query: str, where: EpisodeFilter, limit: int) -> list[tuple]:
    clause, params = store.scoped(where).where()
    rows = store.conn.execute(FULL_RANK.format(clause=clause), [query, *params, limit])
    return [tuple(r) for r in rows]


def as_rows(page: store.db.SearchPage) -> list[tuple]:
    return [(h.episode_id, h.index, h.kind, h.snippet) for h in page.hits]


@pytest.mark.parametrize("where", [EpisodeFilter(), EpisodeFilter(outcome="failed")])
@pytest.mark.parametrize("limit", [5, 1000])
def test_within_the_window_the_hits_are_those_of_ranking_every_match(searched, where, limit):
    for query in QUERIES:
        page = searched.search_page(query, where, limit=limit)
        assert page.ranked_all
        assert as_rows(page) == full_rank(searched, query, where, limit), query
    assert sum(len(searched.search(q, where, limit=1000)) for q in QUERIES) > 500


def test_beyond_the_window_the_hits_are_the_best_of_the_newest_matches(searched):
    window = 40
    for query in ("stove", "steam OR ice"):
        newest = searched.conn.execute(
            "SELECT rowid FROM steps_fts WHERE steps_fts MATCH ? ORDER BY rowid DESC LIMIT ?",
            (query, window),
        ).fetchall()
        expected = searched.conn.execute(
            'SELECT s.episode_id, s."index" FROM steps_fts JOIN steps s ON s.id = steps_fts.rowid '
            "WHERE steps_fts MATCH ? AND steps_fts.rowid >= ? ORDER BY rank, steps_fts.rowid LIMIT 10",
            (query, newest[-1][0]),
        ).fetchall()
        page = searched.search_page(query, limit=10, window=window)
        assert not page.ranked_all and page.window == window
        assert [(h.episode_id, h.index) for h in page.hits] == [tuple(r) for r in expected]
        assert page.hits != searched.search_page(query, limit=10, window=10_000).hits


def test_a_filter_that_leaves_fewer_than_the_window_ranks_them_all(searched):
    where = EpisodeFilter(task="t1")
    every = full_rank(searched, "stove", where, 10_000)
    window = len(every) + 1
    assert len(searched.search_page("stove", limit=10, window=window).hits) == 10
    assert not searched.search_page("stove", limit=10, window=window).ranked_all
    page = searched.search_page("stove", where, limit=10, window=window)
    assert page.ranked_all
    assert as_rows(page) == every[:10]
    # the window's own plan (taken when the filter's share of episodes misleads) says so too
    clause, params = searched.scoped(where).where()
    rows, ranked_all = searched._search_rows("stove", clause, params, 10, window, bound=0)
    assert ranked_all and [tuple(r)[:4] for r in rows] == every[:10]


def test_a_page_larger_than_the_window_widens_it(searched):
    page = searched.search_page("stove", limit=100, window=10)
    assert page.window == 100 and len(page.hits) == 100


@pytest.mark.parametrize("query", ['"unbalanced', "stove AND", "pot)", "NOT", "kitchen:"])
def test_a_query_that_is_not_fts5_syntax_is_searched_as_a_phrase(searched, query):
    page = searched.search_page(query)
    phrase = '"' + query.replace('"', '""') + '"'
    assert as_rows(page) == full_rank(searched, phrase, EpisodeFilter(), 50)
    assert page.ranked_all


def test_search_says_when_it_ranked_only_the_newest_matches(tmp_path, monkeypatch):
    rng = random.Random(5)
    source = write_jsonl(tmp_path / "runs.jsonl", [episode_line(k, rng) for k in range(20)])
    path = tmp_path / "workbench.db"
    with Store(path) as opened:
        import_paths(opened, [source])
    runner = CliRunner()

    def search(*args: str) -> str:
        result = runner.invoke(main, ["search", *args], env={"WORKBENCH_DB": str(path)})
        assert result.exit_code == 0, result.output
        return result.output

    assert "newest" not in search("stove")
    monkeypatch.setattr(store.db, "RANK_WINDOW", 30)
    said = search("stove", "--limit", "5")
    assert "5 hit(s)" in said and "best of the newest 30 matches by rank" in said
    assert "newest" not in search("stove", "--task", "t1", "--limit", "5")
