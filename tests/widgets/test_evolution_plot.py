"""The evolution figures, their export (HTML and PNG through the system chromium) and the
live notebook plot, on checkpoints stored in a real SQLite file."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from store import Store
from tests.evolution.records import NAME, add_gated_checkpoint, write_experiment
from workbench.evolution import evolution_series
from workbench.widgets.evolution import EvolutionPlot
from workbench.widgets.figures import (
    PNG_MAGIC,
    REGIME_COLORS,
    PngExportWarning,
    degradation_figure,
    evolution_figure,
    export_evolution,
    pass_rate_figure,
    size_figure,
    use_rate_figure,
)


@pytest.fixture
def evo_db(tmp_path: Path) -> Path:
    path = tmp_path / "evolution.db"
    write_experiment(path)
    return path


@pytest.fixture
def series(evo_db: Path):
    with Store(evo_db) as store:
        return evolution_series(store, NAME)


def by_name(figure) -> dict:
    return {trace.name: trace for trace in figure.data}


def test_pass_rate_per_regime(series):
    traces = by_name(pass_rate_figure(series))
    assert list(traces) == ["gated", "no-replay-gate"]
    assert list(traces["gated"].x) == [0, 5, 10, 15]
    assert list(traces["gated"].y) == pytest.approx([0.42, 0.48, 0.54, 0.62])
    assert list(traces["no-replay-gate"].y) == pytest.approx([0.42, 0.46, 0.40, 0.50])
    assert traces["gated"].line.color == REGIME_COLORS["gated"]


def test_sizes_stack_by_kind_within_each_regime(series):
    traces = by_name(size_figure(series))
    assert list(traces) == [
        f"{r} · {k}" for r in ("gated", "no-replay-gate") for k in ("rule", "skill", "subagent")
    ]
    rules, skills, agents = (traces[f"no-replay-gate · {k}"] for k in ("rule", "skill", "subagent"))
    assert list(rules.y) == [0, 3, 5, 6]
    assert list(skills.base) == [0, 3, 5, 6]  # stacked on the rules
    assert list(agents.base) == [0, 4, 7, 9]
    assert list(agents.y) == [0, 0, 0, 1]
    assert {t.offsetgroup for t in traces.values()} == {"gated", "no-replay-gate"}
    assert rules.marker.color == skills.marker.color == REGIME_COLORS["no-replay-gate"]


def test_use_rate_leaves_a_gap_where_nothing_is_stored(series):
    traces = by_name(use_rate_figure(series))
    assert list(traces["gated"].y) == pytest.approx([None, 0.5, 0.75, 4 / 6])
    assert traces["gated"].y[0] is None


def test_degradation_is_signed_with_a_zero_line(series):
    figure = degradation_figure(series)
    traces = by_name(figure)
    assert max(traces["gated"].y) <= 0
    assert list(traces["no-replay-gate"].y) == pytest.approx([0, 0, 3 / 21, -1 / 21])
    assert [(s.y0, s.y1) for s in figure.layout.shapes] == [(0, 0)]


def test_combined_figure_has_every_panel_and_one_legend_per_regime(series):
    figure = evolution_figure(series, title="RQ3")
    assert len(figure.data) == 2 + 6 + 2 + 2
    shown = [t.name for t in figure.data if t.showlegend]
    assert shown == ["gated", "no-replay-gate"]
    colors = {t.legendgroup: t.marker.color or t.line.color for t in figure.data}
    assert colors == {r: REGIME_COLORS[r] for r in ("gated", "no-replay-gate")}
    axes = {(t.xaxis, t.yaxis) for t in figure.data}
    assert axes == {("x", "y"), ("x2", "y2"), ("x3", "y3"), ("x4", "y4")}
    assert len(figure.layout.shapes) == 1 and figure.layout.shapes[0].yref == "y4"


def test_export_without_png_writes_offline_html(series, tmp_path):
    paths = export_evolution(series, tmp_path / "out", png=False)
    assert paths == [tmp_path / "out" / "evolution.html"]
    html = paths[0].read_text()
    assert '<script src="http' not in html  # viewable offline: plotly.js is inlined
    assert len(html) > 1_000_000
    assert '"name":"no-replay-gate"' in html


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="no system chromium")
@pytest.mark.filterwarnings("error::workbench.widgets.figures.PngExportWarning")
def test_export_writes_png_through_chromium(series, tmp_path):
    paths = export_evolution(series, tmp_path)
    names = [p.name for p in paths]
    assert names == [
        "evolution.html",
        "evolution.png",
        "pass_rate.png",
        "sizes.png",
        "use_rate.png",
        "degradation.png",
    ]
    for path in paths[1:]:
        assert path.read_bytes()[:8] == PNG_MAGIC
        assert path.stat().st_size > 10_000


def test_export_without_chromium_writes_html_and_warns(series, tmp_path, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-chromium"))
    with pytest.warns(PngExportWarning, match="PNG export failed"):
        paths = export_evolution(series, tmp_path)
    assert [p.name for p in paths] == ["evolution.html"]
    assert not list(tmp_path.glob("*.png"))


def test_plot_shows_the_newest_experiment_and_refreshes(evo_db):
    plot = EvolutionPlot(evo_db)
    try:
        assert plot.name == NAME
        traces = by_name(plot.figures["pass_rate"])
        assert list(traces["gated"].x) == [0, 5, 10, 15]
        assert "8 checkpoints" in plot.status.value
        assert plot.refresh() is False  # nothing new
        add_gated_checkpoint(evo_db)
        assert plot.refresh() is True
        traces = by_name(plot.figures["pass_rate"])
        assert list(traces["gated"].x) == [0, 5, 10, 15, 20]
        assert traces["gated"].y[-1] == pytest.approx(0.66)
        assert list(by_name(plot.figures["sizes"])["gated · rule"].y)[-1] == 4
        assert "9 checkpoints" in plot.status.value
    finally:
        plot.close()


def test_auto_refresh_picks_up_checkpoints_and_stops(evo_db):
    plot = EvolutionPlot(evo_db, interval=0.02)
    try:
        plot.redrawn.clear()
        plot.start()
        assert plot.running and plot.auto_toggle.value
        add_gated_checkpoint(evo_db)
        assert plot.redrawn.wait(timeout=600)
        assert len(plot.figures["degradation"].data[0].x) == 5
        plot.auto_toggle.value = False  # the toggle stops it too
        assert not plot.running
    finally:
        plot.close()


def test_picker_switches_experiments(evo_db):
    write_experiment(evo_db, name="rq3-small", upto=2)
    with Store(evo_db) as store:
        plot = EvolutionPlot(store, name=NAME)
        try:
            assert list(plot.picker.options) == ["rq3-small", NAME]
            assert len(plot.figures["use_rate"].data[0].x) == 4
            plot.picker.value = "rq3-small"
            assert plot.name == "rq3-small"
            assert len(plot.figures["use_rate"].data[0].x) == 2
            plot.refresh_button.click()  # nothing new: the figures stay
            assert len(plot.figures["use_rate"].data[0].x) == 2
        finally:
            plot.close()
        assert store.evolutions()  # the caller's store stays open


def test_empty_database(tmp_path):
    plot = EvolutionPlot(tmp_path / "empty.db")
    try:
        assert plot.name is None
        assert all(not figure.data for figure in plot.figures.values())
        assert "no evolution experiment" in plot.status.value
    finally:
        plot.close()


def test_stop_from_another_thread_ends_polling(evo_db):
    plot = EvolutionPlot(evo_db, interval=0.01, auto=True)
    try:
        stopper = threading.Thread(target=plot.stop)
        stopper.start()
        stopper.join(timeout=600)
        assert not plot.running
    finally:
        plot.close()
