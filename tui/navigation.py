"""Where a screen asks to go next: messages that bubble up to the App, which opens the screen.

Screens never import or push each other; they post one of these and
:class:`~tui.app.WorkbenchApp` builds the screen asked for. Each message says what to show,
never how.
"""

from __future__ import annotations

from textual.message import Message

from store import EpisodeFilter


class OpenTrajectory(Message):
    """Open an episode's trajectory, its cursor on ``step``.

    Args:
        episode_id: the episode to show.
        step: the step under the cursor at first (``None``: the first step).
        where: the filter whose episodes ``H``/``L`` walk (``None``: every episode).
    """

    def __init__(
        self, episode_id: str, step: int | None = None, where: EpisodeFilter | None = None
    ) -> None:
        super().__init__()
        self.episode_id = episode_id
        self.step = step
        self.where = where


class OpenCompare(Message):
    """Compare a (failed) episode with a successful run, step-aligned.

    Args:
        episode_id: the episode to compare.
        where: the filter the trajectories opened from the comparison walk with ``H``/``L``.
        success_id: the success to compare with (``None``: the engine chooses one).
    """

    def __init__(
        self,
        episode_id: str,
        where: EpisodeFilter | None = None,
        success_id: str | None = None,
    ) -> None:
        super().__init__()
        self.episode_id = episode_id
        self.where = where
        self.success_id = success_id


class OpenClusters(Message):
    """Open the failure clusters of the latest analysis run."""


class OpenCompile(Message):
    """Open the intervention specs, on ``cluster_id``'s spec when given.

    Args:
        cluster_id: the cluster whose spec is selected first (``None``: the first spec).
    """

    def __init__(self, cluster_id: int | None = None) -> None:
        super().__init__()
        self.cluster_id = cluster_id


class OpenRepository(Message):
    """Open the artifact repository, on ``version_id`` when given.

    Args:
        version_id: the artifact version selected first (``None``: the first version).
    """

    def __init__(self, version_id: int | None = None) -> None:
        super().__init__()
        self.version_id = version_id


class OpenManual(Message):
    """Open the manual: its versions and diffs, the rules with their history."""


class OpenEvolution(Message):
    """Open the repository's evolution per regime."""


class OpenSynthesis(Message):
    """Open the synthesized tasks, their episodes and examples, and retrieval over them."""
