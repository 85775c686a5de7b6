"""Store methods for specs, compile attempts, artifact versions and replay ledgers (mixed
into ``Store``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Literal

from store.analyses import _insert
from store.artifacts import (
    ArtifactVersion,
    CompileAttempt,
    Gate,
    InterventionSpec,
    LedgerEntry,
    VersionStatus,
)
from store.rows import from_row, to_row


class RepositoryTables:
    """Specs, attempts, artifact versions and the replay ledger. Needs ``conn``, ``_rows`` and
    ``transaction`` from :class:`store.db.Store`."""

    conn: sqlite3.Connection
    workspace: str

    # -- specs and attempts ----------------------------------------------------------------------

    def add_spec(
        self, spec: InterventionSpec, attempts: Sequence[CompileAttempt] = ()
    ) -> tuple[InterventionSpec, list[CompileAttempt]]:
        """Store a spec and its compile attempts together; returns them with ids."""
        with self.transaction():
            row = to_row(spec)
            del row["id"]
            row["workspace"] = self.workspace
            spec = spec.model_copy(update={"id": _insert(self.conn, "specs", row)})
            stored = []
            for attempt in attempts:
                row = to_row(attempt.model_copy(update={"spec_id": spec.id}))
                del row["id"]
                stored.append(
                    attempt.model_copy(
                        update={
                            "id": _insert(self.conn, "compile_attempts", row),
                            "spec_id": spec.id,
                        }
                    )
                )
        return spec, stored

    def specs(
        self, run_id: int | None = None, cluster_id: int | None = None
    ) -> list[InterventionSpec]:
        """The workspace's specs, newest first; optionally of one analysis run or covering one
        cluster."""
        clauses, params = ["workspace = ?"], [self.workspace]
        if run_id is not None:
            clauses.append("run_id = ?")
            params.append(run_id)
        if cluster_id is not None:
            clauses.append("EXISTS (SELECT 1 FROM json_each(specs.clusters) WHERE value = ?)")
            params.append(cluster_id)
        where = " AND ".join(clauses)
        return [
            from_row(InterventionSpec, r)
            for r in self._rows(f"SELECT * FROM specs WHERE {where} ORDER BY id DESC", params)
        ]

    def spec(self, spec_id: int) -> InterventionSpec | None:
        """The spec with this id."""
        rows = self._rows("SELECT * FROM specs WHERE id = ?", (spec_id,))
        return from_row(InterventionSpec, rows[0]) if rows else None

    def attempts(self, spec_id: int) -> list[CompileAttempt]:
        """A spec's compile attempts in runtime order."""
        rows = self._rows(
            "SELECT * FROM compile_attempts WHERE spec_id = ? ORDER BY position", (spec_id,)
        )
        return [from_row(CompileAttempt, r) for r in rows]

    def attempt(self, attempt_id: int) -> CompileAttempt | None:
        """The attempt with this id."""
        rows = self._rows("SELECT * FROM compile_attempts WHERE id = ?", (attempt_id,))
        return from_row(CompileAttempt, rows[0]) if rows else None

    # -- artifact versions ----------------------------------------------------------------------

    def stage_version(self, version: ArtifactVersion) -> ArtifactVersion:
        """Store a new staged version in the workspace; its number is one past the artifact's
        latest there."""
        with self.transaction():
            latest = self._rows(
                "SELECT coalesce(max(version), 0) FROM artifact_versions "
                "WHERE artifact = ? AND workspace = ?",
                (version.artifact, self.workspace),
            )[0][0]
            version = version.model_copy(update={"version": latest + 1, "status": "staged"})
            row = to_row(version)
            del row["id"]
            row["workspace"] = self.workspace
            return version.model_copy(update={"id": _insert(self.conn, "artifact_versions", row)})

    def versions(
        self,
        artifact: str | None = None,
        status: VersionStatus | None = None,
        spec_id: int | None = None,
    ) -> list[ArtifactVersion]:
        """The workspace's artifact versions by artifact name then version (optionally
        filtered)."""
        clauses, params = ["workspace = ?"], [self.workspace]
        if spec_id is not None:
            clauses.append("spec_id = ?")
            params.append(spec_id)
        if artifact is not None:
            clauses.append("artifact = ?")
            params.append(artifact)
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        where = " AND ".join(clauses)
        rows = self._rows(
            f"SELECT * FROM artifact_versions WHERE {where} ORDER BY artifact, version", params
        )
        return [from_row(ArtifactVersion, r) for r in rows]

    def version(self, version_id: int) -> ArtifactVersion | None:
        """The version with this id."""
        rows = self._rows("SELECT * FROM artifact_versions WHERE id = ?", (version_id,))
        return from_row(ArtifactVersion, rows[0]) if rows else None

    def record_gate(
        self,
        version_id: int,
        gate: Literal["contract", "replay"],
        verdict: Gate,
        status: VersionStatus | None = None,
    ) -> None:
        """Store a gate's verdict and, when given, the version's new status (one transaction).
        Activating a version supersedes the artifact's previously active one."""
        with self.transaction():
            self.conn.execute(
                f"UPDATE artifact_versions SET {gate}_gate = ? WHERE id = ?",
                (verdict.model_dump_json(), version_id),
            )
            if status is not None:
                self._set_status(version_id, status)

    def _set_status(self, version_id: int, status: VersionStatus) -> None:
        if status == "active":
            self.conn.execute(
                "UPDATE artifact_versions SET status = 'superseded' WHERE status = 'active' "
                "AND (artifact, workspace) = "
                "(SELECT artifact, workspace FROM artifact_versions WHERE id = ?)",
                (version_id,),
            )
        self.conn.execute(
            "UPDATE artifact_versions SET status = ? WHERE id = ?", (status, version_id)
        )

    def set_version_status(self, version_id: int, status: VersionStatus) -> None:
        """Change a version's status (activation supersedes the artifact's active version)."""
        with self.transaction():
            self._set_status(version_id, status)

    # -- replay ledger --------------------------------------------------------------------------

    def put_ledger(self, entry: LedgerEntry) -> LedgerEntry:
        """Insert or update the ledger row of ``(version, case)``."""
        row = to_row(entry)
        del row["id"]
        columns = ", ".join(f'"{c}"' for c in row)
        marks = ", ".join("?" * len(row))
        updates = ", ".join(
            f'"{c}" = excluded."{c}"' for c in row if c not in ("version_id", "case")
        )
        with self.transaction():
            self.conn.execute(
                f"INSERT INTO replay_ledger ({columns}) VALUES ({marks}) "
                f'ON CONFLICT (version_id, "case") DO UPDATE SET {updates}',
                list(row.values()),
            )
            found = self._rows(
                'SELECT id FROM replay_ledger WHERE version_id = ? AND "case" = ?',
                (entry.version_id, entry.case),
            )
        return entry.model_copy(update={"id": found[0][0]})

    def ledger(self, version_id: int) -> list[LedgerEntry]:
        """A version's paired replay cases: corrections first, then preservation."""
        rows = self._rows(
            "SELECT * FROM replay_ledger WHERE version_id = ? ORDER BY role, id", (version_id,)
        )
        return [from_row(LedgerEntry, r) for r in rows]

    def artifact_names(self) -> list[str]:
        """Every artifact that has a version in the workspace."""
        rows = self._rows(
            "SELECT DISTINCT artifact FROM artifact_versions WHERE workspace = ?",
            (self.workspace,),
        )
        return [r[0] for r in rows]
