"""What a file shares with all its episodes, stored once with its source record."""

from __future__ import annotations

import sqlite3

from store import Store
from store.migrations import MIGRATIONS, migrate


def test_a_source_s_metadata_is_stored_once_and_read_back(db_path):
    with Store(db_path) as store:
        store.add_source("h1", "runs.jsonl", "agentbench", None, 3, {"overall": {"total": 3}})
        store.add_source("h2", "other.jsonl", "agentbench", None, 1)
        assert store.source_metadata("h1") == {"overall": {"total": 3}}
        assert store.source_metadata("h2") == {} and store.source_metadata("nowhere") == {}


def test_a_database_from_before_source_metadata_stays_readable(db_path):
    conn = sqlite3.connect(db_path, isolation_level=None)
    migrate(conn, MIGRATIONS[:12])  # the schema before sources.metadata (13)
    conn.execute(
        "INSERT INTO sources VALUES ('h0', 'old.jsonl', 'workbench', NULL, 2, '2025-01-01')"
    )
    conn.close()
    with Store(db_path) as store:
        assert store.has_source("h0") and store.source_metadata("h0") == {}
        store.add_source("h1", "new.jsonl", "agentbench", None, 1, {"names": {"agent": "a"}})
        assert store.source_metadata("h1") == {"names": {"agent": "a"}}


def test_shared_metadata_with_a_lone_surrogate_is_stored_and_read_back(db_path):
    """A results file may hold a lone surrogate (``"\\ud800total"``): it crashed the publish."""
    shared = {"\ud800total": 3, "names": ["a\udfffb"]}
    with Store(db_path) as store:
        store.add_source("h2", "overall.json", "agentbench", None, 1, shared)
        assert store.source_metadata("h2") == shared
