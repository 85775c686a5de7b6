"""Import speed: every format's importer against sqlite-utils loading the same rows.

For each format, a synthetic file (``_synthetic.format_file``: the workbench's own format
generated, every other format grown from its sample in ``tests/data``) is imported with
``workbench import``'s code path into a fresh database (told the format, as ``--format``
does), and its CPU time measured. The anchor is what a sqlite-utils user would do with the
same data: the rows the import stored, as JSON lines per table (written before the clock
starts; nested values as JSON), parsed and loaded with ``Table.insert_all`` (defaults, as
``sqlite-utils insert --nl`` does), then ``enable_fts`` on the step text (which fills the
index in bulk). Both run in this process, timed by ``time.process_time``, in ``--repeat``
rounds of one import and one anchor run, each into a fresh database. Prints CPU µs per step
for the import, the anchor, a bare JSON parse of the file and telling the format of each file
(what an import without ``--format`` adds to it; the least of their runs), the ratio of the
least times, and the median (with quartiles) of the rounds' own ratios import/anchor, which
the target is read from (≤ 1 for every format): on a shared virtual machine whose CPU time
for the same work swings by a third from one second to the next, the two runs of a round meet
about the same conditions, and the median of the rounds is steadier than the least of each
side taken apart.

``--instructions`` counts instead the machine instructions each side executes (valgrind's
cachegrind, one run each, in child processes that differ only in the work: an import, the
anchor, or neither, each after opening a store). The count does not depend on the machine's
load, repeats within about 0.3%, and tells the work a change saves from the memory stalls and
drift that CPU time also holds; the target is still read from CPU time.

    python bench/import_speed.py [--steps 20000] [--repeat 5] [--formats workbench,openai-chat,...]
        [--instructions]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _synthetic
import sqlite_utils  # imported before any clock starts (it pulls in pandas when installed)

from store import Episode, Step, Store, Task
from store.raw import restored
from store.rows import columns
from workbench.ingest import IngestError, formats, import_paths, imports

FTS_COLUMNS = ["content", "thought", "action", "observation"]
"""The step text the workbench indexes; the anchor indexes the same columns."""
TABLES = {"tasks": Task, "episodes": Episode, "steps": Step}
"""Tables the anchor loads (each keyed by ``id``), with their records."""


PROBE = 20
"""Episodes of the small import that measures a format's steps per episode."""


def steps_per_episode(fmt: str, folder: Path) -> float:
    """Steps per episode asked of the format's synthetic file (from a small import in memory).

    Per episode asked, not per episode stored: a Claude Code session gives its sub-agents'
    episodes too.
    """
    source = _synthetic.format_file(fmt, folder, PROBE)
    with Store(":memory:") as store:
        report = import_paths(store, [source], format=fmt)
    return sum(f.steps for f in report.files) / PROBE


def workbench_import(db: Path, source: Path, fmt: str) -> tuple[float, int]:
    """CPU seconds of importing ``source`` into a fresh database, and the steps it stored."""
    with Store(db) as store:
        started = time.process_time()
        report = import_paths(store, [source], format=fmt)
        elapsed = time.process_time() - started
    return elapsed, sum(f.steps for f in report.files)


def dump_rows(db: Path, folder: Path) -> dict[str, Path]:
    """The stored rows of each anchor table as a JSON-lines file (the anchor's input).

    Columns the workbench keeps as JSON text (a step's raw record, metadata) are written as
    the nested values they hold, as a user's data would have them: sqlite-utils stores
    nested values as JSON text too. A step's raw record is the verbatim one its step reads
    back (``store.raw``: the workbench stores the text it shares with the step once).
    """
    out = {}
    conn = sqlite_utils.Database(db)
    for table, model in TABLES.items():
        nested = {column for column, _, _, is_json in columns(model) if is_json}
        path = folder / f"{table}.jsonl"
        with open(path, "w") as handle:
            for row in conn[table].rows:
                for column in nested & row.keys():
                    if row[column] is None:
                        continue
                    is_raw = model is Step and column == "raw"
                    row[column] = restored(row[column], row) if is_raw else json.loads(row[column])
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        out[table] = path
    conn.close()
    return out


def anchor(db: Path, files: dict[str, Path]) -> float:
    """CPU seconds of a sqlite-utils user loading the rows and indexing the step text."""
    target = sqlite_utils.Database(db)
    target.enable_wal()
    started = time.process_time()
    for table, path in files.items():
        with open(path) as handle:
            target[table].insert_all((json.loads(line) for line in handle), pk="id")
    target["steps"].enable_fts(FTS_COLUMNS, create_triggers=True)
    elapsed = time.process_time() - started
    target.close()
    return elapsed


def parse_only(source: Path) -> float:
    """CPU seconds of a bare parse of the file(s): JSON lines, a JSON document, or text."""
    started = time.process_time()
    for path in files_of(source):
        text = path.read_text()
        if path.suffix == ".jsonl":
            for line in text.splitlines():
                if line.strip():  # copies of a session are made distinct by blank lines
                    json.loads(line)
        elif path.suffix == ".json" or path.suffix == ".traj":
            json.loads(text)
    return time.process_time() - started


def detection(source: Path) -> float:
    """CPU seconds of telling the format of each file (``workbench import`` without
    ``--format`` does this for every file before reading it; the import timed here is told)."""
    started = time.process_time()
    for path in files_of(source):
        with contextlib.suppress(IngestError):  # a companion file, read with another
            formats.detect(path)
    return time.process_time() - started


def files_of(source: Path) -> list[Path]:
    """The files of a synthetic source: itself, or those in its folder (in order)."""
    return [p for p in sorted(source.rglob("*")) if p.is_file()] if source.is_dir() else [source]


@dataclass
class Measured:
    """One format's CPU seconds, every run of each side in the order they were taken."""

    steps: int
    ours: list[float]
    theirs: list[float]
    parse: float
    """The least CPU seconds of a bare parse."""
    detect: float
    """The least CPU seconds of detecting the format of every file."""

    @property
    def paired(self) -> list[float]:
        """import/anchor of each round (the two runs of a round meet about the same load)."""
        return sorted(o / t for o, t in zip(self.ours, self.theirs, strict=True))


def prepared(fmt: str, folder: Path, n_steps: int) -> tuple[Path, float, int, dict[str, Path]]:
    """``fmt``'s synthetic file of about ``n_steps`` steps, the CPU seconds of its first import
    and the steps it stored, and the anchor's input (the rows that import stored)."""
    folder.mkdir()
    episodes = max(1, round(n_steps / steps_per_episode(fmt, folder / "probe")))
    source = _synthetic.format_file(fmt, folder, episodes)
    first, stored = workbench_import(folder / "import-0.db", source, fmt)
    return source, first, stored, dump_rows(folder / "import-0.db", folder)


def run(fmt: str, folder: Path, n_steps: int, repeat: int) -> Measured:
    """CPU seconds of ``repeat`` rounds of the import and the anchor (in turns), and the least
    of a bare parse, for ``fmt``."""
    source, first, stored, rows = prepared(fmt, folder, n_steps)
    ours, theirs = [first], [anchor(folder / "anchor-0.db", rows)]
    for k in range(1, repeat):  # taken in turns, so that both meet the same load
        ours.append(workbench_import(folder / f"import-{k}.db", source, fmt)[0])
        theirs.append(anchor(folder / f"anchor-{k}.db", rows))
    parse = min(parse_only(source) for _ in range(repeat))
    return Measured(stored, ours, theirs, parse, min(detection(source) for _ in range(repeat)))


VALGRIND = [
    "valgrind",
    "--tool=cachegrind",
    "--cache-sim=no",
    "--cachegrind-out-file=/dev/null",
]
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
"""A child's environment beyond the parent's: numpy's BLAS threads (pandas comes with
sqlite-utils) spin under valgrind for as long as it runs, and string hashes change the
order of some work, both adding instructions that differ from run to run."""


def instructions(fmt: str, folder: Path, n_steps: int) -> tuple[int, int, int]:
    """Steps stored, and the instructions of an import of ``fmt``'s file and of the anchor,
    each beyond those of a child process that does neither."""
    source, _, stored, _ = prepared(fmt, folder, n_steps)  # (its rows: written as files)
    (folder / "source.txt").write_text(str(source))
    counts = {}
    for work in ("neither", "import", "anchor"):
        command = [*VALGRIND, sys.executable, __file__, "--child", work, "--folder", str(folder)]
        done = subprocess.run(
            [*command, "--formats", fmt],
            capture_output=True,
            text=True,
            env={**os.environ, **CHILD_ENV},
        )
        found = _REFS.search(done.stderr)
        if done.returncode != 0 or found is None:
            sys.exit(f"{fmt}: the {work} child failed under valgrind:\n{done.stderr[-2000:]}")
        counts[work] = int(found.group(1).replace(",", ""))
    return stored, counts["import"] - counts["neither"], counts["anchor"] - counts["neither"]


def child(work: str, folder: Path, fmt: str) -> None:
    """One side's work (or ``neither``) after opening a store, as ``instructions`` counts it.

    Every child creates one store (its schema's migrations); the import's is the database it
    then imports into, as the timed rounds leave creating it out of the import's CPU.

    The import stages its chunks at the first chunk's size (``imports.CHUNK_ROWS``), as it does
    running natively here, where a chunk holds the write lock about 0.1 s: an import sizes
    its chunks by how long the last one held the lock, and valgrind's fifty-fold slowdown
    would halve them to about 125 rows (the count would then hold dozens of transactions
    and index merges that a native import does not make, and would change with the load).
    """
    with Store(folder / ("child.db" if work == "import" else "child-store.db")):
        pass
    if work == "import":
        imports.next_size = lambda size, held, largest=0: size
        workbench_import(folder / "child.db", Path((folder / "source.txt").read_text()), fmt)
    elif work == "anchor":
        anchor(folder / "child.db", {table: folder / f"{table}.jsonl" for table in TABLES})
    for path in folder.glob("child*.db*"):
        path.unlink()


def count_instructions(wanted: list[str], n_steps: int) -> None:
    """Print the instructions per step of each format's import and of the anchor."""
    print(f"{'format':15} {'steps':>7} {'import':>13} {'anchor':>13}  import/anchor")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in wanted:
            steps, ours, theirs = instructions(fmt, Path(tmp) / fmt, n_steps)
            shutil.rmtree(Path(tmp) / fmt)
            worst = max(worst, ours / theirs)
            print(
                f"{fmt:15} {steps:7,} {ours / steps:>7,.0f} ins. {theirs / steps:>7,.0f} ins."
                f"  {ours / theirs:13.3f}"
            )
    print(f"instructions per step, worst import/anchor: {worst:.3f} (the target is CPU time)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="about this many per format")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the import and anchor")
    parser.add_argument("--formats", default=",".join(formats.names()))
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind instead of timing (one run each side)",
    )
    parser.add_argument("--child", choices=["neither", "import", "anchor"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    wanted = args.formats.split(",")
    unknown = [fmt for fmt in wanted if fmt not in formats.names()]
    if unknown:
        parser.error(f"unknown format(s) {', '.join(unknown)}; known: {', '.join(formats.names())}")
    if args.child:
        child(args.child, args.folder, wanted[0])
        return
    if args.instructions:
        if shutil.which("valgrind") is None:
            parser.error("--instructions needs valgrind on PATH (Debian: apt-get install valgrind)")
        count_instructions(wanted, args.steps)
        return
    print(
        f"{'format':15} {'steps':>7} {'import':>9} {'anchor':>9} {'parse':>8} {'detect':>8}"
        "  least/least"
        "  import/anchor by round: median [quartiles]"
    )
    worst, missing = 0.0, []
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in wanted:
            try:
                found = run(fmt, Path(tmp) / fmt, args.steps, args.repeat)
            except _synthetic.NoSyntheticFile as error:
                print(f"{fmt:15} not measured: {error}")
                missing.append(fmt)
                continue
            shutil.rmtree(Path(tmp) / fmt)  # its databases, before the next format's
            ours, theirs, paired = min(found.ours), min(found.theirs), found.paired
            ratio = statistics.median(paired)
            worst = max(worst, ratio)
            seconds = (ours, theirs, found.parse, found.detect)
            per = [f"{second / found.steps * 1e6:6.1f} µs" for second in seconds]
            low, high = paired[len(paired) // 4], paired[-1 - len(paired) // 4]
            print(
                f"{fmt:15} {found.steps:7,} {' '.join(per)}  {ours / theirs:11.2f}"
                f"  {ratio:5.2f} [{low:.2f}–{high:.2f}]"
            )
    verdict = "OK" if worst <= 1.0 else "ABOVE TARGET"
    if missing:
        verdict = f"INCOMPLETE ({len(missing)} format(s) not measured)"
    print(f"CPU per step, worst median import/anchor: {worst:.2f} (target <= 1) {verdict}")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
