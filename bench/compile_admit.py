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
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _demo

from store import Store

EXAMPLES = Path(__file__).parent.parent / "examples"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, default=Path("bench-demo.db"))
    parser.add_argument("--workers", default="2")
    args = parser.parse_args()
    _demo.ensure_demo(args.demo)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "workbench.db"
        shutil.copy(args.demo, db)
        started = time.perf_counter()
        _demo.workbench(db, "analyze", "--batch", "demo-train")
        _demo.workbench(db, "compile")
        compiled = time.perf_counter()
        _demo.workbench(db, "replay", "--workers", args.workers)
        replayed = time.perf_counter()
        staged = _demo.workbench(db, "repo", "stage", str(EXAMPLES / "harmful-rule.json"))
        harmful = re.search(r"\(id (\d+)\)", staged).group(1)
        _demo.workbench(db, "replay", "--artifact", harmful, "--workers", args.workers)
        heldout = _demo.workbench(
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
        print(_demo.held_out(heldout, "the repository"))


if __name__ == "__main__":
    main()
