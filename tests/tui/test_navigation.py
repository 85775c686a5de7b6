"""Navigation lives in the app: screens post :mod:`tui.navigation` messages, the App opens the
screen asked for, and no screen imports another (but the help and the modals it owns)."""

from __future__ import annotations

import ast
from pathlib import Path

from textual.message import Message

import tui
from store import EpisodeFilter
from tests.tui.conftest import SIZE, settle
from tui import navigation
from tui.app import make_app
from tui.navigation import (
    OpenClusters,
    OpenCompile,
    OpenEvolution,
    OpenManual,
    OpenRepository,
    OpenSynthesis,
)
from tui.screens.clusters import ClustersScreen
from tui.screens.compare import CompareScreen
from tui.screens.compile import CompileScreen
from tui.screens.evolution import EvolutionScreen
from tui.screens.manual import ManualScreen
from tui.screens.repository import RepositoryScreen
from tui.screens.synth import SynthScreen
from tui.screens.trajectory import TrajectoryScreen

TUI = Path(tui.__file__).parent
OWNED = {
    "tui.screens.trajectory": {"tui.screens.span_modal"},
    "tui.screens.clusters": {"tui.screens.range_modal", "tui.screens.scope_modal"},
}
"""The modal screens a screen owns (it pushes them and reads their result)."""


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(TUI.parent).with_suffix("").parts)


def imported_screens(path: Path) -> set[str]:
    """The ``tui.screens`` modules ``path`` imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module in ("tui", "tui.screens"):
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {name for name in found if name.startswith("tui.screens.")}


def test_no_module_but_the_app_imports_another_screen():
    imports = {module_name(path): imported_screens(path) for path in TUI.rglob("*.py")}
    assert imports["tui.app"] >= {"tui.screens.runs", "tui.screens.trajectory"}
    for module, screens in imports.items():
        if module != "tui.app":
            allowed = {module, "tui.screens.help"} | OWNED.get(module, set())
            assert screens <= allowed, f"{module} imports {sorted(screens - allowed)}"
    assert "tui.screens.trajectory" not in imports["tui.screens.compare"]
    assert "tui.screens.compare" not in imports["tui.screens.trajectory"]


class Asked:
    """The navigation messages posted while the app runs (each once, in order)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        if type(message).__module__ == navigation.__name__ and not any(
            message is seen for seen in self.messages
        ):
            self.messages.append(message)

    def take(self) -> list[tuple]:
        """What was asked since the last call: (message type, its fields)."""
        taken = [(type(m).__name__, *vars_of(m)) for m in self.messages]
        self.messages.clear()
        return taken


def vars_of(message: Message) -> tuple:
    return tuple(value for name, value in vars(message).items() if not name.startswith("_"))


async def test_runs_keys_ask_the_app_for_each_screen(repo_db):
    app = make_app(repo_db, poll_interval=0)
    asked = Asked()
    async with app.run_test(size=SIZE, message_hook=asked) as pilot:
        await settle(pilot)
        runs = app.screen
        for key, message, screen in (
            ("C", OpenClusters, ClustersScreen),
            ("K", OpenCompile, CompileScreen),
            ("R", OpenRepository, RepositoryScreen),
            ("M", OpenManual, ManualScreen),
            ("E", OpenEvolution, EvolutionScreen),
            ("S", OpenSynthesis, SynthScreen),
        ):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, screen)
            assert [type(m) for m in asked.messages] == [message]
            asked.messages.clear()
            await pilot.press("q")
            await settle(pilot)
            assert app.screen is runs


async def test_enter_on_a_cluster_member_asks_the_app_for_its_trajectory(repo_db):
    app = make_app(repo_db, poll_interval=0)
    asked = Asked()
    async with app.run_test(size=SIZE, message_hook=asked) as pilot:
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)
        clusters = app.screen
        assert isinstance(clusters, ClustersScreen)
        clusters.cluster_table.move_cursor(row=1)  # the focus-sink cluster
        await settle(pilot)
        clusters.member_table.focus()
        assert clusters.member.episode_id == "focus-sink"
        asked.take()

        await pilot.press("enter")
        await settle(pilot)
        assert asked.take() == [("OpenTrajectory", "focus-sink", 3, None)]
        assert isinstance(app.screen, TrajectoryScreen)
        assert (app.screen.episode_id, app.screen.step_list.cursor) == ("focus-sink", 3)

        await pilot.press("q")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert asked.take() == [("OpenCompare", "focus-sink", None, "boil-ok")]
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.comparison.success.id == "boil-ok"

        await pilot.press("q")
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)
        assert asked.take() == [("OpenCompile", clusters.cluster.id)]
        assert isinstance(app.screen, CompileScreen)
        assert app.screen.cluster_id == clusters.cluster.id


async def test_enter_on_a_citation_asks_the_app_for_the_cited_step(repo_db):
    app = make_app(repo_db, poll_interval=0)
    asked = Asked()
    async with app.run_test(size=SIZE, message_hook=asked) as pilot:
        await settle(pilot)
        await pilot.press("K")
        await settle(pilot)
        compile_screen = app.screen
        assert isinstance(compile_screen, CompileScreen)
        assert asked.take() == [("OpenCompile", None)]
        await pilot.press("enter")  # on the spec: into its fields
        await settle(pilot)
        labels = [c.label() if c else None for c in compile_screen.field_citations]
        compile_screen.field_table.move_cursor(row=labels.index("boil-ok@1-2"))
        await pilot.press("enter")
        await settle(pilot)
        assert asked.take() == [("OpenTrajectory", "boil-ok", 1, None)]
        assert isinstance(app.screen, TrajectoryScreen)
        assert (app.screen.episode_id, app.screen.step_list.cursor) == ("boil-ok", 1)

        await pilot.press("q")
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        staged = compile_screen.data.staged[compile_screen.spec.id]
        assert asked.take() == [("OpenRepository", staged.id)]
        assert isinstance(app.screen, RepositoryScreen)
        assert app.screen.version_id == staged.id


async def test_c_on_a_trajectory_asks_the_app_for_the_comparison_and_back(app):
    asked = Asked()
    async with app.run_test(size=SIZE, message_hook=asked) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "enter")  # thermo-1-s2, from the runs table
        await settle(pilot)
        assert asked.take() == [("OpenTrajectory", "thermo-1-s2", None, EpisodeFilter())]
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)

        await pilot.press("c")
        await settle(pilot)
        assert asked.take() == [("OpenCompare", "thermo-1-s2", EpisodeFilter(), None)]
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        assert compare.comparison.failed.id == "thermo-1-s2"

        await pilot.press("s")  # the successful run at the aligned step
        await settle(pilot)
        pair = compare.comparison.alignment.pairs[compare.query_one("#alignment").cursor_row]
        assert asked.take() == [("OpenTrajectory", "thermo-0-s1", pair.success, EpisodeFilter())]
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.episode_id == "thermo-0-s1"
        assert app.screen.step_list.cursor == pair.success
