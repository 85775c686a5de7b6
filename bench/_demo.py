"""What the end-to-end benchmarks share: the demo database and the CLI run on a copy of it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def ensure_demo(path: Path) -> None:
    """Build the demo database at ``path`` (``workbench demo``) unless it exists."""
    if not path.exists():
        subprocess.run([sys.executable, "-m", "workbench", "--db", str(path), "demo"], check=True)


def workbench(db: Path, *args: str) -> str:
    """Run a ``workbench`` command on ``db`` and return what it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(db), *args],
        check=True,
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", **os.environ},
    )
    return done.stdout


def held_out(output: str, with_what: str) -> str:
    """The paired held-out line of ``run --like``'s output, with the ratio."""
    (before, total), (after, _) = re.findall(r"(\d+)/(\d+) succeeded", output)
    return (
        f"held-out success: {before}/{total} without, {after}/{total} with {with_what} "
        f"→ ratio {int(after) / max(1, int(before)):.2f} (target > 1)"
    )
