"""Importing files into the store: detection, hashing, all or nothing per import (staged in
short transactions, published in one: :mod:`store.staging`), and the report of what each file
gave (or why it gave nothing)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import sqlite3
import stat
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from store import Batch, DatabaseBusy, Store
from store.staging import (
    OnConflict,
    Placed,
    Source,
    StagedEpisode,
    StagedImport,
    clean_up,
    interrupted,
    next_size,
    staged,
)
from workbench.ingest import formats, storable
from workbench.ingest.base import Importer, IngestError, ParsedEpisode, ReadContext, path_text
from workbench.ingest.steps import StepFields
from workbench.progress import NullProgress, Progress, check_cancel

FileStatus = Literal["imported", "duplicate", "bad", "ignored"]

PREVIEW = 3
"""How many parsed episodes a report keeps to show (``--dry-run`` prints them)."""
READ_ONCE = 1 << 20
"""Files up to this size are read into memory once, to hash and to parse; larger ones are
read twice (hashed, then streamed), so that memory stays flat whatever a file's size."""
CHUNK_ROWS = 4000
"""Rows (episodes and steps) of the first chunk an import stages in one transaction; later
chunks are sized from how long the last one held the write lock (``store.staging``)."""
CHUNK_BYTES = 4 << 20
"""A chunk is staged once it holds this many bytes of the file, whatever its rows."""
LARGE_RECORD = 8 << 20
"""Bytes of the file an episode was read from that make it staged alone, with less memory
(``StagedImport.add``'s ``large``)."""


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
    """Episodes already in the store (same id, same content), left as they were."""
    updated: int = 0
    """Episodes already in the store whose outcome this file changed (read again with a
    results file, or a newer report)."""
    conflicts: list[Placed] = field(default_factory=list)
    """Episodes whose id the store (or an earlier record of the import) held with other
    content, each with where it went: renamed (counted in :attr:`episodes`), replacing the
    stored one (counted too) or left out, the stored one kept."""
    succeeded: int = 0
    """Added episodes whose outcome is a success."""
    failed: int = 0
    """Added episodes whose outcome is a failure."""
    unknown: int = 0
    """Added episodes whose source does not say how they went."""
    steps: int = 0
    """Steps of the added episodes."""
    queued: int = 0
    """Episodes read and waiting in the import's chunk, not yet counted as new or present."""
    bad: list[str] = field(default_factory=list)
    """Records skipped with ``skip_bad``, each as its error message."""
    reason: str = ""
    """Why the file was ignored or gave nothing, in words."""
    error: IngestError | None = None
    """The error that made a named file unreadable, kept to raise it."""

    @property
    def empty(self) -> bool:
        """Whether the file gave no episode at all (neither new nor already present)."""
        found = self.episodes + self.existing + self.updated + self.queued + len(self.conflicts)
        return self.status != "duplicate" and found == 0

    def count(self, success: bool | None, steps: int) -> None:
        """Count one added episode's outcome and steps."""
        if success is None:
            self.unknown += 1
        elif success:
            self.succeeded += 1
        else:
            self.failed += 1
        self.steps += steps


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
    def updated(self) -> int:
        """Stored episodes whose outcome the import changed."""
        return sum(f.updated for f in self.files)

    @property
    def conflicts(self) -> list[Placed]:
        """Every file's conflicts (see :attr:`FileReport.conflicts`)."""
        return [placed for f in self.files for placed in f.conflicts]

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
        else:  # (a line per file, each cut already)
            super().__init__("", "", "", "")
            self.message = "\n".join(self.lines)

    def __str__(self) -> str:
        return self.message if not self.path else super().__str__()


@dataclass(frozen=True)
class Scanned:
    """What one pass over an import's files found."""

    digest: str
    """SHA-256 over the files' bytes (the results or companion files after the first)."""
    file_digest: str
    """The same of the first file alone: what episode ids derive from, so that reading it
    again with a results file gives the same ids."""
    nul: tuple[int, int] | None
    """Where the first file's first NUL byte is, as ``(line, byte)``; ``None``: nowhere."""


def scanned(*paths: Path | None, first: bytes | None = None) -> Scanned:
    """SHA-256 over the bytes of the given files, in order (``None`` entries are skipped;
    ``first``: the first file's bytes, when they were read already), and more, in one pass
    (see :class:`Scanned`)."""
    digest = hashlib.sha256()
    file_digest = ""
    nul: tuple[int, int] | None = None
    for k, path in enumerate(paths):
        if path is None:
            continue
        chunks = [first] if k == 0 and first is not None else _chunks(path)
        done = 0
        for chunk in chunks:
            digest.update(chunk)
            if k == 0 and nul is None and (at := chunk.find(b"\x00")) >= 0:
                nul = (_line_of(path, first, done + at), done + at)
            done += len(chunk)
        digest.update(b"\x00")
        file_digest = file_digest or digest.hexdigest()
    return Scanned(digest.hexdigest(), file_digest, nul)


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            yield chunk


def _line_of(path: Path, content: bytes | None, offset: int) -> int:
    """The line byte ``offset`` of a file is on (its lines counted only when asked: a file
    with a NUL byte, which is refused)."""
    if content is not None:
        return content.count(b"\n", 0, offset) + 1
    lines = done = 0
    for chunk in _chunks(path):
        if done + len(chunk) > offset:
            return lines + chunk.count(b"\n", 0, offset - done) + 1
        lines, done = lines + chunk.count(b"\n"), done + len(chunk)
    return lines + 1


NUL_BYTE = (
    "a NUL byte: binary data, not text of this format (or a file padded with zeros, or UTF-16 "
    "text: save it as UTF-8)"
)
"""Why a file holding a NUL byte is not read (unless its importer reads binary files): no
JSON text holds one, and a file of one line and then a gigabyte of zeros would be read as one
line, all in memory."""


def expand(paths: Iterable[Path]) -> list[tuple[Path, bool]]:
    """Files to import as ``(path, named)``: named files as given, directories walked (their
    hidden files and everything but regular files left out: reading a named pipe or a
    device could wait forever or never end).

    Raises :class:`IngestError` for a named path that is not a regular file or a directory,
    saying what it is.
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
            raise IngestError(path, "", "", not_a_file(path))
    return files


_SPECIAL = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_a_file(path: Path) -> str:
    """What ``path`` is, when it is neither a regular file nor a directory, in words."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link that loops (it leads back to itself)"
        if error.errno == errno.ENOENT and path.is_symlink():
            return f"a symbolic link to {path_text(os.readlink(path))!r}, which does not exist"
        if error.errno == errno.ENOENT:
            return "no such file or directory"
        return f"cannot be read: {error.strerror or error}"
    what = next((name for test, name in _SPECIAL if test(mode)), "not a regular file")
    target = f" ({path_text(path.resolve())})" if path.is_symlink() else ""
    return f"{what}{target}, not a file to import"


class _Import:
    """State of one running import: parsed episodes gathered into chunks, each staged in one
    short transaction, and the files to record when it is published."""

    def __init__(
        self,
        store: Store,
        batch_name: str | None,
        params: dict[str, object],
        dry_run: bool,
        on_conflict: OnConflict = "rename",
    ) -> None:
        self.store = store
        existing = store.batch(batch_name) if batch_name else None
        name = batch_name or f"import-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}"
        self.batch = existing or Batch(id=name, name=name, kind="import", params=params)
        """The import's batch: the one named, stored under its name when it is new (the name
        is what every face shows and filters by); else one named by the time."""
        self.staged = StagedImport(store, dry_run=dry_run, on_conflict=on_conflict)
        self.used = False
        """Whether an episode went into the import's batch (only then is the batch stored)."""
        self.preview: list[ParsedEpisode] = []
        """The first parsed episodes, for a dry run's report."""
        self.pending: list[StagedEpisode] = []
        self.reports: list[tuple[FileReport, bool | None, int, bool]] = []
        """The file report, success and steps of each pending episode, to count it."""
        self.rows = 0
        self.bytes = 0
        self.largest = 0
        """Bytes of the file the largest pending episode was read from."""
        self.limit = CHUNK_ROWS
        self.sources: list[tuple[str, str, str, FileReport, dict[str, Any]]] = []
        """Files read, to record when publishing (with the report that counts their episodes,
        and what each shares with all its episodes)."""
        self.hashes: set[str] = set()
        """Content hashes of the files read, so that a file named twice is read once."""

    def imported(self, content_hash: str) -> bool:
        """Whether a file with this content was imported before, or earlier in this import."""
        return content_hash in self.hashes or self.store.has_source(content_hash)

    def store_episode(self, parsed: ParsedEpisode, report: FileReport, size: int) -> bool:
        """Add a parsed episode to the chunk (``size``: the bytes of the file it came from);
        whether the chunk is full (then :meth:`flush` it, once ``parsed`` is no longer held:
        a big record's text is then freed before it is indexed).

        Text with lone surrogates is stored with U+FFFD in their place; any other value SQLite
        cannot hold is an :class:`IngestError` naming it, and the episode is not added.
        """
        batch = parsed.batch if parsed.batch is not None else self.batch
        misfit = storable.misfit(report.path, parsed)
        if misfit is not None:
            raise misfit
        table = parsed.steps.table if isinstance(parsed.steps, StepFields) else None
        try:
            rows = staged(batch, parsed.task, parsed.episode, parsed.steps, parsed.spans, table)
            refused = storable.refused(rows)
            if refused == "surrogate":
                parsed = storable.without_surrogates(parsed)
                rows = staged(batch, parsed.task, parsed.episode, parsed.steps, parsed.spans)
                refused = storable.refused(rows)
            if refused is not None:
                raise OverflowError(f"a value SQLite cannot store ({refused})")
        except storable.UNSTORABLE as error:
            raise storable.unstorable(report.path, parsed, error) from None
        if size >= LARGE_RECORD:  # staged alone (``StagedImport.add``'s ``large``)
            self.flush()
        if self.staged.dry_run and len(self.preview) < PREVIEW:  # (else: a big record kept alive)
            self.preview.append(parsed)
        self.pending.append(rows)
        report.queued += 1
        own = parsed.batch is None
        self.reports.append((report, parsed.episode.outcome.success, len(parsed.steps), own))
        self.rows += 1 + len(parsed.steps)
        self.bytes += size
        self.largest = max(self.largest, size)
        return self.rows >= self.limit or self.bytes >= CHUNK_BYTES or size >= LARGE_RECORD

    def flush(self) -> None:
        """Stage the pending episodes in one transaction and count them."""
        if not self.pending:
            return
        try:
            new = self.staged.add(self.pending, large=self.largest >= LARGE_RECORD)
        except sqlite3.IntegrityError as error:  # a check above missed what the schema refuses
            files = ", ".join(dict.fromkeys(report.path for report, *_ in self.reports))
            raise IngestError(
                files, "", "", f"the database refused an episode read from it: {error}"
            ) from None
        for placed, (report, success, steps, own) in zip(new, self.reports, strict=True):
            report.queued -= 1
            self.used = self.used or (own and placed.added)
            if placed.added:
                report.episodes += 1
                report.count(success, steps)
            elif placed.status == "present":
                report.existing += 1
            elif placed.status == "updated":
                report.updated += 1
            if placed.conflict:
                report.conflicts.append(placed)
        if not self.staged.dry_run:
            self.limit = next_size(self.rows, self.store.locks.last)
        self.pending, self.reports, self.rows, self.bytes, self.largest = [], [], 0, 0, 0

    def add_source(
        self,
        content_hash: str,
        path: Path,
        fmt: str,
        report: FileReport,
        shared: dict[str, Any] | None = None,
    ) -> None:
        """Record a file read to the end, once the import is published (with what it shares
        with all its episodes, stored once)."""
        self.hashes.add(content_hash)
        self.sources.append((content_hash, path_text(path), fmt, report, shared or {}))

    def publish(self) -> None:
        """Make the import visible, all at once (its sources recorded with the import's
        batch when an episode went into it)."""
        batch_id = self.staged.batch_id(self.batch.id) if self.used else None
        sources: list[Source] = [
            (h, p, f, batch_id, r.episodes, shared) for h, p, f, r, shared in self.sources
        ]
        self.staged.publish(sources)


def import_paths(
    store: Store,
    paths: Iterable[Path | str],
    *,
    format: str | Importer | None = None,
    results: Path | str | None = None,
    skip_bad: bool = False,
    batch: str | None = None,
    dry_run: bool = False,
    on_conflict: OnConflict = "rename",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ImportReport:
    """Import trajectory files (and directories of them), all or nothing.

    Episodes are staged out of sight in short transactions (none holds the write lock for
    long, so other writers go on) and published in one: readers see all of the import or none
    of it (:mod:`store.staging`). Any error — a bad record without ``skip_bad``, a file no
    format claims, cancellation — removes what was staged and is raised (:class:`IngestError`, or
    :class:`~workbench.progress.Cancelled`). So does a named file, or named folder, that
    gives no episode (:class:`NothingImported`); with ``skip_bad`` the rest is imported and
    :meth:`ImportReport.failures` says why. Files whose content was imported before are
    reported as duplicates and add nothing; so are episodes stored already with the same id
    and content. An episode whose id is stored with other content is a conflict, settled by
    ``on_conflict`` and reported (:attr:`FileReport.conflicts`): never dropped silently.

    Args:
        store: where episodes go.
        paths: files or directories; directories are walked and files no format claims are
            ignored (reported with the reason).
        format: force one importer, by name or as an importer object (a mapping's, see
            :mod:`workbench.ingest.mapped`), instead of detecting per file.
        results: a results/evaluation file to join outcomes from (formats that support it).
        skip_bad: skip unreadable records (and files), reporting why, instead of failing.
        batch: name of the batch to add episodes to (created if new).
        dry_run: read and check everything, report it, and write nothing (nor wait for the
            write lock).
        on_conflict: ``rename`` (the default: stored as ``<id>~2``), ``replace`` or ``skip``
            (see :data:`store.staging.OnConflict`).
        progress: receives bytes read.
        cancel: set it to stop; the import rolls back.
    """
    progress = progress or NullProgress()
    results_path = Path(results) if results is not None else None
    if results_path is not None and not results_path.is_file():
        raise IngestError(results_path, "", "", f"results file: {not_a_file(results_path)}")
    given = [Path(p) for p in paths]
    files = expand(given)
    forced = (formats.by_name(format) if isinstance(format, str) else format) if format else None
    params = {
        "paths": [path_text(p) for p, _ in files],
        "format": forced.name if forced else None,
        "results": path_text(results) if results else None,
    }
    if not dry_run and interrupted(store):  # imports killed before they were published
        progress.start(None, "removing an interrupted import")
        clean_up(store)
    job = _Import(store, batch, params, dry_run, on_conflict)
    report = ImportReport(batch_id=None, dry_run=dry_run)
    progress.start(sum(p.stat().st_size for p, _ in files), "importing")
    try:
        for path, named in files:
            report.files.append(
                _import_file(job, path, named, forced, results_path, skip_bad, progress, cancel)
            )
        job.flush()
        _finish(job, report, files, [p for p in given if p.is_dir()], skip_bad)
        job.publish()
    except BaseException as error:
        if not isinstance(error, DatabaseBusy):  # (removing would wait as long again)
            _discard(job)
        raise
    finally:
        progress.finish()
    return report


def _discard(job: _Import) -> None:
    """Remove what a failed import staged; when that fails too (the lock stayed taken, the
    process is interrupted again), the next import removes it."""
    with contextlib.suppress(Exception):
        job.staged.discard()


MAP_HINT = (
    "no format the workbench knows claims them: read them through a mapping file with "
    "--map mapping.toml (README: 'Any other log: a mapping file')"
)
"""What a folder whose every file is unrecognised says (once, not per file)."""


def _finish(
    job: _Import,
    report: ImportReport,
    files: list[tuple[Path, bool]],
    folders: list[Path],
    skip_bad: bool,
) -> None:
    """Complete the report; fail on named paths that gave nothing.

    ``files`` are the files read, in the order of their reports.
    """
    report.batch_id = job.staged.batch_id(job.batch.id) if job.used else None
    report.preview = job.preview
    for folder in folders:
        reports = zip(files, report.files, strict=True)
        inside = [f for (path, _), f in reports if path.is_relative_to(folder)]
        if all(f.empty for f in inside):
            ignored = sum(f.status == "ignored" for f in inside)
            what = "no files" if not inside else f"no episodes ({ignored} file(s) ignored)"
            if inside and ignored == len(inside):
                what += f"; {MAP_HINT}"
            report.folders.append((path_text(folder), what))
    if report.failures() and not skip_bad:
        raise NothingImported(report)


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
    report = FileReport(path=path_text(path), named=named)
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
    joined = [results] if results is not None else _companions(importer, path)
    scan = scanned(path, *joined, first=content)
    digest, nul = scan.digest, scan.nul
    if job.imported(digest):
        report.status = "duplicate"
        progress.advance(size)
        return report
    if nul is not None and not getattr(importer, "binary", False):
        error = IngestError(path, f"line {nul[0]:,} (byte {nul[1]:,})", "", NUL_BYTE)
        if not skip_bad:
            raise error
        progress.advance(size)
        _mark_bad(report, error)
        return report
    ctx = ReadContext(
        path=path,
        content_hash=digest,
        file_hash=scan.file_digest,
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
            done = ctx.bytes_read()
            if not isinstance(item, IngestError):
                try:
                    full = job.store_episode(item, report, done - reported)
                    item = None
                    if full:
                        job.flush()
                except IngestError as error:
                    item = error
            if item is not None:
                if not skip_bad:
                    raise item
                report.bad.append(str(item))
            progress.advance(done - reported, path.name)
            reported = done
    except IngestError as error:
        error.format = error.format or importer.name
        if not skip_bad:
            raise
        _mark_bad(report, error)
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
    job.add_source(ctx.content_hash, path, importer.name, report, ctx.shared)


def _mark_bad(report: FileReport, error: IngestError) -> None:
    """A file skipped as unreadable (``skip_bad``): reported with its error."""
    report.status, report.reason, report.error = "bad", error.message, error
    report.bad.append(str(error))


def _companions(importer: Importer, path: Path) -> list[Path]:
    """The files ``importer`` reads beside ``path`` (see ``Importer.companions``)."""
    companions = getattr(importer, "companions", None)
    return [p for p in companions(path) if p.is_file()] if companions else []


def _why_empty(report: FileReport) -> str:
    """Why a file read without error gave no episode."""
    if report.bad:
        return f"every record was bad ({len(report.bad)} skipped); read as {report.format}"
    return f"no episodes in it (read as {report.format})"
