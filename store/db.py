"""The ``Store``: typed reads and writes of workbench records in one SQLite file."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from store import texts
from store.analyses import AnalysisTables
from store.evolution import EvolutionTables
from store.locks import BUSY_TIMEOUT_MS, LockStats, LockWaitHook, retrying
from store.manual_tables import ManualTables
from store.migrations import FTS_COLUMNS, FTS_INSERT_TRIGGER, migrate
from store.records import Batch, Episode, LLMCall, Outcome, Span, Step, Task, utcnow
from store.repository import RepositoryTables
from store.rows import column_names, from_row, row_values, rows_values, to_json_text, to_row
from store.synth import SynthTables
from store.texts import CutStep

if TYPE_CHECKING:
    import sqlite_utils

T = TypeVar("T")

DEFAULT_DB = "workbench.db"
"""Database used when neither ``--db`` nor ``WORKBENCH_DB`` names one."""

OutcomeFilter = Literal["failed", "passed", "unknown"]
"""Which outcomes a filter keeps (``unknown``: no verdict recorded)."""

FilterColumn = Literal["family", "agent", "batch", "task"]
"""The filters of an :class:`EpisodeFilter` that name something recorded (see
:meth:`Store.unmatched`)."""


HIDDEN = "\x01"
"""Workspaces whose name starts with this character are hidden from every reader: an import's
batches live in one while it is being written (:mod:`store.staging`). A store cannot be opened
in such a workspace, and every listing, count, search and statistic is scoped to the store's
workspace (:meth:`Store.scoped`), so that is where the filter lives; reads by id
(:meth:`Store.episode`, :meth:`Store.batch`) skip hidden batches too."""
_VISIBLE = "(SELECT unicode(workspace) FROM batches WHERE id = {}) IS NOT 1"
"""SQL: the batch whose id is ``{}`` is not hidden (``unicode`` of :data:`HIDDEN` is 1)."""


def default_db_path() -> Path:
    """The database path from ``WORKBENCH_DB``, else ``./workbench.db``."""
    return Path(os.environ.get("WORKBENCH_DB") or DEFAULT_DB)


_STEPS_OF_AGENT = "SELECT episode_id FROM steps WHERE agent = ? AND agent != ''"
"""The episodes in which an agent of a log of several agents acted (``steps_by_agent``)."""
_AGENTS_STEP = "(s.agent = ? OR (s.agent = '' AND e.agent = ?))"
"""A step ``s`` of episode ``e`` taken by an agent: its own, or its episode's when the step
names none."""


@dataclass(frozen=True)
class EpisodeFilter:
    """Which episodes a listing, count or export covers. Empty fields do not filter."""

    outcome: OutcomeFilter | None = None
    family: str | None = None
    agent: str | None = None
    """The episode's agent, or an agent that acted in it (a log of several agents: a step's
    :attr:`~store.records.Step.agent`); a search keeps that agent's steps only."""
    batch: str | None = None
    split: str | None = None
    task: str | None = None
    environment: str | None = None
    replays: bool | None = None
    """``False`` leaves out episodes of replay batches (a candidate's paired replays)."""
    held_out: bool | None = None
    """``False`` leaves out held-out episodes (the test split)."""
    workspace: str | None = None
    """Only episodes of this workspace's batches (the store fills in its own when ``None``)."""
    acting: bool | None = None
    """Whether :attr:`agent` is also an agent that acted in episodes (a step's agent): the
    store sets it when one did (:meth:`Store.scoped`), so a database of single-agent logs
    keeps its listings on the episodes' agent index. Derived, never part of a scope."""

    def where(self, triage: str = "") -> tuple[str, list[Any]]:
        """SQL ``WHERE`` clause (without the keyword; ``1`` when empty) and its parameters,
        over episodes ``e`` (or a table with the same columns whose outcome column, in
        failures-first order, is ``triage``)."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.outcome is not None:
            clauses.append(f"{triage or _TRIAGE} = ?")
            params.append({"failed": 0, "unknown": 0.5, "passed": 1}[self.outcome])
        for column, value in (
            ("e.family", self.family),
            ("e.split", self.split),
            ("e.task_id", self.task),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.agent is not None and self.acting:  # the episode's agent, or one in it
            clauses.append(f"(e.agent = ? OR e.id IN ({_STEPS_OF_AGENT}))")
            params += [self.agent, self.agent]
        elif self.agent is not None:
            clauses.append("e.agent = ?")
            params.append(self.agent)
        if self.batch is not None:
            clauses.append("e.batch_id IN (SELECT id FROM batches WHERE id = ? OR name = ?)")
            params += [self.batch, self.batch]
        if self.environment is not None:
            clauses.append("e.task_id IN (SELECT id FROM tasks WHERE environment = ?)")
            params.append(self.environment)
        if self.workspace is not None:
            # '+' keeps the planner on the triage indexes: a workspace is a filter, not a
            # way into the table (the main one holds nearly every episode)
            clauses.append("+e.batch_id IN (SELECT id FROM batches WHERE workspace = ?)")
            params.append(self.workspace)
        if self.held_out is False:
            clauses.append("e.split IS NOT 'test'")
        if self.replays is False:
            clauses.append(
                "(e.batch_id IS NULL OR e.batch_id NOT IN (SELECT id FROM batches WHERE kind = 'replay'))"
            )
        return (" AND ".join(clauses) or "1"), params

    @property
    def counted(self) -> bool:
        """Whether ``episode_counts`` holds this filter's count: it keeps only the batch,
        family and outcome of each episode."""
        return all(
            value is None
            for value in (self.agent, self.split, self.task, self.environment, self.held_out)
        )


@dataclass(frozen=True)
class SearchHit:
    """One step matching a full-text search."""

    episode_id: str
    index: int
    kind: str
    snippet: str


@dataclass(frozen=True)
class SearchPage:
    """The first page of a full-text search, and how it was ranked."""

    hits: list[SearchHit]
    ranked_all: bool
    """Whether every match was ranked; otherwise the hits are the best of the newest
    :attr:`window` matches (an older match may rank higher)."""
    window: int
    """How many matches, newest first, were ranked at most."""


RANK_WINDOW = 2000
"""How many matches, newest first, :meth:`Store.search_page` ranks at most."""


_MATCHES_UP_TO = "SELECT count(*) FROM (SELECT 1 FROM steps_fts WHERE steps_fts MATCH ? LIMIT ?)"
"""How many steps match a query, counted up to a bound (reading its matches, not ranking)."""

_NTH_NEWEST = (
    "SELECT rowid FROM steps_fts WHERE steps_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?"
)
"""The rowid of the match that has ``OFFSET`` newer ones (reading matches, not ranking)."""

WALK_MARGIN = 2
"""A window walked from the matches stops after this many times the matches its filter's
share should need (then the filter's steps are read first, see :meth:`Store._search_rows`)."""

_FULL_RANK = (
    'SELECT s.episode_id, s."index", s.kind, '
    "snippet(steps_fts, -1, '[', ']', '…', 12) AS snippet "
    "FROM steps_fts JOIN steps s ON s.id = steps_fts.rowid "
    "JOIN episodes e ON e.id = s.episode_id "
    "WHERE steps_fts MATCH ? AND {clause} ORDER BY rank LIMIT ?"
)
"""Every match ranked, best first (FTS5 sorts them itself); parameters: the query, the filter
``clause``'s, the page size."""


FILTER_FIRST_SHARE = 0.25
"""Up to this share of the episodes, a filtered search may start from the filter's steps
(:func:`_window_sql` with ``filter_first``); above it, it starts from the matches."""

FILTER_FIRST_STEPS = 2
"""... and does when the filter's steps are at most this many times the matches a walk from
the matches should need (``window / share``): reading a step costs about what walking a match
does, so long episodes (many steps per episode) leave a moderately narrow filter to the walk."""


def _window_sql(clause: str, filter_first: bool = False) -> str:
    """The best of the newest ``window`` matches that pass the filter ``clause`` (FTS5 walks
    its matches newest first and stops), ranked by bm25, and how many there were, up to one
    more than the window (read, its bm25 too, to tell a window that holds every match from one
    that does not). Parameters: the query, the lowest rowid to walk to (not with
    ``filter_first``), the clause's, the window plus one, the window, the page size, the
    query again.

    Each match is tested against the filter by joining its step and episode, about a
    microsecond a match, and bm25 is computed only for the matches that pass: cheap while the
    filter passes most matches. With ``filter_first`` the ids of the filter's steps are read
    first (through the episode indexes, into one temporary b-tree) and each match is only
    looked up there, a tenth of that: what a narrow filter on a common word needs, whose
    window fills only after walking nearly every match. Snippets are made for the page only,
    in one pass over the page's rowid range, each match there looked up among the page's ids.
    '+' keeps those rowid tests off the virtual table, which would otherwise be searched once
    per id (with ``rank``, about a millisecond each: bm25's document counts read again)."""
    if filter_first:
        matches = (
            "  SELECT rowid AS id, rank AS r FROM steps_fts WHERE steps_fts MATCH ? AND +rowid IN ("
            f"    SELECT s.id FROM episodes e JOIN steps s ON s.episode_id = e.id WHERE {clause})"
            "  ORDER BY rowid DESC LIMIT ?"
        )
    else:
        matches = (
            "  SELECT steps_fts.rowid AS id, rank AS r FROM steps_fts"
            "  JOIN steps s ON s.id = steps_fts.rowid JOIN episodes e ON e.id = s.episode_id"
            "  WHERE steps_fts MATCH ? AND steps_fts.rowid >= ?"
            f"  AND {clause} ORDER BY steps_fts.rowid DESC LIMIT ?"
        )
    return (
        f"WITH matches AS MATERIALIZED ({matches}), "
        "page AS MATERIALIZED ("
        "  SELECT id, r, (SELECT count(*) FROM matches) AS n FROM ("
        "    SELECT id, r FROM matches ORDER BY id DESC LIMIT ?) ORDER BY r, id LIMIT ?), "
        "snippets AS MATERIALIZED ("
        "  SELECT rowid AS id, snippet(steps_fts, -1, '[', ']', '…', 12) AS text FROM steps_fts"
        "  WHERE steps_fts MATCH ? AND +rowid IN (SELECT id FROM page)"
        "  AND rowid BETWEEN (SELECT min(id) FROM page) AND (SELECT max(id) FROM page)) "
        'SELECT s.episode_id, s."index", s.kind, snippets.text, page.n FROM page '
        "JOIN snippets ON snippets.id = page.id JOIN steps s ON s.id = page.id "
        "ORDER BY page.r, page.id"
    )


@dataclass(frozen=True)
class GroupStats:
    """Outcome counts of one group of episodes (a family, an agent or a batch)."""

    key: str
    episodes: int
    passed: int
    failed: int
    unknown: int

    @property
    def success_rate(self) -> float | None:
        """Passed over judged episodes; ``None`` when none was judged."""
        judged = self.passed + self.failed
        return self.passed / judged if judged else None


@dataclass(frozen=True)
class ListedEpisode:
    """What a list of episodes shows: the episode without its metadata, usage and source.

    Reading only these columns is what keeps long failure lists cheap (see ``bench/failure_list.py``),
    and of those only the ones the filter does not fix (:meth:`Store.listing_query`).
    """

    id: str
    task_id: str
    family: str
    split: str
    agent: str
    batch_id: str
    n_steps: int
    outcome: Outcome


_EPISODE_COLUMNS = column_names(Episode)
_LISTED = (
    "id", "task_id", "family", "split", "agent", "batch_id", "n_steps",
    "outcome_success", "outcome_score", "outcome_message",
)  # fmt: skip
"""The columns of a :class:`ListedEpisode`, in field order (the outcome's three last)."""
LISTED_COLUMNS = ", ".join(f"e.{column}" for column in _LISTED)
_SUCCESS = {"failed": False, "unknown": None, "passed": True}
"""The ``Outcome.success`` each outcome filter fixes."""


@dataclass(frozen=True)
class ListingQuery:
    """The SQL of a listing page and how its rows become :class:`ListedEpisode` values."""

    sql: str
    params: list[Any]
    fields: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    """A row (the columns the filter leaves open) to the values of every listed column, in
    ``_LISTED`` order (the ones the filter fixes filled in)."""


_STEP_COLUMNS = column_names(Step)
_SPAN_COLUMNS = [c for c in column_names(Span) if c != "id"]
_TRIAGE = "coalesce(e.outcome_success, 0.5)"  # = migrations.TRIAGE_ORDER, so indexes apply
_OUTCOME_COUNTS = (
    "count(*), count(e.outcome_success = 1 OR NULL), count(e.outcome_success = 0 OR NULL), "
    "count(e.outcome_success IS NULL OR NULL)"
)
"""Episodes, passed, failed and unknown: the counts of a :class:`GroupStats`."""


def _quoted(columns: Iterable[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def _insert_sql(table: str, columns: Sequence[str], verb: str = "INSERT") -> str:
    marks = ", ".join("?" * len(columns))
    return f"{verb} INTO {table} ({_quoted(columns)}) VALUES ({marks})"


_INSERT_STEP = _insert_sql("steps", _STEP_COLUMNS)
_INSERT_EPISODE = _insert_sql("episodes", _EPISODE_COLUMNS)
_ID, _TASK, _N_STEPS, _FAMILY, _SPLIT, _BATCH = (
    _EPISODE_COLUMNS.index(c) for c in ("id", "task_id", "n_steps", "family", "split", "batch_id")
)


def _metadata_text(metadata: dict[str, Any]) -> str:
    """A file's shared metadata as JSON text; text with a lone surrogate (a log may hold one)
    is written with ASCII escapes, which SQLite stores and JSON reads back as it was."""
    try:
        return to_json_text(metadata)
    except UnicodeEncodeError:
        return json.dumps(metadata, ensure_ascii=True, separators=(",", ":"), default=str)


_EPISODE_AND_TASK = (
    "SELECT EXISTS (SELECT 1 FROM episodes WHERE id = ?1), "
    "(SELECT family FROM tasks WHERE id = ?2), (SELECT split FROM tasks WHERE id = ?2)"
)
"""Whether an episode id is taken, and its task's family and split (``NULL`` if no task)."""
_INSERT_SPAN = _insert_sql("spans", _SPAN_COLUMNS)
_PUT_TASK = _insert_sql("tasks", column_names(Task), "INSERT OR IGNORE")
_FILL_FTS = (
    f"INSERT INTO steps_fts(rowid, {FTS_COLUMNS}) SELECT id, {FTS_COLUMNS} FROM steps WHERE id >= ?"
)


class _Handed:
    """A row whose values are handed over as SQLite binds them: each read of a value takes it
    out (the sqlite3 module reads a sequence that is not a tuple or a list item by item), so
    a big text is freed once SQLite has copied it, before the row is written."""

    __slots__ = ("values",)

    def __init__(self, values: list[Any]) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, position: int) -> Any:
        value, self.values[position] = self.values[position], None
        return value


def _handed(rows: list[Sequence[Any]]) -> Iterator[_Handed]:
    """The rows of ``rows`` as :class:`_Handed` ones, taken out of the list one by one."""
    rows.reverse()
    while rows:
        yield _Handed(list(rows.pop()))


CACHE_SIZE = -65536
"""SQLite's page cache of a connection (negative: in KiB), 64 MiB."""
LEAN_CACHE_SIZE = -2048
"""The page cache while a chunk holding a record of many megabytes is written (2 MiB): its
pages are written once and not read again, so caching them only adds their size to memory."""


SQLITE_INT_MAX = 2**63 - 1


class Store(AnalysisTables, RepositoryTables, ManualTables, EvolutionTables, SynthTables):
    """Workbench records in one SQLite file (WAL mode, foreign keys on, FTS over steps).

    Reads return pydantic records. Writes that belong together go through
    :meth:`transaction`; a single write outside one is its own transaction.

    Args:
        path: database file, created with the current schema if missing; ``":memory:"``
            for a private in-memory database.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_DB,
        workspace: str = "",
        on_lock_wait: LockWaitHook | None = None,
    ) -> None:
        if workspace.startswith(HIDDEN):
            raise ValueError("a workspace name cannot start with the character U+0001")
        self.path = str(path)
        self.workspace = workspace
        """Episodes, analyses, specs and artifacts this store sees and writes ('' is the
        researcher's own; experiments such as ``workbench evolve`` work in their own)."""
        self.on_lock_wait = on_lock_wait
        """Told each time a write finds the lock taken by another writer and tries again
        (:mod:`store.locks`); the CLI prints a line, the TUI a notice."""
        self.locks = LockStats()
        """How long this connection's write transactions held the lock, and its waits."""
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if self.path != ":memory:":
            self._retrying(lambda: conn.execute("PRAGMA journal_mode = WAL"))
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA cache_size = {CACHE_SIZE}")
        self.conn = conn
        self._lock = threading.RLock()
        self._depth = 0
        self._unindexed: int | None = None
        """The first step id not yet in ``steps_fts`` while a bulk insert defers indexing
        (the per-row trigger is dropped); ``None`` otherwise."""
        self._unindexed_frame = 0
        """The transaction frame (0: the outermost) whose rollback would undo the drop."""
        self.schema_version = self._retrying(lambda: migrate(conn))

    @cached_property
    def db(self) -> sqlite_utils.Database:
        """The same connection as a sqlite-utils ``Database`` (table introspection and the like).

        Made on first use: importing sqlite_utils also imports pandas and numpy whenever they
        are installed (its column-type table covers their types), which costs about half a
        second of CPU that no command needs just to open a store.
        """
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ---------------------------------------------------------------------

    def _retrying(self, action: Callable[[], T]) -> T:
        """``action()``, waiting (reported, bounded) while another writer holds the lock."""
        return retrying(action, self.path, self.locks, self.on_lock_wait)

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """All writes inside commit together or not at all. Nested uses become savepoints.

        The outermost one takes the write lock first (``BEGIN IMMEDIATE``), waiting while
        another writer holds it (:mod:`store.locks`), and counts how long it held it
        (:attr:`locks`).
        """
        with self._lock:
            depth = self._depth
            if depth == 0:
                self._retrying(lambda: self.conn.execute("BEGIN IMMEDIATE"))
                began = time.perf_counter()
            else:
                self.conn.execute(f"SAVEPOINT sp{depth}")
            self._depth += 1
            try:
                yield self
                if depth == 0:
                    self._index_deferred()
            except BaseException:
                self._depth -= 1
                if self._unindexed is not None and self._unindexed_frame >= depth:
                    self._unindexed = None  # the rollback restores the trigger
                if depth == 0:
                    self.conn.execute("ROLLBACK")
                    self.locks.held(time.perf_counter() - began)
                else:
                    self.conn.execute(f"ROLLBACK TO sp{depth}")
                    self.conn.execute(f"RELEASE sp{depth}")
                raise
            self._depth -= 1
            if depth and self._unindexed_frame == depth:
                self._unindexed_frame = depth - 1  # released into the enclosing frame
            self.conn.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
            if depth == 0:
                self.locks.held(time.perf_counter() - began)

    def _write(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        """One write statement: inside the current transaction, else in its own (so that a
        taken lock is waited for like any transaction's)."""
        with self._lock:
            if self._depth:
                return self.conn.execute(sql, params)
        with self.transaction():
            return self.conn.execute(sql, params)

    # -- the full-text index during bulk inserts -----------------------------------------------
    #
    # Indexing each step as it is inserted (the ``steps_fts_insert`` trigger) costs about four
    # times what filling the index in one statement does. So a step insert inside a larger
    # transaction (an import) drops the trigger, and the outermost commit fills ``steps_fts``
    # for the new rowid range and creates the trigger again, before ``COMMIT``. This is safe
    # with other connections: the transaction holds SQLite's write lock from ``BEGIN
    # IMMEDIATE``, so no other writer inserts a step while the trigger is gone; readers see the
    # last committed state, where the trigger exists and the index matches the table; the drop,
    # the rows, their index entries and the re-created trigger commit as one, and a rollback or
    # a crash undoes them as one. A step not yet indexed must not be updated or deleted (the
    # other two FTS triggers would remove index entries it does not have): an import that
    # replaces an episode it staged itself indexes the pending steps first
    # (``store.staging``); :meth:`search` inside such a transaction does not see its new
    # steps yet.

    def _defer_indexing(self) -> None:
        """Stop indexing steps row by row until the outermost transaction commits."""
        if self._unindexed is None:
            first = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM steps").fetchone()[0]
            self.conn.execute("DROP TRIGGER steps_fts_insert")
            self._unindexed, self._unindexed_frame = first, self._depth - 1

    def _index_deferred(self) -> None:
        """Index the steps inserted since :meth:`_defer_indexing` and restore the trigger."""
        if self._unindexed is not None:
            self.conn.execute(_FILL_FTS, (self._unindexed,))
            self.conn.execute(FTS_INSERT_TRIGGER)
            self._unindexed = None

    @contextmanager
    def lean(self) -> Iterator[None]:
        """Write a record of many megabytes with less memory: a small page cache (restored
        afterwards); use :meth:`_unbind` before the transaction's commit."""
        with self._lock:
            self.conn.execute(f"PRAGMA cache_size = {LEAN_CACHE_SIZE}")
            try:
                yield
            finally:
                self.conn.execute(f"PRAGMA cache_size = {CACHE_SIZE}")

    def _unbind(self) -> None:
        """Free SQLite's copies of the last episode and step rows inserted (a statement keeps
        the values last bound to it until new ones are bound): the inserts are bound again
        with ``NULL`` everywhere, which a ``NOT NULL`` column refuses before anything is
        written. Inside a write transaction only (the refusal is the statement's alone)."""
        for sql, width in (
            (_INSERT_STEP, len(_STEP_COLUMNS)),
            (_INSERT_EPISODE, len(_EPISODE_COLUMNS)),
        ):
            try:
                self.conn.execute(sql, (None,) * width)
            except sqlite3.IntegrityError:
                pass
            else:  # pragma: no cover - every NOT NULL column refuses it
                raise AssertionError("a row of NULLs was stored")

    def _rows(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    # -- batches, tasks, sources ----------------------------------------------------------

    def _insert_or_ignore(self, table: str, row: dict[str, Any]) -> None:
        # one statement: atomic on its own, no savepoint needed
        self._write(_insert_sql(table, list(row), "INSERT OR IGNORE"), list(row.values()))

    def put_batch(self, batch: Batch) -> None:
        """Insert a batch into this store's workspace, or leave an existing one with the same
        id as it is."""
        self._insert_or_ignore("batches", {**to_row(batch), "workspace": self.workspace})

    def scoped(self, where: EpisodeFilter) -> EpisodeFilter:
        """``where`` limited to this store's workspace unless it names one itself, its agent
        matching the agents that acted in episodes too when one is called so."""
        if where.workspace is None:
            where = replace(where, workspace=self.workspace)
        if where.agent is not None and where.acting is None:  # (asked once per filter)
            where = replace(where, acting=self._acts(where.agent))
        return where

    def _acts(self, agent: str) -> bool:
        """Whether an agent of that name took a step (in a log of several agents)."""
        return bool(self._rows(f"SELECT EXISTS ({_STEPS_OF_AGENT})", (agent,))[0][0])

    def batch(self, batch_id: str) -> Batch | None:
        """The batch with this id or name (not a hidden one, see :data:`HIDDEN`)."""
        rows = self._rows(
            "SELECT * FROM batches WHERE (id = ? OR name = ?) AND unicode(workspace) IS NOT 1",
            (batch_id, batch_id),
        )
        return from_row(Batch, rows[0]) if rows else None

    def batches(self) -> list[Batch]:
        """The workspace's batches, oldest first."""
        rows = self._rows(
            "SELECT * FROM batches WHERE workspace = ? ORDER BY rowid", (self.workspace,)
        )
        return [from_row(Batch, r) for r in rows]

    def put_task(self, task: Task) -> None:
        """Insert a task, or leave an existing one with the same id as it is."""
        self._write(_PUT_TASK, row_values(task))  # one statement: atomic, no savepoint needed

    def task(self, task_id: str) -> Task | None:
        """The task with this id."""
        rows = self._rows("SELECT * FROM tasks WHERE id = ?", (task_id,))
        return from_row(Task, rows[0]) if rows else None

    def has_source(self, content_hash: str) -> bool:
        """Whether a file with this content hash was imported before."""
        return bool(self._rows("SELECT 1 FROM sources WHERE hash = ?", (content_hash,)))

    def add_source(
        self,
        content_hash: str,
        path: str,
        fmt: str,
        batch_id: str | None,
        n_episodes: int,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Remember that a file was imported, so importing it again adds nothing; with
        ``metadata``, what the file shares with all its episodes, stored once here."""
        self._write(
            "INSERT OR IGNORE INTO sources (hash, path, format, batch_id, n_episodes, "
            "imported_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                content_hash,
                path,
                fmt,
                batch_id,
                n_episodes,
                utcnow().isoformat(),
                _metadata_text(metadata) if metadata else None,
            ),
        )

    def source_metadata(self, content_hash: str) -> dict[str, Any]:
        """What the file with this content hash (an episode's ``source.hash``) shares with
        all the episodes read from it, such as AgentBench's ``overall.json`` summary; empty
        when it shares nothing or was never imported."""
        rows = self._rows("SELECT metadata FROM sources WHERE hash = ?", (content_hash,))
        return json.loads(rows[0][0]) if rows and rows[0][0] else {}

    # -- episodes and steps ---------------------------------------------------------------

    def add_episode(
        self,
        episode: Episode,
        steps: Sequence[Step],
        spans: Sequence[Span] = (),
        batch_id: str | None = None,
    ) -> bool:
        """Insert an episode with its steps and spans in one transaction.

        The episode's ``n_steps`` is set from ``steps`` and its ``family`` and ``split`` from
        its task, which must be stored already; ``batch_id``, when given, is stored instead of
        the episode's own (an import staging it, see :mod:`store.staging`). Returns ``False``
        (and writes nothing) when an episode with the same id exists already. Inside a larger
        transaction the steps are indexed for search in bulk when it commits (see
        :meth:`_defer_indexing`).
        """
        return self._add_rows(row_values(episode), rows_values(steps), len(steps), spans, batch_id)

    def _add_rows(
        self,
        row: Sequence[Any],
        steps: Iterable[Sequence[Any]],
        n_steps: int,
        spans: Sequence[Span] = (),
        batch_id: str | None = None,
        found: Sequence[Any] | None = None,
        hand_over: bool = False,
    ) -> bool:
        """:meth:`add_episode` of an episode's row and its steps' rows (``rows.row_values``);
        ``found``: what ``_EPISODE_AND_TASK`` gave for it, when the caller just read it.
        With ``hand_over``, ``steps`` is a list that is emptied as its rows are inserted, each
        value let go as soon as SQLite has its copy (:class:`_Handed`)."""
        with self.transaction():
            if found is None:
                found = self._rows(_EPISODE_AND_TASK, (row[_ID], row[_TASK]))[0]
            if found[0]:
                return False
            return self._insert_rows(row, steps, n_steps, spans, batch_id, found, hand_over)

    def _insert_rows(
        self,
        row: Sequence[Any],
        steps: Iterable[Sequence[Any]],
        n_steps: int,
        spans: Sequence[Span],
        batch_id: str | None,
        found: Sequence[Any],
        hand_over: bool = False,
        defer: bool = False,
    ) -> bool:
        """:meth:`_add_rows` of an episode not stored yet (``found[0]`` false), inside its
        caller's transaction, which a failure here must roll back (nothing is undone here).
        ``defer``: index the steps when the outermost transaction commits, as inside a larger
        one."""
        if found[1] is None:
            raise KeyError(f"episode {row[_ID]!r} names unknown task {row[_TASK]!r}")
        row = list(row)
        row[_N_STEPS], row[_FAMILY], row[_SPLIT] = n_steps, found[1], found[2]
        if batch_id is not None:
            row[_BATCH] = batch_id
        self.conn.execute(_INSERT_EPISODE, row)
        if n_steps and (defer or self._depth > 1):
            self._defer_indexing()
        self.conn.executemany(_INSERT_STEP, _handed(steps) if hand_over else steps)
        for span in spans:
            self._insert_span(span)
        return True

    def episode(self, episode_id: str) -> Episode | None:
        """The episode with this id (not one of an import still being written)."""
        rows = self._rows(
            f"SELECT * FROM episodes WHERE id = ? AND {_VISIBLE.format('batch_id')}", (episode_id,)
        )
        return from_row(Episode, rows[0]) if rows else None

    def episodes(
        self, where: EpisodeFilter = EpisodeFilter(), limit: int | None = None, offset: int = 0
    ) -> list[Episode]:
        """Episodes matching ``where``, failures first, then in insertion order."""
        sql, params = self.episode_query(self.scoped(where), limit, offset)
        return [from_row(Episode, r) for r in self._rows(sql, params)]

    def listing(
        self, where: EpisodeFilter = EpisodeFilter(), limit: int | None = None, offset: int = 0
    ) -> list[ListedEpisode]:
        """Like :meth:`episodes`, but only what a list view shows (much cheaper per row)."""
        query = self.listing_query(self.scoped(where), limit, offset)
        with self._lock:
            cursor = self.conn.cursor()
            cursor.row_factory = None  # plain tuples: cheaper than rows, read by position
            rows = cursor.execute(query.sql, query.params).fetchall()
        fields = query.fields
        listed = []
        for row in rows:
            *episode, success, score, message = fields(row)
            success = None if success is None else bool(success)
            outcome = Outcome(success=success, score=score, message=message)
            listed.append(ListedEpisode(*episode, outcome=outcome))
        return listed

    @classmethod
    def listing_query(
        cls, where: EpisodeFilter, limit: int | None = None, offset: int = 0
    ) -> ListingQuery:
        """What :meth:`listing` runs (public so benchmarks time exactly that): the columns of
        a :class:`ListedEpisode` that ``where`` does not fix, since reading the page's values
        into Python is most of what a page costs (``ls --failed`` does not read the outcome,
        ``--family`` not the family)."""
        fixed: dict[str, Any] = {
            column: value
            for column, value in (
                ("family", where.family),
                ("agent", where.agent),
                ("split", where.split),
                ("task_id", where.task),
            )
            if value is not None
        }
        if where.outcome is not None:
            fixed["outcome_success"] = _SUCCESS[where.outcome]
        read = [column for column in _LISTED if column not in fixed]
        columns = ", ".join(f"e.{column}" for column in read)
        sql, params = cls.episode_query(where, limit, offset, columns=columns)
        constants = tuple(fixed.values())
        places = [read.index(c) if c in read else len(read) + list(fixed).index(c) for c in _LISTED]
        pick = itemgetter(*places)
        return ListingQuery(sql, params, lambda row: pick(row + constants))

    @staticmethod
    def episode_query(
        where: EpisodeFilter, limit: int | None = None, offset: int = 0, columns: str = "e.*"
    ) -> tuple[str, list[Any]]:
        """The SQL (and parameters) :meth:`episodes` and :meth:`listing` run; public so its
        plan can be checked."""
        clause, params = where.where()
        # With the outcome fixed, rowid order is failures-first order and walks the index.
        order = "e.rowid" if where.outcome else f"{_TRIAGE}, e.rowid"
        sql = f"SELECT {columns} FROM episodes e WHERE {clause} ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        return sql, params

    def iter_episodes(
        self, where: EpisodeFilter = EpisodeFilter(), page: int = 500
    ) -> Iterator[Episode]:
        """Every episode matching ``where``, read a page at a time (for exports)."""
        clause, params = self.scoped(where).where()
        last = 0
        while True:
            rows = self._rows(
                f"SELECT e.rowid AS _rowid, e.* FROM episodes e WHERE {clause} AND e.rowid > ? "
                "ORDER BY e.rowid LIMIT ?",
                [*params, last, page],
            )
            if not rows:
                return
            for r in rows:
                yield from_row(Episode, r)
            last = rows[-1]["_rowid"]

    def episode_ids(self, batch_id: str) -> set[str]:
        """Ids of the episodes stored in a batch (by batch id)."""
        rows = self._rows("SELECT id FROM episodes WHERE batch_id = ?", (batch_id,))
        return {r[0] for r in rows}

    def count_episodes(self, where: EpisodeFilter = EpisodeFilter()) -> int:
        """How many episodes match ``where``."""
        return self._rows(*self.count_query(self.scoped(where)))[0][0]

    @staticmethod
    def count_query(where: EpisodeFilter) -> tuple[str, list[Any]]:
        """The SQL (and parameters) :meth:`count_episodes` runs: a sum over the few rows of
        ``episode_counts`` that match when the filter is one it keeps, else a count of the
        episodes (public so benchmarks and tests can run it)."""
        if where.counted:
            clause, params = where.where(triage="e.triage")
            return f"SELECT coalesce(sum(e.n), 0) FROM episode_counts e WHERE {clause}", params
        clause, params = where.where()
        return f"SELECT count(*) FROM episodes e WHERE {clause}", params

    def steps(self, episode_id: str, start: int = 0, stop: int | None = None) -> list[Step]:
        """Steps ``start`` (inclusive) to ``stop`` (exclusive) of an episode, by index."""
        sql = 'SELECT * FROM steps WHERE episode_id = ? AND "index" >= ?'
        params: list[Any] = [episode_id, start]
        if stop is not None:
            sql += ' AND "index" < ?'
            params.append(stop)
        rows = self._rows(sql + ' ORDER BY "index"', params)
        return [from_row(Step, r) for r in rows]

    def step(self, episode_id: str, index: int) -> Step | None:
        """One step of an episode."""
        found = self.steps(episode_id, index, index + 1)
        return found[0] if found else None

    def cut_steps(
        self,
        episode_id: str,
        start: int = 0,
        stop: int | None = None,
        chars: int = texts.WINDOW,
        offset: int = 0,
    ) -> list[CutStep]:
        """Steps ``start`` to ``stop`` (exclusive) of an episode, each text cut to the
        ``chars`` characters from ``offset``, with every text's full length, in memory and
        time bounded by ``chars`` whatever the texts hold (:mod:`store.texts`)."""
        stop = stop if stop is not None else SQLITE_INT_MAX
        with self._lock:
            return texts.cut_steps(self.conn, episode_id, start, stop, chars, offset)

    def agents_in(self, episode_id: str, start: int, end: int) -> list[str]:
        """The agents that acted in steps ``start`` to ``end`` (inclusive) of an episode, in
        the order they first did (a log of several agents; empty for a single agent's)."""
        rows = self._rows(
            'SELECT agent FROM steps WHERE episode_id = ? AND "index" BETWEEN ? AND ? '
            "AND agent != '' ORDER BY \"index\"",
            (episode_id, start, end),
        )
        return list(dict.fromkeys(row[0] for row in rows))

    def step_text(self, episode_id: str, index: int, field: str, start: int, chars: int) -> str:
        """Characters ``start`` to ``start + chars`` of one text of one step (``""`` past its
        end, or when there is no such step): a long text read a window at a time.

        Raises:
            ValueError: ``field`` is not one of :data:`~store.texts.CUT_TEXTS`.
        """
        with self._lock:
            return texts.step_text(self.conn, episode_id, index, field, start, chars)

    def search(
        self, query: str, where: EpisodeFilter = EpisodeFilter(), limit: int = 50
    ) -> list[SearchHit]:
        """The hits of :meth:`search_page`."""
        return self.search_page(query, where, limit).hits

    def search_page(
        self,
        query: str,
        where: EpisodeFilter = EpisodeFilter(),
        limit: int = 50,
        window: int | None = None,
    ) -> SearchPage:
        """The best ``limit`` steps whose text matches ``query`` (FTS5 syntax; plain words are
        AND-ed), by bm25 rank among the newest ``window`` matches (default
        :data:`RANK_WINDOW`; all of them when there are no more, and
        :attr:`SearchPage.ranked_all` says which).

        Ranking every match costs time in proportion to their number (a word in every step
        of 50,000 episodes: about 150 ms); so when there are more than ``window`` matches,
        the newest ``window`` that pass the filter are ranked (FTS5 reads its matches in rowid
        order and stops there), a few milliseconds. A narrow filter (at most
        :data:`FILTER_FIRST_SHARE` of the episodes, and not too many steps, see
        :data:`FILTER_FIRST_STEPS`) on a common word reads the filter's steps first and walks
        the matches only to test them against those (see :func:`_window_sql`): its window
        holds every match it leaves unless they are more than ``window``. A query that is not valid FTS5 syntax is searched as a quoted phrase
        instead. Inside a transaction that inserts episodes, their steps are searchable once
        it commits.
        """
        where = self.scoped(where)
        clause, params = where.where()
        if where.acting:  # that agent's steps
            clause, params = f"{clause} AND {_AGENTS_STEP}", [*params, where.agent, where.agent]
        window = max(window or RANK_WINDOW, limit)
        # The matches a filter leaves are about its share of the episodes: when they would be
        # no more than the window, ranking every match costs no more than the window would
        # (which then reads every match too).
        everything = self.count_episodes(EpisodeFilter(workspace=where.workspace))
        share = self.count_episodes(where) / everything if everything else 1.0
        bound = math.ceil(window / share) if share else 0
        if share == 0:
            return SearchPage([], ranked_all=True, window=window)
        filter_first = False
        if share <= FILTER_FIRST_SHARE:
            # the filter's steps, estimated from the highest step id
            steps = share * self._rows("SELECT coalesce(max(id), 0) FROM steps")[0][0]
            filter_first = steps <= FILTER_FIRST_STEPS * bound
            if filter_first:
                # ranking every match costs about what reading the filter's steps does when
                # the matches are no more than those steps
                bound = min(bound, math.ceil(steps))
        try:
            rows, ranked_all = self._search_rows(
                query, clause, params, limit, window, bound, filter_first
            )
        except sqlite3.OperationalError:
            phrase = '"' + query.replace('"', '""') + '"'
            rows, ranked_all = self._search_rows(
                phrase, clause, params, limit, window, bound, filter_first
            )
        hits = [SearchHit(r[0], r[1], r[2], r[3]) for r in rows]
        return SearchPage(hits, ranked_all=ranked_all, window=window)

    def _search_rows(
        self,
        query: str,
        clause: str,
        params: list[Any],
        limit: int,
        window: int,
        bound: int,
        filter_first: bool = False,
    ) -> tuple[list[sqlite3.Row], bool]:
        """A search's rows and whether every match was ranked: FTS5's own ranked order when
        at most ``bound`` steps match (it ranks them all, then the joins and snippets run only
        for the page), else the best of the newest ``window`` that pass the filter.

        That window is found from the filter's steps with ``filter_first`` (see
        :func:`_window_sql`), else from the matches, walking at most :data:`WALK_MARGIN`
        times ``bound`` of them (what the filter's share should need): when the filter's
        episodes are mostly older than that (an old batch), the walk stops there and the
        window is found from the filter's steps after all, which costs less than walking on.
        """
        if self._rows(_MATCHES_UP_TO, (query, bound + 1))[0][0] <= bound:
            return self._rows(_FULL_RANK.format(clause=clause), [query, *params, limit]), True
        tail = [window + 1, window, limit, query]
        if not filter_first:
            floor = self._rows(_NTH_NEWEST, (query, WALK_MARGIN * bound - 1))
            lowest = floor[0][0] if floor else 0
            rows = self._rows(_window_sql(clause), [query, lowest, *params, *tail])
            if not floor or (rows and rows[0][4] > window):
                return rows, not rows or rows[0][4] <= window
        rows = self._rows(_window_sql(clause, filter_first=True), [query, *params, *tail])
        return rows, not rows or rows[0][4] <= window

    # -- spans ----------------------------------------------------------------------------

    def _insert_span(self, span: Span) -> int:
        row = to_row(span)
        del row["id"]
        cursor = self.conn.execute(_INSERT_SPAN, list(row.values()))
        return cursor.lastrowid

    def _check_span(self, span: Span) -> None:
        episode = self.episode(span.episode_id)
        if episode is None:
            raise KeyError(f"no episode {span.episode_id!r}")
        if span.end >= episode.n_steps:
            raise ValueError(
                f"span {span.start}..{span.end} is outside episode {span.episode_id!r}, "
                f"which has {episode.n_steps} steps"
            )

    def add_span(self, span: Span) -> Span:
        """Insert a span on an existing episode and return it with its id."""
        with self.transaction():
            self._check_span(span)
            return span.model_copy(update={"id": self._insert_span(span)})

    def update_span(self, span: Span) -> Span:
        """Overwrite the stored span with ``span.id``; ``updated_at`` is set to now."""
        if span.id is None:
            raise ValueError("cannot update a span that has no id")
        updated = span.model_copy(update={"updated_at": utcnow()})
        row = to_row(updated)
        del row["id"]
        with self.transaction():
            self._check_span(updated)
            assignments = ", ".join(f'"{c}" = ?' for c in row)
            cursor = self.conn.execute(
                f"UPDATE spans SET {assignments} WHERE id = ?", [*row.values(), span.id]
            )
            if cursor.rowcount == 0:
                raise KeyError(f"no span {span.id}")
        return updated

    def delete_span(self, span_id: int) -> Span:
        """Delete a span and return what it was."""
        with self.transaction():
            span = self.span(span_id)
            if span is None:
                raise KeyError(f"no span {span_id}")
            self.conn.execute("DELETE FROM spans WHERE id = ?", (span_id,))
            return span

    def span(self, span_id: int) -> Span | None:
        """The span with this id."""
        rows = self._rows("SELECT * FROM spans WHERE id = ?", (span_id,))
        return from_row(Span, rows[0]) if rows else None

    def spans(self, episode_id: str) -> list[Span]:
        """Spans of an episode, by start step."""
        rows = self._rows(
            "SELECT * FROM spans WHERE episode_id = ? ORDER BY start, id", (episode_id,)
        )
        return [from_row(Span, r) for r in rows]

    def span_labels(self) -> list[str]:
        """Labels already used on spans, most used first (for completion)."""
        rows = self._rows(
            "SELECT label FROM spans WHERE label != '' GROUP BY label ORDER BY count(*) DESC, label"
        )
        return [r[0] for r in rows]

    # -- reference solutions -----------------------------------------------------------------

    def gold_path(self, key: str) -> list[str] | None:
        """The stored reference solution of a task instance (its task id, e.g. ``<env>:boil:3``)."""
        rows = self._rows("SELECT actions FROM gold_paths WHERE key = ?", (key,))
        return json.loads(rows[0][0]) if rows else None

    def gold_path_keys(self) -> list[str]:
        """The keys of every stored reference solution."""
        return [row[0] for row in self._rows("SELECT key FROM gold_paths ORDER BY key")]

    def forget_gold_paths(self) -> None:
        """Drop every stored reference solution (a remote worker's scratch database, between
        jobs: each job brings the ones its own database keeps)."""
        with self.transaction():
            self.conn.execute("DELETE FROM gold_paths")

    def put_gold_path(self, key: str, actions: list[str]) -> list[str]:
        """Keep the first reference solution stored for ``key`` and return it.

        Simulators may generate different (equally valid) solutions on different loads; the
        first one stored is canonical, so agents that follow it behave reproducibly.
        """
        with self.transaction():
            self.conn.execute(
                "INSERT OR IGNORE INTO gold_paths VALUES (?, ?, ?)",
                (key, json.dumps(actions), utcnow().isoformat()),
            )
            stored = self.gold_path(key)
        assert stored is not None
        return stored

    # -- language-model calls -------------------------------------------------------------

    def log_call(self, call: LLMCall) -> LLMCall:
        """Record a model call (a cache hit too) and return it with its id."""
        row = to_row(call)
        del row["id"]
        with self.transaction():
            cursor = self.conn.execute(_insert_sql("llm_calls", list(row)), list(row.values()))
        return call.model_copy(update={"id": cursor.lastrowid})

    def cached_call(self, prompt_hash: str) -> LLMCall | None:
        """The latest successful call with this prompt hash, if any (the cache)."""
        rows = self._rows(
            "SELECT * FROM llm_calls WHERE prompt_hash = ? AND error = '' AND response IS NOT NULL "
            "ORDER BY id DESC LIMIT 1",
            (prompt_hash,),
        )
        return from_row(LLMCall, rows[0]) if rows else None

    def link_calls(self, call_ids: Sequence[int], episode_id: str) -> None:
        """Attach logged calls to the episode they were made for (once the episode exists)."""
        if call_ids:
            with self.transaction():
                self.conn.executemany(
                    "UPDATE llm_calls SET episode_id = ? WHERE id = ?",
                    [(episode_id, i) for i in call_ids],
                )

    def last_call_id(self) -> int:
        """The id of the latest logged model call (0 before any)."""
        return int(self._rows("SELECT coalesce(max(id), 0) FROM llm_calls")[0][0])

    def calls_after(self, call_id: int) -> list[LLMCall]:
        """Model calls logged after the call ``call_id``, oldest first."""
        rows = self._rows("SELECT * FROM llm_calls WHERE id > ? ORDER BY id", (call_id,))
        return [from_row(LLMCall, r) for r in rows]

    def give_up_call(self, call_id: int, reason: str) -> None:
        """Mark a logged call as the one its question ended on, with the error it ended with
        (:attr:`~store.records.LLMCall.gave_up`)."""
        with self.transaction():
            self.conn.execute("UPDATE llm_calls SET gave_up = ? WHERE id = ?", (reason, call_id))

    def calls(self, purpose: str | None = None, limit: int = 100) -> list[LLMCall]:
        """Recent model calls, newest first, optionally for one purpose."""
        sql, params = "SELECT * FROM llm_calls", []
        if purpose is not None:
            sql += " WHERE purpose = ?"
            params.append(purpose)
        rows = self._rows(sql + " ORDER BY id DESC LIMIT ?", [*params, limit])
        return [from_row(LLMCall, r) for r in rows]

    # -- what list views need ------------------------------------------------------------

    def change_token(self) -> tuple[int, int]:
        """``(max rowid, count)`` of the episodes table: it changes whenever episodes are added
        or removed (another process writing included), at the cost of two index lookups."""
        row = self._rows("SELECT coalesce(max(rowid), 0), count(*) FROM episodes")[0]
        return int(row[0]), int(row[1])

    def distinct(self, column: FilterColumn) -> list[str]:
        """The non-empty values of ``column`` among stored episodes (batches by name, tasks by
        id; agents with those that acted in them), sorted."""
        in_workspace = "batch_id IN (SELECT id FROM batches WHERE workspace = :workspace)"
        acting = (
            "SELECT DISTINCT s.agent FROM steps s INDEXED BY steps_by_agent WHERE s.agent != '' "
            f"AND s.episode_id IN (SELECT id FROM episodes WHERE {in_workspace})"
        )
        sql = {
            "family": f"SELECT DISTINCT family FROM episodes WHERE {in_workspace} ORDER BY family",
            "agent": f"SELECT agent FROM episodes WHERE {in_workspace} UNION {acting} ORDER BY 1",
            "task": f"SELECT DISTINCT task_id FROM episodes WHERE {in_workspace} ORDER BY task_id",
            "batch": "SELECT name FROM batches WHERE workspace = :workspace "
            "AND id IN (SELECT DISTINCT batch_id FROM episodes) ORDER BY name",
        }[column]
        return [row[0] for row in self._rows(sql, {"workspace": self.workspace}) if row[0]]

    def unmatched(self, where: EpisodeFilter) -> dict[FilterColumn, list[str]]:
        """The family, agent, batch (id or name) and task of ``where`` that name nothing in the
        workspace, each with the values that do (:meth:`distinct`). A value that exists but
        whose combination with the others selects no episode is not unmatched."""
        found: dict[FilterColumn, list[str]] = {}
        for column in get_args(FilterColumn):
            value = getattr(where, column)
            if value is not None and not self._names_something(column, value):
                found[column] = self.distinct(column)
        return found

    def _names_something(self, column: FilterColumn, value: str) -> bool:
        if column == "batch":  # a batch still without episodes exists too
            sql = "SELECT 1 FROM batches WHERE (id = ? OR name = ?) AND workspace = ?"
            params: list[Any] = [value, value, self.workspace]
        else:
            clause, params = self.scoped(EpisodeFilter(**{column: value})).where()
            sql = f"SELECT 1 FROM episodes e WHERE {clause}"
        return bool(self._rows(f"SELECT EXISTS ({sql})", params)[0][0])

    def episode_position(self, where: EpisodeFilter, episode_id: str) -> tuple[int, bool]:
        """Where an episode stands in the failures-first listing of ``where``: how many listed
        episodes come before it, and whether it is listed itself."""
        row = self._rows(f"SELECT {_TRIAGE}, e.rowid FROM episodes e WHERE e.id = ?", (episode_id,))
        if not row:
            return 0, False
        clause, params = self.scoped(where).where()
        before = self._rows(
            f"SELECT count(*) FROM episodes e WHERE {clause} AND ({_TRIAGE}, e.rowid) < (?, ?)",
            [*params, row[0][0], row[0][1]],
        )[0][0]
        listed = self._rows(
            f"SELECT count(*) FROM episodes e WHERE {clause} AND e.id = ?", [*params, episode_id]
        )
        return int(before), bool(listed[0][0])

    def summary(self, where: EpisodeFilter = EpisodeFilter()) -> GroupStats:
        """Outcome counts of all episodes ``where`` selects, as one group (key ``""``)."""
        clause, params = self.scoped(where).where()
        row = self._rows(f"SELECT {_OUTCOME_COUNTS} FROM episodes e WHERE {clause}", params)[0]
        return GroupStats("", *row)

    # -- statistics -----------------------------------------------------------------------

    def stats(
        self, by: Literal["family", "agent", "batch"], where: EpisodeFilter = EpisodeFilter()
    ) -> list[GroupStats]:
        """Outcome counts per family, agent or batch (batches by name). By agent, the agents
        that acted in episodes of several agents follow the episodes' own agents, each with
        the episodes it acted in (a name that is both counts as the episodes' agent)."""
        key = {"family": "e.family", "agent": "e.agent", "batch": "b.name"}[by]
        clause, params = self.scoped(where).where()
        joined = "FROM episodes e JOIN batches b ON b.id = e.batch_id"
        rows = self._rows(
            f"SELECT {key}, {_OUTCOME_COUNTS} {joined} WHERE {clause} GROUP BY 1 ORDER BY 1",
            params,
        )
        stats = [GroupStats(*r) for r in rows]
        if (
            by == "agent"
            and self._rows("SELECT EXISTS (SELECT 1 FROM steps WHERE agent != '')")[0][0]
        ):
            acting = (
                "JOIN (SELECT DISTINCT episode_id, agent FROM steps INDEXED BY steps_by_agent "
                "WHERE agent != '') s ON s.episode_id = e.id"
            )
            own = {row.key for row in stats}
            stats += [
                GroupStats(*r)
                for r in self._rows(
                    f"SELECT s.agent, {_OUTCOME_COUNTS} {joined} {acting} WHERE {clause} "
                    "GROUP BY 1 ORDER BY 1",
                    params,
                )
                if r[0] not in own
            ]
        return stats
