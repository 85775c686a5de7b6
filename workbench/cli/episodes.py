"""Episode commands: ``import``, ``ls``, ``show``, ``search``, ``stats`` and ``export``."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click
from rich.markup import escape
from rich.text import Text

from workbench.cli.options import (
    LazyChoice,
    RichProgress,
    console,
    db_option,
    errors,
    existing_db_option,
    filter_options,
    integer,
    parse_integer,
    plain,
    write_out,
)
from workbench.cli.tables import Column, print_records

if TYPE_CHECKING:
    from store import CutStep, Episode, EpisodeFilter, Store
    from store.staging import Placed
    from workbench.ingest import FileReport, ImportReport, IngestError, ParsedEpisode
    from workbench.ingest.base import Importer


def shown(text: str) -> str:
    """``text`` from imported data, safe to print with rich: no markup, no control codes."""
    return escape(plain(text))


def format_names() -> list[str]:
    """The importers' names, in detection order."""
    from workbench.ingest import formats

    return formats.names()


class ImportCommand(click.Command):
    """``import``, whose help lists the importers (loaded when the help is shown)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from workbench.ingest import formats

        self.help = IMPORT_HELP + "\n".join(
            f"  {i.name:<16} {i.description}" for i in formats.IMPORTERS
        )
        super().format_help_text(ctx, formatter)


IMPORT_HELP = (
    "Import trajectory files or folders of them, all or nothing: written out of sight in "
    "short transactions (other writers go on), shown at once. Importing a file again adds "
    "nothing. Ends with a summary per file; a named file or "
    "folder that gives no episode fails the import. The format is detected per file:\n\n\b\n"
)


@click.command("import", cls=ImportCommand)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=LazyChoice(format_names),
    help="Force a format instead of detecting it per file.",
)
@click.option(
    "--map",
    "mapping",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read every file through a mapping file (TOML: where episodes, steps and outcomes are).",
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
@click.option(
    "--on-conflict",
    type=click.Choice(["rename", "replace", "skip"]),
    default="rename",
    show_default=True,
    help="An episode whose id is stored with other content: store it as <id>~2, replace the "
    "stored one (its spans and analyses go with it), or keep the stored one. Always reported.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Read and check everything, show the summary and three parsed episodes, write nothing.",
)
@db_option
def import_command(
    store: Store,
    paths: tuple[Path, ...],
    fmt: str | None,
    mapping: Path | None,
    results: Path | None,
    skip_bad: bool,
    batch_name: str | None,
    samples: bool,
    on_conflict: Literal["rename", "replace", "skip"],
    dry_run: bool,
) -> None:
    """Import trajectory files or folders of them, all or nothing (staged out of sight in short
    transactions, published in one). Importing a file again adds nothing."""
    from workbench.ingest import SAMPLES, IngestError, import_paths
    from workbench.ingest.imports import NothingImported
    from workbench.progress import Cancelled

    targets = list(paths)
    if samples:
        targets.append(SAMPLES)
        batch_name = batch_name or "samples"
    if not targets:
        raise click.UsageError("give files or folders to import, or --samples")
    if mapping is not None and fmt is not None:
        raise click.UsageError("give --format or --map, not both")
    try:
        report = import_paths(
            store,
            targets,
            format=_mapped(mapping) if mapping is not None else fmt,
            results=results,
            skip_bad=skip_bad,
            batch=batch_name,
            dry_run=dry_run,
            on_conflict=on_conflict,
            progress=RichProgress("bytes"),
        )
    except NothingImported as error:
        _print_files(error.report)
        raise click.ClickException(
            plain(_gave_nothing(error.lines)) + "\nnothing was imported"
        ) from None
    except IngestError as error:
        hint = _other_format_hint(error) if fmt is None and mapping is None else ""
        raise click.ClickException(f"{plain(str(error))}{hint}\nnothing was imported") from error
    except Cancelled:
        raise click.ClickException("import cancelled; nothing was imported") from None
    _print_report(report)
    if report.failures():
        raise click.ClickException(plain(_gave_nothing(report.failures())))


def _other_format_hint(error: IngestError) -> str:
    """For a file read as the format it was detected as, and found bad: how to read it as
    another, or through a mapping."""
    if not error.format:
        return ""
    return (
        f"\n(read as {error.format}, the format detected; another format: --format NAME, "
        "see `workbench import --help`; any other log: --map MAPPING.toml, see README's "
        "'Any other log: a mapping file')"
    )


def _mapped(path: Path) -> Importer:
    """The importer a mapping file describes; a bad mapping is one error naming its key."""
    from workbench.ingest import mapped

    return mapped.load(path)


def _gave_nothing(lines: list[str]) -> str:
    """The error listing named files and folders that gave no episode."""
    return "gave no episode:\n" + "\n".join(f"  {line}" for line in lines)


def _file_line(file: FileReport) -> str:
    """One file's line of the summary (plain text, to be escaped)."""
    head = f"{file.path}: {file.format or '?'}: "
    if file.status == "duplicate":
        return head + "already imported, skipped"
    if file.status == "bad" and file.empty:
        return head + f"skipped: {file.reason}"
    if file.empty:
        return head + file.reason
    line = head + f"{file.episodes} new episode(s)"
    if file.existing:
        line += f", {file.existing} already present"
    if file.updated:
        line += f", {file.updated} with their outcome updated"
    if file.conflicts:
        line += f", {_conflict_counts(file.conflicts)}"
    line += f"; {file.succeeded} succeeded, {file.failed} failed, {file.unknown} unknown"
    line += f"; {file.steps} step(s)"
    if file.bad:
        line += f"; {len(file.bad)} bad record(s) skipped"
    return line


def _print_files(report: ImportReport) -> None:
    """Per file what it gave, then the files the folders held that no format claims."""
    for file in report.files:
        if file.status != "ignored":
            console.print(shown(_file_line(file)), soft_wrap=True)
    for file in report.ignored:
        console.print(f"[dim]ignored {shown(file.path)}: {shown(file.reason)}[/]", soft_wrap=True)


def _print_report(report: ImportReport) -> None:
    """The import's summary: files, skipped records, totals; a dry run's preview first."""
    if report.dry_run:
        for parsed in report.preview:
            _print_parsed(parsed)
    _print_files(report)
    for reason in report.bad:
        errors.print(f"[yellow]skipped:[/] {shown(reason)}", soft_wrap=True)
    files = [f for f in report.files if f.status != "ignored"]
    verb = "would import" if report.dry_run else "imported"
    summary = f"{verb} {report.episodes} episode(s)"
    summary += f" ({sum(f.succeeded for f in files)} succeeded, {sum(f.failed for f in files)} failed, {sum(f.unknown for f in files)} unknown; {sum(f.steps for f in files)} step(s))"
    summary += f" from {len(files)} file(s)"
    if report.batch_id and not report.dry_run:
        summary += f" into batch {shown(report.batch_id)}"
    if report.updated:
        verb_updated = "would update" if report.dry_run else "updated"
        summary += f"; {verb_updated} the outcome of {report.updated} stored episode(s)"
    if report.ignored:
        summary += f"; ignored {len(report.ignored)} file(s)"
    if report.bad:
        summary += f"; skipped {len(report.bad)} bad record(s)"
    console.print(
        summary + ("; dry run: nothing was written" if report.dry_run else ""), soft_wrap=True
    )
    if report.conflicts:
        errors.print(shown(_conflicts_line(report.conflicts, report.dry_run)), soft_wrap=True)


CONFLICTS_SHOWN = 5
"""Conflicting episodes an import's summary names (the rest are counted)."""


def _conflict_counts(conflicts: list[Placed]) -> str:
    """``3 conflicting (2 renamed, 1 kept)``."""
    counts = Counter(placed.status for placed in conflicts)
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{len(conflicts)} conflicting ({parts})"


def _conflicts_line(conflicts: list[Placed], dry_run: bool) -> str:
    """What the import did with episodes whose id was stored with other content."""
    from store.staging import RENAMED

    status = conflicts[0].status if len({p.status for p in conflicts}) == 1 else ""
    named = [
        f"{p.episode_id}"
        if p.status != "renamed"
        else f"{p.episode_id.rpartition(RENAMED)[0]} as {p.episode_id}"
        for p in conflicts[:CONFLICTS_SHOWN]
    ]
    more = (
        f" and {len(conflicts) - CONFLICTS_SHOWN} more" if len(conflicts) > CONFLICTS_SHOWN else ""
    )
    verb = {
        "renamed": "stored renamed",
        "replaced": "replaced the stored ones",
        "kept": "left out, the stored ones kept",
    }.get(status, "settled by --on-conflict")
    would = "would be " if dry_run and status == "renamed" else ""
    return (
        f"conflict: {len(conflicts)} episode(s) had the id of a stored episode with other "
        f"content: {would}{verb}: {', '.join(named)}{more} "
        "(--on-conflict rename|replace|skip decides)"
    )


PREVIEW_STEPS = 6
"""Steps of each episode a dry run shows."""


def _print_parsed(parsed: ParsedEpisode) -> None:
    """One parsed episode, briefly: ids, outcome, instruction and its first steps."""
    episode = parsed.episode
    console.rule(f"[bold]{shown(episode.id)}[/]", align="left", style="dim")
    console.print(
        f"task {shown(episode.task_id)}  agent={shown(episode.agent)}  outcome {_outcome_cell(episode)}"
        f"  score={episode.outcome.score}  steps={len(parsed.steps)}"
    )
    if parsed.task.instruction:
        console.print(f"[bold]instruction[/] {shown(_short(parsed.task.instruction))}")
    for step in parsed.steps[:PREVIEW_STEPS]:
        text = step.action or step.content or step.observation or step.thought
        console.print(f"  {step.index:>3} {step.kind:<11} {shown(_short(text))}")
    if len(parsed.steps) > PREVIEW_STEPS:
        console.print(f"  [dim]… {len(parsed.steps) - PREVIEW_STEPS} more step(s)[/]")


def _short(text: str, width: int = 72) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


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


@click.command("ls")
@filter_options
@click.option(
    "--limit",
    type=integer(min=0),
    default=50,
    show_default=True,
    help="At most this many rows (0 = all).",
)
@existing_db_option
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


def _parse_range(text: str | None, n_steps: int, option: str = "--steps") -> tuple[int, int]:
    if not text:
        return 0, n_steps
    start, sep, stop = text.partition(":")
    if not all(part.strip().lstrip("-").isdigit() for part in (start, stop) if part):
        raise click.BadParameter(f"expected a:b (e.g. 0:10), got {text!r}", param_hint=option)
    first = parse_integer(start, option) if start else 0
    last = parse_integer(stop, option) if stop else n_steps
    if not sep:
        last = first + 1
    return first, last


SHOW_STEPS = 100
"""Steps ``show`` prints unless ``--steps`` or ``--all`` says otherwise."""
SHOW_CHARS = 2000
"""Characters of each text ``show`` prints unless ``--chars`` says otherwise."""
PAGE = 500
"""Steps read at a time by ``show --all`` (memory stays that of one page)."""


def _chars(text: str | None) -> tuple[int, int | None]:
    """``--chars``: ``N`` (the first N), ``a:b`` or ``a:`` (to the end); ``(start, count)``."""
    if text is None:
        return 0, SHOW_CHARS
    if ":" not in text:
        count = parse_integer(text, "--chars")
        if count < 0:
            raise click.BadParameter(
                f"expected N >= 0, a:b or a:, got {text!r}", param_hint="--chars"
            )
        return 0, count
    start, stop = _parse_range(text, -1, "--chars")
    if start < 0 or (stop >= 0 and stop < start):
        raise click.BadParameter(
            f"expected a:b with 0 <= a <= b, got {text!r}", param_hint="--chars"
        )
    return start, None if stop < 0 else stop - start


@click.command("show")
@click.argument("episode_id")
@click.option("--steps", "step_range", help="Steps a:b (b exclusive), e.g. 0:10 or 5: or 7.")
@click.option(
    "--all", "all_steps", is_flag=True, help=f"Every step (default: the first {SHOW_STEPS})."
)
@click.option(
    "--chars",
    "char_range",
    help=f"Characters of each text: N, a:b or a: (default: the first {SHOW_CHARS:,}); a "
    "longer text says its length.",
)
@click.option("--raw", is_flag=True, help="Also print each step's original record.")
@existing_db_option
def show_command(
    store: Store,
    episode_id: str,
    step_range: str | None,
    all_steps: bool,
    char_range: str | None,
    raw: bool,
) -> None:
    """Show one episode: outcome, task, spans and steps (a page of them, each text cut to a
    window: memory and time follow what is shown, not what is stored)."""
    episode = store.episode(episode_id)
    if episode is None:
        raise click.ClickException(f"no episode {episode_id!r} (see `workbench ls`)")
    if step_range and all_steps:
        raise click.UsageError("give --steps or --all, not both")
    offset, count = _chars(char_range)
    _show_header(store, episode)
    first, last = _parse_range(step_range, episode.n_steps)
    if not step_range and not all_steps:
        last = min(last, first + SHOW_STEPS)
    chars = count if count is not None else SQLITE_TEXT_MAX
    for page in range(first, last, PAGE):
        for cut in store.cut_steps(episode.id, page, min(page + PAGE, last), chars, offset):
            _show_step(cut, raw)
    shown_to = min(last, episode.n_steps)
    if not step_range and not all_steps and shown_to < episode.n_steps:
        console.print(
            f"[dim]steps {first}..{shown_to - 1} of {episode.n_steps:,}: --steps "
            f"{shown_to}:{shown_to + SHOW_STEPS} for the next, --all for every step[/]"
        )


SQLITE_TEXT_MAX = 2**31 - 1
"""More characters than any text SQLite holds (``--chars a:`` reads to the end)."""


def _show_header(store: Store, episode: Episode) -> None:
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


def _show_step(cut: CutStep, raw: bool) -> None:
    import json

    from store import CUT_TEXTS

    step = cut.step
    console.rule(
        f"step {step.index} · {step.kind} · {step.role}"
        + (f" · {escape(plain(step.agent))}" if step.agent else "")
        + (f" · reward {step.reward:g}" if step.reward is not None else ""),
        align="left",
        style="dim",
    )
    for label in CUT_TEXTS:
        if text := getattr(step, label):
            console.print(f"[bold cyan]{label}[/] {escape(text)}{_cut_note(cut, label)}")
    if raw and step.raw is not None:
        console.print(f"[bold]raw[/] {escape(json.dumps(step.raw, ensure_ascii=False))}")
    elif raw and cut.cut("raw"):
        console.print(
            f"[bold]raw[/] [dim](a record of {cut.lengths['raw']:,} bytes, not shown "
            "with a cut text: --chars 0: shows every text whole)[/]"
        )


def _cut_note(cut: CutStep, label: str) -> str:
    """What a window leaves out of one text, e.g. `` [characters 0..1,999 of 209,715,200]``."""
    if not cut.cut(label):
        return ""
    end = cut.offset + len(getattr(cut.step, label)) - 1
    note = f"[characters {cut.offset:,}..{end:,} of {cut.lengths[label]:,}: --chars for more]"
    return f" [dim]{escape(note)}[/]"


@click.command("search")
@click.argument("query")
@filter_options
@click.option(
    "--limit", type=integer(min=1), default=20, show_default=True, help="At most this many hits."
)
@existing_db_option
def search_command(store: Store, query: str, where: EpisodeFilter, limit: int) -> None:
    """Full-text search over step text (SQLite FTS5 syntax; plain words must all match).

    Hits are the best by rank among the newest 2,000 matches (all of them when there are
    no more; the output says when there were)."""
    page = store.search_page(query, where, limit=limit)
    hits = page.hits
    columns = [Column("episode"), Column("step", justify="right"), Column("kind")]
    columns.append(Column("match", text=True))
    rows = [[h.episode_id, str(h.index), h.kind, h.snippet.replace("\n", " ")] for h in hits]
    print_records(console, columns, rows)
    console.print(f"[dim]{len(hits)} hit(s)[/]")
    if not page.ranked_all:
        console.print(
            f"[dim]best of the newest {page.window:,} matches by rank (there are more; narrow "
            "the query or filter to rank them all)[/]"
        )


@click.command("stats")
@filter_options
@click.option(
    "--by",
    "groups",
    type=click.Choice(["family", "agent", "batch"]),
    multiple=True,
    help="Group by (repeatable; default: all three).",
)
@existing_db_option
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


@click.command("export")
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
@existing_db_option
def export_command(store: Store, where: EpisodeFilter, fmt: str, out: Path | None) -> None:
    """Export episodes (with tasks, batches, steps and spans) as workbench JSONL."""
    from workbench.ingest import jsonl

    if out is None:
        count = jsonl.write(store, store.iter_episodes(where), sys.stdout)
    else:
        count = write_out(
            out, lambda handle: jsonl.write(store, store.iter_episodes(where), handle)
        )
    errors.print(f"exported {count} episode(s)")
