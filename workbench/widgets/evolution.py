"""The evolution plot in a notebook: the four figures of :mod:`workbench.widgets.figures` as
live plotly ``FigureWidget``s over one experiment's checkpoints, an experiment picker, a
refresh button and optional auto-refresh while ``workbench evolve`` writes checkpoints."""

from __future__ import annotations

import os
import threading

import ipywidgets as widgets
import plotly.graph_objects as go

from store import Store
from workbench.evolution import Series, evolution_series
from workbench.widgets.figures import FIGURES, TRACES


def _signature(series: list[Series]) -> tuple:
    """What identifies a drawing: every checkpoint's id (a re-stored one gets a new id)."""
    return tuple((s.regime, tuple(c.id for c in s.checkpoints)) for s in series)


class EvolutionPlot(widgets.VBox):
    """Held-out pass rate, repository size by type, use rate and signed degradation of one
    experiment, per regime, redrawn by :meth:`refresh` or every ``interval`` seconds after
    :meth:`start` (stopped by :meth:`stop`).

    Args:
        db: the workbench database (a path, or an open :class:`Store` that the caller keeps
            and closes).
        name: the experiment shown first (default: the newest).
        interval: seconds between checks for new checkpoints when auto-refreshing.
        auto: start auto-refreshing at once.
    """

    def __init__(
        self,
        db: str | os.PathLike[str] | Store,
        name: str | None = None,
        *,
        interval: float = 3.0,
        auto: bool = False,
    ) -> None:
        self._owned = not isinstance(db, Store)
        self.store = Store(db) if self._owned else db
        self.interval = interval
        self._lock = threading.RLock()
        """Held while reading and redrawing (the polling thread and the notebook share it)."""
        self._picking = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn: tuple | None = None
        self.redrawn = threading.Event()
        """Set each time the figures are redrawn with new checkpoints (tests wait on it)."""
        self.series: list[Series] = []
        self.picker = widgets.Dropdown(description="experiment", options=[])
        self.refresh_button = widgets.Button(description="refresh", icon="refresh")
        self.auto_toggle = widgets.ToggleButton(value=False, description="auto-refresh")
        self.status = widgets.HTML()
        self.figures = {panel: go.FigureWidget(make([])) for panel, make in FIGURES.items()}
        grid = widgets.GridBox(
            list(self.figures.values()),
            layout=widgets.Layout(grid_template_columns="repeat(2, 50%)"),
        )
        bar = widgets.HBox([self.picker, self.refresh_button, self.auto_toggle, self.status])
        super().__init__([bar, grid])
        with self._lock:
            self._pick_names(name)
        self.picker.observe(self._picked, names="value")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.auto_toggle.observe(self._toggled, names="value")
        self.refresh()
        if auto:
            self.start()

    @property
    def name(self) -> str | None:
        """The experiment shown."""
        return self.picker.value

    # -- reading and drawing ----------------------------------------------------------------

    def _pick_names(self, wanted: str | None = None) -> None:
        """Offer every experiment in the picker, keeping the shown one if it is still there."""
        names = [e.name for e in self.store.evolutions()]
        current = wanted or self.picker.value
        self._picking = True
        try:
            if list(self.picker.options) != names:
                self.picker.options = names
            if names:
                self.picker.value = current if current in names else names[0]
        finally:
            self._picking = False

    def refresh(self) -> bool:
        """Read the experiments and the shown one's checkpoints again; redraw if they changed.

        Returns:
            Whether the figures were redrawn.
        """
        with self._lock:
            self._pick_names()
            name = self.picker.value
            series = evolution_series(self.store, name) if name else []
            signature = (name, _signature(series))
            if signature == self._drawn:
                return False
            self.series, self._drawn = series, signature
            for panel, figure in self.figures.items():
                with figure.batch_update():
                    figure.data = ()
                    figure.add_traces(TRACES[panel](series))
            self.status.value = _status(name, series)
        self.redrawn.set()
        return True

    def _picked(self, change: dict) -> None:
        if not self._picking and change["new"] != change["old"]:
            self.refresh()

    # -- auto-refresh -----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether auto-refresh is on."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, interval: float | None = None) -> None:
        """Check for new checkpoints every ``interval`` seconds in a background thread."""
        if interval is not None:
            self.interval = interval
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._poll, name="evolution-plot", daemon=True)
        self._thread.start()
        self.auto_toggle.value = True

    def stop(self) -> None:
        """Stop auto-refreshing (waits for the polling thread to end)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self.auto_toggle.value = False

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            self.refresh()

    def _toggled(self, change: dict) -> None:
        if change["new"]:
            self.start()
        else:
            self.stop()

    def close(self) -> None:
        """Stop auto-refresh, close the database if this plot opened it, close the widgets."""
        self.stop()
        if self._owned:
            self.store.close()
        for figure in self.figures.values():
            figure.close()
        super().close()


def _status(name: str | None, series: list[Series]) -> str:
    if name is None:
        return "<i>no evolution experiment in this database</i>"
    checkpoints = sum(len(s.checkpoints) for s in series)
    tasks = max((s.tasks[-1] for s in series if s.tasks), default=0)
    return (
        f"<b>{name}</b> · {len(series)} regimes · {checkpoints} checkpoints · "
        f"up to {tasks} learning tasks"
    )
