"""Writers never crash each other: a 100,000-record import, a ScienceWorld run, an analysis and a
second import, all at once on one database file, each its own process."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store import Store
from tests.bulk_files import write_bulk
from workbench.ingest import SAMPLES, import_paths

WAITING = "waiting for the database lock held by another writer"


def workbench(db: Path, *args: str, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", *args, "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),
    )


def stored_episodes(db: Path) -> int:
    """Episode rows as stored, hidden ones included (an import has begun staging)."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.slow
def test_a_big_import_a_run_an_analysis_and_another_import_all_finish_with_all_their_data(
    db_path, tmp_path
):
    with Store(db_path) as store:
        samples = import_paths(store, [SAMPLES], batch="samples").episodes
    big = write_bulk(tmp_path / "big.jsonl", 100_000, prefix="big", word="zebrafish")
    second = write_bulk(tmp_path / "second.jsonl", 5_000, prefix="second", word="okapi")
    logs = {name: tmp_path / f"{name}.log" for name in ("big", "run", "analyze", "second")}
    started = {"big": workbench(db_path, "import", str(big), log=logs["big"])}
    deadline = time.monotonic() + 600  # a bound for a broken import, not a speed check
    while stored_episodes(db_path) == samples:  # the big import is staging: start the rest
        assert started["big"].poll() is None, logs["big"].read_text()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    run = ("run", "--family", "find-living-thing", "--episodes", "3", "--workers", "1")
    started["run"] = workbench(db_path, *run, "--seed", "3", "--batch", "beside", log=logs["run"])
    started["analyze"] = workbench(db_path, "analyze", log=logs["analyze"])
    started["second"] = workbench(db_path, "import", str(second), log=logs["second"])
    codes = {name: process.wait(timeout=3600) for name, process in started.items()}
    errors = {name: log.read_text() for name, log in logs.items()}
    assert codes == dict.fromkeys(started, 0), errors
    assert not [name for name, text in errors.items() if "Traceback" in text], errors
    waits = {name: text.count(WAITING) for name, text in errors.items()}
    print(f"lock waits reported: {waits}")
    with Store(db_path) as store:
        assert store.count_episodes() == samples + 100_000 + 5_000 + 3
        assert store.count_episodes(where=_batch("big-batch")) == 100_000
        assert store.count_episodes(where=_batch("second-batch")) == 5_000
        assert store.count_episodes(where=_batch("beside")) == 3
        assert store.analysis_runs()
        hits = store.conn.execute(
            "SELECT (SELECT count(*) FROM steps_fts WHERE steps_fts MATCH 'zebrafish'), "
            "(SELECT count(*) FROM steps_fts WHERE steps_fts MATCH 'okapi')"
        ).fetchone()
        assert tuple(hits) == (100_000, 5_000)
        hidden = "SELECT count(*) FROM batches WHERE unicode(workspace) = 1"
        assert store.conn.execute(hidden).fetchone()[0] == 0
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def _batch(name: str):
    from store import EpisodeFilter

    return EpisodeFilter(batch=name)
