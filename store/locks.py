"""Waiting for SQLite's write lock: short waits, retried with backoff, reported, bounded.

SQLite lets one connection write at a time. No workbench transaction holds the lock for long
(an import writes in short chunks, see :mod:`store.staging`), so a writer that finds it taken
waits :data:`BUSY_TIMEOUT_MS` inside SQLite, then says so (:data:`LockWaitHook`: the store's own,
else the process's, :func:`report_waits`) and tries again after a pause that grows with each
retry, up to :data:`LOCK_TIMEOUT` seconds in all (env ``WORKBENCH_LOCK_TIMEOUT``); only then
does it give up, with :class:`DatabaseBusy`.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

BUSY_TIMEOUT_MS = 1000
"""How long SQLite itself waits for the lock before a statement reports it busy."""
LOCK_TIMEOUT = 600.0
"""Seconds a writer waits for the lock in all before :class:`DatabaseBusy` (the default of
``WORKBENCH_LOCK_TIMEOUT``)."""
MAX_PAUSE = 2.0
"""The longest pause between two tries."""

LockWaitHook = Callable[[int, float], None]
"""Told of each retry: its number (from 1) and the seconds waited so far."""

T = TypeVar("T")

_process_hook: LockWaitHook | None = None
"""Told of the waits of every store of this process that has no hook of its own."""


def report_waits(hook: LockWaitHook | None) -> None:
    """Tell ``hook`` of the lock waits of every store this process opens without a hook of its
    own: the CLI prints its line for stores opened deep inside a command (an agent logging
    its model calls, a world keeping reference solutions), and a local pool's workers are
    given the same hook (:func:`process_hook`)."""
    global _process_hook
    _process_hook = hook


def process_hook() -> LockWaitHook | None:
    """The hook :func:`report_waits` set, if any."""
    return _process_hook


class DatabaseBusy(Exception):
    """Another writer held the database's write lock for longer than a writer waits."""

    def __init__(self, path: str, waited: float) -> None:
        self.path, self.waited = path, waited
        super().__init__(
            f"the database {path} stayed locked by another writer for {waited:.0f} s; "
            "gave up waiting (try again when it is done, or set WORKBENCH_LOCK_TIMEOUT)"
        )


@dataclass
class LockStats:
    """What a store's connection saw of the write lock (for benchmarks and tests)."""

    holds: int = 0
    """Write transactions committed or rolled back."""
    longest: float = 0.0
    """The longest of them, in seconds from ``BEGIN IMMEDIATE`` to ``COMMIT``/``ROLLBACK``."""
    last: float = 0.0
    """The latest one, in seconds."""
    waits: int = 0
    """Retries after finding the lock taken (each reported to the hook)."""

    def held(self, seconds: float) -> None:
        """Count one write transaction that held the lock ``seconds``."""
        self.holds += 1
        self.last = seconds
        self.longest = max(self.longest, seconds)


def is_busy(error: sqlite3.OperationalError) -> bool:
    """Whether ``error`` is SQLite's ``database is locked`` (``SQLITE_BUSY`` and its kinds)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_BUSY
    return "database is locked" in str(error)


def lock_timeout() -> float:
    """Seconds to wait for the lock in all: ``WORKBENCH_LOCK_TIMEOUT``, else :data:`LOCK_TIMEOUT`."""
    try:
        return max(0.0, float(os.environ.get("WORKBENCH_LOCK_TIMEOUT") or LOCK_TIMEOUT))
    except ValueError:
        return LOCK_TIMEOUT


def pause(attempt: int) -> float:
    """Seconds to pause before try ``attempt + 1``: doubling from 50 ms, at most
    :data:`MAX_PAUSE`, jittered so that waiting writers do not retry in step."""
    return min(MAX_PAUSE, 0.05 * 2 ** min(attempt, 10)) * random.uniform(0.5, 1.0)


def retrying(
    action: Callable[[], T],
    path: str,
    stats: LockStats,
    hook: LockWaitHook | None,
    timeout: float | None = None,
) -> T:
    """``action()``, tried again while it finds the write lock taken (see the module).

    Raises :class:`DatabaseBusy` once ``timeout`` seconds (default :func:`lock_timeout`) went
    by; any other error is raised as it is.
    """
    limit = lock_timeout() if timeout is None else timeout
    started = time.monotonic()
    for attempt in range(1, 1 << 30):
        try:
            return action()
        except sqlite3.OperationalError as error:
            if not is_busy(error):
                raise
        waited = time.monotonic() - started
        if waited >= limit:
            raise DatabaseBusy(path, waited) from None
        stats.waits += 1
        told = hook if hook is not None else _process_hook
        if told is not None:
            told(attempt, waited)
        time.sleep(pause(attempt))
    raise AssertionError("unreachable")
