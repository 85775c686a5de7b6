"""Huge steps: memory and time follow what is shown, not what is stored.

One database holds an episode whose one observation is ``--size`` MB (imported from a
workbench JSONL file of that one record), an episode of ``--steps`` steps, and their small
twins: one step of 2,000 characters, and 100 steps. Each measurement runs in a fresh process,
which reports its own CPU time and peak resident memory (``VmHWM``: the process's own, where
``ru_maxrss`` would start at its parent's):

- importing the big record: peak over the record's size (target <= 3);
- ``workbench show BIG --steps 1`` (a window of the big step's text) against ``show`` of the
  small step, and ``workbench show LONG`` (a page of steps by default) against ``show`` of
  the 100-step episode: CPU and peak ratios (target <= 1.5 each: what is shown is the same;
  for the big step's CPU <= 2: its length in characters is counted from its bytes, a
  megabyte at a time, about 0.15 s for 200 MB);
- the length of the error line an import gives for a record whose bad value is 2 MB.

    python bench/huge_steps.py [--size 200] [--steps 1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

import import_memory  # noqa: E402

MEASURED = """
import json, resource, re, runpy, sys, io, contextlib
argv = json.loads(sys.argv[1])
sink = io.StringIO()
with contextlib.redirect_stdout(sink):
    try:
        if argv[0] == "workbench":
            sys.argv = argv
            from workbench.cli import main
            main(standalone_mode=False)
        else:
            exec(argv[1], {"argv": argv[2:]})
    except SystemExit:
        pass
usage = resource.getrusage(resource.RUSAGE_SELF)
status = open("/proc/self/status").read()
peak = int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) / 1024
print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "peak_mb": peak,
                  "out": len(sink.getvalue()), "tail": sink.getvalue()[-300:]}))
"""


def measured(*argv: str) -> dict:
    """Run ``argv`` (a workbench command, or ``python CODE ARGS``) in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, json.dumps(list(argv))],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def long_episode(db: Path, episode_id: str, steps: int, observation: str = "") -> None:
    """An episode of ``steps`` short steps (each ``observation``, or a short one), written
    in one transaction."""
    from store import Batch, Episode, Step, Store, Task
    from store.rows import row_values

    with Store(db) as store:
        store.put_batch(Batch(id="long-batch", name="long-batch"))
        store.put_task(Task(id="t:long", environment="bench", family="long"))
        episode = Episode(id=episode_id, task_id="t:long", batch_id="long-batch")
        template = Step(episode_id=episode_id, index=0, kind="action")
        base = row_values(template)
        at = {name: k for k, name in enumerate(["episode_id", "index", "kind", "role",
              "content", "thought", "action", "observation"])}  # fmt: skip

        def rows():
            for i in range(steps):
                row = list(base)
                row[at["index"]], row[at["action"]] = i, f"look {i}"
                row[at["observation"]] = observation or f"You see item {i}."
                yield tuple(row)

        with store.transaction():
            store._add_rows(row_values(episode), rows(), steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=200, help="MB of the big observation")
    parser.add_argument("--steps", type=int, default=1_000_000, help="steps of the long episode")
    args = parser.parse_args()
    size = int(args.size * 1e6)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "huge.db"
        record = import_memory.written("workbench", folder / "big", size, False)
        record_mb = record.stat().st_size / 2**20
        imported = measured("workbench", "--db", str(db), "import", str(record))
        record.unlink()
        over = imported["peak_mb"] / record_mb
        ok &= over <= 3
        print(f"import of one {record_mb:.0f} MB record: peak {imported['peak_mb']:.0f} MB, "
              f"{over:.2f}x the record (target <= 3)")  # fmt: skip
        long_episode(db, "long", args.steps)
        long_episode(db, "short", 100)
        long_episode(db, "small", 2, "x" * 2000)
        big_id = json.loads(
            subprocess.run(
                [sys.executable, "-c", "import sqlite3, json, sys; print(json.dumps("
                 "sqlite3.connect(sys.argv[1]).execute('SELECT id FROM episodes WHERE id NOT IN "
                 "(\\'long\\', \\'short\\', \\'small\\')').fetchone()[0]))", str(db)],
                capture_output=True, text=True, check=True,
            ).stdout
        )  # fmt: skip
        show = ("workbench", "--db", str(db), "show")
        for label, command, base in (
            (
                f"show of the {args.size:g} MB step (vs a 2,000-character one)",
                (*show, big_id, "--steps", "1"),
                (*show, "small", "--steps", "1"),
            ),
            (
                f"show of a {args.steps:,}-step episode (vs a 100-step one)",
                (*show, "long"),
                (*show, "short"),
            ),
        ):
            shown, small = measured(*command), measured(*base)
            cpu, peak = shown["cpu"] / small["cpu"], shown["peak_mb"] / small["peak_mb"]
            most = 2 if "MB step" in label else 1.5
            ok &= cpu <= most and peak <= 1.5
            print(f"{label}: {shown['cpu']:.2f} s CPU, peak {shown['peak_mb']:.0f} MB against "
                  f"{small['cpu']:.2f} s, {small['peak_mb']:.0f} MB; ratios {cpu:.2f} / "
                  f"{peak:.2f} (targets <= {most:g} / 1.5)")  # fmt: skip
        page = measured("workbench", "--db", str(db), "show", "long", "--steps", "0:100")
        default = measured("workbench", "--db", str(db), "show", "long")
        print(f"show long: {default['cpu']:.2f} s CPU by default, {page['cpu']:.2f} s with "
              f"--steps 0:100 (the default page)")  # fmt: skip
        bad = folder / "bad.jsonl"
        bad.write_text(json.dumps({"messages": [{"role": ["x" * 2_000_000], "content": "hi"}]}))
        error = subprocess.run(
            [sys.executable, "-m", "workbench", "--db", str(folder / "e.db"), "import", str(bad),
             "--format", "openai-chat"],
            capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        longest = max(len(line) for line in error.stderr.splitlines())
        ok &= longest <= 1000
        print(f"error for a 2 MB bad value: longest line {longest} characters (target <= 1000)")
    print("all targets hold" if ok else "A TARGET DOES NOT HOLD")


if __name__ == "__main__":
    main()
