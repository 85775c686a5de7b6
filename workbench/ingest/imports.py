"""Importing files into the store: detection, hashing, one transaction per import, and the
report of what each file gave (or why it gave nothing)."""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from store import Batch, Store
from workbench.ingest import formats, storable
from workbench.ingest.base import Importer, IngestError, ParsedEpisode, ReadContext
from workbench.progress import NullProgress, Progress, check_cancel

FileStatus = Literal["imported", "duplicate", "bad", "ignored"]

PREVIEW = 3
"""How many parsed episodes a report keeps to show (``--dry-run`` prints them)."""
READ_ONCE = 1 << 20
"""Files up to this size are read into memory once, to hash and to parse; larger ones are
read twice (hashed, then streamed), so that memory stays flat whatever a file's size."""


@dataclass
class FileReport:
    """What happened to one file."""

    path: str
    """The file, as found (named on the command line or under a named folder)."""
    format: str = ""
    """The importer that read it; empty when no format claimed it."""
    status: FileStatus = "imported"
    """``imported`` (read, even if every episode was present), ``duplicate`` (the same content
    was imported before), ``bad`` (skipped as unreadable) or ``ignored`` (in a folder, no
    format claims it)."""
    named: bool = True
    """Whether the file was named itself, rather than found in a named folder."""
    episodes: int = 0
    """Episodes added from this file."""
    existing: int = 0
    """Episodes already in the store (same id), left as they were."""
    succeeded: int = 0
    """Added episodes whose outcome is a success."""
    failed: int = 0
    """Added episodes whose outcome is a failure."""
    unknown: int = 0
    """Added episodes whose source does not say how they went."""
    steps: int = 0
    """Steps of the added episodes."""
    bad: list[str] = field(default_factory=list)
    """Records skipped with ``skip_bad``, each as its error message."""
    reason: str = ""
    """Why the file was ignored or gave nothing, in words."""
    error: IngestError | None = None
    """The error that made a named file unreadable, kept to raise it."""

    @property
    def empty(self) -> bool:
        """Whether the file gave no episode at all (neither new nor already present)."""
        return self.status != "duplicate" and self.episodes + self.existing == 0

    def count(self, parsed: ParsedEpisode) -> None:
        """Count one added episode's outcome and steps."""
        success = parsed.episode.outcome.success
        if success is None:
            self.unknown += 1
        elif success:
            self.succeeded += 1
        else:
            self.failed += 1
        self.steps += len(parsed.steps)


@dataclass
class ImportReport:
    """What one import did (or, for a dry run, would do)."""

    batch_id: str | None
    """The import's batch; ``None`` when no new episode went into it (nothing new, or every
    episode kept the batch its file recorded)."""
    files: list[FileReport] = field(default_factory=list)
    """One report per file found, in the order they were read."""
    folders: list[tuple[str, str]] = field(default_factory=list)
    """Named folders that gave no episode, each with why."""
    preview: list[ParsedEpisode] = field(default_factory=list)
    """In a dry run, the first parsed episodes (at most :data:`PREVIEW`), to show what the
    files held; empty otherwise (so that no big record stays in memory to the commit)."""
    dry_run: bool = False
    """Whether the import was rolled back on purpose, writing nothing."""

    @property
    def episodes(self) -> int:
        return sum(f.episodes for f in self.files)

    @property
    def bad(self) -> list[str]:
        return [reason for f in self.files for reason in f.bad]

    @property
    def ignored(self) -> list[FileReport]:
        """Files in named folders that no format claims."""
        return [f for f in self.files if f.status == "ignored"]

    def failures(self) -> list[str]:
        """Why each named file or folder gave nothing, one line each."""
        lines = [f"{f.path}: {f.reason}" for f in self.files if f.named and f.empty]
        return lines + [f"{folder}: {reason}" for folder, reason in self.folders]


class NothingImported(IngestError):
    """Named files or folders that gave no episode; the import is rolled back.

    With one such file, the error is that file's own (path, record, field and message).
    """

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.lines = report.failures()
        named = [f for f in report.files if f.named and f.empty]
        first = named[0].error if len(self.lines) == 1 and named else None
        if first is not None:
            super().__init__(first.path, first.where, first.field, first.message)
        else:
            super().__init__("", "", "", "\n".join(self.lines))

    def __str__(self) -> str:
        return self.message if not self.path else super().__str__()


class _DryRun(Exception):
    """Raised inside a dry run's transaction to roll it back."""


def content_hash(*paths: Path | None, first: bytes | None = None) -> str:
    """SHA-256 over the bytes of the given files, in order (``None`` entries are skipped).

    Args:
        paths: the files.
        first: the first file's bytes, when they were read already.
    """
    digest = hashlib.sha256()
    for k, path in enumerate(paths):
        if path is None:
            continue
        if k == 0 and first is not None:
            digest.update(first)
        else:
            with open(path, "rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
        digest.update(b"\x00")
    return digest.hexdigest()


def expand(paths: Iterable[Path]) -> list[tuple[Path, bool]]:
    """Files to import as ``(path, named)``: named files as given, directories walked.

    Raises :class:`IngestError` for a path that does not exist.
    """
    files: list[tuple[Path, bool]] = []
    for path in paths:
        if path.is_dir():
            depth = len(path.parts)  # what rglob finds is under path: its parts after path's
            files += [
                (p, False)
                for p in sorted(path.rglob("*"))
                if p.is_file() and not any(part.startswith(".") for part in p.parts[depth:])
            ]
        elif path.is_file():
            files.append((path, True))
        else:
            raise IngestError(path, "", "", "no such file or directory")
    return files


class _Import:
    """State of one running import (one transaction)."""

    def __init__(
        self, store: Store, batch_name: str | None, params: dict[str, object], dry_run: bool
    ) -> None:
        self.store, self.dry_run = store, dry_run
        existing = store.batch(batch_name) if batch_name else None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        self.batch = existing or Batch(
            id=f"import-{stamp}", name=batch_name or f"import-{stamp}", kind="import", params=params
        )
        self.used = False
        """Whether an episode went into the import's batch (only then is the batch stored)."""
        self.preview: list[ParsedEpisode] = []
        """The first parsed episodes, for a dry run's report."""
        self.tasks: set[str] = set()
        """Tasks stored by this import: storing one again would leave it as it is."""

    def store_episode(self, parsed: ParsedEpisode, report: FileReport, alone: bool) -> None:
        """Store one parsed episode; text with lone surrogates is stored with U+FFFD in their
        place, and any other value SQLite cannot hold is an :class:`IngestError` naming it.

        Args:
            alone: whether the episode must leave nothing behind when it cannot be stored
                (with ``skip_bad``, where the import goes on without it).
        """
        try:
            try:
                self._store(parsed, report, alone)
            except UnicodeEncodeError:
                parsed = storable.without_surrogates(parsed)
                self._store(parsed, report, alone)
        except storable.UNSTORABLE as error:
            raise storable.unstorable(report.path, parsed, error) from None
        if self.dry_run and len(self.preview) < PREVIEW:  # (else: a big record kept alive)
            self.preview.append(parsed)

    def _store(self, parsed: ParsedEpisode, report: FileReport, alone: bool) -> None:
        with self.store.transaction() if alone else contextlib.nullcontext():
            if parsed.batch is not None:
                self.store.put_batch(parsed.batch)
            elif not self.used:
                self.store.put_batch(self.batch)
            if parsed.task.id not in self.tasks:  # (put_task keeps the first of an id)
                self.store.put_task(parsed.task)
            added = self.store.add_episode(parsed.episode, parsed.steps, parsed.spans)
        if parsed.batch is None:
            self.used = True
        self.tasks.add(parsed.task.id)
        if added:
            report.episodes += 1
            report.count(parsed)
        else:
            report.existing += 1


def import_paths(
    store: Store,
    paths: Iterable[Path | str],
    *,
    format: str | Importer | None = None,
    results: Path | str | None = None,
    skip_bad: bool = False,
    batch: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ImportReport:
    """Import trajectory files (and directories of them) in one transaction.

    Any error — a bad record without ``skip_bad``, a file no format claims, cancellation —
    rolls the whole import back and is raised (:class:`IngestError`, or
    :class:`~workbench.progress.Cancelled`). So does a named file, or named folder, that
    gives no episode (:class:`NothingImported`); with ``skip_bad`` the rest is imported and
    :meth:`ImportReport.failures` says why. Files whose content was imported before are
    reported as duplicates and add nothing.

    Args:
        store: where episodes go.
        paths: files or directories; directories are walked and files no format claims are
            ignored (reported with the reason).
        format: force one importer, by name or as an importer object (a mapping's, see
            :mod:`workbench.ingest.mapped`), instead of detecting per file.
        results: a results/evaluation file to join outcomes from (formats that support it).
        skip_bad: skip unreadable records (and files), reporting why, instead of failing.
        batch: name of the batch to add episodes to (created if new).
        dry_run: read and check everything, report it, and write nothing.
        progress: receives bytes read.
        cancel: set it to stop; the import rolls back.
    """
    progress = progress or NullProgress()
    results_path = Path(results) if results is not None else None
    if results_path is not None and not results_path.is_file():
        raise IngestError(results_path, "", "", "results file not found")
    given = [Path(p) for p in paths]
    files = expand(given)
    forced = (formats.by_name(format) if isinstance(format, str) else format) if format else None
    params = {
        "paths": [str(p) for p, _ in files],
        "format": forced.name if forced else None,
        "results": str(results) if results else None,
    }
    job = _Import(store, batch, params, dry_run)
    report = ImportReport(batch_id=None, dry_run=dry_run)
    progress.start(sum(p.stat().st_size for p, _ in files), "importing")
    try:
        with store.transaction():
            for path, named in files:
                report.files.append(
                    _import_file(job, path, named, forced, results_path, skip_bad, progress, cancel)
                )
            _finish(job, report, files, [p for p in given if p.is_dir()], skip_bad)
    except _DryRun:
        pass
    finally:
        progress.finish()
    return report


def _finish(
    job: _Import,
    report: ImportReport,
    files: list[tuple[Path, bool]],
    folders: list[Path],
    skip_bad: bool,
) -> None:
    """Complete the report; fail on named paths that gave nothing; roll a dry run back.

    ``files`` are the files read, in the order of their reports.
    """
    report.batch_id = job.batch.id if job.used else None
    report.preview = job.preview
    for folder in folders:
        reports = zip(files, report.files, strict=True)
        inside = [f for (path, _), f in reports if path.is_relative_to(folder)]
        if all(f.empty for f in inside):
            ignored = sum(f.status == "ignored" for f in inside)
            what = "no files" if not inside else f"no episodes ({ignored} file(s) ignored)"
            report.folders.append((str(folder), what))
    if report.failures() and not skip_bad:
        raise NothingImported(report)
    if report.dry_run:
        raise _DryRun


def _import_file(
    job: _Import,
    path: Path,
    named: bool,
    forced: Importer | None,
    results: Path | None,
    skip_bad: bool,
    progress: Progress,
    cancel: threading.Event | None,
) -> FileReport:
    report = FileReport(path=str(path), named=named)
    size = path.stat().st_size
    try:
        importer = forced or formats.detect(path)
    except IngestError as error:
        progress.advance(size)
        report.status = "bad" if named else "ignored"
        report.reason, report.error = error.message, error
        return report
    report.format = importer.name
    content = path.read_bytes() if size <= READ_ONCE else None
    digest = content_hash(path, results, first=content)
    if job.store.has_source(digest):
        report.status = "duplicate"
        progress.advance(size)
        return report
    ctx = ReadContext(
        path=path,
        content_hash=digest,
        batch_id=job.batch.id,
        format=importer.name,
        results=results,
        content=content,
    )
    _read_file(job, report, importer, ctx, size, skip_bad, progress, cancel)
    if report.empty and not report.reason:
        report.reason = _why_empty(report)
    return report


def _read_file(
    job: _Import,
    report: FileReport,
    importer: Importer,
    ctx: ReadContext,
    size: int,
    skip_bad: bool,
    progress: Progress,
    cancel: threading.Event | None,
) -> None:
    path, reported = ctx.path, 0
    try:
        for item in importer.read(ctx):
            check_cancel(cancel)
            if not isinstance(item, IngestError):
                try:
                    job.store_episode(item, report, alone=skip_bad)
                    item = None
                except IngestError as error:
                    item = error
            if item is not None:
                if not skip_bad:
                    raise item
                report.bad.append(str(item))
            done = ctx.bytes_read()
            progress.advance(done - reported, path.name)
            reported = done
    except IngestError as error:
        if not skip_bad:
            raise
        report.status = "bad"
        report.bad.append(str(error))
        report.reason, report.error = error.message, error
        progress.advance(size - reported)
        return
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        ArithmeticError,
        RecursionError,
    ) as error:
        # An importer bug must still not leave a traceback or a partial write.
        raise IngestError(
            path, "", "", f"{importer.name} importer failed: {type(error).__name__}: {error}"
        ) from error
    progress.advance(size - reported)
    if report.empty:
        return  # not remembered as imported: read again, it says again why it gave nothing
    job.store.add_source(
        ctx.content_hash,
        str(path),
        importer.name,
        job.batch.id if job.used else None,
        report.episodes,
    )


def _why_empty(report: FileReport) -> str:
    """Why a file read without error gave no episode."""
    if report.bad:
        return f"every record was bad ({len(report.bad)} skipped); read as {report.format}"
    return f"no episodes in it (read as {report.format})"
