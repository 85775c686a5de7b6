"""Paths a file system allows and a user may name: names that are not UTF-8 import (stored
and printed with the odd bytes as ``\\xNN``), and what is not a regular file — a named pipe,
a device, a link that loops or leads nowhere — is one line saying what it is, read by nothing,
with the database unchanged."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ingest.hostile import digest
from workbench.ingest import SAMPLES

CHAT = SAMPLES / "chat_runs.jsonl"


def workbench(db: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    """``workbench --db db import ...`` in a child process, with arguments as raw bytes."""
    argv = [sys.executable, "-m", "workbench", "--db", str(db), "import", *args]
    return subprocess.run([os.fsencode(a) for a in argv], capture_output=True)


def test_a_folder_and_a_file_whose_names_are_not_utf8_import(tmp_path: Path) -> None:
    folder = os.path.join(os.fsencode(tmp_path), b"runs\xff")
    os.mkdir(folder)
    shutil.copyfile(CHAT, os.path.join(folder, b"chat\xfe.jsonl"))
    db = tmp_path / "w.db"
    done = workbench(db, folder)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr
    assert b"runs\\xff/chat\\xfe.jsonl" in done.stdout + done.stderr
    with sqlite3.connect(db) as conn:
        (path,) = conn.execute("SELECT path FROM sources").fetchone()
        paths = {row[0] for row in conn.execute("SELECT DISTINCT source_path FROM episodes")}
    assert path.endswith("runs\\xff/chat\\xfe.jsonl") and paths == {path}


def test_a_bad_file_whose_name_is_not_utf8_is_named_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    assert workbench(db, str(CHAT)).returncode == 0
    before = digest(db)
    bad = os.path.join(os.fsencode(tmp_path), b"broken\xff.jsonl")
    with open(bad, "wb") as out:
        out.write(b'{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": oops\n')
    done = workbench(db, bad, "--format", "openai-chat")
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    assert b"broken\\xff.jsonl: line 2" in done.stderr
    assert digest(db) == before


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "pipe")
    return folder / "pipe"


def _device(folder: Path) -> Path:
    (folder / "zero").symlink_to("/dev/zero")
    return folder / "zero"


def _loop(folder: Path) -> Path:
    (folder / "loop").symlink_to(folder / "loop")
    return folder / "loop"


def _dangling(folder: Path) -> Path:
    (folder / "gone").symlink_to(folder / "nowhere.jsonl")
    return folder / "gone"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_fifo, "a named pipe (FIFO), not a file to import"),
        (_device, "a character device (/dev/zero), not a file to import"),
        (_loop, "a symbolic link that loops"),
        (_dangling, "nowhere.jsonl', which does not exist"),
    ],
    ids=["fifo", "device", "loop", "dangling"],
)
def test_what_is_not_a_regular_file_is_said_in_one_line(make, said: str, tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    assert workbench(db, str(CHAT)).returncode == 0
    before = digest(db)
    path = make(tmp_path)
    for args in ([str(path)], [str(CHAT), "--results", str(path)]):
        done = workbench(db, *args)
        error = done.stderr.decode()
        assert done.returncode == 1 and "Traceback" not in error
        assert f"{path}: " in error and said in error, error
        assert digest(db) == before


def test_special_files_in_a_folder_are_left_out(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copyfile(CHAT, folder / "chat.jsonl")
    for make in (_fifo, _device, _loop, _dangling):
        make(folder)
    done = workbench(tmp_path / "w.db", str(folder))  # (a pipe read would wait forever)
    assert done.returncode == 0, done.stderr.decode()
    assert b"chat.jsonl: openai-chat: 5 new episode(s)" in done.stdout + done.stderr


def test_a_json_lines_file_padded_with_zeros_is_refused_at_its_first_nul_in_little_memory(
    tmp_path: Path,
) -> None:
    """One line, then 256 MB of zeros (a sparse file): read as one line it took memory of
    twice its size; the first NUL byte ends it."""
    path = tmp_path / "padded.jsonl"
    line = CHAT.read_bytes().splitlines()[0] + b"\n"
    path.write_bytes(line)
    os.truncate(path, 256 << 20)
    code = (  # (VmHWM: this process's own peak; ru_maxrss starts at the parent's)
        "import re, sys\n"
        "from click.testing import CliRunner\n"
        "from workbench.cli import main\n"
        "result = CliRunner().invoke(main, ['--db', sys.argv[1], 'import', sys.argv[2]])\n"
        "status = open('/proc/self/status').read()\n"
        "peak = int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1)) // 1024\n"
        "print(result.exit_code, peak)\n"
        "print(result.output)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "w.db"), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    status, peak_mb = map(int, done.stdout.split("\n", 1)[0].split())
    assert status == 1
    assert f"padded.jsonl: line 2 (byte {len(line):,}): a NUL byte: binary data" in done.stdout
    assert peak_mb < 160, peak_mb  # (the file is 256 MB)
