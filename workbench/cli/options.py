"""What every command shares: the consoles, the progress bar, the database, filter and worker
options, and the checks that turn bad input into one-line errors.

Only click and rich are imported here at module level; the store and the engine are imported
when a command runs, so ``workbench --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click
from rich.console import Console
from rich.segment import Segment

from workbench.escapes import UNSAFE
from workbench.escapes import shown as plain

if TYPE_CHECKING:
    from store import EpisodeFilter, Store
    from workbench.backends import Backends


class SafeConsole(Console):
    """A console whose printed text cannot drive the terminal: every control character in the
    text it prints (an escape sequence from an imported log, say) is shown as ``\\xNN``,
    whatever printed it — a table, a block, a message. Its own styling and the progress bar's
    cursor moves are not text, and pass unchanged.

    Output that no terminal shows (a pipe, a file) is not wrapped: rich would wrap it at 80
    columns, its width when it cannot ask a terminal, and a line cut there is a line a script
    reading the output must glue back. ``COLUMNS`` still sets a width to wrap at."""

    @property
    def soft_wrap(self) -> bool:
        """Whether ``print`` leaves long lines whole: when asked to, and whenever the output
        goes to no terminal and ``COLUMNS`` names no width (read at each print, as rich reads
        the width)."""
        if self._soft_wrap:
            return True
        return not self.is_terminal and not self._environ.get("COLUMNS", "").isdigit()

    @soft_wrap.setter
    def soft_wrap(self, value: bool) -> None:
        self._soft_wrap = value

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            Segment(plain(text), style, control)
            if not control and UNSAFE.search(text)
            else Segment(text, style, control)
            for text, style, control in buffer
        )


console = SafeConsole(highlight=False)
errors = SafeConsole(stderr=True, highlight=False)

SQLITE_INT_MAX = 2**63 - 1
"""The largest integer SQLite stores: every integer the command line takes is bounded by it, so
a number too large is a usage error naming its option, not an ``OverflowError`` in a query."""


def integer(min: int | None = None) -> click.IntRange:
    """The type of an integer option or argument: at least ``min``, at most
    :data:`SQLITE_INT_MAX`."""
    return click.IntRange(min=min, max=SQLITE_INT_MAX)


def parse_integer(text: str, what: str) -> int:
    """``text`` read as an integer a query can take, or a usage error naming ``what``."""
    try:
        value = int(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a whole number", param_hint=what) from None
    if abs(value) > SQLITE_INT_MAX:
        raise click.BadParameter(f"{text} is too large (at most {SQLITE_INT_MAX})", param_hint=what)
    return value


SPLITS = ("train", "dev", "test", "other")
"""``store.records.Split``'s values, written out so the options need not import the store (a
test checks they agree)."""


class LazyChoice(click.Choice):
    """A choice whose values come from the engine or a registry, read only when the option is
    parsed or its help shown (so listing commands imports nothing they choose among)."""

    def __init__(self, values: Callable[[], Sequence[str]]) -> None:
        self._values = values
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._values())

    @choices.setter
    def choices(self, value: object) -> None:
        """Click assigns the (empty) choices it was built with; the engine's values win."""


class LazyDefault:
    """An option's default read when needed and shown in ``--help`` by its value; a plugin
    that cannot be used is a usage error (one line)."""

    def __init__(self, read: Callable[[], object]) -> None:
        self.read = read

    def __call__(self) -> object:
        from workbench.plugins import PluginError

        try:
            return self.read()
        except PluginError as error:
            raise click.UsageError(str(error)) from error

    def __str__(self) -> str:
        return str(self())


class RichProgress:
    """The engine's progress protocol drawn as a rich progress bar on stderr."""

    def __init__(self, unit: str = "items") -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = [TextColumn("[bold]{task.description}"), BarColumn()]
        columns += (
            [DownloadColumn()]
            if unit == "bytes"
            else [TextColumn("{task.completed:.0f}/{task.total:.0f}")]
        )
        columns += [TimeElapsedColumn(), TimeRemainingColumn()]
        self._bar = Progress(*columns, console=errors, transient=True)
        self._task: Any = None

    def start(self, total: float | None, description: str = "") -> None:
        if self._task is not None:  # a job of several phases: the finished phase goes
            self._bar.remove_task(self._task)
        self._bar.start()
        self._task = self._bar.add_task(description, total=total)

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        self._bar.update(
            self._task, advance=amount, **({"description": description} if description else {})
        )

    def finish(self) -> None:
        self._bar.stop()


def out_folder(folder: Path) -> Path:
    """``folder``, made if missing, for a command's output; a path through a file, or one that
    cannot be made, is a one-line error naming it."""
    for parent in (folder, *folder.parents):
        if parent.exists() and not parent.is_dir():
            raise click.ClickException(f"cannot write under {folder}: {parent} is a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise click.ClickException(f"cannot make {folder}: {error.strerror or error}") from None
    return folder


def write_out(out: Path, write: Callable[[TextIO], int]) -> int:
    """Write a file whole or not at all: ``write`` fills a ``.partial`` file beside ``out``
    (its folders made), which then replaces ``out``; returns what ``write`` returns. A path that
    cannot be written (a file where a folder should be, no permission) is a one-line error and
    leaves nothing behind."""
    out_folder(out.parent)
    partial = out.with_name(out.name + ".partial")
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            count = write(handle)
        partial.replace(out)
    except OSError as error:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise click.ClickException(f"cannot write {out}: {error.strerror or error}") from None
    return count


def db_flag(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``--db PATH`` option (env ``WORKBENCH_DB``), passed as ``db_path``."""
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="WORKBENCH_DB",
        default=None,
        help=help,
    )


workspace_flag = click.option(
    "--workspace",
    envvar="WORKBENCH_WORKSPACE",
    default="",
    metavar="NAME",
    help="Work in this workspace of the database, e.g. evolve/NAME/gated (one regime of an "
    "evolution experiment) [env WORKBENCH_WORKSPACE; default: your own].",
)


def given_workspace(workspace: str) -> str:
    """The workspace the command line names: the command's own, else the group's."""
    return workspace or click.get_current_context().find_root().meta.get("workspace", "")


def given_db(db_path: Path | None) -> Path | None:
    """The database the command line names, if any: `workbench --db X ls` and
    `workbench ls --db X` both work; the command's own wins."""
    return db_path or click.get_current_context().find_root().meta.get("db_path")


def lock_wait(retry: int, waited: float) -> None:
    """Say on stderr (above any progress bar) that a write waits for another writer's lock."""
    errors.print(
        f"[yellow]waiting for the database lock held by another writer… "
        f"(retry {retry}, {waited:.0f} s)[/]",
        soft_wrap=True,
    )


def open_store(path: Path, workspace: str = "") -> Store:
    """The store at ``path``, whose writes report waiting for the lock (:func:`lock_wait`), as
    do those of every store the command opens after it; a file that cannot be opened as one,
    or stays locked, is a one-line error."""
    from store import DatabaseBusy, Store
    from store.locks import process_hook, report_waits

    if process_hook() is None:  # the stores the command opens deeper down say so too
        report_waits(lock_wait)
        context = click.get_current_context(silent=True)
        if context is not None:
            context.find_root().call_on_close(lambda: report_waits(None))
    try:
        return Store(path, workspace=workspace, on_lock_wait=lock_wait)
    except DatabaseBusy as error:
        raise click.ClickException(str(error)) from None
    except (sqlite3.Error, OSError, RuntimeError) as error:
        raise click.ClickException(f"cannot open database {path}: {error}") from error


def db_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--db PATH`` (env ``WORKBENCH_DB``, default ``./workbench.db``) and ``--workspace``,
    opened as ``store``; a command that records (import, run, demo, …) creates the file."""
    return _with_store(command, must_exist=False)


def existing_db_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`db_option` for a command that only reads or works on what is recorded: a path
    with no database is a one-line error, and nothing is created there (a mistyped ``--db``
    must not leave folders and an empty database behind)."""
    return _with_store(command, must_exist=True)


def workspace_db_option(
    workspace: str, *, must_exist: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """:func:`existing_db_option` (or, ``must_exist=False``, :func:`db_option`) for commands
    that always work in ``workspace`` (synthesis in the synth workspace), so they take no
    ``--workspace``."""
    return functools.partial(_with_store, must_exist=must_exist, workspace=workspace)


def _with_store(
    command: Callable[..., Any], *, must_exist: bool, workspace: str | None = None
) -> Callable[..., Any]:
    @functools.wraps(command)
    def wrapper(db_path: Path | None, **kwargs: Any) -> Any:
        from store import EpisodeFilter, default_db_path

        given = kwargs.pop("workspace", "")
        path = given_db(db_path) or default_db_path()
        if must_exist and not _exists(path):
            raise click.ClickException(
                f"no database at {path}: check --db (or WORKBENCH_DB), or create one with "
                "`workbench demo`, `workbench import` or `workbench run`"
            )
        from store import DatabaseBusy

        chosen = workspace if workspace is not None else given_workspace(given)
        with open_store(path, chosen) as store:
            if isinstance(kwargs.get("where"), EpisodeFilter):
                check_filter(store, kwargs["where"])
            try:
                return command(store=store, **kwargs)
            except DatabaseBusy as error:
                raise click.ClickException(str(error)) from None
            except sqlite3.OperationalError as error:
                meaning = unwritable(error)
                if meaning is None:
                    raise  # not where the database lives but what the command did: a bug
                raise click.ClickException(f"cannot write to database {path}: {meaning}") from None

    if workspace is None:
        wrapper = workspace_flag(wrapper)
    return db_flag("SQLite database file [env WORKBENCH_DB; default ./workbench.db].")(wrapper)


def _exists(path: Path) -> bool:
    try:
        return Path(path).exists()
    except OSError as error:  # a folder on the way that may not be entered
        raise click.ClickException(f"cannot open database {path}: {error.strerror}") from None


UNWRITABLE = {
    "readonly database": "it is read-only here (check the permissions of the file and its folder)",
    "database or disk is full": "the disk is full",
    "disk I/O error": "the disk could not be read or written",
}
"""SQLite errors a command meets because of where the database lives, not what it does, and
what they mean for the user."""


def unwritable(error: sqlite3.OperationalError) -> str | None:
    """What an SQLite error of :data:`UNWRITABLE` means for the user; ``None`` for others."""
    return next((meaning for cause, meaning in UNWRITABLE.items() if cause in str(error)), None)


PLURALS = {"family": "families", "agent": "agents", "batch": "batches", "task": "tasks"}


def check_filter(store: Store, where: EpisodeFilter) -> None:
    """Fail in one line when the filter's family, agent, batch or task names nothing in the
    workspace, naming the close ones (else a few known ones)."""
    for column, known in store.unmatched(where).items():
        value = getattr(where, column)
        close = difflib.get_close_matches(value, known, n=5)
        if close:
            hint = "close ones: " + ", ".join(close)
        elif known:
            more = f" (and {len(known) - 5} more)" if len(known) > 5 else ""
            hint = "known ones: " + ", ".join(known[:5]) + more
        else:
            hint = f"there are no {PLURALS[column]} here yet"
        raise click.ClickException(f"no {column} is called {value!r}; {hint}")


def filter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Episode filters shared by ``ls``, ``search``, ``stats`` and ``export``, as ``where``
    (:func:`db_option`, applied under it, checks with :func:`check_filter` that each value names
    something)."""

    @click.option("--failed", "outcome", flag_value="failed", help="Only failed episodes.")
    @click.option("--passed", "outcome", flag_value="passed", help="Only successful episodes.")
    @click.option(
        "--unknown", "outcome", flag_value="unknown", help="Only episodes with no verdict."
    )
    @click.option("--family", help="Only this task family.")
    @click.option("--agent", help="Only this agent.")
    @click.option("--batch", help="Only this batch (id or name).")
    @click.option("--split", type=click.Choice(SPLITS), help="Only this split.")
    @click.option("--task", help="Only this task id.")
    @functools.wraps(command)
    def wrapper(
        outcome: str | None,
        family: str | None,
        agent: str | None,
        batch: str | None,
        split: str | None,
        task: str | None,
        **kwargs: Any,
    ) -> Any:
        from store import EpisodeFilter

        where = EpisodeFilter(
            outcome=outcome, family=family, agent=agent, batch=batch, split=split, task=task
        )  # type: ignore[arg-type]
        return command(where=where, **kwargs)

    return wrapper


def local_workers() -> int:
    """The local pool's default size."""
    from workbench.executors import LOCAL_WORKERS

    return LOCAL_WORKERS


workers_option = click.option(
    "--workers",
    type=integer(min=1),
    default=LazyDefault(local_workers),
    show_default=True,
    help="Worker processes (each runs its own simulator).",
)


def executor_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--executor local|ray``, ``--ray-address`` and ``--workers``, passed as ``executor``
    (an :class:`~workbench.executors.ExecutorChoice`; the command builds it with
    :func:`~workbench.executors.make_executor`)."""

    @click.option(
        "--executor",
        "executor_kind",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where episodes are played: worker processes here, or a Ray cluster (pip install 'trajectory-workbench[ray]').",
    )
    @click.option(
        "--ray-address",
        metavar="ADDR",
        help="The Ray cluster (e.g. auto, 10.0.0.5:6379, ray://head:10001) [default: a Ray instance started here].",
    )
    @click.option(
        "--workers",
        type=integer(min=1),
        default=None,
        help=f"Episodes played at once [default: {LOCAL_WORKERS_TEXT} locally, the cluster's CPUs on Ray].",
    )
    @functools.wraps(command)
    def wrapper(
        executor_kind: str, ray_address: str | None, workers: int | None, **kwargs: Any
    ) -> Any:
        from workbench.executors import ExecutorChoice, ExecutorUnavailable

        if ray_address and executor_kind != "ray":
            raise click.UsageError("--ray-address needs --executor ray")
        choice = ExecutorChoice(executor_kind, workers, ray_address)  # type: ignore[arg-type]
        try:
            return command(executor=choice, **kwargs)
        except ExecutorUnavailable as error:
            raise click.ClickException(str(error)) from None

    return wrapper


LOCAL_WORKERS_TEXT = "2 (or the cores, if fewer)"
"""The local pool's default size as ``--help`` says it (the value itself is computed when a
pool is made, so listing commands import nothing)."""


reasoner_option = click.option(
    "--reasoner",
    "reasoner_name",
    type=click.Choice(["heuristic", "openai"]),
    help="Who judges: the offline heuristic, or an OpenAI-compatible model (OPENAI_BASE_URL, OPENAI_API_KEY, WORKBENCH_MODEL) [default: WORKBENCH_REASONER, else [reasoner] in workbench.toml beside the database, else heuristic].",
)


def chosen_backends(store: Store, choice: str | None) -> Backends:
    """The stage backends ``--reasoner`` (else the configuration) chooses; a misconfigured
    endpoint is one clear error."""
    from workbench.backends import make_backends
    from workbench.llm import ConfigError

    try:
        return make_backends(store, choice)
    except ConfigError as error:
        raise click.ClickException(str(error)) from error


def check_endpoint(store: Store, model: str | None = None) -> None:
    """Fail before any episode starts when the model endpoint is not configured."""
    from workbench.llm import ChatClient, ConfigError

    try:
        ChatClient.from_env(store, model=model)
    except ConfigError as error:
        raise click.ClickException(str(error)) from error


def family_list(text: str) -> list[str]:
    """``boil, use-thermometer`` → ``["boil", "use-thermometer"]``."""
    return [f.strip() for f in text.split(",") if f.strip()]


def parse_rates(
    values: tuple[str, ...], base: dict[str, float] | None = None
) -> dict[str, float] | None:
    """``--rate MODE=P`` values over ``base`` (default: the scripted agent's default rates);
    ``None`` when there are none and no base."""
    from workbench.agents.mistakes import default_rates, mode_name

    if not values:
        return base
    rates = dict(base or default_rates())
    for value in values:
        mode, _, number = value.partition("=")
        try:
            probability = float(number)
        except ValueError:
            raise click.BadParameter(
                f"expected MODE=P, got {value!r}", param_hint="--rate"
            ) from None
        try:
            rates[mode_name(mode)] = probability
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--rate") from None
    return rates
