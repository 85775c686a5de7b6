"""Failure attribution on real public logs against labels we made ourselves.

Every folder of ``bench/labels/`` holds real logs of one source (its ``source.json`` says how
they import), and ``spans.jsonl``: one person's causal span per failure (see the folder's
README for what a label means). For each source this imports the logs and the labels into a
fresh database, then prints, for the same failures, exact / ±1 / ±3 / agent-level agreement of
the offline heuristic, of the scorer learned from the other labels (K-fold cross-validated)
and of the three trivial baselines (first agent step, last step, a uniformly random step).

    python bench/attribution.py [--folds 5] [SOURCE ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from store import EpisodeFilter, Store
from workbench.analyze.agreement import agreement
from workbench.ingest import mapped
from workbench.ingest.imports import import_paths
from workbench.spans_io import import_spans

LABELS = Path(__file__).parent / "labels"


def sources(names: list[str]) -> list[Path]:
    found = sorted(p.parent for p in LABELS.glob("*/source.json"))
    return [p for p in found if not names or p.name in names]


def load(folder: Path, db: Path) -> Store:
    """A database with the source's logs and its labels."""
    spec = json.loads((folder / "source.json").read_text())
    store = Store(db)
    import_paths(
        store,
        [folder / p for p in spec["paths"]],
        format=mapped.load(folder / spec["map"]) if spec.get("map") else spec.get("format"),
        results=folder / spec["results"] if spec.get("results") else None,
        batch=spec["name"],
    )
    import_spans(store, folder / "spans.jsonl")
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="folders of bench/labels (default: all)")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds")
    args = parser.parse_args()
    console = Console()
    table = Table(title="causal step against our own labels")
    for column in ("source", "failures", "method", "exact", "±1", "±3", "agent"):
        table.add_column(column, justify="left" if column in ("source", "method") else "right")
    with tempfile.TemporaryDirectory() as tmp:
        for folder in sources(args.sources):
            with load(folder, Path(tmp) / f"{folder.name}.db") as store:
                rows = agreement(
                    store, EpisodeFilter(), baselines=True, folds=args.folds, heuristic=True
                )
            for row in (r for r in rows if r.key == "all"):
                table.add_row(
                    folder.name,
                    str(row.episodes),
                    row.method,
                    f"{row.exact:.0%}",
                    f"{row.within_one:.0%}",
                    f"{row.within_three:.0%}",
                    "–" if row.agent is None else f"{row.agent:.0%}",
                )
            table.add_section()
    console.print(table)


if __name__ == "__main__":
    sys.exit(main())
