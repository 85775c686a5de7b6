"""Every command of README's Example runs, in order, on a demo database and prints a result.

The commands are read from README itself. Two are skipped: the LLM agent needs a model endpoint
and the import reads the user's own files. Commands whose size is a parameter run smaller
(fewer episodes, a shorter evolution stream) so the suite can afford them; everything else runs
as written, in a fresh directory, against the database `workbench demo` builds there.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_readme import README

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = README.split("## Example", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
COMMANDS = [line[2:].split("  #", 1)[0].strip() for line in EXAMPLE.splitlines()]

SKIPPED = {
    "--agent openai": "needs a model endpoint",
    "import runs/": "reads the user's own files",
}
SMALLER = [
    # the demo: enough train failures for compile to stage candidates of two types
    (r"^workbench demo$", "workbench demo --train 16 --test 8"),
    (r"--episodes \d+", "--episodes 1"),
    (r"^workbench evolve$", "workbench evolve --stream-size 2 --heldout-size 2 --every 2"),
    # the bundled command agent, wherever the test runs, with this interpreter
    (r'"python (workbench/\S+)"', lambda m: f'"{sys.executable} {ROOT / m.group(1)}"'),
]
EMPTY = re.compile(r"^(0 hit\(s\)|0 of 0 episode|nothing )", re.M)


def _runnable(command: str) -> list[str]:
    for pattern, replacement in SMALLER:
        command = re.sub(pattern, replacement, command)
    return shlex.split(command)


def test_the_example_block_is_read():
    assert COMMANDS[0] == "workbench demo" and len(COMMANDS) >= 15
    assert all(c.startswith("workbench ") for c in COMMANDS)
    assert sum(any(k in c for k in SKIPPED) for c in COMMANDS) == len(SKIPPED)


@pytest.mark.slow
def test_every_example_command_prints_a_result_on_the_demo_database(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    for command in COMMANDS:
        if any(key in command for key in SKIPPED):
            continue
        argv = [sys.executable, "-m", "workbench", *_runnable(command)[1:]]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
        printed = done.stdout + done.stderr  # a command writing a file reports on stderr
        shown = f"$ {command}\n{printed}"
        assert done.returncode == 0, shown
        assert printed.strip(), shown
        assert not EMPTY.search(printed), shown
