"""One line of counts for the current filter: episodes, failed, passed, unknown, success rate."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from store import EpisodeFilter, GroupStats
from tui.escapes import shown


def describe(where: EpisodeFilter) -> str:
    """The filter in words, e.g. ``failed · family=boil``; ``all episodes`` when empty."""
    parts = [where.outcome] if where.outcome else []
    parts += [
        f"{name}={value}"
        for name in ("family", "agent", "batch", "split", "task")
        if (value := getattr(where, name)) is not None
    ]
    return " · ".join(parts) or "all episodes"


class RunSummary(Static):
    """Counts and success rate of the episodes the current filter selects."""

    DEFAULT_CSS = """
    RunSummary {
        height: 1;
        padding: 0 1;
        background: $boost;
    }
    """

    def show(self, summary: GroupStats | None, where: EpisodeFilter) -> None:
        """Show ``summary`` (``None`` while it is being counted)."""
        line = Text()
        if summary is None:
            line.append("counting…", "dim")
        else:
            line.append(f"{summary.episodes:,} episodes", "bold")
            line.append("  ")
            line.append(f"{summary.failed:,} failed", "bold red")
            line.append("  ")
            line.append(f"{summary.passed:,} passed", "bold green")
            line.append("  ")
            line.append(f"{summary.unknown:,} unknown", "dim")
            rate = summary.success_rate
            line.append("  success rate ")
            line.append("–" if rate is None else f"{rate:.1%}", "bold")
        line.append(f"   [{shown(describe(where))}]", "dim")
        self.update(line)
