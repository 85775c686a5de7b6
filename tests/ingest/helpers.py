"""What the importer tests share: writing inputs, reading back what was stored, common checks.

Every importer must name the file, record and field of bad input, store a 50 MB observation
whole and add nothing when a file is imported again; the checks here say so once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from store import Episode, Step, Store
from workbench.ingest import ImportReport, IngestError, import_paths

FIFTY_MB = 50 * 1024 * 1024

SYSTEM = ("system", "system")
USER = ("message", "user")
ASSISTANT = ("message", "assistant")
ACTION = ("action", "agent")
"""``(kind, role)`` of the usual steps, to compare with :func:`kinds_and_roles`."""


# -- writing inputs ---------------------------------------------------------------------------


def write_json(path: Path, data: Any) -> Path:
    """Write ``data`` as one JSON document to ``path``."""
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: Iterable[Any]) -> Path:
    """Write ``records`` as JSON lines to ``path``."""
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def write_half(source: Path, path: Path) -> Path:
    """Write the first half of ``source``'s text to ``path``: JSON that breaks off."""
    text = source.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    return path


def write_junk(path: Path, header: bytes = b"", copies: int = 64) -> Path:
    """Write binary junk (``header``, then every byte value ``copies`` times) to ``path``."""
    path.write_bytes(header + bytes(range(256)) * copies)
    return path


# -- reading back -----------------------------------------------------------------------------


def only_episode(store: Store) -> Episode:
    """The one episode in ``store`` (failing when there is not exactly one)."""
    episodes = store.episodes()
    assert len(episodes) == 1
    return episodes[0]


def kinds_and_roles(steps: Iterable[Step]) -> list[tuple[str, str]]:
    """``(kind, role)`` of each step, in order."""
    return [(step.kind, step.role) for step in steps]


def import_error(store: Store, path: Path, format: str, **options: Any) -> IngestError:
    """The error importing ``path`` as ``format`` raises (failing when it raises none)."""
    with pytest.raises(IngestError) as caught:
        import_paths(store, [path], format=format, **options)
    return caught.value


def bad_reasons(report: ImportReport, path: Path) -> list[str]:
    """The report's reasons for bad records, without the file name they start with."""
    return [reason.removeprefix(f"{path}: ") for reason in report.bad]


# -- common checks ----------------------------------------------------------------------------


def assert_record_error(
    store: Store, path: Path, format: str, where: str, field: str, message: str
) -> None:
    """Importing ``path`` fails naming the file, the record and field, and stores nothing."""
    error = import_error(store, path, format)
    assert error.path == str(path)
    assert error.where == where
    assert error.field == field
    assert message in error.message
    assert str(error).startswith(f"{path}: {where}: field '{field}'")
    assert store.episodes() == []


def assert_cut_json_names_line(store: Store, source: Path, path: Path, format: str) -> None:
    """Importing the first half of ``source`` (copied to ``path``) fails naming the line."""
    error = import_error(store, write_half(source, path), format)
    assert error.path == str(path)
    assert error.where.startswith("line ")
    assert "invalid JSON" in error.message
    assert store.episodes() == []


def assert_not_json(store: Store, path: Path, format: str) -> None:
    """Importing ``path`` fails, naming it, as text that is not UTF-8 or not JSON (or binary
    data: a NUL byte)."""
    error = import_error(store, path, format)
    assert error.path == str(path)
    assert any(
        said in error.message for said in ("not UTF-8", "invalid JSON", "a NUL byte: binary data")
    )


def assert_reimport_adds_nothing(
    store: Store, paths: Sequence[Path], format: str, episodes: int
) -> None:
    """Importing ``paths`` stores ``episodes`` episodes; importing them again adds none."""
    first = import_paths(store, list(paths), format=format)
    again = import_paths(store, list(paths), format=format)
    assert first.episodes == episodes and again.episodes == 0 and again.batch_id is None
    assert [f.status for f in again.files] == ["duplicate"] * len(first.files)
    assert store.count_episodes() == episodes


def assert_rolled_back(store: Store, paths: Sequence[Path], format: str) -> None:
    """Importing ``paths``, a bad file among them, fails and leaves no episode and no batch."""
    with pytest.raises(IngestError):
        import_paths(store, list(paths), format=format)
    assert store.count_episodes() == 0 and store.batches() == []


def assert_skip_bad_keeps_good(
    store: Store, folder: Path, format: str, bad: dict[str, str], task_id: str
) -> None:
    """Importing ``folder`` with ``skip_bad`` keeps its one good run, of task ``task_id``.

    Args:
        store: the store imported into.
        folder: the files to import.
        format: their format.
        bad: for each bad file, a part of its name and the field at fault (``""`` for none),
            each of which a reason in the report must name.
        task_id: the task of the good run.
    """
    report = import_paths(store, [folder], format=format, skip_bad=True)
    assert report.episodes == 1
    assert len(report.bad) == len(bad)
    for name, field in bad.items():
        assert any(name in reason and field in reason for reason in report.bad), name
    assert [e.task_id for e in store.episodes()] == [task_id]


def assert_stored_whole(stored: str, original: str) -> None:
    """``stored`` is all of ``original``, a huge text: as long, and with the same ending."""
    assert len(stored) == len(original) and stored.endswith(original[-16:])


def assert_cli_names_bad_line(
    db_path: Path, path: Path, failed_says: str, skipped_says: str
) -> None:
    """``workbench import`` of ``path`` fails in one message (no traceback) that says
    ``failed_says``; with ``--skip-bad`` it succeeds, says ``skipped_says`` and keeps the one
    good episode."""
    from click.testing import CliRunner

    from workbench.cli import main

    env = {"WORKBENCH_DB": str(db_path)}
    failed = CliRunner().invoke(main, ["import", str(path)], env=env)
    assert failed.exit_code == 1 and "Traceback" not in failed.output
    assert failed_says in failed.output
    skipped = CliRunner().invoke(main, ["import", "--skip-bad", str(path)], env=env)
    assert skipped.exit_code == 0, skipped.output
    assert skipped_says in skipped.output
    with Store(db_path) as store:
        assert store.count_episodes() == 1
