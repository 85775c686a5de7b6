"""``episode_counts``: the per batch, family and outcome counts that ``ls`` shows under its
first page, kept by triggers, equal to counting the episodes for every filter they serve."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from store import Batch, Episode, EpisodeFilter, Store, Task
from store.migrations import MIGRATIONS, migrate
from workbench.cli import main

FAMILIES = ("boil", "melt", "freeze")
BATCHES = (("b1", "run", ""), ("b2", "replay", ""), ("b3", "run", "evolve/x"))
OUTCOMES = (True, False, None)


def scanned(store: Store, where: EpisodeFilter) -> int:
    """The count the old way: counting the episodes themselves."""
    clause, params = store.scoped(where).where()
    return store.conn.execute(f"SELECT count(*) FROM episodes e WHERE {clause}", params).fetchone()[
        0
    ]


def fill(path: Path, episodes: list[tuple[int, int, int]]) -> None:
    """Episodes as (batch, family, outcome) positions, each batch in its own workspace."""
    for batch_id, kind, workspace in BATCHES:
        with Store(path, workspace=workspace) as store:
            store.put_batch(Batch(id=batch_id, name=f"name-{batch_id}", kind=kind))
    with Store(path) as store, store.transaction():
        for family in FAMILIES:
            store.put_task(Task(id=f"sw:{family}", environment="scienceworld", family=family))
        for number, (batch, family, outcome) in enumerate(episodes):
            store.add_episode(
                Episode(
                    id=f"e{number}",
                    task_id=f"sw:{FAMILIES[family]}",
                    batch_id=BATCHES[batch][0],
                    outcome={"success": OUTCOMES[outcome]},
                ),
                [],
            )


filters = st.builds(
    EpisodeFilter,
    outcome=st.sampled_from([None, "failed", "passed", "unknown"]),
    family=st.sampled_from([None, *FAMILIES, "nothing"]),
    batch=st.sampled_from([None, "b1", "name-b2", "b3"]),
    replays=st.sampled_from([None, False]),
    workspace=st.sampled_from([None, "", "evolve/x"]),
)
episodes = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)))


@settings(max_examples=25)
@given(episodes=episodes, wheres=st.lists(filters, min_size=1, max_size=8))
def test_counts_equal_counting_the_episodes(tmp_path_factory, episodes, wheres):
    path = tmp_path_factory.mktemp("counts") / "workbench.db"
    fill(path, episodes)
    with Store(path) as store:
        for where in wheres:
            assert where.counted
            assert store.count_episodes(where) == scanned(store, where)


@settings(max_examples=25)
@given(
    episodes=episodes.filter(bool),
    changes=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 2), st.integers(0, 2))),
    deleted=st.lists(st.integers(0, 99)),
)
def test_updates_and_deletes_keep_the_counts(tmp_path_factory, episodes, changes, deleted):
    path = tmp_path_factory.mktemp("counts") / "workbench.db"
    fill(path, episodes)
    with Store(path) as store:
        for number, batch, outcome in changes:
            store.conn.execute(
                "UPDATE episodes SET batch_id = ?, outcome_success = ? WHERE id = ?",
                (BATCHES[batch][0], OUTCOMES[outcome], f"e{number % len(episodes)}"),
            )
        for number in deleted:
            store.conn.execute("DELETE FROM episodes WHERE id = ?", (f"e{number % len(episodes)}",))
        grouped = store.conn.execute(
            "SELECT batch_id, family, coalesce(outcome_success, 0.5), count(*) FROM episodes "
            "GROUP BY 1, 2, 3"
        ).fetchall()
        kept = store.conn.execute("SELECT batch_id, family, triage, n FROM episode_counts")
        assert sorted(map(tuple, kept)) == sorted(map(tuple, grouped))  # (no count of 0)


def test_filters_the_counts_do_not_keep_count_the_episodes(store):
    for where in (EpisodeFilter(agent="a"), EpisodeFilter(split="test"), EpisodeFilter(task="t")):
        assert not where.counted
        assert "FROM episodes e" in store.count_query(store.scoped(where))[0]


def test_the_failed_count_reads_no_episode(store):
    sql, params = store.count_query(store.scoped(EpisodeFilter(outcome="failed")))
    plan = " ".join(r["detail"] for r in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    assert "episode_counts" in sql and "episodes" not in plan


def test_migration_counts_the_episodes_already_stored(tmp_path):
    path = tmp_path / "old.db"
    fill(path, [(0, 0, 1), (0, 0, 1), (1, 2, 2), (2, 1, 0)])
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TABLE episode_counts")
    for name in ("insert", "delete", "update"):
        conn.execute(f"DROP TRIGGER episode_counts_{name}")
    older(conn, 9)
    assert migrate(conn, MIGRATIONS[:10]) == 10
    conn.close()
    with Store(path) as store:
        for where in (
            EpisodeFilter(outcome="failed"),
            EpisodeFilter(),
            EpisodeFilter(workspace="evolve/x"),
        ):
            assert store.count_episodes(where) == scanned(store, where) > 0


@pytest.mark.parametrize(
    "args", [["--failed"], [], ["--passed", "--family", "melt"], ["--unknown", "--batch", "b1"]]
)
def test_ls_prints_the_same_as_counting_the_episodes(tmp_path, monkeypatch, args):
    path = tmp_path / "workbench.db"
    fill(path, [(batch % 2, n % 3, n % 3) for n, batch in enumerate(range(60))])
    runner = CliRunner()

    def ls() -> str:
        env = {"WORKBENCH_DB": str(path), "COLUMNS": "200"}
        result = runner.invoke(main, ["ls", *args, "--limit", "5"], env=env)
        assert result.exit_code == 0, result.output
        return result.output

    counted = ls()
    monkeypatch.setattr(EpisodeFilter, "counted", property(lambda self: False))
    assert ls() == counted
    assert " of " in counted and "episode(s)" in counted


def test_a_scoped_filter_is_still_counted():
    assert replace(EpisodeFilter(outcome="failed"), workspace="").counted


def test_counts_left_at_zero_by_an_older_workbench_are_removed_by_the_migration(tmp_path):
    path = tmp_path / "old.db"
    fill(path, [(0, 0, 1), (1, 2, 2)])
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "INSERT INTO episode_counts(batch_id, family, triage, n) VALUES ('gone', 'boil', 0, 0)"
    )
    older(conn, 10)
    assert migrate(conn, MIGRATIONS) == MIGRATIONS[-1].version
    assert conn.execute("SELECT count(*) FROM episode_counts WHERE n <= 0").fetchone() == (0,)
    conn.close()


def older(conn: sqlite3.Connection, version: int) -> None:
    """Make ``conn``'s database look as a workbench of schema ``version`` left it (what the
    migrations after it added, removed)."""
    conn.execute("ALTER TABLE analyses DROP COLUMN agent")  # (14)
    conn.execute("ALTER TABLE analyses DROP COLUMN origin")
    conn.execute("ALTER TABLE sources DROP COLUMN metadata")  # (13)
    conn.execute("DROP INDEX steps_by_agent")  # (12)
    conn.execute("ALTER TABLE steps DROP COLUMN agent")
    conn.execute("DELETE FROM schema_migrations WHERE version > ?", (version,))
