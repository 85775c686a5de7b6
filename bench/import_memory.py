"""Import memory: peak resident memory importing N episodes against importing 10·N.

Importers stream (one episode in memory at a time) and SQLite's page cache is bounded, so the
peak should barely grow with the file. Each import runs in a fresh process that reports its
own peak RSS. Prints both peaks and their ratio (target ≤ 1.5).

    python bench/import_memory.py [--episodes 4000] [--steps 20] [--observation 1000]
    python bench/import_memory.py --format otlp --episodes 2000

The defaults make the N file about 100 MB (and the 10·N file about 1 GB). With ``--format``,
the files are that format's synthetic ones (``_synthetic.format_file``, about 40 steps an
episode; ``--steps`` and ``--observation`` are the workbench format's own).
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4000, help="N")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--observation", type=int, default=1000, help="characters per observation")
    parser.add_argument("--format", default="workbench", help="whose synthetic files to import")
    args = parser.parse_args()
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
