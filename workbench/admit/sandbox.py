"""Artifact checks in a subprocess with time and memory limits.

An artifact is data (patterns and templates) interpreted by the agents' guidance code, but
its patterns may come from a model, and a pathological regular expression can hang or eat
memory. Everything that evaluates a candidate's patterns outside a replay worker runs here,
in a child process (``python -m workbench.admit.sandbox TASK IN OUT``) with a wall-clock
timeout and an address-space limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from workbench.limits import ENVIRONMENT_LIMITS, Limits


class SandboxError(RuntimeError):
    """The child process failed, ran out of time or out of memory."""


PATTERN_LIMITS = Limits(seconds=30.0, memory_mb=1024)
"""Limits for checks that only evaluate patterns (no environment)."""


def run_limited(task: str, payload: dict[str, Any], limits: Limits = ENVIRONMENT_LIMITS) -> Any:
    """Run sandbox task ``task`` on ``payload`` in a child process; returns its JSON result.

    Raises:
        SandboxError: the child timed out, was killed or raised.
    """
    with tempfile.TemporaryDirectory(prefix="workbench-sandbox-") as folder:
        source, result = Path(folder, "in.json"), Path(folder, "out.json")
        source.write_text(json.dumps(payload), encoding="utf-8")
        try:
            done = subprocess.run(
                [sys.executable, "-m", "workbench.admit.sandbox", task, str(source), str(result)],
                capture_output=True,
                text=True,
                timeout=limits.seconds,
                preexec_fn=limits.apply,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise SandboxError(f"{task}: exceeded its {limits.seconds:g} s limit") from error
        if done.returncode != 0 or not result.exists():
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise SandboxError(f"{task}: the check process failed ({tail})")
        return json.loads(result.read_text(encoding="utf-8"))


def main(argv: list[str]) -> int:
    from workbench.admit import checks

    task, source, result = argv
    handler = checks.TASKS.get(task)
    if handler is None:
        print(f"unknown sandbox task {task!r}", file=sys.stderr)
        return 2
    payload = json.loads(Path(source).read_text(encoding="utf-8"))
    Path(result).write_text(json.dumps(handler(payload)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
