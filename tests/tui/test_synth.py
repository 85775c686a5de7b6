"""The Synthesis screen on a real TextWorld synthesis (tasks proposed from the documentation,
episodes played by the explorer, examples constructed backward and filtered with replays in the
simulator): tasks → episodes → examples with their verdicts and checks, retrieval with every
retriever's score, opening an example's span, and backward construction and the filter run
from the screen."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape
from textual.widgets import Static

from store import EpisodeFilter, Store
from store.synth import SYNTH_WORKSPACE
from tests.synthesized import Synthesized, copy_db
from tests.tui.conftest import SIZE, rows, screen_for_key, settle
from tui.app import make_app
from tui.screens.help import HelpScreen
from tui.screens.runs import RunsScreen
from tui.screens.synth import SynthScreen
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.job_progress import JobProgress
from workbench.synth.catalog import read_catalog
from workbench.synth.retrieval import ExampleIndex

SYNTH_EPISODES = EpisodeFilter(workspace=SYNTH_WORKSPACE, replays=False)


async def open_synthesis(pilot) -> SynthScreen:
    screen = await screen_for_key(pilot, "S", SynthScreen)
    assert screen.loaded
    return screen


def info(screen: SynthScreen) -> str:
    return screen.query_one("#synth-info").content.plain


def detail(screen: SynthScreen) -> str:
    """The example pane as plain text, wide enough that nothing wraps."""
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(screen.query_one("#example-text", Static).content)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


@pytest.fixture
def filtered(synthesized: Synthesized, tmp_path: Path) -> Path:
    return copy_db(synthesized.filtered, tmp_path)


async def test_tasks_episodes_and_examples_with_their_verdicts(filtered: Path):
    with Store(filtered, workspace=SYNTH_WORKSPACE) as store:
        catalog = read_catalog(store)
        examples = store.synth_examples()
    rejected = next(e for e in examples if e.verdict == "rejected")
    app = make_app(filtered, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_synthesis(pilot)
        kept, dropped = catalog.counts["kept"], catalog.counts["rejected"]
        assert info(screen) == (
            f"{len(catalog.tasks)} synthesized tasks · {catalog.n_episodes} episodes · "
            f"{len(examples)} examples ({kept} kept, {dropped} rejected)"
        )
        listed = [t.id for t in catalog.listed()]
        assert [int(r[0]) for r in rows(screen.task_table)] == listed
        played = [t for t in listed if catalog.played(t)]
        assert listed[: len(played)] == played and len(played) == catalog.n_episodes

        # the rejected example's task, episode and row, reached through the tables
        task = next(t for t in played if catalog.played(t)[0].episode.id == rejected.episode_id)
        screen.task_table.move_cursor(row=listed.index(task))
        await settle(pilot)
        [episode] = catalog.played(task)
        assert rows(screen.episode_table)[0][0] == episode.episode.id.split(":")[-1]
        assert rows(screen.episode_table)[0][-1] == (
            f"{episode.examples['kept']}/{episode.n_examples}"
        )
        shown = [e for e in examples if e.episode_id == rejected.episode_id]
        assert [r[:4] for r in rows(screen.example_table)] == [
            [str(e.id), e.kind, f"{e.start}–{e.end}", e.verdict] for e in shown
        ]
        screen.example_table.move_cursor(row=[e.id for e in shown].index(rejected.id))
        await settle(pilot)
        text = detail(screen)
        assert f"rejected: {rejected.reason}" in text
        assert f"dedup ✗ {rejected.reason}" in " ".join(text.split())
        assert "replay ✓ reproduced · observations" in " ".join(text.split())
        assert f"> {rejected.actions[0]}" in text

        await pilot.press("v")  # kept only, then rejected only
        await settle(pilot)
        assert {r[3] for r in rows(screen.example_table)} == {"kept"}
        await pilot.press("v")
        await settle(pilot)
        assert [r[0] for r in rows(screen.example_table)] == [
            str(e.id) for e in shown if e.verdict == "rejected"
        ]
        assert screen.example_table.border_title.endswith("· rejected")

        # enter opens the trajectory at the example's span; H/L walk the synthesized episodes
        screen.example_table.focus()
        await pilot.press("enter")
        await settle(pilot)
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)
        assert trajectory.episode_id == rejected.episode_id
        assert trajectory.step_list.cursor == rejected.start
        assert trajectory.where == SYNTH_EPISODES
        assert rejected.id in {e.id for e in trajectory.examples}
        await pilot.press("q")
        await settle(pilot)
        assert app.screen is screen


async def test_retrieval_shows_every_retrievers_score_and_opens_a_hit(filtered: Path):
    query, observation = "take the yellow bell pepper", "You open the fridge"
    with Store(filtered, workspace=SYNTH_WORKSPACE) as store:
        index = ExampleIndex.open(store)
        expected = index.search(query, 3, observation=observation)
    app = make_app(filtered, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_synthesis(pilot)
        await pilot.press("slash")
        box = screen.retrieval
        assert box.has_class("-shown") and box.field("query").has_focus
        await pilot.press(*"take")  # typed; the rest is set, which is cheaper than keys
        box.field("query").value += query.removeprefix("take")
        box.field("observation").value = observation
        box.field("k").value = "3"
        await pilot.press("enter")
        await settle(pilot)
        assert [h.example.id for h in screen.hits] == [h.example.id for h in expected]
        assert [r[:7] for r in rows(box.table)] == [
            [
                str(rank),
                str(hit.example.id),
                hit.example.kind,
                "textworld",
                f"{hit.scores['bm25_observation']:.2f}",
                f"{hit.scores['bm25_instruction']:.2f}",
                f"{hit.scores['dense']:.2f}" if "dense" in hit.scores else "–",
            ]
            for rank, hit in enumerate(expected, start=1)
        ]
        assert box.border_title == f"retrieval · 3 of {len(index)} kept examples"
        assert box.border_subtitle == escape(index.dense_note())  # shown as text, not markup
        assert detail(screen).startswith(f"example {expected[0].example.id} ")
        await pilot.press("down", "enter")
        await settle(pilot)
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)
        hit = expected[1].example
        assert (trajectory.episode_id, trajectory.step_list.cursor) == (hit.episode_id, hit.start)
        await pilot.press("q")
        await settle(pilot)
        await pilot.press("escape")  # closes the box
        await settle(pilot)
        assert not box.has_class("-shown") and screen.example_table.has_focus


async def test_help_keys_and_cancelling(filtered: Path):
    app = make_app(filtered, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        assert "S" in app.screen.active_bindings  # the Runs screen's footer and help show it
        assert dict(app.screen.HELP.keys)["S"].startswith("synthesis:")
        screen = await open_synthesis(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen) and app.screen.help.title == "Synthesis"
        keys = dict(app.screen.help.keys)
        assert {"b", "f", "v", "/", "enter on an example"} <= set(keys)
        await pilot.press("escape")
        await settle(pilot)
        screen._cancel = running = threading.Event()
        screen.refresh_bindings()
        await pilot.press("escape")
        assert running.is_set()
        await pilot.press("b")  # one job at a time
        assert screen._cancel is running


async def test_an_empty_database_says_what_to_do(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_synthesis(pilot)
        assert info(screen).startswith("No synthesis yet.")
        assert screen.task_table.row_count == 0 and screen.example_table.row_count == 0
        await pilot.press("b")
        await settle(pilot)
        assert not screen.running
        notes = [n.message for n in app._notifications]
        assert "nothing to relabel: every synthesized episode has examples" in notes
        await pilot.press("q")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)


@pytest.mark.slow
async def test_backward_then_filter_from_the_screen(synthesized: Synthesized, tmp_path: Path):
    path = copy_db(synthesized.explored, tmp_path)
    app = make_app(path, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_synthesis(pilot)
        assert "3 episode(s) without examples: press b" in info(screen)
        assert screen.example_table.border_subtitle == "no example yet: b constructs them"
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await settle(pilot)
        with Store(path, workspace=SYNTH_WORKSPACE) as store:
            pending = store.synth_counts()
        assert set(pending) == {"pending"} and pending["pending"] > 3
        assert f"({pending['pending']} pending) · pending examples: press f" in info(screen)
        assert {r[3] for r in rows(screen.example_table)} == {"pending"}

        await pilot.press("f")  # replays in the real simulator, in a local pool
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running and not screen.query_one(JobProgress).has_class("-shown")
        with Store(path, workspace=SYNTH_WORKSPACE) as store:
            counts = store.synth_counts()
            replays = [b for b in store.batches() if b.kind == "replay"]
        notes = [n.message for n in app._notifications]
        assert "pending" not in counts and counts["kept"] > 0 and replays, notes
        assert sum(counts.values()) == pending["pending"]
        assert "pending" not in {r[3] for r in rows(screen.example_table)}
        assert "press" not in info(screen)


def test_synthesis_screen(snap_compare, filtered: Path):
    async def run_before(pilot):
        await open_synthesis(pilot)
        await pilot.press("tab", "tab", *["down"] * 7)  # the rejected duplicate
        await settle(pilot)

    app = make_app(filtered, poll_interval=0)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
