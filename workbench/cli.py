"""The ``workbench`` command: thin commands over the engine, errors turned into messages."""

from __future__ import annotations

import difflib
import functools
import os
import shlex
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from store import Episode, EpisodeFilter, Store, default_db_path
from store.records import Split
from workbench.agents.guidance import Guidance
from workbench.analyze.agreement import agreement
from workbench.analyze.analyzer import analyze
from workbench.backends import Backends, make_backends
from workbench.cli_tables import Column, print_records
from workbench.demo import DEMO_TEST, DEMO_TRAIN, demo_configs
from workbench.ingest import SAMPLES, IngestError, import_paths, jsonl
from workbench.ingest import formats as ingest_formats
from workbench.llm import ChatClient, ConfigError
from workbench.progress import Cancelled
from workbench.runner import AgentSpec, RunConfig, RunReport, run_batch

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)


class RichProgress:
    """The engine's progress protocol drawn as a rich progress bar on stderr."""

    def __init__(self, unit: str = "items") -> None:
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
        self._bar.start()
        self._task = self._bar.add_task(description, total=total)

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        self._bar.update(
            self._task, advance=amount, **({"description": description} if description else {})
        )

    def finish(self) -> None:
        self._bar.stop()


# -- shared options ---------------------------------------------------------------------------


def _db_flag(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``--db PATH`` option (env ``WORKBENCH_DB``), passed as ``db_path``."""
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="WORKBENCH_DB",
        default=None,
        help=help,
    )


def _given_workspace(workspace: str) -> str:
    """The workspace the command line names: the command's own, else the group's."""
    return workspace or click.get_current_context().find_root().meta.get("workspace", "")


def _given_db(db_path: Path | None) -> Path | None:
    """The database the command line names, if any: `workbench --db X ls` and
    `workbench ls --db X` both work; the command's own wins."""
    return db_path or click.get_current_context().find_root().meta.get("db_path")


def open_store(path: Path, workspace: str = "") -> Store:
    """The store at ``path``; a file that cannot be opened as one is a one-line error."""
    try:
        return Store(path, workspace=workspace)
    except (sqlite3.Error, OSError, RuntimeError) as error:
        raise click.ClickException(f"cannot open database {path}: {error}") from error


def db_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--db PATH`` (env ``WORKBENCH_DB``, default ``./workbench.db``) and ``--workspace``,
    opened as ``store``."""

    @_db_flag("SQLite database file [env WORKBENCH_DB; default ./workbench.db].")
    @workspace_flag
    @functools.wraps(command)
    def wrapper(db_path: Path | None, workspace: str, **kwargs: Any) -> Any:
        path = _given_db(db_path) or default_db_path()
        with open_store(path, _given_workspace(workspace)) as store:
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
    @click.option("--split", type=click.Choice(get_args(Split)), help="Only this split.")
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
        where = EpisodeFilter(
            outcome=outcome, family=family, agent=agent, batch=batch, split=split, task=task
        )  # type: ignore[arg-type]
        return command(where=where, **kwargs)

    return wrapper


# -- commands ---------------------------------------------------------------------------------


workspace_flag = click.option(
    "--workspace",
    envvar="WORKBENCH_WORKSPACE",
    default="",
    metavar="NAME",
    help="Work in this workspace of the database, e.g. evolve/NAME/gated (one regime of an "
    "evolution experiment) [env WORKBENCH_WORKSPACE; default: your own].",
)


@click.group(
    name="workbench",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="trajectory-workbench")
@_db_flag("SQLite database file for every command [env WORKBENCH_DB; default ./workbench.db].")
@workspace_flag
@click.pass_context
def main(ctx: click.Context, db_path: Path | None, workspace: str) -> None:
    """Trajectory Workbench: import agent trajectories, triage failures, turn them into knowledge.

    Everything lives in one SQLite file (--db, or WORKBENCH_DB, default ./workbench.db).
    """
    ctx.meta["db_path"] = db_path
    ctx.meta["workspace"] = workspace


@main.command("import")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(ingest_formats.names()),
    help="Force a format instead of detecting it per file.",
)
@click.option(
    "--results",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Results or evaluation report to join outcomes from.",
)
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip unreadable records (reported) instead of failing the import.",
)
@click.option(
    "--batch", "batch_name", help="Batch name for the imported episodes (default: import-<time>)."
)
@click.option("--samples", is_flag=True, help="Import the sample logs shipped with the workbench.")
@db_option
def import_command(
    store: Store,
    paths: tuple[Path, ...],
    fmt: str | None,
    results: Path | None,
    skip_bad: bool,
    batch_name: str | None,
    samples: bool,
) -> None:
    """Import trajectory files or folders of them (one transaction: all or nothing)."""
    targets = list(paths)
    if samples:
        targets.append(SAMPLES)
        batch_name = batch_name or "samples"
    if not targets:
        raise click.UsageError("give files or folders to import, or --samples")
    try:
        report = import_paths(
            store,
            targets,
            format=fmt,
            results=results,
            skip_bad=skip_bad,
            batch=batch_name,
            progress=RichProgress("bytes"),
        )
    except IngestError as error:
        raise click.ClickException(f"{error}\nnothing was imported") from error
    except Cancelled:
        raise click.ClickException("import cancelled; nothing was imported") from None
    for file in report.files:
        if file.status == "ignored":
            continue
        line = f"{file.path}: {file.format or '?'}: "
        line += {
            "imported": f"{file.episodes} new episode(s)"
            + (f", {file.existing} already present" if file.existing else ""),
            "duplicate": "already imported, skipped",
            "bad": "skipped (bad file)",
        }[file.status]
        console.print(escape(line), soft_wrap=True)
    for reason in report.bad:
        errors.print(f"[yellow]skipped:[/] {escape(reason)}")
    summary = f"imported {report.episodes} episode(s)"
    if report.batch_id:
        summary += f" into batch {report.batch_id}"
    if report.bad:
        summary += f"; skipped {len(report.bad)} bad record(s)"
    console.print(summary)


import_command.help = (
    "Import trajectory files or folders of them, in one transaction: all or nothing. "
    "Importing a file again adds nothing. The format is detected per file:\n\n\b\n"
    + "\n".join(f"  {i.name:<16} {i.description}" for i in ingest_formats.IMPORTERS)
)


def _outcome_cell(episode: Episode) -> str:
    success = episode.outcome.success
    if success is None:
        return "[dim]?[/]"
    return "[green]pass[/]" if success else "[red]FAIL[/]"


LS_COLUMNS = [
    Column("episode"),
    Column("outcome"),
    Column("score", justify="right"),
    Column("family"),
    Column("task"),
    Column("agent"),
    Column("steps", justify="right"),
    Column("message", text=True),
]


@main.command("ls")
@filter_options
@click.option("--limit", default=50, show_default=True, help="At most this many rows (0 = all).")
@db_option
def ls_command(store: Store, where: EpisodeFilter, limit: int) -> None:
    """List episodes, failures first."""
    total = store.count_episodes(where)
    episodes = store.listing(where, limit=limit or None)
    rows = [
        [
            e.id,
            Text.from_markup(_outcome_cell(e)),
            "" if e.outcome.score is None else f"{e.outcome.score:g}",
            e.family,
            e.task_id,
            e.agent,
            str(e.n_steps),
            e.outcome.message.splitlines()[0] if e.outcome.message else "",
        ]
        for e in episodes
    ]
    print_records(console, LS_COLUMNS, rows)
    console.print(f"[dim]{len(episodes)} of {total} episode(s)[/]")


def _parse_range(text: str | None, n_steps: int) -> tuple[int, int]:
    if not text:
        return 0, n_steps
    start, sep, stop = text.partition(":")
    try:
        first = int(start) if start else 0
        last = int(stop) if stop else n_steps
    except ValueError:
        raise click.BadParameter(
            f"expected a:b (e.g. 0:10), got {text!r}", param_hint="--steps"
        ) from None
    if not sep:
        last = first + 1
    return first, last


@main.command("show")
@click.argument("episode_id")
@click.option("--steps", "step_range", help="Steps a:b (b exclusive), e.g. 0:10 or 5: or 7.")
@click.option("--raw", is_flag=True, help="Also print each step's original record.")
@db_option
def show_command(store: Store, episode_id: str, step_range: str | None, raw: bool) -> None:
    """Show one episode: outcome, task, spans and steps."""
    import json

    episode = store.episode(episode_id)
    if episode is None:
        raise click.ClickException(f"no episode {episode_id!r} (see `workbench ls`)")
    task = store.task(episode.task_id)
    console.print(
        f"[bold]{escape(episode.id)}[/]  {_outcome_cell(episode)}  score={episode.outcome.score}  steps={episode.n_steps}"
    )
    console.print(
        f"task {escape(episode.task_id)}  family={escape(episode.family)}  split={episode.split}  agent={escape(episode.agent)}  batch={escape(episode.batch_id)}"
    )
    if task and task.instruction:
        console.print(f"[bold]instruction[/] {escape(task.instruction)}")
    if episode.outcome.message:
        console.print(f"[bold]outcome[/] {escape(episode.outcome.message)}")
    for span in store.spans(episode.id):
        console.print(
            f"[magenta]span {span.id}[/] {span.kind} {span.start}..{span.end} {escape(span.label)} ({escape(span.author)}) {escape(span.note)}"
        )
    first, last = _parse_range(step_range, episode.n_steps)
    for step in store.steps(episode.id, first, last):
        console.rule(
            f"step {step.index} · {step.kind} · {step.role}"
            + (f" · reward {step.reward:g}" if step.reward is not None else ""),
            align="left",
            style="dim",
        )
        for label, text in (
            ("content", step.content),
            ("thought", step.thought),
            ("action", step.action),
            ("observation", step.observation),
        ):
            if text:
                console.print(f"[bold cyan]{label}[/] {escape(text)}")
        if raw and step.raw is not None:
            console.print(f"[bold]raw[/] {escape(json.dumps(step.raw, ensure_ascii=False))}")


@main.command("search")
@click.argument("query")
@filter_options
@click.option("--limit", default=20, show_default=True, help="At most this many hits.")
@db_option
def search_command(store: Store, query: str, where: EpisodeFilter, limit: int) -> None:
    """Full-text search over step text (SQLite FTS5 syntax; plain words must all match)."""
    hits = store.search(query, where, limit=limit)
    columns = [Column("episode"), Column("step", justify="right"), Column("kind")]
    columns.append(Column("match", text=True))
    rows = [[h.episode_id, str(h.index), h.kind, h.snippet.replace("\n", " ")] for h in hits]
    print_records(console, columns, rows)
    console.print(f"[dim]{len(hits)} hit(s)[/]")


@main.command("stats")
@filter_options
@click.option(
    "--by",
    "groups",
    type=click.Choice(["family", "agent", "batch"]),
    multiple=True,
    help="Group by (repeatable; default: all three).",
)
@db_option
def stats_command(store: Store, where: EpisodeFilter, groups: tuple[str, ...]) -> None:
    """Success rates per family, agent and batch."""
    for by in groups or ("family", "agent", "batch"):
        columns = [Column(by)] + [
            Column(name, justify="right")
            for name in ("episodes", "passed", "failed", "unknown", "success rate")
        ]
        rows = [
            [
                row.key or "(none)",
                str(row.episodes),
                str(row.passed),
                str(row.failed),
                str(row.unknown),
                "–" if row.success_rate is None else f"{row.success_rate:.1%}",
            ]
            for row in store.stats(by, where)  # type: ignore[arg-type]
        ]
        print_records(console, columns, rows, title=f"by {by}")


@main.command("export")
@filter_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl"]),
    default="jsonl",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output file (default: standard output).",
)
@db_option
def export_command(store: Store, where: EpisodeFilter, fmt: str, out: Path | None) -> None:
    """Export episodes (with tasks, batches, steps and spans) as workbench JSONL."""
    if out is None:
        count = jsonl.write(store, store.iter_episodes(where), sys.stdout)
    else:
        partial = out.with_name(out.name + ".partial")
        with open(partial, "w", encoding="utf-8") as handle:
            count = jsonl.write(store, store.iter_episodes(where), handle)
        partial.replace(out)
    errors.print(f"exported {count} episode(s)")


DEFAULT_WORKERS = min(2, os.cpu_count() or 1)

workers_option = click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=DEFAULT_WORKERS,
    show_default=True,
    help="Worker processes (each runs its own simulator).",
)


def _run_and_report(store: Store, config: RunConfig, batch: str | None, workers: int) -> RunReport:
    try:
        report = run_batch(store, config, batch=batch, workers=workers, progress=RichProgress())
    except Cancelled:
        raise click.ClickException(
            "run cancelled; finished episodes are kept — run again to resume"
        ) from None
    except (ValueError, RuntimeError) as error:
        raise click.ClickException(str(error)) from error
    done = f"batch {report.batch_id}: {report.finished} episode(s) run, {report.failed} failed"
    if report.skipped:
        done += f"; {report.skipped} already recorded (resumed)"
    if report.lost:
        done += f"; {len(report.lost)} lost to crashed workers (recorded as failed)"
    console.print(done)
    for error, count in report.errors.most_common():
        console.print(f"  {count}× {escape(error)}", soft_wrap=True)
    return report


def parse_rates(
    values: tuple[str, ...], base: dict[str, float] | None = None
) -> dict[str, float] | None:
    """``--rate MODE=P`` values over ``base`` (default: the scripted agent's default rates);
    ``None`` when there are none and no base."""
    from workbench.agents.scripted import DEFAULT_RATES

    if not values:
        return base
    rates = dict(base or DEFAULT_RATES)
    for value in values:
        mode, sep, number = value.partition("=")
        try:
            rates[mode] = float(number)
        except ValueError:
            raise click.BadParameter(
                f"expected MODE=P, got {value!r}", param_hint="--rate"
            ) from None
        if not sep or mode not in DEFAULT_RATES:
            raise click.BadParameter(
                f"unknown mode {mode!r}; modes: {', '.join(DEFAULT_RATES)}", param_hint="--rate"
            )
    return rates


@main.command("run")
@click.option(
    "--env",
    "env_name",
    type=click.Choice(["scienceworld"]),
    default="scienceworld",
    show_default=True,
    help="Environment.",
)
@click.option(
    "--family", "families", help="Comma-separated task families, e.g. boil,use-thermometer."
)
@click.option(
    "--split",
    type=click.Choice(["train", "dev", "test"]),
    default="train",
    show_default=True,
    help="The environment's variation split.",
)
@click.option(
    "--episodes",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Episodes to run (spread over the families).",
)
@click.option(
    "--agent",
    "agent_kind",
    type=click.Choice(["scripted", "openai", "command"]),
    default="scripted",
    show_default=True,
    help="Which agent acts.",
)
@click.option(
    "--cmd", help="Command agent: the command line of your agent (JSON lines on stdin/stdout)."
)
@click.option("--model", help="LLM agent: model name [default: env WORKBENCH_MODEL].")
@click.option(
    "--rate",
    "rates",
    multiple=True,
    help="Scripted agent: MODE=P mistake probability (repeatable).",
)
@click.option(
    "--guidance",
    "guidance_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON file of guidance (rules, skills, subagents) the agent follows.",
)
@click.option(
    "--with-repo",
    is_flag=True,
    help="The agent follows the active artifact repository (see `workbench repo ls`).",
)
@click.option(
    "--with-manual",
    is_flag=True,
    help="The agent follows the manual's rules that have an executable form (see `workbench manual build`).",
)
@workers_option
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Run seed (episode seeds derive from it).",
)
@click.option(
    "--step-limit",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Most actions per episode.",
)
@click.option(
    "--batch",
    "batch_name",
    help="Batch name; an existing run batch with the same settings resumes.",
)
@click.option("--resume", "resume", help="Resume the named run batch with its stored settings.")
@click.option(
    "--like",
    "like",
    help="Repeat this run batch's plan (same tasks and seeds) and compare the two, paired.",
)
@db_option
def run_command(
    store: Store,
    env_name: str,
    families: str | None,
    split: str,
    episodes: int,
    agent_kind: str,
    cmd: str | None,
    model: str | None,
    rates: tuple[str, ...],
    guidance_file: Path | None,
    with_repo: bool,
    with_manual: bool,
    workers: int,
    seed: int,
    step_limit: int,
    batch_name: str | None,
    resume: str | None,
    like: str | None,
) -> None:
    """Run an agent on environment tasks and record every episode (resumable, parallel)."""
    if like:
        _run_like(store, like, guidance_file, with_repo, with_manual, batch_name, workers)
        return
    if resume:
        existing = store.batch(resume)
        if existing is None or existing.kind != "run":
            raise click.ClickException(f"no run batch {resume!r} to resume")
        config = RunConfig.model_validate(existing.params["config"])
        _run_and_report(store, config, existing.name, workers)
        return
    if not families:
        raise click.UsageError(
            "give --family (e.g. --family boil,use-thermometer) or --resume BATCH"
        )
    if agent_kind == "command" and not cmd:
        raise click.UsageError("--agent command needs --cmd 'your agent command'")
    if agent_kind == "openai":
        check_endpoint(store, model)
    guidance = _guidance(store, guidance_file, with_repo, with_manual)
    manuals = store.manuals() if with_manual else []
    config = RunConfig(
        env=env_name,
        families=family_list(families),
        split=split,
        episodes=episodes,
        seed=seed,
        step_limit=step_limit,
        agent=AgentSpec(
            kind=agent_kind, rates=parse_rates(rates), cmd=shlex.split(cmd or ""), model=model
        ),
        guidance=guidance,
        manual=manuals[-1].markdown if manuals else "",
    )
    _run_and_report(store, config, batch_name, workers)


def family_list(text: str) -> list[str]:
    """``boil, use-thermometer`` → ``["boil", "use-thermometer"]``."""
    return [f.strip() for f in text.split(",") if f.strip()]


def check_endpoint(store: Store, model: str | None = None) -> None:
    """Fail before any episode starts when the model endpoint is not configured."""
    try:
        ChatClient.from_env(store, model=model)
    except ConfigError as error:
        raise click.ClickException(str(error)) from error


def _guidance(
    store: Store, guidance_file: Path | None, with_repo: bool, with_manual: bool = False
) -> Guidance:
    guidance = Guidance()
    if guidance_file is not None:
        try:
            guidance = Guidance.model_validate_json(guidance_file.read_text())
        except ValueError as error:
            raise click.ClickException(f"{guidance_file}: {error}") from error
    if with_repo:
        from workbench.admit.repository import active_guidance

        active = active_guidance(store)
        if not active.forms:
            raise click.ClickException(
                "the repository has no active artifact yet (see `workbench repo ls`)"
            )
        guidance = Guidance(forms=[*guidance.forms, *active.forms])
    if with_manual:
        from workbench.manual.build import guidance_of

        rules = guidance_of(store)
        if not rules.forms and not store.manuals():
            raise click.ClickException(
                "no manual yet: build rules with `workbench manual build` (executable ones guide "
                "any agent) or formulate one with `workbench manual formulate` (an LLM agent reads it)"
            )
        guidance = Guidance(forms=[*guidance.forms, *rules.forms])
    return guidance


def _run_like(
    store: Store,
    like: str,
    guidance_file: Path | None,
    with_repo: bool,
    with_manual: bool,
    batch_name: str | None,
    workers: int,
) -> None:
    from workbench.admit.evaluate import compare_runs

    existing = store.batch(like)
    if existing is None or existing.kind != "run":
        raise click.ClickException(f"no run batch {like!r} to repeat")
    config = RunConfig.model_validate(existing.params["config"]).model_copy(
        update={"guidance": _guidance(store, guidance_file, with_repo, with_manual)}
    )
    suffix = "repo" if with_repo else "manual" if with_manual else "again"
    name = batch_name or f"{existing.name}-{suffix}"
    report = _run_and_report(store, config, name, workers)
    paired = compare_runs(store, existing.id, report.batch_id)
    for label, successes in (
        (existing.name, paired.baseline_successes),
        (report.batch_id, paired.candidate_successes),
    ):
        rate, low, high = paired.rate(successes)
        console.print(
            f"{escape(label)}: {successes}/{paired.pairs} succeeded ({rate:.0%}, 95% CI {low:.0%}–{high:.0%})"
        )
    console.print(
        f"paired: {paired.fixed} fixed, {paired.broken} broken; exact McNemar p = {paired.mcnemar_p:.3g}"
    )


@main.command("demo")
@click.option(
    "--train",
    type=click.IntRange(min=1),
    default=DEMO_TRAIN,
    show_default=True,
    help="Episodes on train variations.",
)
@click.option(
    "--test",
    "test_",
    type=click.IntRange(min=1),
    default=DEMO_TEST,
    show_default=True,
    help="Episodes on test variations.",
)
@workers_option
@db_option
def demo_command(store: Store, train: int, test_: int, workers: int) -> None:
    """Build a demo database offline: the scripted agent on real ScienceWorld tasks."""
    for name, config in demo_configs(train, test_):
        _run_and_report(store, config, name, workers)
    console.print(f"demo ready in {store.path}: try `workbench ls --failed` or `workbench stats`")


def chosen_backends(store: Store, choice: str | None) -> Backends:
    """The stage backends ``--reasoner`` (else the configuration) chooses; a misconfigured
    endpoint is one clear error."""
    try:
        return make_backends(store, choice)
    except ConfigError as error:
        raise click.ClickException(str(error)) from error


reasoner_option = click.option(
    "--reasoner",
    "reasoner_name",
    type=click.Choice(["heuristic", "openai"]),
    help="Who judges: the offline heuristic, or an OpenAI-compatible model (OPENAI_BASE_URL, OPENAI_API_KEY, WORKBENCH_MODEL) [default: WORKBENCH_REASONER, else [reasoner] in workbench.toml beside the database, else heuristic].",
)


@main.command("tui")
@_db_flag("SQLite database file [env WORKBENCH_DB; default: the demo database ./workbench.db].")
@workspace_flag
@reasoner_option
def tui_command(db_path: Path | None, workspace: str, reasoner_name: str | None) -> None:
    """Open the terminal UI: runs, trajectories, spans and comparisons.

    With no database given (neither --db nor WORKBENCH_DB) it opens the demo database
    ./workbench.db, building it first (as `workbench demo` does) if it does not exist.
    The analyses, compilations and manual jobs started there use --reasoner (else the
    configured backend); the header names a model backend.
    """
    path = _given_db(db_path)
    if path is not None and not Path(path).exists():
        raise click.ClickException(
            f"no database {path}; make one with `workbench import`, `run` or `demo`"
        )
    if path is None:
        path = default_db_path()
        if not path.exists():
            errors.print(f"no database given: building the demo database {path} first")
            with open_store(path) as store:
                for name, config in demo_configs():
                    _run_and_report(store, config, name, DEFAULT_WORKERS)
    open_store(path).close()  # the same one-line error as every other command for a bad file
    try:
        from tui.app import make_app
    except ImportError as error:
        raise click.ClickException(
            f"the terminal UI needs textual ({error}); install it with "
            "pip install 'trajectory-workbench[tui]'"
        ) from error
    make_app(path, workspace=_given_workspace(workspace), reasoner=reasoner_name).run()


@main.command("analyze")
@click.option("--batch", help="Only failures of this batch (id or name).")
@click.option("--family", help="Only failures of this task family.")
@click.option(
    "--split",
    type=click.Choice(["train", "dev", "test", "other"]),
    help="Only failures of this split (default: every split but the held-out test split).",
)
@reasoner_option
@click.option(
    "--new-run",
    is_flag=True,
    help="Start a new analysis run instead of continuing the latest one of this scope and reasoner.",
)
@click.option(
    "--agreement",
    "show_agreement",
    is_flag=True,
    help="Report agreement between analyzer and human causal spans (exact start, ±1 step, IoU) instead of analysing.",
)
@db_option
def analyze_command(
    store: Store,
    batch: str | None,
    family: str | None,
    split: str | None,
    reasoner_name: str | None,
    new_run: bool,
    show_agreement: bool,
) -> None:
    """Analyse failures: evaluator-visible failure, earliest causal span, required change; then cluster them.

    Without --batch or --split, held-out (test) episodes and candidates' replays are left out."""
    where = EpisodeFilter(batch=batch, family=family, split=split)
    check_filter(store, where)
    if show_agreement:
        rows = agreement(store, where)
        if not rows:
            raise click.ClickException(
                "no episode has both a human and an analyzer causal span yet"
            )
        columns = [Column("scope")] + [
            Column(name, justify="right")
            for name in ("episodes", "exact start", "start ±1", "mean IoU")
        ]
        cells = [
            [
                row.key,
                str(row.episodes),
                f"{row.exact:.0%}",
                f"{row.within_one:.0%}",
                f"{row.iou:.2f}",
            ]
            for row in rows
        ]
        print_records(console, columns, cells)
        return
    analyst = chosen_backends(store, reasoner_name).analyst
    try:
        report = analyze(store, where, analyst, new_run=new_run, progress=RichProgress())
    except Cancelled:
        raise click.ClickException(
            "analysis cancelled; analysed failures are kept — run again to continue"
        ) from None
    console.print(
        f"analysis run {report.run.id} ({report.run.reasoner}): {report.analyzed} failure(s) analysed"
        + (f", {report.skipped} already analysed" if report.skipped else "")
        + f"; {report.clusters} cluster(s), {report.deferred} deferred"
    )
    for reason in report.rejected:
        errors.print(f"[yellow]rejected proposal:[/] {escape(reason)}")


@main.command("clusters")
@click.option("--run", "run_id", type=int, help="Analysis run (default: the latest).")
@click.option(
    "--show",
    "cluster_id",
    type=int,
    help="Show one cluster: its members and contrastive successes.",
)
@db_option
def clusters_command(store: Store, run_id: int | None, cluster_id: int | None) -> None:
    """List failure clusters (supported first, largest first), or show one."""
    if cluster_id is not None:
        cluster = store.cluster(cluster_id)
        if cluster is None:
            raise click.ClickException(f"no cluster {cluster_id} (see `workbench clusters`)")
        console.print(
            f"[bold]cluster {cluster.id}[/] {cluster.status} · {escape(cluster.family)} · {len(cluster.members)} member(s)"
        )
        console.print(
            f"trigger    {escape(cluster.trigger)}\ncorrection {escape(cluster.correction) or '–'}"
        )
        if cluster.reason:
            console.print(f"[yellow]deferred:[/] {escape(cluster.reason)}")
        for analysis_id in cluster.members:
            a = store.analysis(analysis_id)
            if a is not None:
                console.print(
                    f"  {escape(a.episode_id)} steps {a.start}..{a.end} conf {a.confidence:.2f} \\[{a.status}] {escape(a.change)}"
                )
        console.print(
            "contrastive successes: " + (", ".join(escape(e) for e in cluster.contrasts) or "none")
        )
        return
    runs = store.analysis_runs()
    run = (
        next((r for r in runs if r.id == run_id), None)
        if run_id is not None
        else (runs[0] if runs else None)
    )
    if run is None:
        raise click.ClickException(
            "no analysis run yet; run `workbench analyze`"
            if run_id is None
            else f"no analysis run {run_id}"
        )
    columns = [
        Column("id", justify="right"),
        Column("size", justify="right"),
        Column("family"),
        Column("status"),
        Column("trigger", text=True),
        Column("correction", text=True),
        Column("reason", text=True),
    ]
    rows = [
        [
            str(c.id),
            str(len(c.members)),
            c.family,
            Text(c.status, style="green" if c.status == "supported" else "yellow"),
            c.trigger,
            c.correction,
            c.reason,
        ]
        for c in store.clusters(run.id)
    ]
    print_records(console, columns, rows, title=f"analysis run {run.id} ({run.reasoner})")


import workbench.cli_evolve  # noqa: E402  (registers evolve on `main`)
import workbench.cli_manual  # noqa: E402  (registers the manual group on `main`)
import workbench.cli_plot  # noqa: E402, F401  (registers the plot group on `main`)
from workbench import cli_repo  # noqa: E402  (registers compile, replay and repo on `main`)

__all__ = ["cli_repo", "main"]
