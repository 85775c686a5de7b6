"""``workbench synth backward | filter | export``: thin commands, counts reported, bad input
as one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import EpisodeFilter, Store
from store.synth import SYNTH_WORKSPACE
from tests.synthesized import copy_db
from workbench.cli import main


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_backward_then_export_from_the_command_line(tmp_path: Path, recorded_db):
    path = copy_db(recorded_db, tmp_path)
    first = invoke("synth", "backward", "--db", str(path), "--max-spans-per-episode", "3")
    assert first.exit_code == 0, first.output
    assert "2 episode(s) relabelled with heuristic" in first.output
    assert "relabel call(s)" in first.output and "no observable effect" in first.output
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        pending = store.synth_counts()["pending"]
        assert len(store.synth_examples(kind="backward")) <= 2 * 3
    assert f"0 kept, 0 rejected, {pending} pending" in first.output
    again = invoke("--db", str(path), "synth", "backward")
    assert "nothing to relabel: every synthesized episode has examples" in again.output
    out = tmp_path / "pending.jsonl"
    exported = invoke(
        "synth", "export", "--db", str(path), "--format", "chat-jsonl", "--out", str(out),
        "--verdict", "pending", "--kind", "whole",
    )  # fmt: skip
    assert exported.exit_code == 0 and "2 example(s) written" in exported.output
    assert [json.loads(line)["metadata"]["kind"] for line in out.read_text().splitlines()] == [
        "whole",
        "whole",
    ]


def test_filter_with_nothing_pending_says_so(tmp_path: Path, filtered_db):
    path = copy_db(filtered_db.path, tmp_path)
    result = invoke("synth", "filter", "--db", str(path), "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "0 pending example(s): 0 kept, 0 rejected" in result.output
    assert "0 replay(s) played" in result.output


def test_bad_input_is_one_line(tmp_path: Path, recorded_db):
    path = copy_db(recorded_db, tmp_path)
    unknown = invoke("synth", "backward", "--db", str(path), "--batch", "no-such-batch")
    assert unknown.exit_code == 1
    assert unknown.output.strip() == (
        "Error: batch 'no-such-batch' has no episode in the synth workspace"
    )
    folder = invoke("synth", "export", "--db", str(path), "--format", "chat-jsonl", "--out", ".")
    assert folder.exit_code == 1 and "is a folder; chat-jsonl writes one file" in folder.output
    script = invoke("run", "--db", str(path), "--family", "boil", "--agent", "script")
    assert script.exit_code == 2 and "--agent script replays recorded actions" in script.output


@pytest.mark.slow
def test_a_filter_killed_with_sigkill_resumes_its_verdicts(tmp_path: Path, constructed_db):
    path = copy_db(constructed_db, tmp_path)
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        examples = len(store.synth_examples())
    command = [
        sys.executable,
        "-m",
        "workbench",
        "synth",
        "filter",
        "--db",
        str(path),
        "--workers",
        "1",
    ]
    log = open(path.with_suffix(".log"), "w+")  # noqa: SIM115 (read back below)
    process = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=log
    )
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        deadline = time.monotonic() + 180

        def replayed() -> int:
            replays = [b.id for b in store.batches() if b.kind == "replay"]
            return sum(store.count_episodes(EpisodeFilter(batch=b)) for b in replays)

        while not replayed() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, path.with_suffix(".log").read_text()
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert store.synth_counts().get("pending", 0) > 0
    result = invoke("synth", "filter", "--db", str(path), "--workers", "1")
    assert result.exit_code == 0, result.output
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        assert len(store.synth_examples()) == examples
        assert store.synth_counts().get("pending", 0) == 0
        assert store.synth_counts()["kept"] > 0
