"""The schema, as an ordered list of forward migrations.

A database records the migrations it has applied in ``schema_migrations``. Opening a database
applies the missing ones in order, each in its own transaction. Never edit a migration that
has shipped: add a new one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class Migration:
    """One step of the schema's history."""

    version: int
    name: str
    apply: Callable[[sqlite3.Connection], None]


def _script(*statements: str) -> Callable[[sqlite3.Connection], None]:
    def apply(conn: sqlite3.Connection) -> None:
        for statement in statements:
            conn.execute(statement)

    return apply


TRIAGE_ORDER = "coalesce(outcome_success, 0.5)"
"""Sort key that puts failures first; queries must use this exact expression to hit the indexes."""

_FTS_COLUMNS = "content, thought, action, observation"
_FTS_VALUES = "new.content, new.thought, new.action, new.observation"
_FTS_OLD_VALUES = "old.content, old.thought, old.action, old.observation"

FTS_COLUMNS = _FTS_COLUMNS
"""The step columns ``steps_fts`` indexes, as SQL."""

FTS_INSERT_TRIGGER = f"""
    CREATE TRIGGER steps_fts_insert AFTER INSERT ON steps BEGIN
        INSERT INTO steps_fts(rowid, {_FTS_COLUMNS}) VALUES (new.id, {_FTS_VALUES});
    END"""
"""The trigger that indexes each inserted step; a bulk insert drops it and fills the index
itself (``Store.add_episode``), then creates it again with this exact text."""

FOUNDATION = _script(
    """
    CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        params TEXT,
        created_at TEXT NOT NULL
    )""",
    """
    CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        environment TEXT NOT NULL,
        family TEXT NOT NULL,
        instruction TEXT NOT NULL,
        split TEXT NOT NULL,
        metadata TEXT
    )""",
    """
    CREATE TABLE episodes (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id),
        agent TEXT NOT NULL,
        batch_id TEXT NOT NULL REFERENCES batches(id),
        seed INTEGER,
        outcome_success INTEGER,
        outcome_score REAL,
        outcome_message TEXT NOT NULL,
        n_steps INTEGER NOT NULL,
        usage_prompt_tokens INTEGER,
        usage_completion_tokens INTEGER,
        usage_cost REAL,
        source_path TEXT NOT NULL,
        source_format TEXT NOT NULL,
        source_hash TEXT NOT NULL,
        source_record TEXT NOT NULL,
        family TEXT NOT NULL,
        split TEXT NOT NULL,
        started_at TEXT,
        ended_at TEXT,
        metadata TEXT
    )""",
    # Failures first: failed (0), unknown (0.5), passed (1); the rowid keeps insertion order.
    f"CREATE INDEX episodes_by_outcome ON episodes({TRIAGE_ORDER})",
    f"CREATE INDEX episodes_by_family ON episodes(family, {TRIAGE_ORDER})",
    f"CREATE INDEX episodes_by_agent ON episodes(agent, {TRIAGE_ORDER})",
    f"CREATE INDEX episodes_by_batch ON episodes(batch_id, {TRIAGE_ORDER})",
    f"CREATE INDEX episodes_by_task ON episodes(task_id, {TRIAGE_ORDER})",
    f"CREATE INDEX episodes_by_split ON episodes(split, {TRIAGE_ORDER})",
    """
    CREATE TABLE steps (
        id INTEGER PRIMARY KEY,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        "index" INTEGER NOT NULL,
        kind TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        thought TEXT NOT NULL,
        action TEXT NOT NULL,
        observation TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        reward REAL,
        timestamp TEXT,
        raw TEXT,
        UNIQUE (episode_id, "index")
    )""",
    f"""
    CREATE VIRTUAL TABLE steps_fts USING fts5(
        {_FTS_COLUMNS}, content='steps', content_rowid='id'
    )""",
    FTS_INSERT_TRIGGER,
    f"""
    CREATE TRIGGER steps_fts_delete AFTER DELETE ON steps BEGIN
        INSERT INTO steps_fts(steps_fts, rowid, {_FTS_COLUMNS})
        VALUES ('delete', old.id, {_FTS_OLD_VALUES});
    END""",
    f"""
    CREATE TRIGGER steps_fts_update AFTER UPDATE ON steps BEGIN
        INSERT INTO steps_fts(steps_fts, rowid, {_FTS_COLUMNS})
        VALUES ('delete', old.id, {_FTS_OLD_VALUES});
        INSERT INTO steps_fts(rowid, {_FTS_COLUMNS}) VALUES (new.id, {_FTS_VALUES});
    END""",
    """
    CREATE TABLE spans (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        note TEXT NOT NULL,
        author TEXT NOT NULL,
        confidence REAL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK (start <= "end")
    )""",
    "CREATE INDEX spans_by_episode ON spans(episode_id, start)",
    "CREATE INDEX spans_by_label ON spans(kind, label)",
    """
    CREATE TABLE sources (
        hash TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        format TEXT NOT NULL,
        batch_id TEXT,
        n_episodes INTEGER NOT NULL,
        imported_at TEXT NOT NULL
    )""",
)

LLM_CALLS = _script(
    """
    CREATE TABLE llm_calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        purpose TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_hash TEXT NOT NULL,
        request TEXT NOT NULL,
        response TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms REAL NOT NULL,
        cached INTEGER NOT NULL,
        error TEXT NOT NULL,
        episode_id TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX llm_calls_by_hash ON llm_calls(prompt_hash, error)",
    "CREATE INDEX llm_calls_by_purpose ON llm_calls(purpose, created_at)",
)

GOLD_PATHS = _script(
    """
    CREATE TABLE gold_paths (
        key TEXT PRIMARY KEY,
        actions TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
)

ANALYSES = _script(
    """
    CREATE TABLE analysis_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        reasoner TEXT NOT NULL,
        scope TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """
    CREATE TABLE analyses (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id INTEGER NOT NULL REFERENCES analysis_runs(id) ON DELETE CASCADE,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        failure TEXT NOT NULL,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        change TEXT NOT NULL,
        trigger TEXT NOT NULL,
        correction TEXT NOT NULL,
        confidence REAL NOT NULL,
        rationale TEXT NOT NULL,
        citations TEXT NOT NULL,
        contrast_id TEXT REFERENCES episodes(id) ON DELETE SET NULL,
        contrast_citations TEXT NOT NULL,
        contrastive INTEGER NOT NULL,
        span_id INTEGER REFERENCES spans(id) ON DELETE SET NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (run_id, episode_id)
    )""",
    """
    CREATE TABLE clusters (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id INTEGER NOT NULL REFERENCES analysis_runs(id) ON DELETE CASCADE,
        family TEXT NOT NULL,
        trigger TEXT NOT NULL,
        correction TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT NOT NULL
    )""",
    """
    CREATE TABLE cluster_members (
        cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
        PRIMARY KEY (cluster_id, analysis_id)
    )""",
    """
    CREATE TABLE cluster_contrasts (
        cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        PRIMARY KEY (cluster_id, episode_id)
    )""",
    "CREATE INDEX analyses_by_episode ON analyses(episode_id)",
    "CREATE INDEX clusters_by_run ON clusters(run_id, status)",
)

REPOSITORY = _script(
    """
    CREATE TABLE specs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id INTEGER NOT NULL REFERENCES analysis_runs(id) ON DELETE CASCADE,
        clusters TEXT NOT NULL,
        reasoner TEXT NOT NULL,
        mechanism TEXT NOT NULL,
        families TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        activation TEXT,
        scope TEXT,
        execution TEXT,
        sources TEXT NOT NULL,
        contrasts TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """
    CREATE TABLE compile_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        spec_id INTEGER NOT NULL REFERENCES specs(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        position INTEGER NOT NULL,
        closed INTEGER NOT NULL,
        checks TEXT NOT NULL,
        carried TEXT NOT NULL,
        missing TEXT NOT NULL,
        contract TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (spec_id, position)
    )""",
    """
    CREATE TABLE artifact_versions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        artifact TEXT NOT NULL,
        version INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        contract TEXT NOT NULL,
        spec_id INTEGER REFERENCES specs(id) ON DELETE SET NULL,
        attempt_id INTEGER REFERENCES compile_attempts(id) ON DELETE SET NULL,
        parent INTEGER REFERENCES artifact_versions(id) ON DELETE SET NULL,
        origin TEXT NOT NULL,
        cases TEXT NOT NULL,
        contract_gate TEXT,
        replay_gate TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (artifact, version)
    )""",
    """
    CREATE TABLE replay_ledger (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        version_id INTEGER NOT NULL REFERENCES artifact_versions(id) ON DELETE CASCADE,
        "case" TEXT NOT NULL,
        role TEXT NOT NULL,
        baseline_episode TEXT,
        candidate_episode TEXT,
        baseline_success INTEGER,
        candidate_success INTEGER,
        fired INTEGER NOT NULL,
        UNIQUE (version_id, "case")
    )""",
    "CREATE INDEX specs_by_run ON specs(run_id, status)",
    "CREATE INDEX versions_by_status ON artifact_versions(status, artifact)",
)

MANUAL_RULES = _script(
    """
    CREATE TABLE manual_rules (
        id TEXT PRIMARY KEY,
        type TEXT NOT NULL,
        content TEXT NOT NULL,
        example TEXT NOT NULL,
        validation_logs TEXT NOT NULL,
        form TEXT,
        deleted INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    """
    CREATE TABLE rule_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        rule_id TEXT NOT NULL REFERENCES manual_rules(id) ON DELETE CASCADE,
        op TEXT NOT NULL,
        actor TEXT NOT NULL,
        episode_id TEXT,
        before TEXT,
        after TEXT,
        at TEXT NOT NULL
    )""",
    "CREATE INDEX rule_events_by_rule ON rule_events(rule_id, id)",
    """
    CREATE TABLE manual_library (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        family TEXT NOT NULL,
        content TEXT NOT NULL,
        episode_id TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX manual_library_by_family ON manual_library(family, kind, id)",
    """
    CREATE TABLE manuals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        version INTEGER NOT NULL UNIQUE,
        markdown TEXT NOT NULL,
        rules TEXT NOT NULL,
        artifacts TEXT NOT NULL,
        reasoner TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
)

WORKSPACES = _script(
    # A workspace keeps one experiment's batches (and so its episodes), analyses, specs and
    # artifact versions apart from the researcher's own ('' is the main workspace).
    "ALTER TABLE batches ADD COLUMN workspace TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE analysis_runs ADD COLUMN workspace TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE specs ADD COLUMN workspace TEXT NOT NULL DEFAULT ''",
    # Version numbers become unique per workspace: SQLite cannot drop a table constraint, so
    # the versions and their ledger are rebuilt. They are copied out first (dropping a table
    # that others reference would cascade into their rows), then copied back in id order (a
    # parent version is always older than its revision).
    "CREATE TEMP TABLE versions_copy AS SELECT * FROM artifact_versions",
    "CREATE TEMP TABLE ledger_copy AS SELECT * FROM replay_ledger",
    "DROP TABLE replay_ledger",
    "DROP TABLE artifact_versions",
    """
    CREATE TABLE artifact_versions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        artifact TEXT NOT NULL,
        version INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        contract TEXT NOT NULL,
        spec_id INTEGER REFERENCES specs(id) ON DELETE SET NULL,
        attempt_id INTEGER REFERENCES compile_attempts(id) ON DELETE SET NULL,
        parent INTEGER REFERENCES artifact_versions(id) ON DELETE SET NULL,
        origin TEXT NOT NULL,
        cases TEXT NOT NULL,
        contract_gate TEXT,
        replay_gate TEXT,
        created_at TEXT NOT NULL,
        workspace TEXT NOT NULL DEFAULT '',
        UNIQUE (workspace, artifact, version)
    )""",
    """
    CREATE TABLE replay_ledger (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        version_id INTEGER NOT NULL REFERENCES artifact_versions(id) ON DELETE CASCADE,
        "case" TEXT NOT NULL,
        role TEXT NOT NULL,
        baseline_episode TEXT,
        candidate_episode TEXT,
        baseline_success INTEGER,
        candidate_success INTEGER,
        fired INTEGER NOT NULL,
        UNIQUE (version_id, "case")
    )""",
    "INSERT INTO artifact_versions (id, artifact, version, kind, status, contract, spec_id, "
    "attempt_id, parent, origin, cases, contract_gate, replay_gate, created_at) "
    "SELECT id, artifact, version, kind, status, contract, spec_id, attempt_id, parent, origin, "
    "cases, contract_gate, replay_gate, created_at FROM versions_copy ORDER BY id",
    "INSERT INTO replay_ledger SELECT * FROM ledger_copy ORDER BY id",
    "DROP TABLE versions_copy",
    "DROP TABLE ledger_copy",
    "CREATE INDEX versions_by_status ON artifact_versions(workspace, status, artifact)",
    "CREATE INDEX batches_by_workspace ON batches(workspace, id)",
    """
    CREATE TABLE evolutions (
        name TEXT PRIMARY KEY,
        params TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """
    CREATE TABLE checkpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        evolution TEXT NOT NULL REFERENCES evolutions(name) ON DELETE CASCADE,
        regime TEXT NOT NULL,
        position INTEGER NOT NULL,
        tasks INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        total INTEGER NOT NULL,
        sizes TEXT NOT NULL,
        stored INTEGER NOT NULL,
        used INTEGER NOT NULL,
        ledger INTEGER NOT NULL,
        lost INTEGER NOT NULL,
        recovered INTEGER NOT NULL,
        degradation REAL NOT NULL,
        outcomes TEXT NOT NULL,
        uses TEXT NOT NULL,
        admissions TEXT NOT NULL,
        batch_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (evolution, regime, position)
    )""",
)

SYNTHESIS = _script(
    """
    CREATE TABLE synth_tasks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        env TEXT NOT NULL,
        family TEXT NOT NULL,
        variation INTEGER NOT NULL,
        instruction TEXT NOT NULL,
        source TEXT NOT NULL,
        passage TEXT NOT NULL,
        entities TEXT NOT NULL,
        proposer TEXT NOT NULL,
        seed INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (env, family, variation, instruction)
    )""",
    """
    CREATE TABLE synth_examples (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        kind TEXT NOT NULL,
        task_id INTEGER REFERENCES synth_tasks(id) ON DELETE SET NULL,
        env TEXT NOT NULL,
        instruction TEXT NOT NULL,
        actions TEXT NOT NULL,
        observations TEXT NOT NULL,
        effects TEXT NOT NULL,
        start_state TEXT NOT NULL,
        end_state TEXT NOT NULL,
        relabeler TEXT NOT NULL,
        verdict TEXT NOT NULL,
        reason TEXT NOT NULL,
        checks TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (episode_id, start, "end", kind)
    )""",
    "CREATE INDEX synth_examples_by_verdict ON synth_examples(env, verdict, kind)",
)

LLM_CALL_TURNS = _script(
    # Which calls were correction turns, and which ended their question in a ModelError: what
    # makes a model's reliability countable per purpose.
    "ALTER TABLE llm_calls ADD COLUMN turn INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE llm_calls ADD COLUMN gave_up TEXT NOT NULL DEFAULT ''",
)

_COUNT_KEY = "batch_id, family, triage"
_COUNTED = "{row}.batch_id, {row}.family, coalesce({row}.outcome_success, 0.5)"
_COUNT_UP = f"""
        INSERT INTO episode_counts({_COUNT_KEY}, n) VALUES ({_COUNTED.format(row="new")}, 1)
        ON CONFLICT ({_COUNT_KEY}) DO UPDATE SET n = n + 1;"""
_COUNT_DOWN = """
        UPDATE episode_counts SET n = n - 1 WHERE batch_id = old.batch_id
        AND family = old.family AND triage = coalesce(old.outcome_success, 0.5);"""

EPISODE_COUNTS = _script(
    # How many episodes each batch holds per family and outcome, kept by triggers: what
    # ``ls --failed`` counts under its first page without walking every failed episode (a
    # count over an index still visits each entry; this sums a few rows per batch).
    """
    CREATE TABLE episode_counts (
        batch_id TEXT NOT NULL,
        family TEXT NOT NULL,
        triage REAL NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (batch_id, family, triage)
    ) WITHOUT ROWID""",
    f"CREATE TRIGGER episode_counts_insert AFTER INSERT ON episodes BEGIN {_COUNT_UP} END",
    f"CREATE TRIGGER episode_counts_delete AFTER DELETE ON episodes BEGIN {_COUNT_DOWN} END",
    "CREATE TRIGGER episode_counts_update AFTER UPDATE OF batch_id, family, outcome_success "
    f"ON episodes BEGIN {_COUNT_DOWN} {_COUNT_UP} END",
    f"INSERT INTO episode_counts({_COUNT_KEY}, n) SELECT {_COUNTED.format(row='episodes')}, "
    "count(*) FROM episodes GROUP BY 1, 2, 3",
)

_COUNT_EMPTIED = """
        DELETE FROM episode_counts WHERE batch_id = old.batch_id AND family = old.family
        AND triage = coalesce(old.outcome_success, 0.5) AND n <= 0;"""

EMPTY_COUNTS_REMOVED = _script(
    # A count that reaches zero is removed with it: a failed or staged import moved or deleted
    # its episodes and left a row of 0 for a batch that no longer exists.
    "DROP TRIGGER episode_counts_delete",
    "DROP TRIGGER episode_counts_update",
    "CREATE TRIGGER episode_counts_delete AFTER DELETE ON episodes BEGIN "
    f"{_COUNT_DOWN} {_COUNT_EMPTIED} END",
    "CREATE TRIGGER episode_counts_update AFTER UPDATE OF batch_id, family, outcome_success "
    f"ON episodes BEGIN {_COUNT_DOWN} {_COUNT_EMPTIED} {_COUNT_UP} END",
    "DELETE FROM episode_counts WHERE n <= 0",
)

STEP_AGENTS = _script(
    # The agent that spoke or acted at each step, in a log of several agents: empty for every
    # step stored before (a single agent's, as far as anything recorded). Indexed where it is
    # set, so single-agent imports maintain no index.
    "ALTER TABLE steps ADD COLUMN agent TEXT NOT NULL DEFAULT ''",
    "CREATE INDEX steps_by_agent ON steps(agent, episode_id) WHERE agent != ''",
)

SOURCE_METADATA = _script(
    # What a file shares with all the episodes read from it (AgentBench's overall.json
    # summary beside its runs), stored once with the file's row instead of in every episode's
    # metadata; NULL where a file shares nothing, as every file imported before did.
    "ALTER TABLE sources ADD COLUMN metadata TEXT",
)

ANALYSIS_AGENTS = _script(
    # The agent an analysis holds responsible (in a log of several agents; empty otherwise and
    # for every analysis stored before), and where its causal span came from: the analyzer's
    # own judgment, a person's span, or the scorer learned from people's spans.
    "ALTER TABLE analyses ADD COLUMN agent TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE analyses ADD COLUMN origin TEXT NOT NULL DEFAULT 'analyzer'",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "foundation", FOUNDATION),
    Migration(2, "llm-calls", LLM_CALLS),
    Migration(3, "gold-paths", GOLD_PATHS),
    Migration(4, "analyses", ANALYSES),
    Migration(5, "repository", REPOSITORY),
    Migration(6, "manual", MANUAL_RULES),
    Migration(7, "workspaces", WORKSPACES),
    Migration(8, "synthesis", SYNTHESIS),
    Migration(9, "llm-call-turns", LLM_CALL_TURNS),
    Migration(10, "episode-counts", EPISODE_COUNTS),
    Migration(11, "empty-counts-removed", EMPTY_COUNTS_REMOVED),
    Migration(12, "step-agents", STEP_AGENTS),
    Migration(13, "source-metadata", SOURCE_METADATA),
    Migration(14, "analysis-agents", ANALYSIS_AGENTS),
)
"""Every migration, oldest first. Versions are consecutive from 1."""

SCHEMA_VERSION = MIGRATIONS[-1].version


def current_version(conn: sqlite3.Connection) -> int:
    """The highest migration applied to ``conn``'s database (0 for a new database)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return row[0] or 0


def migrate(conn: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Apply every migration newer than the database, each in one transaction.

    Returns the schema version afterwards. Raises ``RuntimeError`` when the database was
    written by a newer workbench than this one.
    """
    version = current_version(conn)
    newest = migrations[-1].version
    if version > newest:
        raise RuntimeError(
            f"database schema version {version} is newer than this workbench knows ({newest}); "
            "upgrade trajectory-workbench"
        )
    for migration in migrations:
        if migration.version <= version:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the write lock.
            if current_version(conn) >= migration.version:
                conn.execute("COMMIT")
                continue
            migration.apply(conn)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, datetime.now(UTC).isoformat()),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        version = migration.version
    return version
