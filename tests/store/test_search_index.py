"""The full-text index when an import fills it in bulk: same search results as row by row,
consistent after a failure or a rolled-back part, the per-row trigger back as it was."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from store import Batch, Episode, Step, Store, Task
from workbench.ingest import IngestError, import_paths

WORDS = [
    "kettle",
    "stove",
    "thermometer",
    "pot",
    "sink",
    "freezer",
    "door",
    "kitchen",
    "boil",
    "melt",
    "steam",
    "ice",
]


def steps_of(episode_id: str, n: int, rng: random.Random) -> list[dict]:
    said = lambda k: " ".join(rng.choices(WORDS, k=k))  # noqa: E731
    return [
        {
            "index": i,
            "kind": "action",
            "thought": said(3),
            "action": said(2),
            "observation": said(6),
        }
        for i in range(n)
    ]


def episode_line(number: int, rng: random.Random, steps: int = 6) -> dict:
    task = {"id": f"t{number % 3}", "environment": "env", "family": "boil", "split": "train"}
    episode = {"id": f"e{number}", "task_id": task["id"], "batch_id": "b"}
    batch = {"id": "b", "name": "b", "kind": "run"}
    return {
        "format": "trajectory-workbench",
        "version": 1,
        "task": task,
        "batch": batch,
        "episode": episode,
        "steps": steps_of(episode["id"], steps, rng),
    }


def write_jsonl(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def add_one_by_one(store: Store, lines: list[dict]) -> None:
    """The same episodes, each its own transaction: indexed by the per-row trigger."""
    for line in lines:
        store.put_batch(Batch.model_validate(line["batch"]))
        store.put_task(Task.model_validate(line["task"]))
        episode = Episode.model_validate(line["episode"])
        steps = [Step(episode_id=episode.id, **s) for s in line["steps"]]
        assert store.add_episode(episode, steps)


def hits(store: Store) -> list:
    return [store.search(query, limit=1000) for query in [*WORDS, "steam OR ice", "pot kitchen"]]


def integrity_ok(store: Store) -> bool:
    store.conn.execute("INSERT INTO steps_fts(steps_fts) VALUES('integrity-check')")
    return True


def schema(store: Store) -> list:
    return store.conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()


def test_bulk_import_then_search_finds_what_row_by_row_indexing_finds(tmp_path):
    rng = random.Random(7)
    lines = [episode_line(k, rng) for k in range(40)]
    source = write_jsonl(tmp_path / "runs.jsonl", lines)
    with Store(tmp_path / "bulk.db") as bulk, Store(tmp_path / "rows.db") as rows:
        fresh = schema(bulk)
        assert import_paths(bulk, [source]).episodes == 40
        add_one_by_one(rows, lines)
        assert hits(bulk) == hits(rows)
        assert sum(len(found) for found in hits(bulk)) > 240
        assert integrity_ok(bulk)
        assert schema(bulk) == fresh  # the trigger is back, with its exact text


def test_a_second_import_indexes_only_its_own_steps(tmp_path):
    rng = random.Random(3)
    first = [episode_line(k, rng) for k in range(20)]
    second = [episode_line(k, rng) for k in range(20, 30)]
    with Store(tmp_path / "w.db") as store:
        import_paths(store, [write_jsonl(tmp_path / "a.jsonl", first)])
        import_paths(store, [write_jsonl(tmp_path / "b.jsonl", second)])
        assert integrity_ok(store)
        with Store(tmp_path / "rows.db") as rows:
            add_one_by_one(rows, first + second)
            assert hits(store) == hits(rows)


def test_a_failed_import_leaves_the_index_consistent(tmp_path):
    rng = random.Random(11)
    with Store(tmp_path / "w.db") as store:
        import_paths(store, [write_jsonl(tmp_path / "ok.jsonl", [episode_line(0, rng)])])
        before = hits(store)
        lines = [episode_line(k, rng) for k in range(1, 15)]
        lines[-1]["steps"][2]["kind"] = "dance"  # the last record is bad: all rolls back
        with pytest.raises(IngestError, match=r"steps\.2\.kind"):
            import_paths(store, [write_jsonl(tmp_path / "bad.jsonl", lines)])
        assert integrity_ok(store)
        assert hits(store) == before
        assert store.count_episodes() == 1
        add_one_by_one(store, [episode_line(99, random.Random(1))])  # the trigger still works
        assert integrity_ok(store)
        assert any(hit.episode_id == "e99" for hit in store.search("kettle OR stove OR pot"))


def test_a_rolled_back_part_of_an_import_is_neither_stored_nor_indexed(store):
    rng = random.Random(5)
    first, dropped, last = (episode_line(k, rng) for k in range(3))
    with store.transaction():
        add_one_by_one(store, [first])  # inside a transaction: indexing deferred
        with pytest.raises(RuntimeError), store.transaction():
            add_one_by_one(store, [dropped])
            raise RuntimeError("this part fails")
        add_one_by_one(store, [last])
    assert integrity_ok(store)
    found = {hit.episode_id for found in hits(store) for hit in found}
    assert found == {"e0", "e2"}


def test_an_import_whose_first_episode_is_rolled_back_indexes_the_rest(store):
    """The rollback restores the trigger that the first episode dropped; the next drops it anew."""
    rng = random.Random(9)
    dropped, kept = episode_line(0, rng), episode_line(1, rng)
    fresh = schema(store)
    with store.transaction():
        with pytest.raises(RuntimeError), store.transaction():
            add_one_by_one(store, [dropped])
            raise RuntimeError("this part fails")
        add_one_by_one(store, [kept])
    assert integrity_ok(store)
    assert {hit.episode_id for found in hits(store) for hit in found} == {"e1"}
    assert schema(store) == fresh


def test_steps_of_an_import_are_searchable_once_it_commits(store):
    rng = random.Random(2)
    add_one_by_one(store, [episode_line(0, rng)])
    before = hits(store)
    with store.transaction():
        add_one_by_one(store, [episode_line(1, rng)])
        assert hits(store) == before  # the new steps are not in the index yet
    assert integrity_ok(store)
    assert {hit.episode_id for found in hits(store) for hit in found} == {"e0", "e1"}


def test_other_connections_see_the_trigger_during_an_import_and_index_after_it(db_path):
    rng = random.Random(4)
    with Store(db_path) as store:
        store.put_batch(Batch(id="b", name="b", kind="run"))
        store.put_task(Task(id="t0", environment="env", family="boil"))
        reader = sqlite3.connect(db_path, timeout=30)
        trigger = "SELECT count(*) FROM sqlite_master WHERE name = 'steps_fts_insert'"
        with store.transaction():
            add_one_by_one(store, [episode_line(0, rng)])
            assert store.conn.execute(trigger).fetchone()[0] == 0  # dropped in here...
            assert reader.execute(trigger).fetchone()[0] == 1  # ...never for anyone else
        # another writer, after the import, still indexes its rows through the trigger
        reader.execute(
            'INSERT INTO steps (episode_id, "index", kind, role, content, thought, action, '
            "observation, tool_name, tool_call_id) VALUES ('e0', 99, 'action', 'agent', '', '', "
            "'zebra', '', '', '')"
        )
        reader.commit()
        reader.close()
        assert [hit.index for hit in store.search("zebra")] == [99]
        assert integrity_ok(store)


def test_a_dry_run_leaves_schema_and_index_as_they_were(tmp_path):
    rng = random.Random(8)
    with Store(tmp_path / "w.db") as store:
        import_paths(store, [write_jsonl(tmp_path / "a.jsonl", [episode_line(0, rng)])])
        before, fresh = hits(store), schema(store)
        lines = [episode_line(k, rng) for k in range(1, 6)]
        report = import_paths(store, [write_jsonl(tmp_path / "b.jsonl", lines)], dry_run=True)
        assert report.episodes == 5
        assert (hits(store), schema(store)) == (before, fresh)
        assert integrity_ok(store)
