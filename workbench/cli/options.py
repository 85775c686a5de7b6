"""What every command shares: the consoles, the progress bar, the database, filter and worker
options, and the checks that turn bad input into one-line errors.

Only click and rich are imported here at module level; the store and the engine are imported
when a command runs, so ``workbench --help`` stays fast.
"""

from __future__ import annotations

import difflib
import functools
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

if TYPE_CHECKING:
    from store import EpisodeFilter, Store
    from workbench.backends import Backends

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)

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


def open_store(path: Path, workspace: str = "") -> Store:
    """The store at ``path``; a file that cannot be opened as one is a one-line error."""
    from store import Store

    try:
        return Store(path, workspace=workspace)
    except (sqlite3.Error, OSError, RuntimeError) as error:
        raise click.ClickException(f"cannot open database {path}: {error}") from error


def db_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--db PATH`` (env ``WORKBENCH_DB``, default ``./workbench.db``) and ``--workspace``,
    opened as ``store``."""

    @db_flag("SQLite database file [env WORKBENCH_DB; default ./workbench.db].")
    @workspace_flag
    @functools.wraps(command)
    def wrapper(db_path: Path | None, workspace: str, **kwargs: Any) -> Any:
        from store import EpisodeFilter, default_db_path

        path = given_db(db_path) or default_db_path()
        with open_store(path, given_workspace(workspace)) as store:
            if isinstance(kwargs.get("where"), EpisodeFilter):
                check_filter(store, kwargs["where"])
            return command(store=store, **kwargs)

    return wrapper


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
    type=click.IntRange(min=1),
    default=LazyDefault(local_workers),
    show_default=True,
    help="Worker processes (each runs its own simulator).",
)

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
