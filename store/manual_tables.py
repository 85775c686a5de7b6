"""Store methods for the rule system: rules and their event history (mixed into ``Store``)."""

from __future__ import annotations

import sqlite3

from store.analyses import _insert
from store.manual import LibraryEntry, LibraryKind, Manual, ManualRule, RuleEvent
from store.rows import from_row, to_row


class ManualTables:
    """Manual rules and rule events. Needs ``conn``, ``_rows`` and ``transaction`` from
    :class:`store.db.Store`."""

    conn: sqlite3.Connection

    def next_rule_id(self) -> str:
        """The id the next written rule gets (ids are never reused, even after a delete)."""
        rows = self._rows(
            "SELECT coalesce(max(CAST(substr(id, 6) AS INTEGER)), 0) FROM manual_rules"
        )
        return f"rule_{rows[0][0] + 1}"

    def put_rule(self, rule: ManualRule, event: RuleEvent) -> ManualRule:
        """Insert or replace a rule together with the event that changed it (one transaction)."""
        row = to_row(rule)
        columns = ", ".join(f'"{c}"' for c in row)
        marks = ", ".join("?" * len(row))
        updates = ", ".join(f'"{c}" = excluded."{c}"' for c in row if c != "id")
        with self.transaction():
            # an upsert, not INSERT OR REPLACE: a replace would delete the rule's events
            self.conn.execute(
                f"INSERT INTO manual_rules ({columns}) VALUES ({marks}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                list(row.values()),
            )
            event_row = to_row(event.model_copy(update={"rule_id": rule.id}))
            del event_row["id"]
            _insert(self.conn, "rule_events", event_row)
        return rule

    def manual_rules(self, include_deleted: bool = False) -> list[ManualRule]:
        """The rules in order of writing (deleted ones only when asked)."""
        where = "1" if include_deleted else "deleted = 0"
        rows = self._rows(
            f"SELECT * FROM manual_rules WHERE {where} ORDER BY CAST(substr(id, 6) AS INTEGER)"
        )
        return [from_row(ManualRule, r) for r in rows]

    def manual_rule(self, rule_id: str) -> ManualRule | None:
        """The rule with this id (deleted or not)."""
        rows = self._rows("SELECT * FROM manual_rules WHERE id = ?", (rule_id,))
        return from_row(ManualRule, rows[0]) if rows else None

    def rule_events(self, rule_id: str | None = None) -> list[RuleEvent]:
        """Changes in the order they were made, of one rule or of all."""
        where, params = ("rule_id = ?", [rule_id]) if rule_id else ("1", [])
        rows = self._rows(f"SELECT * FROM rule_events WHERE {where} ORDER BY id", params)
        return [from_row(RuleEvent, r) for r in rows]

    # -- skill and reflection libraries ----------------------------------------------------------

    def add_library_entry(self, entry: LibraryEntry) -> LibraryEntry:
        """Store a skill or reflection and return it with its id."""
        row = to_row(entry)
        del row["id"]
        with self.transaction():
            return entry.model_copy(update={"id": _insert(self.conn, "manual_library", row)})

    def library(
        self, kind: LibraryKind | None = None, family: str | None = None
    ) -> list[LibraryEntry]:
        """Library entries, newest first, optionally of one kind and task type."""
        clauses, params = [], []
        if kind is not None:
            clauses.append("kind = ?")
            params.append(kind)
        if family is not None:
            clauses.append("family = ?")
            params.append(family)
        where = " AND ".join(clauses) or "1"
        rows = self._rows(f"SELECT * FROM manual_library WHERE {where} ORDER BY id DESC", params)
        return [from_row(LibraryEntry, r) for r in rows]

    # -- manual versions --------------------------------------------------------------------------

    def add_manual(self, manual: Manual) -> Manual:
        """Store a formulated manual as the next version and return it with id and version."""
        with self.transaction():
            latest = self._rows("SELECT coalesce(max(version), 0) FROM manuals")[0][0]
            manual = manual.model_copy(update={"version": latest + 1})
            row = to_row(manual)
            del row["id"]
            return manual.model_copy(update={"id": _insert(self.conn, "manuals", row)})

    def manuals(self) -> list[Manual]:
        """Every manual version, oldest first."""
        return [from_row(Manual, r) for r in self._rows("SELECT * FROM manuals ORDER BY version")]

    def manual(self, version: int) -> Manual | None:
        """One manual version."""
        rows = self._rows("SELECT * FROM manuals WHERE version = ?", (version,))
        return from_row(Manual, rows[0]) if rows else None
