"""Compile a cluster and admit a staged artifact version without blocking the kernel: the
engine calls (:func:`~workbench.compile.compiler.compile_run`,
:func:`~workbench.admit.repository.admit`) run in a background thread with a progress bar, a
cancel button and the paired replay ledger filling in as cases finish."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from store import ArtifactVersion, LedgerEntry, Store
from workbench.admit.repository import admit
from workbench.backends import make_backends
from workbench.compile.compiler import compile_run
from workbench.executors import LOCAL_WORKERS, LocalPool
from workbench.llm.client import ConfigError
from workbench.progress import Cancelled
from workbench.widgets import html

LEDGER_HEADERS = ["case", "role", "without", "with", "change", "fired"]


class BarProgress:
    """:class:`workbench.progress.Progress` on an ipywidgets progress bar and label.

    Args:
        bar: the bar to fill.
        label: where the current item's description goes.
        on_advance: called (in the worker thread) after each advance, e.g. to poll the ledger.
    """

    def __init__(
        self,
        bar: widgets.FloatProgress,
        label: widgets.HTML,
        on_advance: Callable[[], None] | None = None,
    ) -> None:
        self.bar, self.label, self.on_advance = bar, label, on_advance
        self.description = ""

    def start(self, total: float | None, description: str = "") -> None:
        self.bar.value = 0
        self.bar.max = total or 1
        self.bar.bar_style = "info" if total else ""
        self._describe(description)

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        self.bar.value = min(self.bar.value + amount, self.bar.max)
        if description is not None:
            self._describe(description)
        if self.on_advance is not None:
            self.on_advance()

    def finish(self) -> None:
        self.bar.bar_style = "success"
        self._describe(f"{self.description} · done" if self.description else "done")

    def _describe(self, description: str) -> None:
        self.description = description
        self.label.value = html.text(f"{description} {self.bar.value:g}/{self.bar.max:g}")


def version_option(version: ArtifactVersion) -> str:
    """``#3 no-repeat v1 · rule · staged``."""
    return (
        f"#{version.id} {version.artifact} v{version.version} · {version.kind} · {version.status}"
    )


def ledger_html(entries: list[LedgerEntry]) -> str:
    """The paired replay ledger: each case without and with the candidate."""
    if not entries:
        return html.status("ledger empty (not replayed yet)", "info")
    rows = [
        [
            html.text(e.case),
            html.text(e.role),
            html.mark(e.baseline_success),
            html.mark(e.candidate_success),
            html.text(e.change),
            "yes" if e.fired else "no",
        ]
        for e in entries
    ]
    return html.table(LEDGER_HEADERS, rows, raw=True)


def gates_html(version: ArtifactVersion) -> str:
    """Each gate's checks, or that it has not run."""
    rows = []
    for name, gate in (("contract", version.contract_gate), ("replay", version.replay_gate)):
        if gate is None:
            rows.append([html.text(name), "not run", "", ""])
        for check in gate.checks if gate else []:
            rows.append(
                [
                    html.text(name),
                    html.text(check.name),
                    html.mark(check.passed, "✓", "✗"),
                    html.text(check.detail),
                ]
            )
    return html.table(["gate", "check", "", "detail"], rows, raw=True)


class ReplayPanel(widgets.VBox):
    """Compile a cluster (or every supported one) and admit staged versions.

    Args:
        db: the database file.
        workers: parallel replays during admission (a local pool of that many workers,
            started for each admission and closed after it).
        reasoner: the backend that compiles (``heuristic`` or ``openai``); by default the
            configured one (:func:`workbench.backends.make_backends`).

    Attributes:
        version: the chosen artifact version; ``ledger``: its ledger as last read.
        result: what the last job returned (a compile report, an admission), ``None`` when
            cancelled, or the error message it failed with.
        running: whether a job is running.
    """

    def __init__(
        self,
        db: str | os.PathLike[str],
        workers: int = LOCAL_WORKERS,
        reasoner: str | None = None,
    ) -> None:
        self.db = str(db)
        self.workers = workers
        self.reasoner = reasoner
        self.store = Store(db)
        self.ledger: list[LedgerEntry] = []
        self.result: Any = None
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._watched: int | None = None
        self.clusters = widgets.Dropdown(description="cluster").add_class("wb-cluster")
        self.compile_button = widgets.Button(description="compile").add_class("wb-compile")
        self.versions = widgets.Dropdown(description="version", layout={"width": "40em"})
        self.versions.add_class("wb-version")
        self.admit_button = widgets.Button(description="replay / admit", button_style="primary")
        self.admit_button.add_class("wb-admit")
        self.cancel_button = widgets.Button(description="cancel", disabled=True)
        self.cancel_button.add_class("wb-cancel")
        self.bar = widgets.FloatProgress(min=0, max=1, value=0).add_class("wb-progress")
        self.bar_label = widgets.HTML().add_class("wb-progress-label")
        self.status = widgets.HTML().add_class("wb-status")
        self.gates = widgets.HTML().add_class("wb-gates")
        self.ledger_view = widgets.HTML().add_class("wb-ledger")
        self.progress = BarProgress(self.bar, self.bar_label, self._poll_ledger)
        super().__init__(
            [
                widgets.HBox([self.clusters, self.compile_button]),
                widgets.HBox([self.versions, self.admit_button, self.cancel_button]),
                widgets.HBox([self.bar, self.bar_label]),
                self.status,
                self.gates,
                self.ledger_view,
            ]
        )
        self.add_class("wb-replay")
        self.versions.observe(lambda _: self._show_version(), names="value")
        self.compile_button.on_click(lambda _: self.compile())
        self.admit_button.on_click(lambda _: self.admit())
        self.cancel_button.on_click(lambda _: self.cancel())
        self.refresh()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def version(self) -> ArtifactVersion | None:
        return self.store.version(self.versions.value) if self.versions.value else None

    def refresh(self, version_id: int | None = None) -> None:
        """Read clusters and versions again; choose ``version_id`` (default: keep, else the
        first staged one)."""
        runs = self.store.analysis_runs()
        clusters = self.store.clusters(runs[0].id) if runs else []
        options = [("every supported cluster", None)]
        options += [
            (f"#{c.id} {c.family} · {c.trigger} → {c.correction}", c.id)
            for c in clusters
            if c.status == "supported"
        ]
        self.clusters.options = options
        versions = self.store.versions()
        wanted = version_id if version_id is not None else self.versions.value
        ids = [v.id for v in versions]
        if wanted not in ids:
            staged = [v.id for v in versions if v.status == "staged"]
            wanted = staged[0] if staged else (ids[0] if ids else None)
        self.versions.options = [(version_option(v), v.id) for v in versions]
        self.versions.value = wanted
        self._show_version()

    # -- jobs -------------------------------------------------------------------------------

    def compile(self, cluster_id: int | None = None) -> bool:
        """Compile the chosen cluster (or ``cluster_id``) in the background."""
        chosen = cluster_id if cluster_id is not None else self.clusters.value

        def job(store: Store) -> Any:
            return compile_run(
                store,
                make_backends(store, self.reasoner).compiler,
                cluster_id=chosen,
                progress=self.progress,
                cancel=self._cancel,
            )

        return self._start(job, "compiling")

    def admit(self, version_id: int | None = None) -> bool:
        """Run both gates on the chosen staged version (or ``version_id``) in the background."""
        chosen = version_id if version_id is not None else self.versions.value
        if chosen is None:
            self._say("choose a staged version first", "warning")
            return False
        self._watched = chosen

        def job(store: Store) -> Any:
            with LocalPool(self.workers) as executor:
                return admit(
                    store, chosen, executor=executor, progress=self.progress, cancel=self._cancel
                )

        return self._start(job, f"admitting version #{chosen}")

    def cancel(self) -> None:
        """Ask the running job to stop (it stops between cases; finished ones are kept)."""
        self._cancel.set()
        self._say("cancelling…", "warning")

    def wait(self, timeout: float | None = None) -> Any:
        """Wait for the running job (if any) and return its result."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.result

    def _start(self, job: Callable[[Store], Any], what: str) -> bool:
        if self.running:
            self._say("a job is already running", "warning")
            return False
        self._cancel = threading.Event()
        self.result = None
        self._set_running(True)
        self._say(f"{what}…", "info")
        self._thread = threading.Thread(target=self._work, args=(job,), daemon=True)
        self._thread.start()
        return True

    def _work(self, job: Callable[[Store], Any]) -> None:
        try:
            with Store(self.db) as store:
                self.result = job(store)
            self._say(self._describe(self.result), "ok")
        except Cancelled:
            self.result = None
            self._say("cancelled; finished work is kept", "warning")
        except ConfigError as error:  # the configured model endpoint is incomplete
            self.result = str(error)
            self._say(self.result, "error")
        except Exception as error:  # shown to the user, not raised in a thread nobody joins
            self.result = f"{type(error).__name__}: {error}"
            self._say(self.result, "error")
        finally:
            self._set_running(False)
            self.refresh(self._watched)
            self._watched = None

    def _describe(self, result: Any) -> str:
        if hasattr(result, "compiled"):
            return f"{len(result.compiled)} specs compiled, {len(result.staged)} versions staged"
        version = result.version
        return f"{version.artifact} v{version.version} → {result.status}"

    def _set_running(self, running: bool) -> None:
        self.compile_button.disabled = self.admit_button.disabled = running
        self.cancel_button.disabled = not running

    # -- showing ----------------------------------------------------------------------------

    def _poll_ledger(self) -> None:
        """Read the watched version's ledger again (runs in the worker thread)."""
        if self._watched is not None and self._watched == self.versions.value:
            self.ledger = self.store.ledger(self._watched)
            self.ledger_view.value = ledger_html(self.ledger)

    def _show_version(self) -> None:
        version = self.version
        if version is None or version.id is None:
            self.ledger = []
            self.gates.value = html.status("no artifact version yet: compile first", "info")
            self.ledger_view.value = ""
            return
        self.ledger = self.store.ledger(version.id)
        self.gates.value = gates_html(version)
        self.ledger_view.value = ledger_html(self.ledger)

    def _say(self, message: str, level: str) -> None:
        self.status.value = html.status(message, level)

    def close(self) -> None:
        """Cancel a running job, close the widget and its store."""
        self._cancel.set()
        self.wait()
        super().close()
        self.store.close()
