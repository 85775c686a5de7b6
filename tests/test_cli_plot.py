"""``workbench plot evolution`` on a real database file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Evolution, Store
from tests.evolution.records import NAME, write_experiment
from workbench.cli import main


@pytest.fixture
def evo_db(tmp_path: Path) -> Path:
    path = tmp_path / "evolution.db"
    write_experiment(path)
    return path


def plot(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), "plot", "evolution", *args])


def test_no_png_writes_the_html_of_the_newest_experiment(evo_db, tmp_path):
    out = tmp_path / "figures"
    result = plot(evo_db, "--out", str(out), "--no-png")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"{NAME}: 8 checkpoints · gated, no-replay-gate",
        str(out / "evolution.html"),
    ]
    html = (out / "evolution.html").read_text()
    # plotly writes its JSON with orjson where that is installed (no escapes), else with json
    assert any(f"Evolution {dot} {NAME}" in html for dot in ("\\u00b7", "\u00b7"))
    assert '"name":"gated"' in html


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="no system chromium")
def test_png_files_are_written_and_listed(evo_db, tmp_path):
    result = plot(evo_db, "--name", NAME, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    listed = [Path(line) for line in result.output.splitlines()[1:]]
    assert [p.name for p in listed] == [
        "evolution.html",
        "evolution.png",
        "pass_rate.png",
        "sizes.png",
        "use_rate.png",
        "degradation.png",
    ]
    assert all(p.stat().st_size > 10_000 for p in listed)


def test_without_chromium_it_writes_html_and_says_why(evo_db, tmp_path, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-chromium"))
    result = plot(evo_db, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "PNG export failed, wrote HTML only" in result.stderr
    assert result.stdout.splitlines()[1:] == [str(tmp_path / "evolution.html")]


def test_unknown_name_lists_the_known_ones(evo_db, tmp_path):
    with Store(evo_db) as store:
        store.put_evolution(Evolution(name="rq3-pilot"))
    result = plot(evo_db, "--name", "nope", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert f"no evolution experiment named 'nope' (known: rq3-pilot, {NAME})" in result.stderr
    assert not list(tmp_path.glob("*.html"))


def test_empty_database_and_experiment_without_checkpoints(tmp_path):
    db = tmp_path / "empty.db"
    Store(db).close()
    result = plot(db, "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert f"no evolution experiment in {db}" in result.stderr
    with Store(db) as store:
        store.put_evolution(Evolution(name="starting"))
    result = plot(db, "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "experiment 'starting' has no checkpoints yet" in result.stderr


def test_help_names_the_options():
    result = CliRunner().invoke(main, ["plot", "evolution", "--help"])
    assert result.exit_code == 0
    assert all(flag in result.output for flag in ("--name", "--out", "--no-png", "--db"))
