"""The example notebooks in ``notebooks/``: stored clean, and executed top to bottom.

Each notebook is copied into the test's temporary folder and run there by nbclient with a
kernel that is this interpreter (a ``python3`` kernelspec first on ``JUPYTER_PATH``, as the
browser tests do). ``TMPDIR`` points into the same folder, so the databases the notebooks keep
in the system's temporary folder land there too and nothing is written into the repository.
"""

from __future__ import annotations

import ast
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from store import EpisodeFilter, Store
from tests.browser.lab import kernelspec

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
NAMES = [
    "01_triage",
    "02_annotate_spans",
    "03_compile_and_replay",
    "04_manual",
    "05_evolution",
    "06_synthesis",
]
CELL_TIMEOUT = 3600
"""Seconds one cell may take: sized for a slow, loaded machine (05, the longest notebook, ran
whole in 54 s on the shared 2-core machine at a load average of 5–7)."""


def read(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def test_every_notebook_is_listed():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_stored_clean_with_python3_kernel(name: str):
    notebook = read(name)
    nbformat.validate(notebook)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
        ast.parse(cell.source)
    assert any(c.cell_type == "markdown" for c in notebook.cells)


# -- execution ------------------------------------------------------------------------------


def data_dir(tmp: Path) -> Path:
    """Where the notebooks keep their databases when ``TMPDIR`` is ``tmp``."""
    return tmp / "workbench-notebooks"


def check_triage(data: Path, texts: str) -> None:
    with Store(data / "triage.db") as store:
        assert store.summary().failed > 0
        assert store.analysis_runs() and store.clusters(store.analysis_runs()[0].id)
    assert "stepper now at" in texts


def check_annotate(data: Path, texts: str) -> None:
    with Store(data / "annotate.db") as store:
        spans = [
            s
            for e in store.listing()
            for s in store.spans(e.id)
            if s.label == "notebook-example" and s.author == "human"
        ]
    assert len(spans) == 1 and spans[0].kind == "causal"
    assert spans[0].end == spans[0].start + 2  # saved, then widened by one step
    assert "after undo" in texts


def check_compile(data: Path, texts: str) -> None:
    with Store(data / "compile.db") as store:
        judged = [v for v in store.versions() if v.status != "staged"]
        assert judged and all(v.contract_gate is not None for v in judged)
        assert any(v.replay_gate is not None and store.ledger(v.id) for v in judged)
    assert (data / "compile-export" / "RULES.md").read_text().startswith("# Rules")


def check_manual(data: Path, texts: str) -> None:
    with Store(data / "manual.db") as store:
        assert store.manual_rules() and store.manuals()
    assert (data / "MANUAL.md").read_text().startswith("# Manual")


def check_evolution(data: Path, texts: str) -> None:
    with Store(data / "evolution.db") as store:
        checkpoints = store.checkpoints("tiny")
    positions = {(c.regime, c.position) for c in checkpoints}
    assert positions == {(r, k) for r in ("gated", "no-replay-gate") for k in (0, 1, 2)}
    gated = sorted((c for c in checkpoints if c.regime == "gated"), key=lambda c: c.position)
    # long enough to show something: artifacts admitted, and the held-out score moved
    assert gated[-1].stored > 0 and gated[-1].passed != gated[0].passed
    assert (data / "evolution-plot" / "evolution.html").stat().st_size > 1_000_000


def check_synthesis(data: Path, texts: str) -> None:
    with Store(data / "synthesis.db") as store:
        assert store.synth_tasks("textworld")
        kept = {e.id for e in store.synth_examples(verdict="kept")}
        assert kept and store.synth_counts().get("pending", 0) == 0
        arms = {
            b: store.episodes(EpisodeFilter(batch=b))
            for b in ("before", "with-backward", "with-whole")
        }
    assert all(len(episodes) == 2 for episodes in arms.values())
    assert {e.metadata["exemplar"]["stopped"] for e in arms["before"]} == {"no examples"}
    with_examples = [e for b in ("with-backward", "with-whole") for e in arms[b]]
    used = {s["example"] for e in with_examples for s in e.metadata["exemplar"]["steps"]}
    assert used and used <= kept  # the agent acted on kept examples where it stopped before
    assert "rejected: duplicate of example" in texts and "1. example" in texts


CHECKS: dict[str, Callable[[Path, str], None]] = {
    "01_triage": check_triage,
    "02_annotate_spans": check_annotate,
    "03_compile_and_replay": check_compile,
    "04_manual": check_manual,
    "05_evolution": check_evolution,
    "06_synthesis": check_synthesis,
}


def outputs_text(notebook: nbformat.NotebookNode) -> str:
    """Every stream and plain-text output of the executed notebook."""
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                parts.append(output.text)
            elif "data" in output:
                parts.append(output.data.get("text/plain", ""))
    return "\n".join(parts)


@pytest.fixture
def kernel_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This interpreter as the ``python3`` kernel, and ``TMPDIR`` in the test's folder."""
    for key in [k for k in os.environ if k.startswith(("JUPYTER", "IPYTHON"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("JUPYTER_PATH", str(kernelspec(tmp_path / "jupyter")))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    return temporary


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom(name: str, tmp_path: Path, kernel_env: Path):
    from nbclient import NotebookClient

    work = tmp_path / "work"
    work.mkdir()
    path = Path(shutil.copy(NOTEBOOKS / f"{name}.ipynb", work))
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
    )
    started = time.monotonic()
    client.execute()  # raises CellExecutionError on the first cell that raises
    print(f"{name}: {time.monotonic() - started:.1f} s")
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    assert sorted(p.name for p in work.iterdir()) == [path.name]  # nothing written beside it
    CHECKS[name](data_dir(kernel_env), outputs_text(notebook))
