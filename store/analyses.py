"""Store methods for analyses, their runs and their clusters (mixed into ``Store``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from store.records import Analysis, AnalysisRun, AnalysisStatus, Cluster, Span
from store.rows import from_row, to_row


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> int:
    columns = ", ".join(f'"{c}"' for c in row)
    marks = ", ".join("?" * len(row))
    cursor = conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values()))
    return int(cursor.lastrowid)


class AnalysisTables:
    """Analyses, analysis runs and clusters. Needs ``conn``, ``_rows``, ``transaction`` and
    ``_insert_span`` from :class:`store.db.Store`."""

    conn: sqlite3.Connection
    workspace: str

    # -- runs -----------------------------------------------------------------------------------

    def add_analysis_run(self, run: AnalysisRun) -> AnalysisRun:
        """Record the start of an analysis run and return it with its id."""
        row = to_row(run)
        del row["id"]
        row["workspace"] = self.workspace
        with self.transaction():
            return run.model_copy(update={"id": _insert(self.conn, "analysis_runs", row)})

    def analysis_runs(
        self, reasoner: str | None = None, scope: dict[str, Any] | None = None
    ) -> list[AnalysisRun]:
        """The workspace's analysis runs, newest first, optionally only those of one reasoner
        and scope."""
        runs = [
            from_row(AnalysisRun, r)
            for r in self._rows(
                "SELECT * FROM analysis_runs WHERE workspace = ? ORDER BY id DESC",
                (self.workspace,),
            )
        ]
        return [
            run
            for run in runs
            if (reasoner is None or run.reasoner == reasoner)
            and (scope is None or run.scope == scope)
        ]

    # -- analyses -------------------------------------------------------------------------------

    def add_analysis(self, analysis: Analysis, span: Span | None = None) -> Analysis:
        """Store an analysis and, with it in one transaction, its analyzer-authored span
        (without one, the analysis keeps the ``span_id`` it names, e.g. a person's span).
        An analysis the run already has of the episode is replaced; the span it wrote stays,
        as the record of what was proposed."""
        with self.transaction():
            self.conn.execute(
                "DELETE FROM analyses WHERE run_id = ? AND episode_id = ?",
                (analysis.run_id, analysis.episode_id),
            )
            span_id = self._insert_span(span) if span is not None else analysis.span_id
            row = to_row(analysis.model_copy(update={"span_id": span_id}))
            del row["id"]
            return analysis.model_copy(
                update={"id": _insert(self.conn, "analyses", row), "span_id": span_id}
            )

    def analyses(self, run_id: int | None = None, episode_id: str | None = None) -> list[Analysis]:
        """Analyses of one run and/or one episode, in the order they were made."""
        clauses, params = [], []
        if run_id is not None:
            clauses.append("run_id = ?")
            params.append(run_id)
        if episode_id is not None:
            clauses.append("episode_id = ?")
            params.append(episode_id)
        where = " AND ".join(clauses) or "1"
        return [
            from_row(Analysis, r)
            for r in self._rows(f"SELECT * FROM analyses WHERE {where} ORDER BY id", params)
        ]

    def analysis(self, analysis_id: int) -> Analysis | None:
        """The analysis with this id."""
        rows = self._rows("SELECT * FROM analyses WHERE id = ?", (analysis_id,))
        return from_row(Analysis, rows[0]) if rows else None

    def set_analysis_status(self, analysis_id: int, status: AnalysisStatus) -> None:
        """Record a human's verdict on an analysis."""
        with self.transaction():
            self.conn.execute("UPDATE analyses SET status = ? WHERE id = ?", (status, analysis_id))

    # -- clusters -------------------------------------------------------------------------------

    def replace_clusters(self, run_id: int, clusters: Sequence[Cluster]) -> list[Cluster]:
        """Make ``clusters`` the run's clusters (one transaction) and return them with ids.

        A cluster with the same family, trigger and correction as an existing one of the run
        keeps that one's id, so re-clustering unchanged analyses changes nothing a user sees.
        """
        existing = {(c.family, c.trigger, c.correction): c.id for c in self.clusters(run_id)}
        stored = []
        with self.transaction():
            for cluster in clusters:
                row = to_row(cluster)
                for derived in ("id", "members", "contrasts"):
                    del row[derived]
                row["run_id"] = run_id
                cluster_id = existing.pop(
                    (cluster.family, cluster.trigger, cluster.correction), None
                )
                if cluster_id is None:
                    cluster_id = _insert(self.conn, "clusters", row)
                else:
                    self.conn.execute(
                        "UPDATE clusters SET status = ?, reason = ? WHERE id = ?",
                        (row["status"], row["reason"], cluster_id),
                    )
                    for table in ("cluster_members", "cluster_contrasts"):
                        self.conn.execute(
                            f"DELETE FROM {table} WHERE cluster_id = ?", (cluster_id,)
                        )
                self.conn.executemany(
                    "INSERT INTO cluster_members VALUES (?, ?)",
                    [(cluster_id, m) for m in cluster.members],
                )
                self.conn.executemany(
                    "INSERT INTO cluster_contrasts VALUES (?, ?)",
                    [(cluster_id, e) for e in cluster.contrasts],
                )
                stored.append(cluster.model_copy(update={"id": cluster_id, "run_id": run_id}))
            self.conn.executemany(
                "DELETE FROM clusters WHERE id = ?", [(i,) for i in existing.values()]
            )
        return stored

    def clusters(self, run_id: int | None = None) -> list[Cluster]:
        """Clusters of a run (default: every run): supported first, then the largest."""
        where, params = ("c.run_id = ?", [run_id]) if run_id is not None else ("1", [])
        found = self._clusters_where(where, params)
        return sorted(found, key=lambda c: (c.status != "supported", -len(c.members), c.id or 0))

    def cluster(self, cluster_id: int) -> Cluster | None:
        """The cluster with this id."""
        return next(iter(c for c in self._clusters_where("c.id = ?", [cluster_id])), None)

    def _clusters_where(self, where: str, params: list[Any]) -> Iterator[Cluster]:
        rows = self._rows(
            "SELECT c.*, (SELECT json_group_array(analysis_id) FROM cluster_members m WHERE m.cluster_id = c.id) AS members, "
            "(SELECT json_group_array(episode_id) FROM cluster_contrasts k WHERE k.cluster_id = c.id) AS contrasts "
            f"FROM clusters c WHERE {where}",
            params,
        )
        return (self._cluster(r) for r in rows)

    @staticmethod
    def _cluster(row: sqlite3.Row) -> Cluster:
        data = dict(row)
        data["members"] = sorted(json.loads(data["members"]))
        data["contrasts"] = sorted(json.loads(data["contrasts"]))
        return Cluster.model_validate(data)
