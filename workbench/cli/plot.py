"""The ``plot`` command group: figures of stored experiments, written to files.

Plotly is imported inside the commands, so ``workbench --help`` stays fast.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from workbench.cli.options import console, errors, existing_db_option, out_folder

if TYPE_CHECKING:
    from store import Store


@click.group("plot")
def plot_group() -> None:
    """Figures of stored experiments as HTML (viewable offline) and PNG."""


def _experiment(store: Store, name: str | None) -> str:
    """The experiment to draw: ``name``, or the newest; a clear error if there is none."""
    from workbench.evolution import latest_evolution

    if name is None:
        latest = latest_evolution(store)
        if latest is None:
            raise click.ClickException(
                f"no evolution experiment in {store.path}; run one with `workbench evolve`"
            )
        return latest
    if store.evolution(name) is None:
        known = ", ".join(e.name for e in store.evolutions()) or "none"
        raise click.ClickException(f"no evolution experiment named {name!r} (known: {known})")
    return name


@plot_group.command("evolution")
@click.option("--name", help="Experiment to draw [default: the newest].")
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write evolution.html and the PNGs into (created if missing).",
)
@click.option("--no-png", is_flag=True, help="Write the HTML only (PNG needs chromium).")
@existing_db_option
def plot_evolution(store: Store, name: str | None, out_dir: Path, no_png: bool) -> None:
    """Held-out pass rate, repository size by type, artifact use rate and signed degradation
    of an evolution experiment, per regime against the learning tasks seen.

    Writes evolution.html (self-contained) and, unless --no-png, evolution.png with one PNG
    per panel; without a chromium for kaleido it writes the HTML alone and says why.
    """
    from workbench.evolution import evolution_series

    name = _experiment(store, name)
    series = evolution_series(store, name)
    if not series:
        raise click.ClickException(f"experiment {name!r} has no checkpoints yet")
    from workbench.widgets.figures import PngExportWarning, export_evolution

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PngExportWarning)
        paths = export_evolution(
            series, out_folder(out_dir), png=not no_png, title=f"Evolution · {name}"
        )
    for warning in caught:
        if issubclass(warning.category, PngExportWarning):
            errors.print(f"[yellow]{escape(str(warning.message))}[/]")
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    checkpoints = sum(len(s.checkpoints) for s in series)
    regimes = ", ".join(s.regime for s in series)
    console.print(f"[bold]{escape(name)}[/]: {checkpoints} checkpoints · {escape(regimes)}")
    for path in paths:
        click.echo(path)  # one per line, unwrapped, for scripts
