"""Notebook widgets (ipywidgets 8): thin faces over the engine calls the terminal UI makes.

Each widget is built from a database path, opens its own :class:`store.Store` on it, and
writes through the engine at once, so a terminal UI open on the same file sees every change.

- :class:`TrajectoryStepper` — step through an episode (failures-first picker, prev/next).
- :class:`SpanAnnotator` — mark, edit, delete and undo spans at a stepper's steps.
- :class:`ClusterInspector` — an analysis run's clusters, members and contrasts; opens a
  member in a stepper at its causal step.
- :class:`WitnessView` — a spec's cited fields and every compile attempt's obligations.
- :class:`ReplayPanel` — compile a cluster and admit a staged version in a background
  thread, with progress, cancel and the paired replay ledger.
- :class:`ManualView` — the formulated manual as HTML, its versions, diffs and export.
- :class:`EvolutionPlot` — an evolution experiment's four figures, refreshed live.
- :class:`ExampleBrowser` — synthesized examples by world, kind and verdict; one with its
  span's steps, provenance and every filter's check.
- :class:`RetrievalPlayground` — a query (and an observation) searched over the kept examples,
  every retriever's score shown.

Widgets are imported on first use (``from workbench.widgets import TrajectoryStepper``), so
``workbench.widgets.figures`` — plotly only — serves the CLI without ipywidgets installed.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "ClusterInspector": "clusters",
    "EvolutionPlot": "evolution",
    "ExampleBrowser": "synth",
    "ManualView": "manual",
    "ReplayPanel": "replay",
    "RetrievalPlayground": "synth",
    "SpanAnnotator": "spans",
    "TrajectoryStepper": "stepper",
    "WitnessView": "witness",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
