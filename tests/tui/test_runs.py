"""The Runs screen: failures first, filters and counts, paging, step search."""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.widgets import Select

from store import Episode, Outcome, Step, Store, Task
from tests.tui.conftest import SIZE, WHEN, rows, settle, shown
from tui.app import make_app
from tui.screens.runs import RunsScreen
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.episode_table import EpisodeTable
from tui.widgets.record_table import MIN_TEXT
from tui.widgets.run_summary import RunSummary
from tui.widgets.search_hits import SearchHits

FAILED = ["boil-0-s3", "thermo-0-s5", "thermo-1-s2", "boil-1-s4", "boil-1-long"]


def summary_line(screen: RunsScreen) -> str:
    return screen.query_one(RunSummary).content.plain


async def test_failures_first_with_counts_and_success_rate(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.query_one(EpisodeTable)
        assert table.ids == [*FAILED, "thermo-0-s9", "boil-0-s1", "thermo-0-s1"]
        line = summary_line(screen)
        assert "8 episodes" in line and "5 failed" in line and "2 passed" in line
        assert "1 unknown" in line and "28.6%" in line


async def test_filter_by_family_and_outcome_changes_rows_and_counts(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one(EpisodeTable)
        screen.query_one("#filter-family", Select).value = "boil"
        await settle(pilot)
        assert table.ids == ["boil-0-s3", "boil-1-s4", "boil-1-long", "boil-0-s1"]
        line = summary_line(screen)
        assert "4 episodes" in line and "3 failed" in line and "25.0%" in line
        assert "family=boil" in line

        # outcome with the keyboard: f focuses the outcome drop-down, pick its second entry
        await pilot.press("f", "enter", "down", "down", "enter")
        await settle(pilot)
        assert screen.where.outcome == "passed"
        assert table.ids == ["boil-0-s1"]
        assert "1 episodes" in summary_line(screen) and "100.0%" in summary_line(screen)

        screen.query_one("#filter-family", Select).clear()
        await settle(pilot)
        assert table.ids == ["boil-0-s1", "thermo-0-s1"]


async def test_filter_choices_come_from_the_database(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        options = {
            name: [value for _, value in app.screen.query_one(f"#filter-{name}", Select)._options]
            for name in ("family", "agent", "batch")
        }
        assert options["family"][1:] == ["boil", "use-thermometer"]
        assert options["agent"][1:] == ["llm", "scripted"]
        assert options["batch"][1:] == ["demo-train", "long-runs"]


async def test_enter_opens_the_trajectory_and_q_returns_to_the_same_row(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.episode_id == "thermo-1-s2"
        await pilot.press("L", "q")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.query_one(EpisodeTable).current == "boil-1-s4"
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_slash_search_opens_the_trajectory_at_the_hit_step(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"purple", "enter")
        await settle(pilot)
        hits = app.screen.query_one(SearchHits)
        assert hits.has_focus
        assert [(h.episode_id, h.index) for h in hits.hits] == [("boil-1-s4", 2)]
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen)
        assert screen.episode_id == "boil-1-s4"
        assert screen.step_list.cursor == 2
        assert screen.detail.step is not None and "purple crystal" in screen.detail.step.observation


async def test_search_with_no_hits_says_so_and_escape_closes(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"xylophone", "enter")
        await settle(pilot)
        hits = app.screen.query_one(SearchHits)
        assert hits.hits == [] and hits.has_class("-shown")
        await pilot.press("escape")
        await pilot.pause()
        assert not hits.has_class("-shown")
        assert app.screen.query_one(EpisodeTable).has_focus


async def test_table_is_fed_in_pages(tui_db):
    with Store(tui_db) as store, store.transaction():
        for i in range(1000):
            eid = f"bulk-{i:04d}"
            store.add_episode(
                Episode(
                    id=eid,
                    task_id="scienceworld:boil:0",
                    agent="scripted",
                    batch_id="demo-train",
                    outcome=Outcome(success=i % 3 == 0, score=0.0),
                    started_at=WHEN + timedelta(seconds=i),
                ),
                [Step(episode_id=eid, index=0, kind="observation", observation="hello")],
            )
    app = make_app(tui_db, page_size=200, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(EpisodeTable)
        assert len(table.ids) == 200 and table.total == 1008
        await pilot.press("end")  # to the last loaded row: the next page is read
        await settle(pilot)
        assert len(table.ids) == 400
        for _ in range(3):
            await pilot.press("end")
            await settle(pilot)
        assert len(table.ids) == 1000
        await pilot.press("end")
        await settle(pilot)
        assert len(table.ids) == 1008 and len(set(table.ids)) == 1008
        assert table.ids[0] == "boil-0-s3"  # failures first ...
        assert table.ids[-1] == "bulk-0999"  # ... the last stored success last


async def test_text_that_looks_like_markup_is_shown_as_it_is(tui_db):
    with Store(tui_db) as store:
        store.add_episode(
            Episode(
                id="odd-[b]id[/b]",
                task_id="scienceworld:boil:0",
                agent="[red]agent",
                batch_id="demo-train",
                outcome=Outcome(success=False, message="Agent error: [Errno 2] no [/] file"),
            ),
            [Step(episode_id="odd-[b]id[/b]", index=0, kind="action", action="open [door]")],
        )
    app = make_app(tui_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(EpisodeTable)
        row = [cell.plain for cell in table.get_row_at(table.ids.index("odd-[b]id[/b]"))]
        assert "odd-[b]id[/b]" in row and "[red]agent" in row
        assert any(cell.startswith("Agent error: [Errno") for cell in row)
        await pilot.press("slash", "d", "o", "o", "r", "enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.episode_id == "odd-[b]id[/b]"
        await pilot.press("c")  # compared with the task's success by another agent
        await settle(pilot)
        app.save_screenshot(str(tui_db.parent / "odd.svg"))  # renders without markup errors


LONG_EPISODE = "demo-train:test-conductivity:123"
CONDUCTIVITY = "Your task is to determine if the metal fork is electrically conductive."
LONG_MESSAGE = "Agent stopped before completing the task (score 0) " + "and said why " * 20


def add_conductivity_episode(path, observations: tuple[str, ...] = ("hello",)) -> None:
    """A failure whose family, task and episode ids are longer than any column used to be
    (a step per observation)."""
    with Store(path) as store:
        store.put_task(
            Task(
                id="scienceworld:test-conductivity:123",
                environment="scienceworld",
                family="test-conductivity",
                instruction=CONDUCTIVITY,
                split="train",
            )
        )
        store.add_episode(
            Episode(
                id=LONG_EPISODE,
                task_id="scienceworld:test-conductivity:123",
                agent="scripted",
                batch_id="demo-train",
                outcome=Outcome(success=False, score=0.0, message=LONG_MESSAGE),
                started_at=WHEN,
            ),
            [
                Step(episode_id=LONG_EPISODE, index=i, kind="observation", observation=text)
                for i, text in enumerate(observations)
            ],
        )


LONG_WORD = "superconductivityexperiment"


async def test_search_hits_show_ids_whole_and_cut_the_snippet(tui_db):
    words = " ".join([LONG_WORD] * 12)
    add_conductivity_episode(tui_db, ("hello", f"focus on the fork: {words}"))
    app = make_app(tui_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"focus", "enter")
        await settle(pilot)
        hits = app.screen.query_one(SearchHits)
        lines = shown(hits)
        assert 1 < len(hits.hits) <= len(lines)
        for line, hit in zip(lines, hits.hits, strict=False):  # a line a hit: none wraps
            assert line.startswith(f"{hit.episode_id:<{len(LONG_EPISODE)}}  step {hit.index} ")
        line = lines[[h.episode_id for h in hits.hits].index(LONG_EPISODE)]
        assert LONG_WORD in line and line.endswith("…")  # the snippet, cut


def visible_row(table: EpisodeTable, episode_id: str) -> str:
    """The text the table shows on the episode's line (header is line 0)."""
    return table.render_line(table.ids.index(episode_id) + 1).text


@pytest.mark.parametrize("width", [200, 80])
async def test_identifiers_are_never_cut_the_message_is(tui_db, width):
    add_conductivity_episode(tui_db)
    app = make_app(tui_db, poll_interval=0)
    async with app.run_test(size=(width, 36)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(EpisodeTable)
        widths = {key: column.width for key, column in table.columns.items()}
        assert widths["family"] == len("test-conductivity")
        assert widths["task"] == len("test-conductivity:123")
        assert widths["episode"] == len(LONG_EPISODE)
        assert widths["agent"] == len("scripted")
        if width == 200:  # the message takes the rest, exactly the table's width
            assert widths["message"] > 60
            total = sum(w + 2 * table.cell_padding for w in widths.values())
            assert total == table.size.width - 2
            assert table.virtual_size.width <= table.size.width
        else:  # too narrow: the message keeps its minimum, the table scrolls sideways
            assert widths["message"] == MIN_TEXT
        line = visible_row(table, LONG_EPISODE)
        if width == 80:
            table.scroll_to(x=table.virtual_size.width, animate=False, immediate=True)
            await pilot.pause()
            line = visible_row(table, LONG_EPISODE)
        assert LONG_EPISODE in line and "…" in line  # the id whole, the message cut
        if width == 200:
            assert "test-conductivity:123" in line and "test-conductivity " in line


async def test_columns_widen_when_a_longer_id_arrives(app, tui_db):
    async with app.run_test(size=(200, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one(EpisodeTable)
        assert table.columns["episode"].width == len("thermo-0-s9")
        message = table.columns["message"].width
        table.move_cursor(row=2)
        add_conductivity_episode(tui_db)
        screen.reload(keep="thermo-1-s2")
        await settle(pilot)
        assert table.columns["episode"].width == len(LONG_EPISODE)
        # family 15 → 17, task 17 → 21, episode 11 → 32: the message gives up the difference
        assert table.columns["message"].width == message - 2 - 4 - 21
        assert table.current == "thermo-1-s2"


def footer_keys(screen) -> list[tuple[str, str]]:
    """The (key, description) pairs the footer shows: the screen's active bindings (those
    nearest the focus win a key) that are shown."""
    shown = screen.active_bindings.values()
    return [(b.binding.key, b.binding.description) for b in shown if b.binding.show]


async def test_footer_lists_the_screens_and_q_quits_on_the_first_screen(app):
    async with app.run_test(size=(160, 36)) as pilot:
        await settle(pilot)
        keys = footer_keys(app.screen)
        for key, description in (
            ("C", "Clusters"),
            ("K", "Compile"),
            ("R", "Repository"),
            ("M", "Manual"),
            ("E", "Evolution"),
            ("q", "Quit"),
        ):
            assert (key, description) in keys
        assert ("q", "Back") not in keys
        await pilot.press("C")
        await settle(pilot)
        keys = footer_keys(app.screen)
        assert ("q", "Back") in keys and ("q", "Quit") not in keys
        await pilot.press("q")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_a_world_that_names_its_columns_shows_them(tui_db):
    """A generated-game world's task reads as its challenge, then its level and seed (the
    columns its plugin names), beside the other world's family and variation."""
    with Store(tui_db) as store:
        store.put_task(
            Task(
                id="textworld:tw-cooking-level2:17",
                environment="textworld",
                family="tw-cooking-level2",
                instruction="Prepare the meal and eat it.",
                split="train",
                metadata={"variation": 17},
            )
        )
        store.add_episode(
            Episode(
                id="tw-s17",
                task_id="textworld:tw-cooking-level2:17",
                agent="scripted",
                batch_id="demo-train",
                outcome=Outcome(success=False, score=1, message="Step limit 50 reached"),
                started_at=WHEN,
                ended_at=WHEN + timedelta(minutes=1),
            ),
            [Step(episode_id="tw-s17", index=0, kind="observation", observation="-= Kitchen =-")],
        )
    app = make_app(tui_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(EpisodeTable)
        cells = dict(zip(table.ids, rows(table), strict=True))
        assert cells["tw-s17"][3:5] == ["tw-cooking", "level 2 seed 17"]
        assert cells["boil-0-s3"][3:5] == ["boil", "boil:0"]
