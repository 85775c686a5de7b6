"""How the importers read the real files in ``tests/data/real/`` (issue 43, point 1).

Imports each real file on its own (format detected; with its report as ``--results`` where it
has one) into a fresh database and prints, per file, against what a person reading it says
(``tests/ingest/real_expectations.py``, the expectations the tests use): the format detected,
episodes found / expected, then per episode how many have the outcome, the step count, the
task instruction, the tool calls and the speakers right. The last columns are the database's
size over the input's (the file, its report and what is read beside it, such as AgentBench's
``overall.json``; issue 43 point 3 wants at most 3x) and, since an empty database already
takes some room, the growth over the empty one's size against the input.

    python bench/real_formats.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import Store
from tests.ingest.real_expectations import (
    ASPECTS,
    FILES,
    RealFile,
    calls_kept,
    file_episodes,
    instruction_kept,
    outcome_right,
    speaker_kept,
    steps_right,
)
from workbench.ingest import IngestError, formats, import_paths

COLUMNS = ("file", *ASPECTS, "db/input", "growth/input")
PER_EPISODE = ASPECTS[2:]
"""The aspects counted per episode (format and episode count are the file's)."""


def _db_bytes(path: Path) -> int:
    """The database file and its write-ahead log."""
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def _input_bytes(real: RealFile) -> int:
    """The file, its results file, and what its format reads beside it (``Importer.companions``:
    AgentBench's ``overall.json``)."""
    beside = getattr(formats.by_name(real.format), "companions", lambda _: [])
    paths = {real.full_path, *beside(real.full_path)}
    if real.results_path:
        paths.add(real.results_path)
    return sum(p.stat().st_size for p in paths if p.exists())


def _detected(real: RealFile) -> str:
    try:
        return formats.detect(real.full_path).name
    except IngestError:
        return "-"


def _import(real: RealFile, db: Path) -> tuple[Store, str]:
    """A store with the file imported, with its results file if that imports, else without
    (and why not)."""
    store = Store(db)
    try:
        import_paths(store, [real.full_path], results=real.results_path)
        return store, ""
    except IngestError as error:
        if not real.results_path:
            raise
        store.close()
        for stale in db.parent.glob(db.name + "*"):
            stale.unlink()
        store = Store(db)
        import_paths(store, [real.full_path])
        return store, f"--results refused: {error}"


def row(real: RealFile, folder: Path, empty: int) -> tuple[list[str], str]:
    """The table row of one file, and a note when its results file was refused."""
    db = folder / "real.db"
    store, note = _import(real, db)
    episodes = file_episodes(store, real)
    pairs = list(zip(episodes, real.episodes, strict=False))
    counts = dict.fromkeys(PER_EPISODE, 0)
    for episode, expect in pairs:
        steps = store.steps(episode.id)
        counts["outcomes"] += outcome_right(episode, expect)
        counts["steps"] += steps_right(episode, expect)
        counts["instruction"] += instruction_kept(store, episode, expect)
        counts["calls"] += calls_kept(steps, expect)
        counts["speaker"] += speaker_kept(steps, expect)
    store.close()
    size, given = _db_bytes(db), _input_bytes(real)
    wanted = len(real.episodes)
    detected = _detected(real)
    cells = [
        real.path,
        detected if detected == real.format else f"{detected} (want {real.format})",
        f"{len(episodes)}/{wanted}",
        *(f"{counts[name]}/{wanted}" for name in counts),
        f"{size / given:.1f}x",
        f"{(size - empty) / given:.1f}x",
    ]
    return cells, note


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "empty.db"
        Store(base).close()
        empty = _db_bytes(base)
        rows, notes = [], []
        for number, real in enumerate(FILES):
            folder = Path(tmp) / str(number)
            folder.mkdir()
            cells, note = row(real, folder, empty)
            rows.append(cells)
            if note:
                notes.append(f"{real.path}: {note}")
    widths = [max(len(r[i]) for r in [list(COLUMNS), *rows]) for i in range(len(COLUMNS))]
    for cells in [list(COLUMNS), *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    print(f"\nan empty database: {empty:,} bytes")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
