"""Imports written out of sight in short transactions, and published in one.

An import of any size must not hold SQLite's write lock for long (every other writer waits for
it), yet readers must see all of it or none of it. So an import (:class:`StagedImport`)

1. writes its episodes in chunks, each its own short transaction, into batches of a hidden
   workspace of its own (:data:`store.db.HIDDEN`). No reader sees them: every listing, count,
   search and statistic is scoped to a workspace, a store cannot be opened in a hidden one,
   and reads by id skip hidden batches;
2. publishes them in one short transaction: a batch the import made itself is moved into the
   importing store's workspace (one row changes), episodes meant for a batch that existed
   already are moved into it from the hidden stand-in that held them (one indexed update), and
   the import's source files are recorded — only then does importing them again add nothing;
3. or, when it fails or is cancelled, deletes what it staged, again in short transactions.

An import that is killed leaves its hidden batches behind; the next import removes them
(:func:`clean_up`) before it reads anything, so running it again imports everything once. Each
import holds an advisory lock on a file beside the database while it runs
(``<db>-import-<key>.lock``, named in the import's hidden *anchor* batch), so a hidden import
whose file nobody holds is known to be dead.

A task is only ever inserted in the transaction that stores the first episode naming it (by an
import, the runner and the manual builder alike), so a task that no episode names is left over
from a removed import, and is removed with it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import math
import os
import secrets
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any, Literal

from store.db import _EPISODE_AND_TASK, _ID, _PUT_TASK, HIDDEN, Store, _insert_sql
from store.locks import retrying
from store.records import Batch, Episode, Span, Step, Task
from store.rows import column_names, row_values, rows_values, step_rows, to_row

STAGING = HIDDEN + "import "
"""The start of every staging workspace's name (then the import's key)."""
_STAGING_END = HIDDEN + "import!"
"""The first name after every staging workspace's (``!`` follows the space)."""
ANCHOR = "staging-"
"""The start of an import's anchor batch id (then its key): it records the import's owner
file and where its tasks start."""

TARGET_HOLD = 0.25
"""Seconds a chunk's transaction should hold the write lock, at most about (chunks are sized
from the last one's time to stay under it)."""

StagedEpisode = tuple[
    Batch, tuple[Any, ...], tuple[Any, ...], list[tuple[Any, ...]], Sequence[Span]
]
"""One episode to stage (:func:`staged`): the batch it belongs to, its task's row, its row, its
steps' rows and its spans."""
_TASK_ID, _TASK_FAMILY, _TASK_SPLIT, _TASK_INSTRUCTION = (
    column_names(Task).index(c) for c in ("id", "family", "split", "instruction")
)
_EPISODE_TASK = column_names(Episode).index("task_id")
_TASK_INSTRUCTION_OF = "SELECT instruction FROM tasks WHERE id = ?"
Source = tuple[str, str, str, str | None, int, dict[str, Any] | None]
"""A source file to record when publishing: hash, path, format, batch id, episodes added, and
what it shares with all its episodes (stored once, :meth:`store.Store.source_metadata`)."""

OnConflict = Literal["rename", "replace", "skip"]
"""What an import does with an episode whose id is stored already (or came earlier in the
import) with other content: ``rename`` stores it under the id with :data:`RENAMED` and a
number (``<id>~2``, the first such id not taken by other content), ``replace`` puts it in
the stored one's place (the stored one's steps, spans and analyses are deleted), ``skip``
keeps the stored one and leaves it out. Each is reported; none is silent."""
RENAMED = "~"
"""What separates an episode's id from the number of a renamed copy (``rename``)."""


@dataclass(frozen=True)
class Placed:
    """Where one episode of an import went."""

    status: Literal["new", "present", "updated", "renamed", "replaced", "kept"]
    """``new``: its id was free; ``present``: an episode with its id (or a renamed copy of
    it) has the same content, so nothing was added; ``updated``: it differs only in its
    outcome (read with a results file, or a newer report), which the stored one takes;
    ``renamed``, ``replaced``, ``kept``: its id held other content, and :data:`OnConflict`
    settled it that way."""
    episode_id: str
    """The id it is stored under (a renamed one's new id; otherwise its own)."""

    @property
    def added(self) -> bool:
        """Whether the import adds it."""
        return self.status in ("new", "renamed", "replaced")

    @property
    def conflict(self) -> bool:
        """Whether its id held other content."""
        return self.status in ("renamed", "replaced", "kept")


_DERIVED = ("id", "batch_id", "n_steps", "family", "split")
_SOURCE = ("source_path", "source_format", "source_hash", "source_record")
_COMPARED = [c for c in column_names(Episode) if c not in _DERIVED + _SOURCE]
"""The episode columns two imports of the same episode agree on: not where it was read
from, nor what the store derives (its id is compared apart, its steps are counted)."""
_COMPARED_AT = [column_names(Episode).index(c) for c in _COMPARED]
_OUTCOME = ("outcome_success", "outcome_score", "outcome_message", "metadata")
"""What reading an episode again with a results file (or a newer report) may change."""
_OUTCOME_AT = [column_names(Episode).index(c) for c in _OUTCOME]
_UPDATE_OUTCOME = f"UPDATE episodes SET {', '.join(f'{c} = ?' for c in _OUTCOME)} WHERE id = ?"
_STEP_COMPARED = [c for c in column_names(Step) if c != "episode_id"]
_SELECT_EPISODE = f"SELECT n_steps, {', '.join(_COMPARED)} FROM episodes WHERE id = ?"
_SELECT_STEPS = (
    f"SELECT {', '.join(chr(34) + c + chr(34) for c in _STEP_COMPARED)} FROM steps "
    'WHERE episode_id = ? ORDER BY "index"'
)
_WORKSPACE_OF = (
    "SELECT b.workspace FROM episodes e JOIN batches b ON b.id = e.batch_id WHERE e.id = ?"
)


Difference = Literal["same", "outcome", "other"]
"""How a stored episode differs from one read again: not at all, in its outcome alone (and
the metadata a results file joins), or otherwise."""


def difference(
    conn: sqlite3.Connection,
    episode_id: str,
    row: Sequence[Any],
    steps: Sequence[Sequence[Any]],
) -> Difference:
    """How the stored episode ``episode_id`` differs from what ``row`` and ``steps`` (rows as
    they would be stored) hold: the task, agent, times and usage, every step, then the outcome
    and metadata (where either was read from aside)."""
    stored = conn.execute(_SELECT_EPISODE, (episode_id,)).fetchone()
    if stored is None or stored[0] != len(steps):
        return "other"
    values = dict(zip(_COMPARED_AT, stored[1:], strict=True))
    if not all(_equal(values[at], row[at]) for at in _COMPARED_AT if at not in _OUTCOME_AT):
        return "other"
    cursor = conn.execute(_SELECT_STEPS, (episode_id,))
    if not all(
        all(_equal(a, b) for a, b in zip(old, new[1:], strict=True))
        for old, new in zip(cursor, steps, strict=False)
    ):
        return "other"
    return "same" if all(_equal(values[at], row[at]) for at in _OUTCOME_AT) else "outcome"


def same_content(
    conn: sqlite3.Connection,
    episode_id: str,
    row: Sequence[Any],
    steps: Sequence[Sequence[Any]],
) -> bool:
    """Whether the stored episode ``episode_id`` holds what ``row`` and ``steps`` hold."""
    return difference(conn, episode_id, row, steps) == "same"


def _present(found: Difference, row: Sequence[Any]) -> bool:
    """Whether an episode read again adds nothing to the stored one: the same, or differing
    only in an outcome it does not know (no success flag, no score)."""
    judged = row[_OUTCOME_AT[0]] is not None or row[_OUTCOME_AT[1]] is not None
    return found == "same" or (found == "outcome" and not judged)


def _equal(stored: Any, new: Any) -> bool:
    """A stored value against the one that would be stored (SQLite keeps a NaN as NULL)."""
    return stored == new or (_null(stored) and _null(new))


def _null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def content_digest(row: Sequence[Any], steps: Sequence[Sequence[Any]]) -> str:
    """A digest of what :func:`same_content` compares (a dry run keeps no rows)."""
    digest = hashlib.sha256(repr([row[at] for at in _COMPARED_AT]).encode())
    for step in steps:
        digest.update(repr(step[1:]).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _renamed(
    row: tuple[Any, ...], steps: list[tuple[Any, ...]], spans: Sequence[Span], episode_id: str
) -> tuple[tuple[Any, ...], list[tuple[Any, ...]], list[Span]]:
    """An episode's rows and spans under another id."""
    if row[_ID] == episode_id:
        return row, steps, list(spans)
    renamed = list(row)
    renamed[_ID] = episode_id
    moved = [(episode_id, *step[1:]) for step in steps]  # (the texts are not copied)
    return (
        tuple(renamed),
        moved,
        [span.model_copy(update={"episode_id": episode_id}) for span in spans],
    )


_INSERT_BATCH = _insert_sql(
    "batches", ["id", "name", "kind", "params", "created_at", "workspace"], "INSERT OR IGNORE"
)


def staged(
    batch: Batch,
    task: Task,
    episode: Episode,
    steps: Sequence[Step],
    spans: Sequence[Span],
    step_table: Sequence[tuple[Any, ...]] | None = None,
) -> StagedEpisode:
    """An episode ready to stage: its records turned into the rows that will be stored
    (its steps' rows from ``step_table`` when given: their values as ``store.rows``'s
    ``step_values`` checked them, for steps not made records).

    An import keeps a chunk's episodes until it stages them; kept as tuples of plain values
    rather than records, they cost Python's cyclic garbage collector nothing (it stops
    tracking such tuples), where thousands of live records made every full collection of a
    big import slower.
    """
    if step_table is not None:
        steps_rows = step_rows(step_table)
    else:
        steps_rows = [tuple(r) for r in rows_values(steps)]
    return batch, tuple(row_values(task)), tuple(row_values(episode)), steps_rows, spans


class _Taken(Exception):
    """A batch to stage into is being written by another import (raised inside a chunk's
    transaction, which is rolled back and tried again once that import is done)."""

    def __init__(self, batch_id: str) -> None:
        self.batch_id = batch_id


@dataclass
class _Target:
    """Where one batch's episodes are staged."""

    batch: Batch
    """The batch they belong to."""
    staged: str
    """The hidden batch holding them until publishing: ``batch`` itself when the import makes
    it, else a stand-in."""

    @property
    def made(self) -> bool:
        return self.staged == self.batch.id


class StagedImport:
    """One import's episodes, staged in short transactions and published in one (see the
    module). A dry run stages nothing: :meth:`add` only tells where each episode would go.

    Args:
        store: where the episodes go; published into its workspace.
        dry_run: write nothing.
        on_conflict: what to do with an episode whose id is stored already (or came earlier
            in this import) with other content (see :data:`OnConflict`).
    """

    def __init__(
        self, store: Store, dry_run: bool = False, on_conflict: OnConflict = "rename"
    ) -> None:
        self.store = store
        self.dry_run = dry_run
        self.on_conflict = on_conflict
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        self.key = f"{stamp}-{os.getpid()}-{secrets.token_hex(4)}"
        self.workspace = STAGING + self.key
        """The hidden workspace of this import's batches."""
        self.anchor = ANCHOR + self.key
        self._targets: dict[str, _Target] = {}
        self._seen: dict[str, str] = {}
        """The episodes a dry run has counted as added: their content's digest by id."""
        self._replacing: dict[str, str] = {}
        """Stored episodes this import replaces when it is published: the hidden id their
        replacement is staged under, by id."""
        self._updates: dict[str, tuple[Any, ...]] = {}
        """Stored episodes whose outcome this import updates when it is published: the new
        outcome's values (:data:`_OUTCOME`), by id."""
        self._stand_ins = 0
        self._owner: IO[bytes] | None = None
        self._opened = False

    # -- staging ------------------------------------------------------------------------------

    def add(self, chunk: list[StagedEpisode], large: bool = False) -> list[Placed]:
        """Stage a chunk of episodes in one transaction; for each, where it went: see
        :class:`Placed` (an episode whose id is stored already, or came earlier in this
        import, is present when its content is the same, else a conflict that
        ``on_conflict`` settles).

        With ``large`` (a record of many megabytes among them), ``chunk`` is emptied once its
        rows are inserted, before the transaction commits (indexing them for search takes
        memory of their size again: their Python values are freed first, and so are SQLite's
        copies of the last rows), and the page cache is kept small (:meth:`Store.lean`); a
        chunk of one episode hands its step rows over to SQLite value by value
        (``Store._insert_rows``), so that a big text is not in memory three times (Python's,
        SQLite's bound copy, the record it writes). Nothing reads the rows again: a chunk is
        tried again only when a batch it writes to is taken (:class:`_Taken`), which is found
        while its episodes are added, before their rows are inserted.
        """
        if self.dry_run:
            return [self._placed_dry(row, steps) for _, _, row, steps, _ in chunk]
        if not self._opened:
            self._open()
        while True:
            made: dict[str, _Target] = {}  # the targets this chunk makes, kept if it commits
            replacing: dict[str, str] = {}  # (the same)
            updates: dict[str, tuple[Any, ...]] = {}  # (the same)
            try:
                lean = self.store.lean() if large else contextlib.nullcontext()
                with lean, self.store.transaction():
                    hand_over = large and len(chunk) == 1
                    changes = (made, replacing, updates)
                    placed = [self._add(changes, *staged, hand_over) for staged in chunk]
                    if large:
                        chunk.clear()
                        self.store._unbind()
            except _Taken as taken:
                if self.store._depth:  # inside the caller's transaction: waiting would deadlock
                    raise sqlite3.OperationalError("database is locked") from None
                self._wait_for(taken.batch_id)
                continue
            self._targets.update(made)
            self._replacing.update(replacing)
            self._updates.update(updates)
            return placed

    def _add(
        self,
        changes: tuple[dict[str, _Target], dict[str, str], dict[str, tuple[Any, ...]]],
        batch: Batch,
        task: tuple[Any, ...],
        row: tuple[Any, ...],
        steps: list[tuple[Any, ...]],
        spans: Sequence[Span],
        hand_over: bool = False,
    ) -> Placed:
        conn = self.store.conn
        made, replacing, updates = changes
        placed = Placed("new", row[_ID])
        found = conn.execute(_EPISODE_AND_TASK, (row[_ID], task[_TASK_ID])).fetchone()
        if found[1] is not None and (other := _other_task(conn, task)) is not None:
            task, row = other, _with_task(row, other[_TASK_ID])
            found = conn.execute(_EPISODE_AND_TASK, (row[_ID], task[_TASK_ID])).fetchone()
        if found[0]:
            placed = self._conflict(replacing, updates, row, steps)
            if not placed.added:
                return placed
            staged_as = self._staged_as(replacing, placed.episode_id)
            row, steps, spans = _renamed(row, steps, spans, staged_as)
            found = conn.execute(_EPISODE_AND_TASK, (staged_as, task[_TASK_ID])).fetchone()
        target = self._targets.get(batch.id) or made.get(batch.id)
        if target is None:  # (a batch is made only for an episode that goes into it)
            target = made[batch.id] = self._target(batch)
        if found[1] is None:  # stored with its first episode (see the module)
            conn.execute(_PUT_TASK, task)
            found = (0, task[_TASK_FAMILY], task[_TASK_SPLIT])
        # No savepoint of its own: a failure rolls the whole chunk back.
        store = self.store
        store._insert_rows(
            row, steps, len(steps), spans, target.staged, found, hand_over, defer=True
        )
        return placed

    def _conflict(
        self,
        replacing: dict[str, str],
        updates: dict[str, tuple[Any, ...]],
        row: tuple[Any, ...],
        steps: list[tuple[Any, ...]],
    ) -> Placed:
        """Where an episode goes whose id is taken (inside the chunk's transaction): nowhere
        when the episode holding it has the same content (or, renamed, one of its renamed
        copies) or is to be kept; into its outcome when only the outcome differs (and the new
        one says how it went); else under another id, or in its place (what ``on_conflict``
        says)."""
        conn, episode_id = self.store.conn, row[_ID]
        current = self._staged_as(replacing, episode_id)
        found = difference(conn, current, row, steps)
        if _present(found, row):
            return Placed("present", episode_id)
        workspace = conn.execute(_WORKSPACE_OF, (current,)).fetchone()[0]
        if found == "outcome" and workspace == self.workspace:  # staged by this import
            conn.execute(_UPDATE_OUTCOME, (*(row[at] for at in _OUTCOME_AT), current))
            return Placed("updated", episode_id)
        if found == "outcome" and not workspace.startswith(HIDDEN):
            updates[episode_id] = tuple(row[at] for at in _OUTCOME_AT)
            return Placed("updated", episode_id)
        if self.on_conflict == "skip" or (
            workspace.startswith(HIDDEN) and workspace != self.workspace
        ):  # (another import's, not published yet: left to it)
            return Placed("kept", episode_id)
        if self.on_conflict == "replace":
            if workspace == self.workspace:  # staged by this import: replaced at once
                self.store._index_deferred()  # (its steps may not be indexed yet)
                conn.execute("DELETE FROM episodes WHERE id = ?", (current,))
            else:  # replaced when this import is published
                replacing[episode_id] = f"{HIDDEN}{self.key} {episode_id}"
            return Placed("replaced", episode_id)
        for number in itertools.count(2):
            renamed = f"{episode_id}{RENAMED}{number}"
            if conn.execute("SELECT 1 FROM episodes WHERE id = ?", (renamed,)).fetchone() is None:
                return Placed("renamed", renamed)
            if same_content(conn, renamed, row, steps):
                return Placed("present", renamed)
        raise AssertionError("unreachable")  # pragma: no cover

    def _target(self, batch: Batch) -> _Target:
        """Where ``batch``'s episodes go (inside the chunk's transaction): into a stored batch
        of its id (else of its name), or one it makes."""
        row = self.store.conn.execute(
            "SELECT id, workspace FROM batches WHERE id = ?1 OR name = ?2 "
            "ORDER BY id != ?1 LIMIT 1",
            (batch.id, batch.name),
        ).fetchone()
        if row is not None and row[1].startswith(HIDDEN):
            raise _Taken(row[0])  # (never this import's own: those are known targets)
        if row is None:  # made by this import: hidden until it is published
            self._insert_batch(batch)
            return _Target(batch, batch.id)
        if row[0] != batch.id:  # the name is another batch's: the episodes go there
            batch = batch.model_copy(update={"id": row[0]})
        self._stand_ins += 1
        stand_in = f"{self.anchor}-{self._stand_ins}"
        self._insert_batch(Batch(id=stand_in, name=stand_in, kind=batch.kind))
        return _Target(batch, stand_in)

    def _insert_batch(self, batch: Batch, params: dict | None = None) -> None:
        row = to_row(batch.model_copy(update={"params": params}) if params else batch)
        values = [row[c] for c in ("id", "name", "kind", "params", "created_at")]
        self.store.conn.execute(_INSERT_BATCH, [*values, self.workspace])

    def batch_id(self, batch_id: str) -> str:
        """The id of the stored batch that the episodes staged for ``batch_id`` go into
        (another one when a stored batch had its name)."""
        target = self._targets.get(batch_id)
        return target.batch.id if target is not None else batch_id

    def _wait_for(self, batch_id: str) -> None:
        """Wait (reported, bounded) until no other import is writing ``batch_id``."""

        def other_done() -> None:
            row = self.store.conn.execute(
                "SELECT workspace FROM batches WHERE id = ?", (batch_id,)
            ).fetchone()
            if row is not None and row[0].startswith(HIDDEN):
                clean_up(self.store)  # unless it is dead
                raise sqlite3.OperationalError("database is locked")  # waited for like the lock

        store = self.store
        retrying(other_done, store.path, store.locks, store.on_lock_wait)

    def _staged_as(self, replacing: dict[str, str], episode_id: str) -> str:
        """The id an episode of this id is staged under (another one when it replaces)."""
        return replacing.get(episode_id) or self._replacing.get(episode_id) or episode_id

    def _placed_dry(self, row: tuple[Any, ...], steps: list[tuple[Any, ...]]) -> Placed:
        """Where a dry run's episode would go (as :meth:`_conflict` says, from the visible
        episodes and the earlier ones of this import; a renamed id is not looked for)."""
        episode_id, digest = row[_ID], content_digest(row, steps)
        if episode_id in self._seen:
            found: Difference = "same" if self._seen[episode_id] == digest else "other"
        elif self.store.episode(episode_id) is not None:
            found = difference(self.store.conn, episode_id, row, steps)
        else:
            self._seen[episode_id] = digest
            return Placed("new", episode_id)
        if _present(found, row):
            return Placed("present", episode_id)
        if found == "outcome":
            return Placed("updated", episode_id)
        if self.on_conflict == "rename":
            return Placed("renamed", f"{episode_id}{RENAMED}2")
        return Placed("kept" if self.on_conflict == "skip" else "replaced", episode_id)

    def _open(self) -> None:
        """Take the owner file and write the anchor batch."""
        if self.store.path != ":memory:":
            self._owner = _hold(_owner_path(self.store, self.key))
            if self._owner is None:
                raise RuntimeError(f"cannot lock {_owner_path(self.store, self.key)}")
        with self.store.transaction():
            tasks_from = self.store.conn.execute(
                "SELECT coalesce(max(rowid), 0) + 1 FROM tasks"
            ).fetchone()[0]
            params = {"owner": self.key, "tasks_from": tasks_from}
            self._insert_batch(Batch(id=self.anchor, name=self.anchor), params)
        self._opened = True

    # -- the end ------------------------------------------------------------------------------

    def publish(self, sources: Iterable[Source] = ()) -> None:
        """Make everything staged visible and record the sources, in one transaction."""
        if self.dry_run:
            return
        store = self.store
        with store.transaction():
            conn = store.conn
            if self._replacing:
                self._swap_replaced()
            for episode_id, outcome in self._updates.items():
                conn.execute(_UPDATE_OUTCOME, (*outcome, episode_id))
            for target in self._targets.values():
                if target.made:
                    conn.execute(
                        "UPDATE batches SET workspace = ? WHERE id = ?",
                        (store.workspace, target.batch.id),
                    )
                    continue
                if (
                    store.conn.execute(
                        "SELECT 1 FROM batches WHERE id = ?", (target.batch.id,)
                    ).fetchone()
                    is None
                ):  # removed while this import ran: stored again
                    store.put_batch(target.batch)
                conn.execute(
                    "UPDATE episodes SET batch_id = ? WHERE batch_id = ?",
                    (target.batch.id, target.staged),
                )
                conn.execute("DELETE FROM batches WHERE id = ?", (target.staged,))
            for source in sources:
                store.add_source(*source)
            conn.execute("DELETE FROM batches WHERE id = ?", (self.anchor,))
        self._release()

    def _swap_replaced(self) -> None:
        """Delete the stored episodes this import replaces (with their steps, spans and
        analyses) and give their replacements their ids (inside the publishing
        transaction; foreign keys are checked when it commits)."""
        conn = self.store.conn
        conn.execute("PRAGMA defer_foreign_keys = ON")
        for episode_id, staged_as in self._replacing.items():
            conn.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
            for table, column in (
                ("episodes", "id"),
                ("steps", "episode_id"),
                ("spans", "episode_id"),
            ):
                conn.execute(
                    f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (episode_id, staged_as)
                )

    def discard(self) -> None:
        """Remove everything staged (in short transactions)."""
        if self._opened:
            _remove(self.store, self.workspace)
        self._release()

    def _release(self) -> None:
        self._opened = False
        if self._owner is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._owner.name)
            self._owner.close()
            self._owner = None


def _owner_path(store: Store, key: str) -> str:
    return f"{store.path}-import-{key}.lock"


def _hold(path: str) -> IO[bytes] | None:
    """The file at ``path`` (made if missing) under this process's exclusive advisory lock;
    ``None`` when another process holds it. The lock goes when the file is closed or the
    process ends, however it ends."""
    handle = open(path, "ab")  # noqa: SIM115 - held open for the import's length
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def interrupted(store: Store) -> list[str]:
    """Keys of the staged imports in the database whose process is gone (their owner file is
    not locked); the caller's own import is never one of them."""
    rows = store.conn.execute(
        "SELECT params FROM batches WHERE workspace >= ? AND workspace < ? AND id LIKE ?",
        (STAGING, _STAGING_END, ANCHOR + "%"),
    ).fetchall()
    dead = []
    for (params,) in rows:
        key = json.loads(params)["owner"]
        if store.path == ":memory:":
            continue  # a private database: the import that staged it is this process's
        owner = _hold(_owner_path(store, key))
        if owner is not None:
            owner.close()  # (removing it waits for the lock again, see clean_up)
            dead.append(key)
    return dead


def clean_up(store: Store) -> int:
    """Remove the staged imports of processes that are gone; how many there were."""
    removed = 0
    for key in interrupted(store):
        owner = _hold(_owner_path(store, key))
        if owner is None:
            continue  # another process is removing it
        try:
            _remove(store, STAGING + key)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(owner.name)
            owner.close()
        removed += 1
    return removed


def _remove(store: Store, workspace: str) -> None:
    """Delete a staging workspace's episodes (with their steps and spans), the tasks no episode
    names any more that were stored after it began, and its batches, in short transactions."""
    conn = store.conn
    row = conn.execute(
        "SELECT params FROM batches WHERE workspace = ? AND id LIKE ?", (workspace, ANCHOR + "%")
    ).fetchone()
    if row is None:
        return  # removed already
    tasks_from = int(json.loads(row[0])["tasks_from"])
    chunk = 64
    while True:
        with store.transaction():
            deleted = conn.execute(
                "DELETE FROM episodes WHERE rowid IN (SELECT e.rowid FROM episodes e WHERE "
                "e.batch_id IN (SELECT id FROM batches WHERE workspace = ?) LIMIT ?)",
                (workspace, chunk),
            ).rowcount
        chunk = next_size(chunk, store.locks.last)
        if not deleted:
            break
    last = conn.execute("SELECT coalesce(max(rowid), 0) FROM tasks").fetchone()[0]
    for start in range(tasks_from, last + 1, 5000):
        with store.transaction():
            conn.execute(
                "DELETE FROM tasks WHERE rowid >= ? AND rowid < ? AND NOT EXISTS "
                "(SELECT 1 FROM episodes WHERE task_id = tasks.id)",
                (start, start + 5000),
            )
    with store.transaction():
        conn.execute("DELETE FROM batches WHERE workspace = ?", (workspace,))


def next_size(size: int, held: float, largest: int = 1 << 16) -> int:
    """The next chunk's size (in rows of any kind), from the last one's ``size`` and the
    seconds its transaction held the lock: halved above :data:`TARGET_HOLD`, doubled below a
    quarter of it."""
    if held > TARGET_HOLD:
        return max(1, size // 2)
    if held < TARGET_HOLD / 4:
        return min(largest, size * 2)
    return size


def _other_task(conn: sqlite3.Connection, task: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``task`` under an id of its own when its id is stored with another instruction (two
    logs that number their tasks alike: tau-bench's domains, one-record files of a mapping
    that names no task), else ``None``. The id gets ``~`` and the instruction's hash, so the
    same task imported again lands on the same id."""
    instruction = task[_TASK_INSTRUCTION]
    stored = conn.execute(_TASK_INSTRUCTION_OF, (task[_TASK_ID],)).fetchone()
    if not instruction or stored is None or not stored[0] or stored[0] == instruction:
        return None
    digest = hashlib.sha1(instruction.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return tuple(f"{v}~{digest}" if i == _TASK_ID else v for i, v in enumerate(task))


def _with_task(row: tuple[Any, ...], task_id: str) -> tuple[Any, ...]:
    return tuple(task_id if i == _EPISODE_TASK else v for i, v in enumerate(row))
