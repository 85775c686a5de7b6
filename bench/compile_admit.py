"""Compile and admit, end to end on the demo: held-out success with the active repository
against the same held-out run without it (same tasks, same seeds, measured in this run).

Copies a demo database (built with ``workbench demo`` when missing), then: analyze, compile,
replay every staged version, stage the deliberately harmful example rule and replay it, and
repeat the demo's test run with the active repository. Prints what each stage did and the
held-out ratio (success with the repository / success without; target > 1).

    python bench/compile_admit.py [--demo bench-demo.db] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from store import Store

EXAMPLES = Path(__file__).parent.parent / "examples"


def workbench(db: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(db), *args],
        check=True,
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", **os.environ},
    )
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, default=Path("bench-demo.db"))
    parser.add_argument("--workers", default="2")
    args = parser.parse_args()
    if not args.demo.exists():
        subprocess.run(
            [sys.executable, "-m", "workbench", "--db", str(args.demo), "demo"], check=True
        )
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "workbench.db"
        shutil.copy(args.demo, db)
        started = time.perf_counter()
        workbench(db, "analyze", "--batch", "demo-train")
        workbench(db, "compile")
        compiled = time.perf_counter()
        workbench(db, "replay", "--workers", args.workers)
        replayed = time.perf_counter()
        staged = workbench(db, "repo", "stage", str(EXAMPLES / "harmful-rule.json"))
        harmful = re.search(r"\(id (\d+)\)", staged).group(1)
        workbench(db, "replay", "--artifact", harmful, "--workers", args.workers)
        heldout = workbench(
            db, "run", "--like", "demo-test", "--with-repo", "--workers", args.workers
        )
        with Store(db) as store:
            specs = store.specs()
            versions = store.versions()
            harmful_version = store.version(int(harmful))
        print(f"specs: {len(specs)} ({sum(s.status == 'supported' for s in specs)} supported)")
        for kind in ("rule", "skill", "subagent"):
            statuses = Counter(v.status for v in versions if v.kind == kind and v.origin != "hand")
            print(f"{kind:>9}: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
        print(
            f"harmful rule: {harmful_version.status}; preservation cases regressed: "
            f"{harmful_version.replay_gate.stats.get('regressed') if harmful_version.replay_gate else '–'}"
        )
        print(f"analyze + compile {compiled - started:.1f} s, replay {replayed - compiled:.1f} s")
        print(heldout.strip())
        (before, total), (after, _) = re.findall(r"(\d+)/(\d+) succeeded", heldout)
        print(
            f"held-out success: {before}/{total} without, {after}/{total} with the repository "
            f"→ ratio {int(after) / max(1, int(before)):.2f} (target > 1)"
        )


if __name__ == "__main__":
    main()
