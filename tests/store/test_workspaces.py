"""Workspaces keep an experiment's episodes, analyses, specs and artifact versions apart, and
the v7 migration keeps every version and ledger row of an older database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store import (
    SCHEMA_VERSION,
    AnalysisRun,
    ArtifactVersion,
    Batch,
    Episode,
    EpisodeFilter,
    Gate,
    Store,
    Task,
)
from store.migrations import MIGRATIONS, migrate


def add_run(store: Store, batch: str, successes: list[bool]) -> None:
    store.put_batch(Batch(id=batch, name=batch, kind="run"))
    store.put_task(Task(id="scienceworld:boil:1", environment="scienceworld", family="boil"))
    for i, success in enumerate(successes):
        store.add_episode(
            Episode(
                id=f"{batch}:{i}",
                task_id="scienceworld:boil:1",
                agent="scripted",
                batch_id=batch,
                family="boil",
                outcome={"success": success},
            ),
            [],
        )


def version(name: str = "open-door-first") -> ArtifactVersion:
    return ArtifactVersion(artifact=name, version=1, kind="rule", contract={"name": name})


def test_each_workspace_sees_only_its_own_episodes(db_path: Path):
    with Store(db_path) as main, Store(db_path, workspace="evolve/x/gated") as other:
        add_run(main, "mine", [True, False])
        add_run(other, "theirs", [False, False, False])
        assert {e.id for e in main.episodes()} == {"mine:0", "mine:1"}
        assert other.count_episodes(EpisodeFilter(outcome="failed")) == 3
        assert main.summary().failed == 1
        assert [b.name for b in main.batches()] == ["mine"]
        assert main.distinct("batch") == ["mine"] and other.distinct("batch") == ["theirs"]
        assert [s.key for s in other.stats("batch")] == ["theirs"]
        # a filter may name another workspace explicitly; single lookups are global
        assert main.count_episodes(EpisodeFilter(workspace="evolve/x/gated")) == 3
        assert main.episode("theirs:0") is not None


def test_versions_number_activate_and_supersede_within_their_workspace(db_path: Path):
    with Store(db_path) as main, Store(db_path, workspace="evolve/x/gated") as other:
        mine = main.stage_version(version())
        theirs = [other.stage_version(version()) for _ in range(2)]
        assert mine.version == 1 and [v.version for v in theirs] == [1, 2]
        main.record_gate(mine.id, "replay", Gate(passed=True), "active")
        other.record_gate(theirs[1].id, "replay", Gate(passed=True), "active")
        # activating in one workspace leaves the other's active version alone
        assert [v.status for v in main.versions()] == ["active"]
        assert [v.status for v in other.versions()] == ["staged", "active"]
        assert main.artifact_names() == other.artifact_names() == ["open-door-first"]
        run = other.add_analysis_run(AnalysisRun(reasoner="heuristic", scope={}))
        assert main.analysis_runs() == [] and [r.id for r in other.analysis_runs()] == [run.id]


def test_migrating_a_v6_database_keeps_versions_parents_and_ledgers(tmp_path: Path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    assert migrate(conn, MIGRATIONS[:6]) == 6
    insert = (
        "INSERT INTO artifact_versions (artifact, version, kind, status, contract, parent, "
        "origin, cases, created_at) VALUES (?, ?, 'rule', ?, '{}', ?, 'hand', '[]', '2026-11-29T00:00:00+00:00')"
    )
    conn.execute(insert, ("a", 1, "superseded", None))
    conn.execute(insert, ("a", 2, "active", 1))
    conn.execute(
        'INSERT INTO replay_ledger (version_id, "case", role, fired) VALUES (2, "e1", "correction", 1)'
    )
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert [(v.version, v.status, v.parent) for v in store.versions()] == [
            (1, "superseded", None),
            (2, "active", 1),
        ]
        assert [(e.case, e.fired) for e in store.ledger(2)] == [("e1", True)]
        # the same artifact name may now be staged in another workspace
        with Store(path, workspace="evolve/y/gated") as other:
            assert other.stage_version(version("a")).version == 1
