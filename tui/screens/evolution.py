"""The Evolution screen: a repository-evolution experiment (AutoRefine's RQ3) drawn in the
terminal. Four panels against the learning tasks seen, one line per regime: held-out pass
rate, repository size by type (R rule, S skill, A subagent), artifact use rate and signed
degradation; under them every checkpoint's numbers.

The screen reads :func:`workbench.evolution.evolution_series` in a thread worker, and reads
again every ``poll_interval`` seconds, redrawing when checkpoints were added (``workbench
evolve`` running in another process).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.screen import Screen
from textual.widgets import Header, Select, Static
from textual_plotext import PlotextPlot

from store import Checkpoint, Store
from tui.data import Session
from tui.escapes import shown
from tui.screens.help import Help
from tui.threads import deliver
from tui.widgets.key_footer import KeyFooter
from tui.widgets.record_table import Column, RecordTable
from workbench.evolution import KINDS, Series, evolution_series, latest_evolution

HELP = Help(
    "Evolution",
    "A repository-evolution experiment: along an ordered learning stream the artifact repository is frozen every few learning tasks and scored on a fixed held-out set, once per admission regime (gated: both gates; no-replay-gate: the contract gate alone; no-preservation: without the replay gate's preservation set). Signed degradation is (lost − recovered) / ledger over the held-out cases the artifact-free reference solved: above zero the repository lost capability the reference had. The screen follows an experiment that is still running.",
    [
        ("r", "read the checkpoints again"),
        ("e", "pick another experiment (when there are several)"),
        ("↑ ↓", "move in the checkpoint table"),
    ],
)

REGIME_COLORS = {
    "gated": "blue",
    "no-replay-gate": "red",
    "no-preservation": "orange",
    "no-contract-gate": "magenta",
    "no-closure": "yellow",
    "rules-only": "green",
    "no-subagent": "cyan",
}
"""plotext colours of the regimes."""
REGIME_STYLES = {**REGIME_COLORS, "no-preservation": "dark_orange"}
"""The same colours as rich text styles (rich has no plain 'orange')."""
"""The regimes' colours (the notebook and HTML plots use the same hues)."""
KIND_MARKERS = {"rule": "R", "skill": "S", "subagent": "A"}
PANELS = {
    "pass_rate": "held-out pass rate %",
    "sizes": "repository size · total, R rules, S skills, A subagents",
    "use_rate": "artifact use rate %",
    "degradation": "signed degradation (> 0: net loss)",
}
CHECKPOINT_COLUMNS = [
    Column(key)
    for key in (
        "regime",
        "tasks",
        "pass",
        "R",
        "S",
        "A",
        "used",
        "lost",
        "rec",
        "degr.",
        "admitted",
    )
]


@dataclass(frozen=True)
class Line:
    """One line of a panel: a regime's (x, y) points, drawn with its colour and marker."""

    label: str | None
    """The legend entry (``None``: none, for the kind marks of the size panel)."""
    x: list[int]
    y: list[float]
    color: str
    marker: str = "braille"
    lines: bool = True
    """Points joined by lines, or marks alone."""


@dataclass(frozen=True)
class EvolutionData:
    """Every experiment's name, and the one shown with its series."""

    names: list[str] = field(default_factory=list)
    name: str | None = None
    series: list[Series] = field(default_factory=list)

    @property
    def signature(self) -> tuple:
        """Changes whenever an experiment or a checkpoint is added or replaced."""
        ids = tuple((s.regime, tuple(c.id for c in s.checkpoints)) for s in self.series)
        return tuple(self.names), self.name, ids


def read_evolution(store: Store, name: str | None) -> EvolutionData:
    """The experiment ``name`` (or the newest, if ``name`` is gone or not given)."""
    names = [e.name for e in store.evolutions()]
    if name not in names:
        name = latest_evolution(store)
    return EvolutionData(names, name, evolution_series(store, name) if name else [])


def _points(s: Series, values: list, scale: float = 1.0) -> tuple[list[int], list[float]]:
    """The series' (tasks, value) pairs where the value is known."""
    pairs = [(t, v * scale) for t, v in zip(s.tasks, values, strict=True) if v is not None]
    return [t for t, _ in pairs], [v for _, v in pairs]


def panel_lines(series: list[Series]) -> dict[str, list[Line]]:
    """What each panel draws: per regime a line (sizes: the total, with each kind's count
    marked R, S or A)."""
    lines: dict[str, list[Line]] = {panel: [] for panel in PANELS}
    for s in series:
        color = REGIME_COLORS.get(s.regime, "gray")
        lines["pass_rate"].append(Line(s.regime, *_points(s, s.pass_rate, 100), color))
        totals = [sum(counts) for counts in zip(*s.sizes.values(), strict=True)]
        lines["sizes"].append(Line(s.regime, *_points(s, totals), color))
        for kind in KINDS:
            x, y = _points(s, s.sizes[kind])
            lines["sizes"].append(Line(None, x, y, color, KIND_MARKERS[kind], lines=False))
        lines["use_rate"].append(Line(s.regime, *_points(s, s.use_rate, 100), color))
        lines["degradation"].append(Line(s.regime, *_points(s, s.degradation), color))
    return lines


def undrawn_note(lines: list[Line]) -> str:
    """The panel's note naming the regimes it has no point of (e.g. no use rate: the regime
    never stored an artifact); empty when every regime is drawn."""
    missing = [line.label for line in lines if line.label and not line.x]
    return f"nothing to draw: {', '.join(missing)}" if missing else ""


def checkpoint_cells(checkpoint: Checkpoint) -> list[Text]:
    """One checkpoint's row of the table."""
    c = checkpoint
    admitted = sum(a.get("status") == "active" for a in c.admissions)
    degradation = Text(f"{c.degradation:+.2f}", justify="right")
    if c.degradation > 0:
        degradation.stylize("bold red")
    return [
        Text(c.regime, style=REGIME_STYLES.get(c.regime, "")),
        Text(str(c.tasks), justify="right"),
        Text(f"{c.passed}/{c.total} {c.pass_rate:4.0%}", justify="right"),
        *(Text(str(c.sizes.get(kind, 0)), justify="right") for kind in KINDS),
        Text(f"{c.used}/{c.stored}" + (f" {c.use_rate:.0%}" if c.use_rate is not None else "")),
        Text(str(c.lost), justify="right"),
        Text(str(c.recovered), justify="right"),
        degradation,
        Text(str(admitted), justify="right"),
    ]


def summary(data: EvolutionData) -> Text:
    """The line above the panels."""
    if data.name is None:
        return Text.assemble(
            ("No evolution experiment in this database. ", "bold"),
            "Run one with `workbench evolve`.",
        )
    checkpoints = sum(len(s.checkpoints) for s in data.series)
    line = Text.assemble((shown(data.name), "bold"), f" · {checkpoints} checkpoints · ")
    for i, s in enumerate(data.series):
        line.append(", " if i else "")
        line.append(shown(s.regime), REGIME_STYLES.get(s.regime, ""))
        if s.checkpoints:
            last = s.checkpoints[-1]
            line.append(f" {last.pass_rate:.0%} at {last.tasks} tasks")
    if not data.series:
        line.append("no checkpoints yet", "dim")
    return line


def empty_state() -> Text:
    """What the screen shows in place of its panels and table before the first checkpoint
    (the line above says whether an experiment exists): what will be drawn, and how to start
    an experiment."""
    text = Text()
    text.append(
        "An evolution experiment freezes each admission regime's repository every few "
        "learning tasks and scores it on a fixed held-out set. Its checkpoints are drawn "
        "here in four panels — held-out pass rate, repository size by type, artifact use "
        "rate and signed degradation, one line per regime — above a table of their "
        "numbers.\n\n"
    )
    text.append("Start one from a shell: ")
    text.append("workbench evolve", "bold")
    text.append(
        " (its defaults play for about 17 minutes; `workbench evolve --help` lists the "
        "worlds, stream sizes and regimes). This screen follows it as it runs; "
    )
    text.append("r", "bold #ffa62b")
    text.append(" reads again.")
    return text


class EvolutionScreen(Screen[None]):
    """An evolution experiment's four panels and checkpoint table.

    Args:
        session: the app's session.
        name: the experiment to show (default: the newest).
        poll_interval: seconds between reads for new checkpoints (0 turns live updates off;
            default: the app's).
    """

    HELP = HELP

    DEFAULT_CSS = """
    EvolutionScreen #evo-picker { display: none; width: 60; }
    EvolutionScreen #evo-picker.several { display: block; }
    EvolutionScreen #evo-panels {
        grid-size: 2 2;
        height: 1fr;
        min-height: 16;
    }
    EvolutionScreen #evo-panels PlotextPlot { border: round $primary-darken-2; }
    EvolutionScreen #evo-table { height: 10; }
    EvolutionScreen #evo-empty {
        display: none;
        height: 1fr;
        padding: 1 2;
        border: round $primary-darken-2;
    }
    EvolutionScreen.-empty #evo-empty { display: block; }
    EvolutionScreen.-empty #evo-panels, EvolutionScreen.-empty #evo-table { display: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reload", "Refresh"),
        Binding("e", "pick", "Experiment", show=False),
    ]

    def __init__(
        self, session: Session, *, name: str | None = None, poll_interval: float | None = None
    ) -> None:
        super().__init__()
        self.session = session
        self.wanted = name
        self.poll_interval = poll_interval
        self.data = EvolutionData()
        self.lines: dict[str, list[Line]] = {}
        """What each panel drew last."""
        self.loaded = False
        """Whether the first read has been shown."""
        self._shown: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("reading the checkpoints…", id="evo-info")
        yield Select[str]([], prompt="experiment", allow_blank=True, id="evo-picker")
        with Grid(id="evo-panels"):
            for panel in PANELS:
                yield PlotextPlot(id=f"plot-{panel.replace('_', '-')}")
        yield Static(id="evo-empty")
        yield RecordTable(CHECKPOINT_COLUMNS, id="evo-table", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"evolution · {self.session.pool.name}"
        table = self.table
        table.border_title = "checkpoints"
        for panel, title in PANELS.items():
            self.plot(panel).border_title = title
        table.focus()
        self.reload()
        interval = self.poll_interval
        if interval is None:
            interval = getattr(self.app, "poll_interval", 0)
        if interval > 0:
            self.set_interval(interval, self.poll)

    @property
    def table(self) -> RecordTable:
        return self.query_one("#evo-table", RecordTable)

    def plot(self, panel: str) -> PlotextPlot:
        """The panel's plot widget."""
        return self.query_one(f"#plot-{panel.replace('_', '-')}", PlotextPlot)

    # -- loading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the experiments and the shown one's checkpoints again (redrawn if changed)."""
        self._load(self.wanted)

    def poll(self) -> None:
        """Read again unless a read is still going: on a slow machine a read may take longer
        than the interval, and restarting it each time would never let one finish."""
        if not any(w.group == "evolution-load" and w.is_running for w in self.app.workers):
            self.reload()

    def action_reload(self) -> None:
        self.reload()

    @work(thread=True, exclusive=True, group="evolution-load")
    def _load(self, name: str | None) -> None:
        with self.session.pool.store() as store:
            data = read_evolution(store, name)
        deliver(self, self._loaded, data)

    def _loaded(self, data: EvolutionData) -> None:
        self.loaded = True
        if data.signature == self._shown:
            return
        self._shown = data.signature
        self.data = data
        self.wanted = data.name
        self.query_one("#evo-info", Static).update(summary(data))
        self._show_picker(data)
        empty = not any(s.checkpoints for s in data.series)
        self.set_class(empty, "-empty")  # one message in place of four empty panels
        self.query_one("#evo-empty", Static).update(empty_state() if empty else "")
        self._draw([] if empty else data.series)
        self._fill_table(data.series)

    def _show_picker(self, data: EvolutionData) -> None:
        picker = self.query_one("#evo-picker", Select)
        picker.set_class(len(data.names) > 1, "several")
        with self.prevent(Select.Changed):
            picker.set_options([(Text(shown(n)), n) for n in data.names])
            if data.name is not None:
                picker.value = data.name

    def _draw(self, series: list[Series]) -> None:
        self.lines = panel_lines(series)
        ticks = sorted({t for s in series for t in s.tasks})
        for panel, lines in self.lines.items():
            widget = self.plot(panel)
            plt = widget.plt
            plt.clear_data()
            plt.clear_figure()
            for line in lines:
                if line.x:  # plotext's legend fails on a labelled line without points
                    draw = plt.plot if line.lines else plt.scatter
                    label = line.label or ""
                    draw(line.x, line.y, label=label, color=line.color, marker=line.marker)
            widget.border_subtitle = undrawn_note(lines)
            if ticks:
                plt.xticks(ticks)
            if panel in ("pass_rate", "use_rate"):
                plt.ylim(0, 100)
            if panel == "degradation":
                plt.hline(0, "gray")
            widget.refresh()

    def _fill_table(self, series: list[Series]) -> None:
        table = self.table
        row = table.cursor_row
        checkpoints = [c for s in series for c in s.checkpoints]
        table.set_rows(
            map(checkpoint_cells, checkpoints), [f"{c.regime}:{c.position}" for c in checkpoints]
        )
        table.border_title = f"checkpoints · {table.row_count}"
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)

    # -- picking ----------------------------------------------------------------------------

    def action_pick(self) -> None:
        picker = self.query_one("#evo-picker", Select)
        if len(self.data.names) > 1:
            picker.focus()
            picker.action_show_overlay()
        else:
            self.notify("only one experiment in this database")

    @on(Select.Changed, "#evo-picker")
    def _picked(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.data.name:
            self.wanted = event.value
            self.reload()
