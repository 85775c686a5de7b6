"""The Trajectory Workbench app: its screens, global keys, and the ``make_app`` factory."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.filter import LineFilter
from textual.notifications import SeverityLevel
from textual.screen import Screen

from store import EpisodeFilter, Store
from tui.data import Session, StorePool
from tui.escapes import ControlFilter, shown
from tui.navigation import (
    OpenClusters,
    OpenCompare,
    OpenCompile,
    OpenEvolution,
    OpenManual,
    OpenRepository,
    OpenSynthesis,
    OpenTrajectory,
)
from tui.screens.help import Help, HelpScreen
from workbench.llm.client import ConfigError

if TYPE_CHECKING:  # executors load when a job needs one, not at start-up
    from workbench.executors import ExecutorChoice


class WorkbenchApp(App[None]):
    """Triage trajectories: Runs → Trajectory (mark spans) → Compare, Clusters → Compile →
    Repository, and the Synthesis of examples, over one SQLite file.

    Screens never open each other: they post a :mod:`tui.navigation` message and the app
    pushes the screen asked for (each screen's module is imported when it is first opened, so
    the first paint pays only for the screen it shows).

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
        episode: an episode whose Trajectory screen opens at start (``None``: the Runs
            screen). It opens over a bare screen: the Runs screen is made (and reads its
            episodes) only when ``q`` goes back to it.
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
        episode: str | None = None,
        executor: ExecutorChoice | None = None,
    ) -> None:
        super().__init__()
        self.db_path = Path(db_path)
        self.session = Session(
            StorePool(self.db_path, workspace=workspace, on_lock_wait=self.lock_wait),
            reasoner=reasoner,
            executor=executor,
        )
        self.page_size = page_size
        self.poll_interval = poll_interval
        self.episode = episode
        self._bare: Screen | None = None
        """The screen beneath the trajectory opened at start (``None``: none opened)."""
        self._control_filter = ControlFilter()
        self.title = self.header_title()

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then :class:`~tui.escapes.ControlFilter`: every line any widget
        draws reaches the terminal with its control characters shown, never obeyed."""
        return [*super().get_line_filters(), self._control_filter]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast, its text escaped (messages often quote stored text: an id, an error)."""
        super().notify(
            shown(message), title=shown(title), severity=severity, timeout=timeout, markup=markup
        )

    def lock_wait(self, retry: int, waited: float) -> None:
        """A write waits for another writer's lock: say so in a notification (told from any
        thread)."""
        message = (
            f"waiting for the database lock held by another writer… (retry {retry}, {waited:.0f} s)"
        )
        if self._thread_id == threading.get_ident():
            self.notify(message, severity="warning")
        else:
            with contextlib.suppress(RuntimeError):  # the app is not running (any more)
                self.call_from_thread(self.notify, message, severity="warning")

    def header_title(self) -> str:
        """The app's title, followed by the backend when it is a model (or misconfigured)."""
        try:
            config = self.session.reasoner_config()
        except ConfigError:
            return f"{self.TITLE} · reasoner not configured"
        if config.backend == "heuristic":
            return self.TITLE
        return f"{self.TITLE} · {shown(config.describe())}"

    def get_default_screen(self) -> Screen:
        if self.episode is not None:  # Runs is made when the trajectory opened at start is left
            self._bare = Screen()
            return self._bare
        return self.runs_screen()

    def runs_screen(self, select: str | None = None) -> Screen:
        """A Runs screen on every episode, its cursor on ``select`` once that is loaded."""
        from tui.screens.runs import RunsScreen

        return RunsScreen(
            self.session, page_size=self.page_size, poll_interval=self.poll_interval, select=select
        )

    def on_mount(self) -> None:
        if self.episode is not None:
            self.open_trajectory(self.episode)

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

    # -- navigation -------------------------------------------------------------------------

    def open_trajectory(
        self, episode_id: str, step: int | None = None, where: EpisodeFilter | None = None
    ) -> None:
        """Push the Trajectory screen on ``episode_id``, its cursor on ``step``.

        Args:
            episode_id: the episode to show.
            step: the step under the cursor at first (``None``: the first step).
            where: the filter whose episodes ``H``/``L`` walk (``None``: every episode).
        """
        from tui.screens.trajectory import TrajectoryScreen

        origin = self.screen

        def closed(last: str | None) -> None:
            from tui.screens.runs import RunsScreen

            if origin is self._bare:  # opened at start: Runs goes over the bare screen
                self.push_screen(self.runs_screen(select=last))
            elif last and isinstance(origin, RunsScreen):
                origin.select_episode(last)

        self.push_screen(TrajectoryScreen(self.session, episode_id, where, start=step), closed)

    def open_compare(
        self,
        episode_id: str,
        where: EpisodeFilter | None = None,
        success_id: str | None = None,
    ) -> None:
        """Push the Compare screen: ``episode_id`` beside a successful run.

        Args:
            episode_id: the episode to compare.
            where: the filter the trajectories opened from the comparison walk with ``H``/``L``.
            success_id: the success to compare with (``None``: the engine chooses one).
        """
        from tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(self.session, episode_id, where, success_id))

    @on(OpenTrajectory)
    def _open_trajectory(self, event: OpenTrajectory) -> None:
        self.open_trajectory(event.episode_id, event.step, event.where)

    @on(OpenCompare)
    def _open_compare(self, event: OpenCompare) -> None:
        self.open_compare(event.episode_id, event.where, event.success_id)

    @on(OpenClusters)
    def _open_clusters(self) -> None:
        from tui.screens.clusters import ClustersScreen

        self.push_screen(ClustersScreen(self.session))

    @on(OpenCompile)
    def _open_compile(self, event: OpenCompile) -> None:
        from tui.screens.compile import CompileScreen

        self.push_screen(CompileScreen(self.session, cluster_id=event.cluster_id))

    @on(OpenRepository)
    def _open_repository(self, event: OpenRepository) -> None:
        from tui.screens.repository import RepositoryScreen

        self.push_screen(RepositoryScreen(self.session, version_id=event.version_id))

    @on(OpenManual)
    def _open_manual(self) -> None:
        from tui.screens.manual import ManualScreen

        self.push_screen(ManualScreen(self.session))

    @on(OpenEvolution)
    def _open_evolution(self) -> None:
        from tui.screens.evolution import EvolutionScreen

        self.push_screen(EvolutionScreen(self.session))

    @on(OpenSynthesis)
    def _open_synthesis(self) -> None:
        from tui.screens.synth import SynthScreen

        self.push_screen(SynthScreen(self.session))


def make_app(
    db_path: str | os.PathLike[str],
    *,
    page_size: int = 200,
    poll_interval: float = 1.0,
    workspace: str = "",
    reasoner: str | None = None,
    episode: str | None = None,
    executor: ExecutorChoice | None = None,
) -> WorkbenchApp:
    """The app on ``db_path`` (in ``workspace``, e.g. one regime of an evolution experiment,
    judging with ``reasoner``, by default the configured backend; showing ``episode``'s
    trajectory first if given), whose schema is created or migrated first (in this thread, so
    the app's reader threads never race to migrate)."""
    Store(db_path).close()
    return WorkbenchApp(
        db_path,
        page_size=page_size,
        poll_interval=poll_interval,
        workspace=workspace,
        reasoner=reasoner,
        episode=episode,
        executor=executor,
    )
