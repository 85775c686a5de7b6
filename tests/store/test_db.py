"""The SQLite store: schema and migrations, transactions, reads by range, FTS, spans, stats."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import (
    SCHEMA_VERSION,
    Batch,
    Episode,
    EpisodeFilter,
    Outcome,
    Span,
    Step,
    Store,
    Task,
    texts,
)
from store.migrations import MIGRATIONS, Migration, migrate


def add(
    store: Store,
    episode_id: str,
    success: bool | None,
    family: str = "boil",
    n: int = 3,
    agent: str = "a",
) -> Episode:
    store.put_batch(Batch(id="b1", name="first"))
    store.put_task(
        Task(id=f"sw:{family}", environment="scienceworld", family=family, split="train")
    )
    episode = Episode(
        id=episode_id,
        task_id=f"sw:{family}",
        batch_id="b1",
        agent=agent,
        outcome=Outcome(success=success),
    )
    steps = [
        Step(
            episode_id=episode_id,
            index=i,
            kind="action",
            action=f"step {i} of {episode_id}",
            observation=f"you see a pot {i}",
        )
        for i in range(n)
    ]
    assert store.add_episode(episode, steps)
    return store.episode(episode_id)


def test_new_database_has_current_schema_wal_and_foreign_keys(db_path):
    with Store(db_path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        tables = set(store.db.table_names())
        assert {"tasks", "batches", "episodes", "steps", "spans", "sources", "steps_fts"} <= tables


@pytest.mark.parametrize(
    ("where", "index"),
    [
        (EpisodeFilter(outcome="failed", family="boil"), "episodes_by_family"),
        (EpisodeFilter(family="boil"), "episodes_by_family"),
        (EpisodeFilter(), "episodes_by_outcome"),
        (EpisodeFilter(outcome="failed"), "episodes_by_outcome"),
        (EpisodeFilter(agent="x", outcome="passed"), "episodes_by_agent"),
    ],
)
def test_failure_lists_walk_an_index_without_sorting(store, where, index):
    sql, params = store.episode_query(store.scoped(where), limit=50)  # what the store runs
    plan = " ".join(r["detail"] for r in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    assert index in plan
    assert "TEMP B-TREE" not in plan


def test_reopening_applies_nothing_twice(db_path):
    Store(db_path).close()
    with Store(db_path) as store:
        rows = store.conn.execute("SELECT version FROM schema_migrations").fetchall()
        assert [r[0] for r in rows] == [m.version for m in MIGRATIONS]


def test_forward_migration_runs_on_an_older_database(db_path):
    Store(db_path).close()
    added = Migration(
        SCHEMA_VERSION + 1,
        "test-column",
        lambda conn: conn.execute("ALTER TABLE tasks ADD COLUMN extra TEXT"),
    )
    conn = sqlite3.connect(db_path, isolation_level=None)
    assert migrate(conn, (*MIGRATIONS, added)) == SCHEMA_VERSION + 1
    assert "extra" in [r[1] for r in conn.execute("PRAGMA table_info(tasks)")]
    conn.close()


def test_failing_migration_leaves_the_schema_as_it_was(db_path):
    Store(db_path).close()

    def broken(conn):
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    conn = sqlite3.connect(db_path, isolation_level=None)
    with pytest.raises(RuntimeError, match="boom"):
        migrate(conn, (*MIGRATIONS, Migration(SCHEMA_VERSION + 1, "broken", broken)))
    assert (
        conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0]
        == 0
    )
    assert (
        conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == SCHEMA_VERSION
    )
    conn.close()


def test_database_from_a_newer_workbench_is_refused(db_path):
    Store(db_path).close()
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'now')")
    conn.close()
    with pytest.raises(RuntimeError, match="newer"):
        Store(db_path)


def test_transaction_rolls_back_everything_on_error(store):
    add(store, "e1", False)
    with pytest.raises(ValueError), store.transaction():
        add(store, "e2", True)
        store.put_task(Task(id="other", environment="x"))
        raise ValueError("stop")
    assert store.episode("e2") is None
    assert store.task("other") is None
    assert store.count_episodes() == 1


def test_nested_transaction_rolls_back_only_its_part(store):
    with store.transaction():
        add(store, "e1", False)
        with pytest.raises(ValueError), store.transaction():
            store.put_task(Task(id="inner", environment="x"))
            raise ValueError
    assert store.episode("e1") is not None
    assert store.task("inner") is None


def test_adding_an_existing_episode_changes_nothing(store):
    add(store, "e1", False, n=3)
    again = Episode(id="e1", task_id="sw:boil", batch_id="b1", outcome=Outcome(success=True))
    assert store.add_episode(again, []) is False
    assert store.episode("e1").outcome.success is False
    assert len(store.steps("e1")) == 3


def test_episode_needs_a_known_task(store):
    store.put_batch(Batch(id="b1", name="b"))
    with pytest.raises(KeyError, match="unknown task"):
        store.add_episode(Episode(id="e", task_id="missing", batch_id="b1"), [])


def test_steps_read_by_range(store):
    add(store, "long", False, n=100)
    page = store.steps("long", 40, 45)
    assert [s.index for s in page] == [40, 41, 42, 43, 44]
    assert store.step("long", 99).action == "step 99 of long"
    assert store.step("long", 100) is None
    plan = store.conn.execute(
        'EXPLAIN QUERY PLAN SELECT * FROM steps WHERE episode_id = ? AND "index" >= ? AND "index" < ?',
        ("long", 40, 45),
    ).fetchall()
    assert "USING INDEX" in " ".join(str(tuple(r)) for r in plan)


def test_cut_steps_hold_a_window_of_each_text_and_its_full_length(store):
    add(store, "short", False, n=2)
    big = "é" * 5000 + "tail"
    store.put_task(Task(id="sw:boil", environment="scienceworld", family="boil", split="train"))
    episode = Episode(id="big", task_id="sw:boil", batch_id="b1")
    raw = {"output": big, "extra": 1}
    steps = [
        Step(episode_id="big", index=0, kind="action", action="look", observation=big, raw=raw),
        Step(episode_id="big", index=1, kind="action", action="wait", raw={"k": "v"}),
    ]
    store.add_episode(episode, steps)
    first, second = store.cut_steps("big", 0, None, chars=100)
    assert first.step.observation == "é" * 100 and first.lengths["observation"] == 5004
    assert first.cut("observation") and not first.cut("action")
    assert first.step.raw is None and first.cut("raw")  # its text is cut: no raw record
    assert second.step.raw == {"k": "v"} and not second.cut("raw")
    assert second.lengths["observation"] == 0
    whole = store.cut_steps("big", 0, 1, chars=10_000)[0]
    assert whole.step == store.step("big", 0) and not whole.cut("raw")
    assert store.step_text("big", 0, "observation", 4998, 100) == "éétail"
    assert store.step_text("big", 0, "observation", 6000, 100) == ""
    assert store.step_text("big", 7, "observation", 0, 100) == ""
    assert [c.step.index for c in store.cut_steps("short", 1, 5)] == [1]
    window = store.cut_steps("big", 0, 1, chars=10, offset=4996)[0]
    assert window.step.observation == "éééétail" and window.offset == 4996
    assert window.cut("observation") and window.step.raw is None
    with pytest.raises(ValueError, match="not 'raw'"):
        store.step_text("big", 0, "raw", 0, 10)


def test_listing_puts_failures_first_and_filters(store):
    add(store, "p1", True, family="boil")
    add(store, "f1", False, family="melt", agent="b")
    add(store, "u1", None, family="boil")
    add(store, "f2", False, family="boil")
    assert [e.id for e in store.episodes()] == ["f1", "f2", "u1", "p1"]
    assert [e.id for e in store.episodes(EpisodeFilter(outcome="failed", family="boil"))] == ["f2"]
    assert [e.id for e in store.episodes(EpisodeFilter(agent="b"))] == ["f1"]
    assert [e.id for e in store.episodes(EpisodeFilter(batch="first", outcome="passed"))] == ["p1"]
    assert store.count_episodes(EpisodeFilter(outcome="unknown")) == 1
    assert [e.id for e in store.episodes(limit=2, offset=1)] == ["f2", "u1"]
    assert [e.id for e in store.iter_episodes(page=1)] == ["p1", "f1", "u1", "f2"]


def test_full_text_search_finds_steps_and_survives_bad_syntax(store):
    add(store, "e1", False)
    hits = store.search("pot")
    assert {(h.episode_id, h.index) for h in hits} == {("e1", 0), ("e1", 1), ("e1", 2)}
    assert "[pot]" in hits[0].snippet
    assert store.search('"unbalanced') == []
    assert store.search("nothing-like-this") == []


def test_stats_group_outcomes(store):
    add(store, "p1", True, family="boil")
    add(store, "f1", False, family="boil")
    add(store, "f2", False, family="melt")
    by_family = {row.key: row for row in store.stats("family")}
    assert (by_family["boil"].passed, by_family["boil"].failed) == (1, 1)
    assert by_family["boil"].success_rate == 0.5
    assert by_family["melt"].success_rate == 0.0
    assert store.stats("batch")[0].key == "first"


def test_span_create_update_delete(store):
    add(store, "e1", False, n=5)
    span = store.add_span(Span(episode_id="e1", start=1, end=2, kind="causal", label="too-early"))
    assert span.id is not None
    assert store.spans("e1") == [span]
    edited = store.update_span(span.model_copy(update={"label": "premature", "end": 3}))
    assert store.span(span.id).label == "premature"
    assert edited.updated_at >= span.updated_at
    assert store.span_labels() == ["premature"]
    assert store.delete_span(span.id) == edited
    assert store.spans("e1") == []


def test_span_outside_the_episode_is_refused(store):
    add(store, "e1", False, n=5)
    with pytest.raises(ValueError, match="outside"):
        store.add_span(Span(episode_id="e1", start=4, end=5, kind="note"))
    with pytest.raises(KeyError):
        store.add_span(Span(episode_id="nope", start=0, end=0, kind="note"))
    with pytest.raises(ValueError):
        Span(episode_id="e1", start=3, end=2, kind="note")


def test_writer_and_reader_processes_share_the_file_without_lock_errors(db_path):
    """A second process writing one-episode transactions while this one reads, in WAL mode."""
    with Store(db_path) as store:
        add(store, "seed", False)
        writer = subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(f"""
                from store import Episode, Step, Store
                with Store({str(db_path)!r}) as s:
                    for i in range(200):
                        s.add_episode(Episode(id=f"w{{i}}", task_id="sw:boil", batch_id="b1"),
                                      [Step(episode_id=f"w{{i}}", index=0, kind="action", action="wait")])
                    print("done")
            """),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        seen = 0
        while writer.poll() is None:
            seen = max(seen, store.count_episodes())
            store.episodes(limit=20)
        assert writer.stdout.read().strip() == "done"
        assert writer.returncode == 0
        assert store.count_episodes() == 201


def test_listing_reads_only_list_columns_in_the_same_order(store):
    add(store, "p1", True)
    add(store, "f1", False, family="melt")
    add(store, "u1", None)
    full = store.episodes(EpisodeFilter(), limit=10)
    listed = store.listing(EpisodeFilter(), limit=10)
    assert [e.id for e in listed] == [e.id for e in full] == ["f1", "u1", "p1"]
    assert [(e.outcome, e.family, e.n_steps, e.task_id) for e in listed] == [
        (e.outcome, e.family, e.n_steps, e.task_id) for e in full
    ]
    assert store.listing(EpisodeFilter(outcome="failed", family="melt"))[0].id == "f1"


@pytest.mark.parametrize(
    "where",
    [
        EpisodeFilter(outcome="failed"),
        EpisodeFilter(outcome="passed", agent="b"),
        EpisodeFilter(outcome="unknown"),
        EpisodeFilter(family="melt", task="sw:melt", split="train"),
        EpisodeFilter(outcome="failed", family="boil", batch="first"),
    ],
)
def test_a_listing_fills_in_what_its_filter_fixes_instead_of_reading_it(store, where):
    for number, success in enumerate([True, True, None, False, False, None]):
        family, agent = ("melt", "b") if number % 2 else ("boil", "a")
        add(store, f"e{number}", success, family=family, agent=agent)
    full = store.episodes(where)
    listed = store.listing(where)
    assert [e.id for e in listed] == [e.id for e in full] and full
    fields = ("task_id", "family", "split", "agent", "batch_id", "n_steps", "outcome")
    for shown, episode in zip(listed, full, strict=True):
        assert all(getattr(shown, f) == getattr(episode, f) for f in fields), shown
        assert type(shown.outcome.success) is type(episode.outcome.success)
    assert store.listing(where, limit=1, offset=1) == listed[1:2]
    read = store.listing_query(store.scoped(where)).sql.split(" FROM ")[0]
    for column, value in (("family", where.family), ("outcome_success", where.outcome)):
        assert (f"e.{column}" in read) == (value is None)


def test_replays_can_be_left_out_of_a_filter(store):
    from store import Batch, Episode, EpisodeFilter, Outcome, Task

    store.put_task(Task(id="t", environment="env"))
    for kind in ("run", "replay"):
        store.put_batch(Batch(id=kind, name=kind, kind=kind))
        store.add_episode(
            Episode(
                id=f"{kind}:e",
                task_id="t",
                agent="a",
                batch_id=kind,
                outcome=Outcome(success=False),
            ),
            [],
        )
    assert {e.id for e in store.iter_episodes(EpisodeFilter())} == {"run:e", "replay:e"}
    assert [e.id for e in store.iter_episodes(EpisodeFilter(replays=False))] == ["run:e"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(alphabet=st.sampled_from("aé€😀\n"), max_size=60),
    offset=st.integers(0, 70),
    chars=st.integers(0, 70),
    piece=st.integers(1, 9),
)
def test_a_long_text_read_in_pieces_gives_the_window_and_length_slicing_gives(
    store, monkeypatch, text, offset, chars, piece
):
    """Pieces of a few bytes cut characters of two, three and four bytes anywhere."""
    monkeypatch.setattr(texts, "PIECE", piece)
    store.conn.execute("DELETE FROM episodes")
    add(store, "t", False, n=1)
    store.conn.execute("UPDATE steps SET observation = ? WHERE episode_id = 't'", (text,))
    (cut,) = store.cut_steps("t", 0, 1, chars=chars, offset=offset)
    assert cut.step.observation == text[offset : offset + chars]
    assert cut.lengths["observation"] == len(text)
    assert store.step_text("t", 0, "observation", offset, chars) == text[offset : offset + chars]


def test_a_steps_agent_is_stored_indexed_where_set_and_read_back(store):
    add(store, "solo", False, n=1)
    store.put_task(Task(id="sw:chat", environment="x", family="chat", split="train"))
    steps = [
        Step(episode_id="chat", index=0, kind="message", role="user", content="2 + 2?"),
        Step(episode_id="chat", index=1, kind="message", agent="Coder", content="4"),
        Step(episode_id="chat", index=2, kind="message", agent="Critic", content="ok"),
    ]
    store.add_episode(Episode(id="chat", task_id="sw:chat", batch_id="b1"), steps)
    assert [s.agent for s in store.steps("chat")] == ["", "Coder", "Critic"]
    assert store.step("solo", 0).agent == ""
    plan = store.conn.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM steps WHERE agent = ? AND agent != ''", ("Coder",)
    ).fetchall()
    assert "steps_by_agent" in " ".join(str(tuple(r)) for r in plan)
    indexed = store.conn.execute(
        "SELECT count(*) FROM steps INDEXED BY steps_by_agent WHERE agent != ''"
    )
    assert indexed.fetchone()[0] == 2  # (single-agent steps are not in the index)


def test_cut_steps_carry_the_steps_agent(store):
    store.put_batch(Batch(id="b1", name="first"))
    store.put_task(Task(id="t", environment="x", family="f", split="train"))
    steps = [Step(episode_id="e", index=0, kind="message", agent="Coder", content="4")]
    store.add_episode(Episode(id="e", task_id="t", batch_id="b1"), steps)
    (cut,) = store.cut_steps("e", 0, 1)
    assert cut.step == store.step("e", 0) and cut.step.agent == "Coder"


def test_an_agent_filter_finds_the_episodes_an_agent_acted_in_and_searches_its_steps(store):
    add(store, "solo", False, agent="gpt")  # a single agent's run: its steps name no agent
    store.put_task(Task(id="sw:chat", environment="x", family="chat", split="train"))
    steps = [
        Step(episode_id="chat", index=0, kind="message", agent="Coder", content="zebra one"),
        Step(episode_id="chat", index=1, kind="message", agent="Critic", content="zebra two"),
    ]
    store.add_episode(Episode(id="chat", task_id="sw:chat", batch_id="b1", agent="m1"), steps)
    assert [e.id for e in store.episodes(EpisodeFilter(agent="Coder"))] == ["chat"]
    assert [e.id for e in store.episodes(EpisodeFilter(agent="gpt"))] == ["solo"]
    assert store.count_episodes(EpisodeFilter(agent="Critic")) == 1
    assert store.unmatched(EpisodeFilter(agent="Critic")) == {}
    assert store.distinct("agent") == ["Coder", "Critic", "gpt", "m1"]
    by_agent = {row.key: (row.episodes, row.failed) for row in store.stats("agent")}
    assert by_agent == {"gpt": (1, 1), "m1": (1, 0), "Coder": (1, 0), "Critic": (1, 0)}
    hits = store.search("zebra", EpisodeFilter(agent="Critic"))
    assert [(h.episode_id, h.index) for h in hits] == [("chat", 1)]
    assert len(store.search("zebra")) == 2
    plan = store.conn.execute(
        "EXPLAIN QUERY PLAN " + store.episode_query(store.scoped(EpisodeFilter(agent="gpt")))[0],
        store.episode_query(store.scoped(EpisodeFilter(agent="gpt")))[1],
    ).fetchall()
    assert "episodes_by_agent" in " ".join(str(tuple(r)) for r in plan)  # no agent acts: index
