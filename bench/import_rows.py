"""What every importer stores, as text: to check that a speed change stores the same rows.

Imports every file and folder under ``tests/data/<format>/`` (each on its own, format
detected, ``--skip-bad``), ``workbench/samples`` and each format's small synthetic file (see
``_synthetic.format_file``) into fresh databases, and writes, per import, its report (status,
episodes, steps and bad-record messages per file) and every row it stored in ``tasks``,
``episodes``, ``steps``, ``spans`` and ``steps_fts`` (the search index), in id order. The
import's own batch id and times are replaced by placeholders (and the checkouts' folders, so
that one checkout's code can be compared with another's), so two runs of the same code write
the same text. Run it before and after a change and compare:

    PYTHONPATH=/path/to/old/checkout python bench/import_rows.py /tmp/before.txt
    python bench/import_rows.py /tmp/after.txt
    cmp /tmp/before.txt /tmp/after.txt
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _synthetic

from store import Store
from workbench.ingest import SAMPLES, IngestError, formats, import_paths

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TABLES = {
    "tasks": "id",
    "episodes": "id",
    "steps": "id",
    "spans": "id",
    "steps_fts": "rowid",
}
"""The tables an import writes (with the column that orders their rows)."""
SYNTHETIC_EPISODES = 3
JOINED = [
    ("swe-agent", "swe-agent", "swebench-report/claude-3-5-sonnet.verified-run.json"),
    ("mini-swe-agent", "mini-swe-agent", "swebench-report/report.json"),
    ("mini-swe-agent", "mini-swe-agent", "swebench-report/instances.jsonl"),
    ("openai-chat/joined.jsonl", "openai-chat", "openai-chat/joined.results.jsonl"),
    ("atif/hello.atif.json", "atif", "atif/hello.result.json"),
    (
        "agentbench/gpt-4o/dbbench-std/runs.jsonl",
        "agentbench",
        "agentbench/gpt-4o/os-std/overall.json",
    ),
]
"""Imports with a results file joined: ``(path under tests/data, format, results)``."""

Input = tuple[str, Path, str | None, Path | None]
"""What to import: ``(name, path, forced format, results file)``."""


def inputs(folder: Path) -> Iterator[Input]:
    """Everything to import: each sample on its own, joined results, synthetic files."""
    for sub in sorted(DATA.iterdir()):
        for path in sorted(sub.iterdir()):
            yield f"data/{sub.name}/{path.name}", path, None, None
    for path in sorted(SAMPLES.iterdir()):
        yield f"samples/{path.name}", path, None, None
    for path, fmt, results in JOINED:
        yield f"joined/{path} + {results}", DATA / path, fmt, DATA / results
    for fmt in formats.names():
        source = _synthetic.format_file(fmt, folder / "synthetic" / fmt, SYNTHETIC_EPISODES)
        yield f"synthetic/{fmt}", source, fmt, None


def rows(store: Store) -> Iterator[str]:
    """Every row of :data:`TABLES`, as ``table: (values...)``."""
    for table, order in TABLES.items():
        columns = "rowid, *" if table == "steps_fts" else "*"
        for row in store.conn.execute(f"SELECT {columns} FROM {table} ORDER BY {order}"):
            yield f"{table}: {tuple(row)!r}"


def one_import(db: Path, what: Input, tmp: Path) -> Iterator[str]:
    """Import ``path`` into a new database ``db``; the lines describing what it stored (the
    temporary folder and the import's batch ids replaced by placeholders)."""
    _, path, fmt, results = what
    with Store(db) as store:
        try:
            report = import_paths(store, [path], format=fmt, results=results, skip_bad=True)
        except IngestError as error:
            lines = [f"error: {error}"]
        else:
            lines = [f"episodes {report.episodes}"]
            for f in report.files:
                counts = f"{f.status} {f.format} {f.episodes}+{f.existing} {f.steps}"
                lines += [f"file {f.path}: {counts}", *(f"  bad: {b}" for b in f.bad)]
                lines += [f"  reason: {f.reason}"] if f.reason else []
            lines += rows(store)
        volatile = {str(tmp): "<tmp>", str(SAMPLES.parents[1]): "<root>", str(ROOT): "<root>"}
        volatile |= {
            b.id: f"<batch {k}>" for k, b in enumerate(store.batches()) if b.kind == "import"
        }
    for line in lines:
        for value, placeholder in volatile.items():
            line = line.replace(value, placeholder)
        yield line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="text file to write")
    args = parser.parse_args()
    count = 0
    with tempfile.TemporaryDirectory() as tmp, open(args.out, "w") as out:
        folder = Path(tmp)
        for number, what in enumerate(inputs(folder)):
            out.write(f"== {what[0]}\n")
            out.writelines(
                f"{line}\n" for line in one_import(folder / f"{number}.db", what, folder)
            )
            count += 1
    print(f"{count} imports written to {args.out}")


if __name__ == "__main__":
    main()
