"""Imports staged in short transactions and published in one: what readers see meanwhile, what a
failure, a dry run or ``kill -9`` leaves, and how a writer that finds the lock taken waits."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from store import Batch, EpisodeFilter, Store
from store.staging import STAGING, clean_up
from tests.bulk_files import TASKS, bulk_line, write_bulk
from workbench.ingest import IngestError, import_paths
from workbench.ingest import imports as imports_module

WAITING = "waiting for the database lock held by another writer"


def raw_counts(db: Path) -> dict[str, int]:
    """Rows per table as stored (hidden ones included), read on a connection of its own."""
    conn = sqlite3.connect(db)
    try:
        tables = ("episodes", "steps", "tasks", "batches", "sources", "spans", "episode_counts")
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    finally:
        conn.close()


def hidden_batches(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM batches WHERE unicode(workspace) = 1").fetchone()[
            0
        ]
    finally:
        conn.close()


def healthy(db: Path) -> None:
    """Integrity, foreign keys and the full-text index all hold."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO steps_fts(steps_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


def fts_hits(db: Path, word: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT count(*) FROM steps_fts WHERE steps_fts MATCH ?", (word,)
        ).fetchone()[0]
    finally:
        conn.close()


class Peeking:
    """Progress that, each time the import advances, looks at the database through another
    connection, as a reader would."""

    def __init__(self, db: Path) -> None:
        self.reader = Store(db)
        self.staged_seen = 0
        """The most rows the episodes table held (hidden ones too) while nothing was visible."""

    def start(self, total: float | None, description: str = "") -> None:
        pass

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        staged = self.reader.conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
        if not staged:
            return
        assert self.reader.count_episodes() == 0
        assert self.reader.listing() == []
        assert self.reader.search("zebrafish") == []
        assert self.reader.episode("big-0000000") is None
        assert self.reader.batch("big-batch") is None
        assert self.reader.batches() == []
        assert self.reader.stats("family") == []
        assert self.reader.distinct("family") == []
        self.staged_seen = max(self.staged_seen, staged)

    def finish(self) -> None:
        pass


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few rows, so that a small file is staged in many transactions."""
    monkeypatch.setattr(imports_module, "CHUNK_ROWS", 8)
    monkeypatch.setattr("store.staging.TARGET_HOLD", 1e-9)  # never grow


def test_readers_see_none_of_an_import_until_it_is_published(store, tmp_path, small_chunks):
    source = write_bulk(tmp_path / "big.jsonl", 300, prefix="big")
    peek = Peeking(Path(store.path))
    report = import_paths(store, [source], progress=peek)
    assert report.episodes == 300
    assert peek.staged_seen >= 100  # staged in many chunks, all of them unseen
    assert store.locks.holds > 30
    reader = peek.reader
    assert reader.count_episodes() == 300
    assert reader.episode("big-0000000") is not None
    assert reader.batch("big-batch") is not None
    assert len(reader.search("zebrafish", limit=1000)) == 300
    assert hidden_batches(Path(store.path)) == 0
    healthy(Path(store.path))


def test_a_failed_import_removes_everything_it_staged(store, tmp_path, small_chunks):
    import_paths(store, [write_bulk(tmp_path / "before.jsonl", 20, prefix="old", word="kept")])
    before = raw_counts(Path(store.path))
    bad = tmp_path / "bad.jsonl"
    lines = [bulk_line("big", k, "zebrafish") for k in range(200)]
    bad.write_text("\n".join([*lines, '{"format": "trajectory-workbench", "version": 1}']) + "\n")
    with pytest.raises(IngestError, match="line 201"):
        import_paths(store, [bad])
    assert raw_counts(Path(store.path)) == before
    assert fts_hits(Path(store.path), "zebrafish") == 0
    assert fts_hits(Path(store.path), "kept") == 20
    healthy(Path(store.path))
    report = import_paths(store, [bad], skip_bad=True)  # the good records, once
    assert report.episodes == 200 and store.count_episodes() == 220


def test_a_dry_run_writes_nothing_and_needs_no_lock(store, tmp_path):
    source = write_bulk(tmp_path / "big.jsonl", 50, prefix="big")
    import_paths(store, [write_bulk(tmp_path / "some.jsonl", 10, prefix="big")])
    before = raw_counts(Path(store.path))
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock all along
    try:
        report = import_paths(store, [source, source], dry_run=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert report.dry_run and report.episodes == 40
    assert report.files[0].existing == 10 and report.files[1].status == "duplicate"
    assert raw_counts(Path(store.path)) == before
    assert store.locks.waits == 0


def test_episodes_for_a_batch_that_exists_are_moved_into_it_when_published(
    store, tmp_path, small_chunks
):
    store.put_batch(Batch(id="big-batch", name="big-batch", kind="import"))
    report = import_paths(store, [write_bulk(tmp_path / "big.jsonl", 100, prefix="big")])
    assert report.episodes == 100
    assert store.episode_ids("big-batch") == {f"big-{k:07d}" for k in range(100)}
    assert [b.id for b in store.batches()] == ["big-batch"]
    assert hidden_batches(Path(store.path)) == 0


def test_two_imports_into_one_new_batch_at_once_both_land_in_it(db_path, tmp_path, small_chunks):
    first = write_bulk(tmp_path / "a.jsonl", 100, prefix="a", batch="shared")
    second = write_bulk(tmp_path / "b.jsonl", 30, prefix="b", word="okapi", batch="shared")
    waited = threading.Event()
    reports = []

    def import_second() -> None:  # finds the batch being written by the first, and waits
        with Store(db_path, on_lock_wait=lambda retry, seconds: waited.set()) as other:
            reports.append(import_paths(other, [second]))

    other = threading.Thread(target=import_second)

    class StartSecond(Peeking):
        def advance(self, amount: float = 1, description: str | None = None) -> None:
            staged = self.reader.conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
            if staged and not other.is_alive() and not waited.is_set():
                other.start()
                assert waited.wait(600)  # a bound for a broken wait, not a speed check

    with Store(db_path) as store:
        assert import_paths(store, [first], progress=StartSecond(db_path)).episodes == 100
    other.join(600)
    assert reports[0].episodes == 30
    with Store(db_path) as store:
        assert store.count_episodes(EpisodeFilter(batch="shared")) == 130
        assert [b.id for b in store.batches()] == ["shared"]
    assert hidden_batches(db_path) == 0


def test_an_import_inside_a_transaction_is_that_transaction(store, tmp_path, small_chunks):
    with pytest.raises(RuntimeError), store.transaction():
        import_paths(store, [write_bulk(tmp_path / "big.jsonl", 40, prefix="big")])
        assert store.count_episodes() == 40
        raise RuntimeError("the caller's own failure")
    assert raw_counts(Path(store.path))["episodes"] == 0


def start_import(db: Path, source: Path, log: Path, **env: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "workbench", "import", "--db", str(db), str(source)]
    return subprocess.Popen(
        command,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),
        env={**os.environ, **env},
    )


def wait_until(condition, process: subprocess.Popen, log: Path) -> None:
    """Poll ``condition`` while ``process`` runs (a bound for a broken import, not a speed
    check)."""
    deadline = time.monotonic() + 600
    while not condition():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.parametrize("staged", [1, 8000])
def test_an_import_killed_with_sigkill_shows_nothing_and_a_rerun_imports_everything_once(
    db_path, tmp_path, staged
):
    source = write_bulk(tmp_path / "big.jsonl", 30_000, prefix="big")
    Store(db_path).close()
    log = tmp_path / "import.log"
    process = start_import(db_path, source, log)
    with Store(db_path) as reader:
        wait_until(lambda: raw_counts(db_path)["episodes"] >= staged, process, log)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert reader.count_episodes() == 0  # nothing of it visible, ever
        assert reader.search("zebrafish") == []
        assert hidden_batches(db_path) > 0
        healthy(db_path)
        rerun = subprocess.run(
            [sys.executable, "-m", "workbench", "import", "--db", str(db_path), str(source)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert rerun.returncode == 0, rerun.stderr
        assert "Traceback" not in rerun.stderr
        assert reader.count_episodes() == 30_000
        ids = [r[0] for r in reader.conn.execute("SELECT id FROM episodes")]
        assert len(set(ids)) == len(ids) == 30_000
    counts = raw_counts(db_path)
    assert counts["tasks"] == TASKS and counts["steps"] == 30_000 and counts["batches"] == 1
    assert fts_hits(db_path, "zebrafish") == 30_000
    assert hidden_batches(db_path) == 0
    assert not list(tmp_path.glob("*.lock"))  # the dead import's owner file went with it
    healthy(db_path)


@pytest.mark.slow
def test_clean_up_leaves_a_running_import_alone(db_path, tmp_path):
    source = write_bulk(tmp_path / "big.jsonl", 30_000, prefix="big")
    Store(db_path).close()
    log = tmp_path / "import.log"
    process = start_import(db_path, source, log)
    with Store(db_path) as other:
        wait_until(lambda: raw_counts(db_path)["episodes"] > 0, process, log)
        assert clean_up(other) == 0
        assert process.wait(timeout=900) == 0, log.read_text()
        assert other.count_episodes() == 30_000


def hold_lock(db: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_writer_that_finds_the_lock_taken_says_so_and_goes_on_when_it_is_free(db_path, tmp_path):
    Store(db_path).close()
    source = write_bulk(tmp_path / "small.jsonl", 10, prefix="small")
    holder = hold_lock(db_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "import", "--db", str(db_path), str(source)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []
    for line in process.stderr:  # the first report of waiting, then the lock is let go
        seen.append(line)
        if WAITING in line:
            break
    holder.execute("COMMIT")
    holder.close()
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, "".join(seen) + err
    assert any("(retry 1," in line for line in seen)
    assert "Traceback" not in "".join(seen) + err
    assert "imported 10 episode(s)" in out
    with Store(db_path) as store:
        assert store.count_episodes() == 10


def test_a_writer_gives_up_after_the_lock_timeout_in_one_line(db_path, tmp_path):
    Store(db_path).close()
    source = write_bulk(tmp_path / "small.jsonl", 10, prefix="small")
    holder = hold_lock(db_path)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "workbench", "import", "--db", str(db_path), str(source)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "WORKBENCH_LOCK_TIMEOUT": "2"},
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "stayed locked by another writer" in errors[0], done.stderr
    assert WAITING in done.stderr
    with Store(db_path) as store:
        assert store.count_episodes() == 0
        assert (
            store.conn.execute(
                "SELECT count(*) FROM batches WHERE workspace >= ?", (STAGING,)
            ).fetchone()[0]
            == 0
        )


def test_a_workspace_cannot_be_a_hidden_one(db_path):
    with pytest.raises(ValueError):
        Store(db_path, workspace=STAGING + "x")
    assert EpisodeFilter().where() == ("1", [])
