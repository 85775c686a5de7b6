"""Plotly figures of a repository-evolution experiment (AutoRefine's RQ3), drawn from the
engine's plot-ready :class:`~workbench.evolution.Series`: held-out pass rate, repository size
by type, artifact use rate and signed degradation, each per regime against the number of
learning tasks seen. The notebook plot and ``workbench plot evolution`` draw these.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.evolution import KINDS, Series

REGIME_COLORS = {
    "gated": "#1f77b4",
    "no-replay-gate": "#d62728",
    "no-preservation": "#ff7f0e",
    "no-contract-gate": "#9467bd",
    "no-closure": "#8c564b",
    "rules-only": "#2ca02c",
    "no-subagent": "#17becf",
}
"""One colour per regime, the same in every figure."""
REGIME_DASHES = {
    "gated": "solid",
    "no-replay-gate": "dash",
    "no-preservation": "dot",
    "no-contract-gate": "dashdot",
    "no-closure": "longdash",
    "rules-only": "longdashdot",
    "no-subagent": "dot",
}
"""Line styles too, so that regimes with equal values stay visible on top of each other."""
KIND_PATTERNS = {"rule": "", "skill": "/", "subagent": "x"}
"""Bars of one regime are stacked by artifact kind, told apart by their fill pattern."""
KIND_LETTERS = {"rule": "R", "skill": "S", "subagent": "A"}
TASKS_AXIS = "learning tasks"
TITLES = {
    "pass_rate": "Held-out pass rate",
    "sizes": "Repository size by type (R plain · S / · A x)",
    "use_rate": "Artifact use rate",
    "degradation": "Signed degradation (positive: net loss)",
}
Y_AXES = {
    "pass_rate": "pass rate",
    "sizes": "active artifacts",
    "use_rate": "used / stored",
    "degradation": "(lost − recovered) / ledger",
}
PNG_SIZE = (1200, 800)
"""Width and height (pixels) of the exported combined figure; single figures are half."""
PNG_RENDER_SECONDS = 600
"""Time limit for rendering one image: generous, since a loaded machine renders slowly."""
PNG_ATTEMPTS = 2
"""A browser that fails to start or render is started once more before giving up."""
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class PngExportWarning(UserWarning):
    """PNG export failed (most often: no chromium for kaleido); the HTML was still written."""


def regime_color(regime: str) -> str:
    """The regime's colour (grey for a regime this module does not know)."""
    return REGIME_COLORS.get(regime, "#7f7f7f")


# -- traces -------------------------------------------------------------------------------------


def _line(s: Series, y: Sequence[float | None], hover: str) -> go.Scatter:
    return go.Scatter(
        x=s.tasks,
        y=list(y),
        name=s.regime,
        legendgroup=s.regime,
        mode="lines+markers",
        line={"color": regime_color(s.regime), "dash": REGIME_DASHES.get(s.regime, "solid")},
        connectgaps=False,
        hovertemplate=f"{s.regime}<br>%{{x}} tasks<br>{hover}<extra></extra>",
    )


def pass_rate_traces(series: list[Series]) -> list[go.Scatter]:
    """One line per regime: held-out pass rate at each checkpoint."""
    return [_line(s, s.pass_rate, "pass rate %{y:.0%}") for s in series]


def size_traces(series: list[Series]) -> list[go.Bar]:
    """Per regime, one bar group per checkpoint stacked by kind (rule, skill, subagent)."""
    traces = []
    for s in series:
        base = [0] * len(s.tasks)
        for kind in KINDS:
            counts = s.sizes[kind]
            traces.append(
                go.Bar(
                    x=s.tasks,
                    y=counts,
                    base=list(base),
                    name=f"{s.regime} · {kind}",
                    legendgroup=s.regime,
                    offsetgroup=s.regime,
                    marker={
                        "color": regime_color(s.regime),
                        "pattern": {"shape": KIND_PATTERNS[kind], "fgcolor": "white"},
                        "line": {"color": "white", "width": 0.5},
                    },
                    hovertemplate=(f"{s.regime}<br>%{{x}} tasks<br>{kind}s: %{{y}}<extra></extra>"),
                )
            )
            base = [b + c for b, c in zip(base, counts, strict=True)]
    return traces


def use_rate_traces(series: list[Series]) -> list[go.Scatter]:
    """One line per regime: share of stored artifacts invoked (gaps where nothing is stored)."""
    return [_line(s, s.use_rate, "use rate %{y:.0%}") for s in series]


def degradation_traces(series: list[Series]) -> list[go.Scatter]:
    """One line per regime: signed degradation over the baseline-success ledger."""
    return [_line(s, s.degradation, "degradation %{y:+.2f}") for s in series]


TRACES: dict[str, Callable[[list[Series]], list]] = {
    "pass_rate": pass_rate_traces,
    "sizes": size_traces,
    "use_rate": use_rate_traces,
    "degradation": degradation_traces,
}
"""Each panel's trace builder, in the order of the combined figure."""


# -- figures ------------------------------------------------------------------------------------


def _figure(panel: str, series: list[Series]) -> go.Figure:
    fig = go.Figure(TRACES[panel](series))
    fig.update_layout(
        title=TITLES[panel],
        template="plotly_white",
        xaxis_title=TASKS_AXIS,
        yaxis_title=Y_AXES[panel],
        legend_title="regime",
        barmode="group",
    )
    _style_axes(fig, panel)
    return fig


def _style_axes(fig: go.Figure, panel: str, row: int | None = None, col: int | None = None) -> None:
    where = {"row": row, "col": col} if row else {}
    if panel in ("pass_rate", "use_rate"):
        fig.update_yaxes(range=[0, 1.05], tickformat=".0%", **where)
    if panel == "degradation":
        fig.add_hline(y=0, line={"color": "black", "width": 1, "dash": "dot"}, **where)
        fig.update_yaxes(zeroline=True, tickformat=".0%", **where)


def pass_rate_figure(series: list[Series]) -> go.Figure:
    """Held-out pass rate per checkpoint, one line per regime."""
    return _figure("pass_rate", series)


def size_figure(series: list[Series]) -> go.Figure:
    """Repository size by type: a stacked bar (rule, skill, subagent) per regime and
    checkpoint, regimes side by side."""
    return _figure("sizes", series)


def use_rate_figure(series: list[Series]) -> go.Figure:
    """Fraction of stored artifacts used on the held-out set, one line per regime."""
    return _figure("use_rate", series)


def degradation_figure(series: list[Series]) -> go.Figure:
    """Signed degradation per checkpoint, one line per regime, with the zero line."""
    return _figure("degradation", series)


FIGURES: dict[str, Callable[[list[Series]], go.Figure]] = {
    "pass_rate": pass_rate_figure,
    "sizes": size_figure,
    "use_rate": use_rate_figure,
    "degradation": degradation_figure,
}


def _cells() -> Iterator[tuple[str, int, int]]:
    for i, panel in enumerate(TRACES):
        yield panel, i // 2 + 1, i % 2 + 1


def evolution_figure(series: list[Series], title: str | None = None) -> go.Figure:
    """The four panels in a 2×2 grid; the legend names each regime once (size bars share
    their regime's legend entry)."""
    fig = make_subplots(
        rows=2,
        cols=2,
        subplot_titles=[TITLES[p] for p in TRACES],
        horizontal_spacing=0.08,
        vertical_spacing=0.14,
    )
    for panel, row, col in _cells():
        for trace in TRACES[panel](series):
            trace.showlegend = panel == "pass_rate"
            fig.add_trace(trace, row=row, col=col)
        fig.update_xaxes(title_text=TASKS_AXIS, row=row, col=col)
        fig.update_yaxes(title_text=Y_AXES[panel], row=row, col=col)
        _style_axes(fig, panel, row, col)
    fig.update_layout(
        title=title,
        template="plotly_white",
        barmode="group",
        legend_title="regime",
        height=PNG_SIZE[1],
    )
    return fig


# -- export -------------------------------------------------------------------------------------


def export_evolution(
    series: list[Series], out_dir: str | Path, png: bool = True, title: str | None = None
) -> list[Path]:
    """Write the combined figure as self-contained HTML (plotly.js inlined, viewable offline)
    and, with ``png``, the combined and each single figure as PNG through kaleido (one batch,
    one browser start).

    Returns:
        The files written. If PNG export fails (most often: kaleido finds no chromium), only
        the HTML is written and a :class:`PngExportWarning` says why.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    combined = evolution_figure(series, title)
    html = out / "evolution.html"
    combined.write_html(html, include_plotlyjs=True, full_html=True)
    if not png:
        return [html]
    figures = [combined, *(make(series) for make in FIGURES.values())]
    paths = [out / "evolution.png", *(out / f"{panel}.png" for panel in FIGURES)]
    half = (PNG_SIZE[0] // 2 + 100, PNG_SIZE[1] // 2 + 50)
    sizes = [PNG_SIZE, *[half] * len(FIGURES)]
    specs = [
        {"fig": figure.to_dict(), "path": path, "opts": {"format": "png", "width": w, "height": h}}
        for figure, path, (w, h) in zip(figures, paths, sizes, strict=True)
    ]
    reason = ""
    for _ in range(PNG_ATTEMPTS):
        try:
            _render(specs)
        except Exception as error:
            reason = " ".join(str(error).split()) or type(error).__name__
            continue
        if missing := [path.name for path in paths if not _is_png(path)]:
            reason = f"chromium wrote no image for {', '.join(missing)}"
            continue
        return [html, *paths]
    for path in paths:
        path.unlink(missing_ok=True)
    if "chrome" in reason.lower():
        reason += " (kaleido needs chromium on PATH or in BROWSER_PATH)"
    warnings.warn(f"PNG export failed, wrote HTML only: {reason}", PngExportWarning, 2)
    return [html]


def _render(specs: list[dict]) -> None:
    """Render every spec in one browser: MathJax off (the figures have no TeX, and kaleido
    would fetch it from a CDN), a render time limit sized for a loaded machine, and the first
    error raised instead of returned in a list."""
    import kaleido

    kaleido.write_fig_from_object_sync(
        specs,
        kopts={"mathjax": False, "timeout": PNG_RENDER_SECONDS},
        cancel_on_error=True,
    )


def _is_png(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(8) == PNG_MAGIC
    except OSError:
        return False
