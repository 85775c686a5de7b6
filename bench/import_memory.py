"""Import memory: peak resident memory importing N episodes against importing 10·N.

Importers stream (one episode in memory at a time) and SQLite's page cache is bounded, so the
peak should barely grow with the file. Each import runs in a fresh process that reports its
own peak RSS. Prints both peaks and their ratio (target ≤ 1.5).

    python bench/import_memory.py [--episodes 4000] [--steps 20] [--observation 1000]
    python bench/import_memory.py --format otlp --episodes 2000

The defaults make the N file about 100 MB (and the 10·N file about 1 GB). With ``--format``,
the files are that format's synthetic ones (``_synthetic.format_file``, about 40 steps an
episode; ``--steps`` and ``--observation`` are the workbench format's own).

With ``--big-record [MB]``, memory against the largest record instead: for each of the
workbench JSONL, openai-chat, claude-code and react-text formats, a file of one record whose
one observation is that many MB (default 50, or ``--size``) is imported in a fresh process,
and so is a file of the same record with a short observation (and one of twice the size).
Printed: each peak, ``peak / record size`` (target ≤ 3: the whole process, Python and the
workbench included), ``(peak - tiny peak) / record size``, and the slope ``(peak(2·size) -
peak(size)) / (2·size - size)``: how much memory each MB of the record takes, what ``(peak -
tiny peak)`` is without the constants (SQLite's page cache would fill its 64 MiB with the
record's pages; an import keeps it at 2 MiB while it writes a record of 8 MB or more).
Target: slope ≤ 3.
With ``--distinct`` every line of the observation ends in a token of its own (a log with line
numbers): SQLite's full-text index then holds about 4 bytes per byte of the row while it
indexes it (its in-memory term list, per row).

    python bench/import_memory.py --big-record [MB] [--formats workbench,react-text]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _synthetic

CHILD = """
import resource, sys
from store import Store
from workbench.ingest import import_paths
with Store(sys.argv[1]) as store:
    report = import_paths(store, [sys.argv[2]], format=sys.argv[3])
print(report.episodes, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_import(db: Path, source: Path, fmt: str) -> tuple[int, float]:
    """Import ``source`` into a new database ``db`` in a child process: (episodes, peak RSS
    in MB)."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), str(source), fmt],
        capture_output=True,
        text=True,
        check=True,
    )
    episodes, kilobytes = out.stdout.split()
    return int(episodes), int(kilobytes) / 1024


def make_file(args: argparse.Namespace, folder: Path, n: int) -> Path:
    """The file (or folder) of ``n`` episodes to import, in a new ``folder``."""
    folder.mkdir()
    if args.format == "workbench":
        return _synthetic.write(folder / "runs.jsonl", n, args.steps, args.observation)
    return _synthetic.format_file(args.format, folder, n)


def _files(source: Path) -> list[Path]:
    return [p for p in source.rglob("*") if p.is_file()] if source.is_dir() else [source]


BIG_FORMATS = ("workbench", "openai-chat", "claude-code", "react-text")
"""The formats ``--big-record`` measures: the workbench's own, a chat list, a session log of
one message a line, and plain text."""


WORDS = [
    f"{stem}{suffix}"
    for stem in (
        "file",
        "dir",
        "test",
        "error",
        "build",
        "module",
        "config",
        "value",
        "user",
        "src",
    )
    for suffix in ("", "s", "ed", "_a", "_b", ".py", ".log", "-1", "-2", "/x")
]
"""A hundred words: tool output repeats a bounded vocabulary (see ``--distinct``)."""


def observation(size: int, distinct: bool = False) -> str:
    """``size`` characters of tool output: lines of words from :data:`WORDS`; with
    ``distinct``, each line also ends with its own number (a token no other line has)."""
    line = " ".join(WORDS[(k * 7) % len(WORDS)] for k in range(12))
    lines = [f"{line} {i:08d}\n" if distinct else f"{line}\n" for i in range(size // 80 + 1)]
    text = "".join(lines)
    while len(text) < size:
        text += text
    return text[:size]


def one_record_file(fmt: str, folder: Path, text: str) -> Path:
    """A file of ``fmt`` with one record (episode) whose one observation is ``text``."""
    folder.mkdir()
    if fmt == "workbench":
        line = _synthetic.episode_line(0, 3, 100)
        line["steps"][1]["observation"] = text
        return _write(folder / "runs.jsonl", [line])
    if fmt == "openai-chat":
        call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        record = {
            "task_id": "big",
            "messages": [
                {"role": "user", "content": "List the files."},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": text},
                {"role": "assistant", "content": "Done."},
            ],
        }
        return _write(folder / "chat.jsonl", [record])
    if fmt == "claude-code":
        base = {"sessionId": "s", "isSidechain": False, "parentUuid": None, "cwd": "/w"}
        call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls -l"}}
        result = {"type": "tool_result", "tool_use_id": "t1", "content": text}
        return _write(
            folder / "session.jsonl",
            [
                {**base, "type": "user", "message": {"role": "user", "content": "List files."}},
                {**base, "type": "assistant", "message": {"id": "m", "content": [call]}},
                {**base, "type": "user", "message": {"role": "user", "content": [result]}},
            ],
        )
    if fmt == "react-text":
        path = folder / "run.log"
        path.write_text(f"Task: list files\nAction: ls -l\nObservation: {text}\nScore: 1\n")
        return path
    raise SystemExit(f"--big-record knows {', '.join(BIG_FORMATS)}, not {fmt!r}")


def _write(path: Path, records: list[dict]) -> Path:
    with path.open("w") as out:
        for record in records:
            out.write(json.dumps(record))
            out.write("\n")
    return path


def written(fmt: str, folder: Path, size: int, distinct: bool) -> Path:
    """:func:`one_record_file`, written by a child process: a child's peak RSS starts at
    its parent's RSS when it was started (Linux keeps ``ru_maxrss`` across fork and exec),
    so the big text is never in this process."""
    args = [str(folder), fmt, str(size), "1" if distinct else ""]
    code = "import sys; sys.argv[1:] = []; import import_memory as m; m._write_one(*ARGS)"
    subprocess.run(
        [sys.executable, "-c", code.replace("ARGS", repr(args))],
        cwd=Path(__file__).parent,
        check=True,
    )
    return next(p for p in folder.iterdir())


def _write_one(folder: str, fmt: str, size: str, distinct: str) -> None:
    one_record_file(fmt, Path(folder), observation(int(size), bool(distinct)))


def big_record(args: argparse.Namespace) -> None:
    """Peak memory of a one-record import with a big observation, over the record's size."""
    size = int(args.size * 1e6)
    print(
        f"{'format':12} {'record MB':>9} {'tiny':>7} {'peak':>7} {'2x peak':>7}"
        f" {'peak/record':>11} {'(peak-tiny)/record':>18} {'slope':>6}"
    )
    worst = worst_peak = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for fmt in args.formats.split(","):
            tiny = written(fmt, folder / f"{fmt}-tiny", 100, False)
            _, base = peak_import(folder / f"{fmt}-tiny.db", tiny, fmt)
            peaks, records = [], []
            for scale in (1, 2):
                name = f"{fmt}-big{scale}"
                big = written(fmt, folder / name, scale * size, args.distinct)
                records.append(big.stat().st_size / 2**20)
                episodes, peak = peak_import(folder / f"{name}.db", big, fmt)
                assert episodes == 1, (fmt, episodes)
                peaks.append(peak)
                shutil.rmtree(folder / name)
                (folder / f"{name}.db").unlink()
            ratio = (peaks[0] - base) / records[0]
            slope = (peaks[1] - peaks[0]) / (records[1] - records[0])
            over = max(peak / record for peak, record in zip(peaks, records, strict=True))
            worst, worst_peak = max(worst, slope), max(worst_peak, over)
            print(
                f"{fmt:12} {records[0]:9.1f} {base:7.1f} {peaks[0]:7.1f} {peaks[1]:7.1f}"
                f" {peaks[0] / records[0]:11.2f} {ratio:18.2f} {slope:6.2f}"
            )
    print(
        f"worst slope (MB of peak per MB of record, {args.size:g} to {2 * args.size:g} MB): "
        f"{worst:.2f} (target <= 3) {'OK' if worst <= 3 else 'ABOVE TARGET'}"
    )
    print(
        f"worst peak over its record ({args.size:g} and {2 * args.size:g} MB records): "
        f"{worst_peak:.2f} (target <= 3) {'OK' if worst_peak <= 3 else 'ABOVE TARGET'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4000, help="N")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--observation", type=int, default=1000, help="characters per observation")
    parser.add_argument("--format", default="workbench", help="whose synthetic files to import")
    parser.add_argument(
        "--big-record",
        nargs="?",
        type=float,
        const=0,
        metavar="MB",
        help="memory against one record's size instead (its observation: MB, default --size)",
    )
    parser.add_argument("--size", type=float, default=50, help="MB of --big-record's observation")
    parser.add_argument("--formats", default=",".join(BIG_FORMATS), help="--big-record's formats")
    parser.add_argument(
        "--distinct", action="store_true", help="--big-record: a distinct token on every line"
    )
    args = parser.parse_args()
    if args.big_record is not None:
        args.size = args.big_record or args.size
        big_record(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        peaks = []
        for n in (args.episodes, 10 * args.episodes):
            source = make_file(args, folder / f"n{n}", n)
            size = sum(p.stat().st_size for p in _files(source)) / 1e6
            episodes, peak = peak_import(folder / f"n{n}.db", source, args.format)
            assert episodes >= n, (episodes, n)  # a Claude Code session adds its sub-agents
            print(f"{n:8,} episodes ({size:7,.0f} MB): peak RSS {peak:7.1f} MB")
            peaks.append(peak)
            shutil.rmtree(folder / f"n{n}")
    ratio = peaks[1] / peaks[0]
    print(
        f"ratio peak(10N)/peak(N): {ratio:.2f} (target <= 1.5) {'OK' if ratio <= 1.5 else 'ABOVE TARGET'}"
    )


if __name__ == "__main__":
    main()
