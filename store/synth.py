"""Records of Learn-by-interact synthesis: tasks proposed from a world's documentation, and
examples (an instruction written backward for a span of a played trajectory) with the verdict
of every filter, plus the store methods that keep them (mixed into ``Store``).

Synthesized episodes are ordinary episodes in batches of the ``synth`` workspace, so they never
feed the researcher's own analysis, compilation or replay.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from store.records import Record, utcnow
from store.rows import from_row, to_row

SYNTH_WORKSPACE = "synth"
"""The workspace synthesized episodes are recorded in."""

ExampleKind = Literal["backward", "whole"]
"""``backward``: a span relabelled with what it achieved; ``whole``: a whole trajectory under
the instruction it was played with (the paper's ablation without backward construction)."""

Verdict = Literal["pending", "kept", "rejected"]


class SynthTask(Record):
    """An instruction proposed from a passage of a world's documentation, and the world task
    (family and variation) it is played in."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    env: str = Field(min_length=1)
    """The world it was proposed for."""

    family: str = Field(min_length=1)
    """The world's task family it is played in."""

    variation: int = Field(ge=0)
    """The world's variation it is played in."""

    instruction: str = Field(min_length=1)
    """What the agent is asked to do."""

    source: str = Field(min_length=1)
    """Which passage of the documentation it came from (its id, e.g. ``task:boil``)."""

    passage: str = ""
    """The passage itself, as the proposer read it."""

    entities: list[str] = Field(default_factory=list)
    """The objects and places of the world the instruction names."""

    proposer: str = Field(min_length=1)
    """Who proposed it: ``heuristic`` or ``openai:<model>``."""

    seed: int = 0
    """The seed the proposer drew it with."""

    created_at: datetime = Field(default_factory=utcnow)


class SynthExample(Record):
    """Steps ``start`` to ``end`` (inclusive) of an episode with an instruction that describes
    what they achieved, and what the filters made of it."""

    id: int | None = None
    """Row id; assigned by the store on insert."""

    episode_id: str = Field(min_length=1)
    """The synthesized episode the span comes from."""

    start: int = Field(ge=0)
    """First step of the span."""

    end: int = Field(ge=0)
    """Last step of the span (inclusive)."""

    kind: ExampleKind = "backward"

    task_id: int | None = None
    """The synthesized task whose episode it came from, if any."""

    env: str = Field(min_length=1)
    """The world it was played in."""

    instruction: str = Field(min_length=1)
    """What the span achieved, written after the fact."""

    actions: list[str] = Field(default_factory=list)
    """The span's actions, in order."""

    observations: list[str] = Field(default_factory=list)
    """What the world answered to each action."""

    effects: list[str] = Field(default_factory=list)
    """The observable effects the instruction claims (e.g. ``took apple``, ``reached
    kitchen``, ``score +10``)."""

    start_state: str = ""
    """A digest of the world's state before the span (duplicates share it and ``end_state``)."""

    end_state: str = ""
    """A digest of the world's state after the span."""

    relabeler: str = Field(min_length=1)
    """Who wrote the instruction: ``heuristic`` or ``openai:<model>``."""

    verdict: Verdict = "pending"
    """What the filters decided."""

    reason: str = ""
    """Why it was rejected (``duplicate of example 12``, ``replay did not reproduce: …``)."""

    checks: dict[str, Any] = Field(default_factory=dict)
    """Every filter's verdict: ``{"dedup": …, "replay": …, "committee": …}``."""

    created_at: datetime = Field(default_factory=utcnow)


class SynthTables:
    """Synthesized tasks and examples. Needs ``conn``, ``_rows`` and ``transaction`` from
    :class:`store.db.Store`."""

    conn: sqlite3.Connection

    def add_synth_tasks(self, tasks: list[SynthTask]) -> list[SynthTask]:
        """Insert tasks (one transaction); a task with the same world, family, variation and
        instruction as a stored one is not added again. Returns every task with its id."""
        out = []
        with self.transaction():
            for task in tasks:
                row = to_row(task)
                del row["id"]
                columns = ", ".join(f'"{c}"' for c in row)
                marks = ", ".join("?" * len(row))
                self.conn.execute(
                    f"INSERT OR IGNORE INTO synth_tasks ({columns}) VALUES ({marks})",
                    list(row.values()),
                )
                (task_id,) = self.conn.execute(
                    "SELECT id FROM synth_tasks WHERE env = ? AND family = ? AND variation = ? "
                    "AND instruction = ?",
                    (task.env, task.family, task.variation, task.instruction),
                ).fetchone()
                out.append(task.model_copy(update={"id": task_id}))
        return out

    def synth_tasks(self, env: str | None = None) -> list[SynthTask]:
        """Synthesized tasks in order of proposal (of one world, or all)."""
        where, params = ("env = ?", [env]) if env else ("1", [])
        rows = self._rows(f"SELECT * FROM synth_tasks WHERE {where} ORDER BY id", params)
        return [from_row(SynthTask, r) for r in rows]

    def synth_task(self, task_id: int) -> SynthTask | None:
        rows = self._rows("SELECT * FROM synth_tasks WHERE id = ?", (task_id,))
        return from_row(SynthTask, rows[0]) if rows else None

    def add_synth_examples(self, examples: list[SynthExample]) -> list[SynthExample]:
        """Insert examples (one transaction); an example of the same episode, span and kind as a
        stored one is not added again, so a resumed synthesis adds no duplicate. Returns the
        stored examples with their ids."""
        out = []
        with self.transaction():
            for example in examples:
                row = to_row(example)
                del row["id"]
                columns = ", ".join(f'"{c}"' for c in row)
                marks = ", ".join("?" * len(row))
                self.conn.execute(
                    f"INSERT OR IGNORE INTO synth_examples ({columns}) VALUES ({marks})",
                    list(row.values()),
                )
                stored = self.conn.execute(
                    "SELECT * FROM synth_examples WHERE episode_id = ? AND start = ? AND "
                    '"end" = ? AND kind = ?',
                    (example.episode_id, example.start, example.end, example.kind),
                ).fetchone()
                out.append(from_row(SynthExample, stored))
        return out

    def set_example_verdicts(self, examples: list[SynthExample]) -> None:
        """Store the verdict, reason and checks of examples (one transaction)."""
        with self.transaction():
            self.conn.executemany(
                "UPDATE synth_examples SET verdict = ?, reason = ?, checks = ? WHERE id = ?",
                [
                    (e.verdict, e.reason, to_row(e)["checks"], e.id)
                    for e in examples
                    if e.id is not None
                ],
            )

    def synth_examples(
        self,
        env: str | None = None,
        verdict: str | None = None,
        kind: str | None = None,
        episode_id: str | None = None,
    ) -> list[SynthExample]:
        """Examples in order of writing, filtered by world, verdict, kind or episode."""
        clauses, params = [], []
        for column, value in (
            ("env", env),
            ("verdict", verdict),
            ("kind", kind),
            ("episode_id", episode_id),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = " AND ".join(clauses) or "1"
        rows = self._rows(f"SELECT * FROM synth_examples WHERE {where} ORDER BY id", params)
        return [from_row(SynthExample, r) for r in rows]

    def synth_example(self, example_id: int) -> SynthExample | None:
        rows = self._rows("SELECT * FROM synth_examples WHERE id = ?", (example_id,))
        return from_row(SynthExample, rows[0]) if rows else None

    def synth_example_episodes(self) -> set[str]:
        """Ids of the episodes that have examples (of any kind)."""
        rows = self._rows("SELECT DISTINCT episode_id FROM synth_examples")
        return {r[0] for r in rows}

    def synth_example_worlds(self) -> list[str]:
        """The worlds that have examples, in alphabetical order."""
        return [r[0] for r in self._rows("SELECT DISTINCT env FROM synth_examples ORDER BY env")]

    def synth_example_counts(self) -> dict[str, dict[str, int]]:
        """Examples by episode id, then by verdict (one grouped query)."""
        rows = self._rows(
            "SELECT episode_id, verdict, count(*) FROM synth_examples GROUP BY episode_id, verdict"
        )
        counts: dict[str, dict[str, int]] = {}
        for episode_id, verdict, n in rows:
            counts.setdefault(episode_id, {})[verdict] = n
        return counts

    def synth_counts(self) -> dict[str, int]:
        """Examples by verdict (``kept``, ``rejected``, ``pending``)."""
        rows = self._rows("SELECT verdict, count(*) FROM synth_examples GROUP BY verdict")
        return {verdict: n for verdict, n in rows}
