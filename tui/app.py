"""The Trajectory Workbench app: its screens, global keys, and the ``make_app`` factory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from store import Store
from tui.data import Session, StorePool
from tui.screens.help import Help, HelpScreen
from tui.screens.runs import RunsScreen
from workbench.llm.client import ConfigError


class WorkbenchApp(App[None]):
    """Triage trajectories: Runs → Trajectory (mark spans) → Compare, Clusters → Compile →
    Repository, over one SQLite file.

    Args:
        db_path: the workbench database.
        page_size: episodes read per page of the Runs table.
        poll_interval: seconds between checks for episodes added by another process
            (0 turns live updates off).
        workspace: the workspace shown ('' is the researcher's own; ``evolve/<name>/<regime>``
            is one regime of an evolution experiment).
        reasoner: the backend the screens' jobs judge with (``heuristic`` or ``openai``);
            ``None``: the configured one (:mod:`workbench.backends`). A model backend is named
            in the header; a misconfigured one there too, and its jobs say why they cannot run.
    """

    CSS_PATH = "app.tcss"
    TITLE = "Trajectory Workbench"
    ENABLE_COMMAND_PALETTE = False

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "back", "Back"),
        Binding("question_mark", "help", "Help"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        *,
        page_size: int = 200,
        poll_interval: float = 1.0,
        workspace: str = "",
        reasoner: str | None = None,
    ) -> None:
        super().__init__()
        self.db_path = Path(db_path)
        self.session = Session(StorePool(self.db_path, workspace=workspace), reasoner=reasoner)
        self.page_size = page_size
        self.poll_interval = poll_interval
        self.title = self.header_title()

    def header_title(self) -> str:
        """The app's title, followed by the backend when it is a model (or misconfigured)."""
        try:
            config = self.session.reasoner_config()
        except ConfigError:
            return f"{self.TITLE} · reasoner not configured"
        return (
            self.TITLE if config.backend == "heuristic" else f"{self.TITLE} · {config.describe()}"
        )

    def get_default_screen(self) -> Screen:
        return RunsScreen(self.session, page_size=self.page_size, poll_interval=self.poll_interval)

    def run(self, **kwargs: Any) -> Any:
        """Run the app until it quits. When an exception ended it (Textual has printed the
        traceback), the process exits with the app's non-zero return code, never 0.

        Args:
            **kwargs: passed to :meth:`textual.app.App.run` (``headless``, ``size``…).

        Returns:
            What ``App.run`` returns (a snapshot test's auto pilot returns its screenshot).
        """
        result = super().run(**kwargs)
        if self.return_code:
            raise SystemExit(self.return_code)
        return result

    def on_unmount(self) -> None:
        self.session.pool.close()

    def action_back(self) -> None:
        """Leave the current screen; quit from the first one."""
        if len(self.screen_stack) <= 1:
            self.exit()
        elif hasattr(self.screen, "action_back"):
            self.screen.action_back()
        else:
            self.screen.dismiss(None)

    def action_help(self) -> None:
        """Show the keys of the current screen."""
        if isinstance(self.screen, HelpScreen):
            return
        help = getattr(self.screen, "HELP", None) or Help(self.TITLE, "", [])
        self.push_screen(HelpScreen(help))


def make_app(
    db_path: str | os.PathLike[str],
    *,
    page_size: int = 200,
    poll_interval: float = 1.0,
    workspace: str = "",
    reasoner: str | None = None,
) -> WorkbenchApp:
    """The app on ``db_path`` (in ``workspace``, e.g. one regime of an evolution experiment,
    judging with ``reasoner``, by default the configured backend), whose schema is created or
    migrated first (in this thread, so the app's reader threads never race to migrate)."""
    Store(db_path).close()
    return WorkbenchApp(
        db_path,
        page_size=page_size,
        poll_interval=poll_interval,
        workspace=workspace,
        reasoner=reasoner,
    )
