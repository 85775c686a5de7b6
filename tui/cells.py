"""Cell formatting the tables of several screens share: status colours, marks, counts.

Cells are given whole; :class:`~tui.widgets.record_table.RecordTable` cuts them to their
columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from store import ListedEpisode

STATUS_STYLES = {
    "supported": "bold green",
    "deferred": "yellow",
    "proposed": "",
    "accepted": "bold green",
    "edited": "bold cyan",
    "rejected": "red",
    "staged": "bold cyan",
    "active": "bold green",
    "superseded": "dim",
}
"""Colours of cluster, analysis, spec and artifact-version statuses."""


def status_text(status: str) -> Text:
    """A status in its colour."""
    return Text(status, style=STATUS_STYLES.get(status, ""))


def mark(passed: bool | None, yes: str = "pass", no: str = "fail") -> Text:
    """``pass`` in green, ``fail`` in red, ``–`` when unknown."""
    if passed is None:
        return Text("–", style="dim")
    return Text(yes, style="green") if passed else Text(no, style="bold red")


def plural(n: int, word: str) -> str:
    """``1 spec``, ``2 specs``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def outcome_badge(episode: ListedEpisode) -> Text:
    """A coloured ``FAIL`` / ``PASS`` / ``?`` badge for an episode's outcome."""
    success = episode.outcome.success
    if success is None:
        return Text.assemble(("  ?   ", "bold reverse"))
    if success:
        return Text.assemble((" PASS ", "bold white on dark_green"))
    return Text.assemble((" FAIL ", "bold white on red"))
