"""Records of repository-evolution experiments: an ordered learning stream, a fixed held-out
set, and one checkpoint per regime every few learning tasks (AutoRefine's RQ3), plus the store
methods that keep them (mixed into ``Store``)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from store.analyses import _insert
from store.records import Record, utcnow
from store.rows import from_row, to_row

Regime = Literal[
    "gated",
    "no-replay-gate",
    "no-preservation",
    "no-contract-gate",
    "no-closure",
    "rules-only",
    "no-subagent",
]
REGIMES: tuple[Regime, ...] = (
    "gated",
    "no-replay-gate",
    "no-preservation",
    "no-contract-gate",
    "no-closure",
    "rules-only",
    "no-subagent",
)
"""How a regime builds and uses its repository (AutoRefine's Table 2): ``gated`` is the full
method (first closure, both gates with preservation). Admission ablations: the contract gate
alone; both gates with the replay gate's preservation set left out; the replay gate alone.
Compilation ablation: the compiler picks the type directly, without closure checks. Type
masks: the gated repository of the same checkpoint with skills and subagents (or subagents)
taken away."""
DEFAULT_REGIMES: tuple[Regime, ...] = ("gated", "no-replay-gate", "no-preservation")
"""What ``workbench evolve`` runs unless told otherwise (the RQ3 comparison)."""
MASKS: dict[str, tuple[str, ...]] = {
    "rules-only": ("skill", "subagent"),
    "no-subagent": ("subagent",),
}
"""Masking regimes → the artifact kinds they take away from the gated repository."""


class Evolution(Record):
    """One experiment: its stream, held-out set, checkpoint interval and seeds."""

    name: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    """The configuration and both plans (every episode with its task and seed)."""
    created_at: datetime = Field(default_factory=utcnow)


class Checkpoint(Record):
    """The repository of one regime frozen after ``tasks`` learning tasks and scored on the
    held-out set. Position 0 is the artifact-free reference every regime shares."""

    id: int | None = None
    evolution: str
    regime: Regime
    position: int = Field(ge=0)
    tasks: int = Field(ge=0)
    """Learning tasks seen before the freeze."""
    passed: int = Field(ge=0)
    total: int = Field(ge=0)
    """Held-out episodes scored."""
    sizes: dict[str, int] = Field(default_factory=dict)
    """Active artifacts by kind (``rule``, ``skill``, ``subagent``)."""
    stored: int = Field(ge=0)
    """Active artifacts in all."""
    used: int = Field(ge=0)
    """Active artifacts invoked at least once during the held-out evaluation."""
    ledger: int = Field(ge=0)
    """Size of the baseline-success ledger: held-out cases the reference solved."""
    lost: int = Field(ge=0)
    """Ledger cases that passed at the previous checkpoint and fail at this one."""
    recovered: int = Field(ge=0)
    """Ledger cases that failed at the previous checkpoint and pass at this one."""
    degradation: float
    """Signed degradation, ``(lost - recovered) / ledger``: positive is a net loss of
    capability the reference had, negative a net recovery."""
    outcomes: dict[str, bool] = Field(default_factory=dict)
    """Held-out case (plan entry id) → success."""
    uses: dict[str, int] = Field(default_factory=dict)
    """Active artifact → held-out episodes in which it acted."""
    admissions: list[dict[str, Any]] = Field(default_factory=list)
    """What this stretch of learning did: one ``{artifact, version, kind, status, why}`` per
    candidate that faced admission."""
    batch_id: str
    """The held-out batch scored."""
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @property
    def use_rate(self) -> float | None:
        """Fraction of stored artifacts invoked (``None`` with an empty repository)."""
        return self.used / self.stored if self.stored else None


class EvolutionTables:
    """Evolution experiments and their checkpoints. Needs ``conn``, ``_rows`` and
    ``transaction`` from :class:`store.db.Store`."""

    conn: sqlite3.Connection

    def put_evolution(self, evolution: Evolution) -> Evolution:
        """Create an experiment, or return the stored one of that name unchanged."""
        with self.transaction():
            found = self.evolution(evolution.name)
            if found is not None:
                return found
            _insert(self.conn, "evolutions", to_row(evolution))
        return evolution

    def evolution(self, name: str) -> Evolution | None:
        rows = self._rows("SELECT * FROM evolutions WHERE name = ?", (name,))
        return from_row(Evolution, rows[0]) if rows else None

    def evolutions(self) -> list[Evolution]:
        """Every experiment, newest first."""
        rows = self._rows("SELECT * FROM evolutions ORDER BY created_at DESC, rowid DESC")
        return [from_row(Evolution, r) for r in rows]

    def put_checkpoint(self, checkpoint: Checkpoint) -> Checkpoint:
        """Store a checkpoint (replacing one at the same regime and position)."""
        row = to_row(checkpoint)
        del row["id"]
        with self.transaction():
            self.conn.execute(
                "DELETE FROM checkpoints WHERE evolution = ? AND regime = ? AND position = ?",
                (checkpoint.evolution, checkpoint.regime, checkpoint.position),
            )
            return checkpoint.model_copy(update={"id": _insert(self.conn, "checkpoints", row)})

    def checkpoints(self, evolution: str, regime: str | None = None) -> list[Checkpoint]:
        """An experiment's checkpoints by regime then position."""
        sql, params = "SELECT * FROM checkpoints WHERE evolution = ?", [evolution]
        if regime is not None:
            sql += " AND regime = ?"
            params.append(regime)
        rows = self._rows(sql + " ORDER BY regime, position", params)
        return [from_row(Checkpoint, r) for r in rows]
