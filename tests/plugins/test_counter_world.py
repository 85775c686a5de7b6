"""A third-party environment plugs in without touching the engine.

The toy counter world (``counter_world/``, its own package with its own ``pyproject.toml``)
is installed with ``pip install -e`` into a throw-away virtual environment that sees this
one's packages, and the real ``workbench`` commands run on it there: ``run --env counter``,
``analyze``, ``compile`` and ``replay``. The test's own environment is never modified.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from store import EpisodeFilter, Store

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with the counter world installed (editable, offline), seeing
    this environment's packages through a ``.pth`` file."""
    root = tmp_path_factory.mktemp("counter")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root / "venv"], check=True)
    python = root / "venv" / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "workbench-test.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    source = shutil.copytree(HERE / "counter_world", root / "counter_world")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    pip += ["--no-deps", "--no-build-isolation", "--no-index", "-e", str(source)]
    subprocess.run(pip, check=True, capture_output=True, cwd=root)
    return python


def workbench(python: Path, db: Path, *args: str, ok: bool = True) -> str:
    """Run a ``workbench`` command in the plugin's environment; its output (stdout+stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "OPENAI_"))}
    result = subprocess.run(
        [python, "-m", "workbench", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "200"},
        cwd=db.parent,
    )
    assert (result.returncode == 0) == ok, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_an_unknown_environment_is_one_line_naming_the_installed_ones(python, tmp_path):
    output = workbench(
        python, tmp_path / "w.db", "run", "--env", "abacus", "--family", "x", ok=False
    )
    assert "Traceback" not in output
    assert "'abacus' is not one of 'counter', 'scienceworld'" in output


def test_run_analyze_compile_and_replay_on_the_counter_world(python, tmp_path):
    db = tmp_path / "w.db"
    run = workbench(
        python, db, "run", "--env", "counter", "--family", "count-up,count-down",
        "--episodes", "16", "--seed", "3", "--rate", "act-on-closed=0.4", "--workers", "1",
        "--batch", "learn",
    )  # fmt: skip
    failed = int(re.search(r"batch learn: 16 episode\(s\) run, (\d+) failed", run)[1])
    assert 0 < failed < 16
    with Store(db) as store:
        assert store.batch("learn").params["config"]["env"] == "counter"
        episodes = store.episodes(EpisodeFilter(batch="learn"))
        assert {e.task_id.split(":")[0] for e in episodes} == {"counter"}
        assert {store.task(e.task_id).environment for e in episodes} == {"counter"}
        assert all("ground_truth" in e.metadata for e in episodes)

    analyzed = workbench(python, db, "analyze")
    assert f"{failed} failure(s) analysed" in analyzed
    with Store(db) as store:
        assert len(store.analyses()) == failed
        assert store.clusters()

    compiled = workbench(python, db, "compile")
    staged = int(re.search(r"(\d+) new version\(s\) staged", compiled)[1])
    with Store(db) as store:
        assert store.specs() and staged >= 1
        assert len(store.versions(status="staged")) == staged

    replayed = workbench(python, db, "replay")
    assert replayed.count("→ ") == staged
    with Store(db) as store:
        assert not store.versions(status="staged")  # every candidate faced both gates
        replays = [b for b in store.batches() if b.kind == "replay"]
        assert replays and {b.params["config"]["env"] for b in replays} == {"counter"}
        ledger = [entry for v in store.versions() for entry in store.ledger(v.id or 0)]
        assert ledger and all(e.candidate_episode for e in ledger)
        played = [store.episode(e.candidate_episode or "") for e in ledger]
        assert {p.task_id.split(":")[0] for p in played if p} == {"counter"}
