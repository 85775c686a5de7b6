"""AutoManual on the demo, offline: build rules from train episodes, formulate the manual,
and compare held-out success of the scripted agent following the manual's executable rules
with the demo's own test run without them (same tasks and seeds, measured in this run).

Copies a demo database (built with ``workbench demo`` when missing). Prints the rules by type
(count against N_max), whether every rule appears exactly once in the exported manual, and
the held-out ratio (with the manual's rules / without; target > 1).

    python bench/manual_effect.py [--demo bench-demo.db] [--episodes 60] [--n-max 12]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import _demo

from store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, default=Path("bench-demo.db"))
    parser.add_argument("--episodes", default="60")
    parser.add_argument("--n-max", default="12")
    args = parser.parse_args()
    _demo.ensure_demo(args.demo)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "workbench.db"
        shutil.copy(args.demo, db)
        started = time.perf_counter()
        print(
            _demo.workbench(
                db, "manual", "build", "--episodes", args.episodes, "--n-max", args.n_max
            ).strip()
        )
        built = time.perf_counter()
        _demo.workbench(db, "manual", "formulate")
        _demo.workbench(db, "manual", "export", "--out", str(Path(folder) / "manual.md"))
        text = (Path(folder) / "manual.md").read_text()
        with Store(db) as store:
            rules = store.manual_rules()
            events = store.rule_events()
        types = Counter(r.type for r in rules)
        print(
            f"rules: {len(rules)} (N_max {args.n_max}); "
            + ", ".join(f"{n} {t}" for t, n in sorted(types.items()))
        )
        written = Counter(e.after["type"] for e in events if e.op == "write" and e.after)
        print("types ever written: " + ", ".join(f"{n} {t}" for t, n in sorted(written.items())))
        once = all(text.count(f"### {r.id} ({r.type})") == 1 for r in rules)
        print(
            f"every rule exactly once in the manual: {once}; executable rules: {sum(bool(r.form) for r in rules)}"
        )
        print(f"build {built - started:.1f} s")
        heldout = _demo.workbench(db, "run", "--like", "demo-test", "--with-manual")
        print(heldout.strip())
        print(_demo.held_out(heldout, "the manual's rules"))


if __name__ == "__main__":
    main()
