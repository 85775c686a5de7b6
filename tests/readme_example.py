"""README's Example, played in order on a demo database: the session fixture
``readme_example`` (``tests/conftest.py``) runs it once; ``test_readme_examples.py`` checks
that every command printed a result, and ``test_compile_admit_e2e.py`` checks what the
compile → replay → held-out part of it built.

The commands are read from README itself, as ``scripts/readme_figures.py`` reads them to time
them, and the same one is skipped: the LLM agent's run needs a model endpoint. Commands whose
size is a parameter run smaller (fewer episodes, a shorter manual build and evolution stream)
so the suite can afford them; everything else runs as written, in a fresh directory, against
the database `workbench demo` builds there.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from scripts.readme_figures import README, example, skipped

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [line.command for line in example(README.read_text())]
"""The Example's commands, in order."""
SMALLER = [
    # the demo: enough train failures for compile to stage candidates of two types
    (r"^workbench demo$", "workbench demo --train 16 --test 8"),
    (r"--episodes \d+", "--episodes 1"),
    (r"--agent command", "--agent command --step-limit 10"),
    (r"^workbench manual build$", "workbench manual build --episodes 4"),
    (r"^workbench evolve$", "workbench evolve --stream-size 2 --heldout-size 2 --every 2"),
    # the bundled command agent, wherever the test runs, with this interpreter
    (r'"python (workbench/\S+)"', lambda m: f'"{sys.executable} {ROOT / m.group(1)}"'),
]


@dataclass(frozen=True)
class Played:
    """One command of the example as it ran."""

    command: str
    """As README writes it."""
    returncode: int
    printed: str
    """Standard output then standard error (a command that writes a file reports on stderr)."""


def runnable(command: str) -> list[str]:
    """The command's arguments as the test runs them (sizes made smaller)."""
    for pattern, replacement in SMALLER:
        command = re.sub(pattern, replacement, command)
    return shlex.split(command)


def play(folder: Path) -> list[Played]:
    """Run every example command but the skipped ones, in order, in ``folder``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    played = []
    for command in COMMANDS:
        if skipped(command):
            continue
        argv = [sys.executable, "-m", "workbench", *runnable(command)[1:]]
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True)
        played.append(Played(command, done.returncode, done.stdout + done.stderr))
    return played
