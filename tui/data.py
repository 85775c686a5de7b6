"""What the screens read and write, as plain functions over the store (no Textual here).

Screens call these from thread workers; each worker borrows its own :class:`Store` from a
:class:`StorePool`, so a slow count never holds up a page of steps.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, get_args

from store import CutStep, EpisodeFilter, ListedEpisode, Step, Store
from store.db import OutcomeFilter
from store.locks import LockWaitHook
from store.records import Split
from workbench.backends import Backends, ReasonerConfig, backends_from, reasoner_config
from workbench.escapes import shown as plain
from workbench.llm.client import ConfigError
from workbench.spans import SPAN_KINDS, ChangeKind, SpanChange, SpanHistory, spans_at

if TYPE_CHECKING:  # executors load when a job needs one, not at start-up
    from workbench.executors import ExecutorChoice, LocalPool, RayExecutor

    Executor = LocalPool | RayExecutor

__all__ = [
    "OUTCOMES",
    "SPAN_KINDS",
    "SPLITS",
    "ChangeKind",
    "FilterChoices",
    "Session",
    "SpanChange",
    "SpanHistory",
    "StorePool",
    "filter_choices",
    "find_step",
    "neighbour",
    "spans_at",
    "step_text",
]

OUTCOMES: tuple[str, ...] = get_args(OutcomeFilter)
SPLITS: tuple[str, ...] = get_args(Split)

FIND_CHARS = 100_000
"""Characters of each text of a step that :func:`find_step` looks in: a text of hundreds of
megabytes is searched no further than it can be paged through in the detail, and finding
never reads more than this of it (:meth:`~store.Store.cut_steps`)."""


class StorePool:
    """Stores on one database file, lent to one thread at a time.

    Args:
        path: the database file.
        keep: how many idle stores to keep open for reuse.
        workspace: the workspace the stores see ('' is the researcher's own).
        on_lock_wait: told when a store's write waits for another writer's lock (any thread).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        keep: int = 4,
        workspace: str = "",
        on_lock_wait: LockWaitHook | None = None,
    ) -> None:
        self.path = str(path)
        self.workspace = workspace
        self.on_lock_wait = on_lock_wait
        self.name = plain(os.path.basename(self.path) + (f" [{workspace}]" if workspace else ""))
        self._idle: queue.LifoQueue[Store] = queue.LifoQueue(maxsize=keep)
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def store(self) -> Iterator[Store]:
        """A store for this thread's use until the block ends."""
        try:
            opened = self._idle.get_nowait()
        except queue.Empty:
            opened = Store(self.path, workspace=self.workspace, on_lock_wait=self.on_lock_wait)
        try:
            yield opened
        finally:
            with self._lock:
                keep = not self._closed
                if keep:
                    try:
                        self._idle.put_nowait(opened)
                    except queue.Full:
                        keep = False
            if not keep:
                opened.close()

    def close(self) -> None:
        """Close every idle store; stores still lent out close when they come back."""
        with self._lock:
            self._closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


@dataclass
class Session:
    """What every screen of one app shares: the store pool, the span undo histories and the
    backend choice its jobs judge with."""

    pool: StorePool
    histories: dict[str, SpanHistory] = field(default_factory=dict)
    reasoner: str | None = None
    """The backend chosen on the command line (``--reasoner``); ``None``: the configured one."""
    executor: ExecutorChoice | None = None
    """Where the session's jobs play episodes (``--executor``…); ``None``: a local pool."""
    _config: ReasonerConfig | str | None = field(default=None, repr=False)
    """The choice once resolved, or why it cannot be (resolved on first use)."""

    def make_executor(self, workers: int | None = None) -> Executor:
        """A new executor of the session's choice (``workers`` episodes at once if given, e.g.
        one for a manual build); the job closes it."""
        from tui.threads import processes_ready
        from workbench.executors import ExecutorChoice, make_executor

        processes_ready()  # a local pool inside the app needs it
        choice = self.executor or ExecutorChoice()
        return make_executor(choice.with_workers(workers) if workers else choice)

    def history(self, episode_id: str) -> SpanHistory:
        """The undo history of span changes made to one episode in this session."""
        return self.histories.setdefault(episode_id, SpanHistory())

    def reasoner_config(self) -> ReasonerConfig:
        """The backend choice, resolved once through :mod:`workbench.backends`.

        Raises:
            ConfigError: the choice cannot be resolved (every time it is asked for).
        """
        if self._config is None:
            try:
                self._config = reasoner_config(self.pool.path, self.reasoner)
            except ConfigError as error:
                self._config = str(error)
        if isinstance(self._config, str):
            raise ConfigError(self._config)
        return self._config

    def reasoner_problem(self) -> str | None:
        """Why the backend cannot judge (one line), or ``None`` when it can."""
        try:
            self.reasoner_config()
        except ConfigError as error:
            return str(error)
        return None

    def backends(self, store: Store) -> Backends:
        """The stage backends of the session's choice, on ``store`` (a worker's own).

        Raises:
            ConfigError: the choice cannot be resolved.
        """
        return backends_from(store, self.reasoner_config())


@dataclass(frozen=True)
class FilterChoices:
    """The values each filter can take in this database."""

    family: list[str] = field(default_factory=list)
    agent: list[str] = field(default_factory=list)
    batch: list[str] = field(default_factory=list)
    split: list[str] = field(default_factory=lambda: list(SPLITS))


def filter_choices(store: Store) -> FilterChoices:
    """Distinct families, agents and batch names present in the database."""
    return FilterChoices(
        family=store.distinct("family"),
        agent=store.distinct("agent"),
        batch=store.distinct("batch"),
    )


def step_text(step: Step) -> str:
    """All the searchable text of a step."""
    return "\n".join((step.content, step.thought, step.action, step.observation, step.tool_name))


def find_step(
    store: Store,
    episode_id: str,
    n_steps: int,
    query: str,
    after: int,
    forward: bool = True,
    chunk: int = 500,
) -> int | None:
    """The next step (wrapping around) whose text contains ``query``, ignoring case, in the
    first :data:`FIND_CHARS` characters of each text.

    Reads the episode a range of ``chunk`` steps at a time, starting next to ``after``, and
    stops at the first match, so finding a nearby step in a long episode reads little.
    """
    needle = query.casefold()
    if not needle or n_steps <= 0:
        return None
    order = _wrapped_ranges(n_steps, after, forward, chunk)
    for start, stop in order:
        steps: list[CutStep] = store.cut_steps(episode_id, start, stop, FIND_CHARS)
        for cut in steps if forward else reversed(steps):
            if needle in step_text(cut.step).casefold():
                return cut.step.index
    return None


def _wrapped_ranges(
    n_steps: int, after: int, forward: bool, chunk: int
) -> Iterator[tuple[int, int]]:
    """Ranges of step indices that visit every step once, starting next to ``after`` and
    wrapping around (``after`` itself comes last)."""
    after = min(max(after, -1), n_steps)
    if forward:
        for first, last in ((after + 1, n_steps), (0, after + 1)):
            for start in range(max(first, 0), min(last, n_steps), chunk):
                yield start, min(start + chunk, last, n_steps)
    else:
        for first, last in ((0, after), (max(after, 0), n_steps)):
            for stop in range(min(last, n_steps), max(first, 0), -chunk):
                yield max(stop - chunk, first), stop


def neighbour(
    store: Store, where: EpisodeFilter, episode_id: str, direction: int
) -> ListedEpisode | None:
    """The episode before (``direction`` −1) or after (+1) ``episode_id`` in the listing of
    ``where``, or ``None`` at either end."""
    position, listed = store.episode_position(where, episode_id)
    offset = position + (1 if listed else 0) if direction > 0 else position - 1
    if offset < 0:
        return None
    found = store.listing(where, limit=1, offset=offset)
    return found[0] if found else None
