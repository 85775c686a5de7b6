"""The Trajectory screen: stepping, detail, finding, neighbours, long episodes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from store import EpisodeFilter, Step, Store
from tests.tui.conftest import LONG_ID, LONG_STEPS, SIZE, add_failed_run, settle
from tui.app import make_app
from tui.screens.help import HelpScreen
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.step_detail import COLLAPSED_CHARS, COLLAPSED_LINES, WINDOW
from tui.widgets.step_list import KEEP_PAGES, PAGE, first_steps, wanted_pages
from workbench.ingest import import_paths


async def open_episode(pilot, episode_id: str, step: int | None = None) -> TrajectoryScreen:
    await settle(pilot)
    pilot.app.screen.open_trajectory(episode_id, step)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, TrajectoryScreen)
    return screen


async def test_step_keys_move_the_cursor_and_the_detail_follows(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the first failure
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TrajectoryScreen) and screen.episode_id == "boil-0-s3"
        assert screen.step_list.cursor == 0 and screen.detail.step.index == 0
        await pilot.press("l", "right")
        await settle(pilot)
        assert screen.step_list.cursor == 2
        assert screen.detail.step.action == "focus on sink"
        await pilot.press("h")
        await settle(pilot)
        assert screen.detail.step.action == "go to kitchen"
        await pilot.press("dollar_sign")
        await settle(pilot)
        assert screen.step_list.cursor == 2
        await pilot.press("0")
        await settle(pilot)
        assert screen.step_list.cursor == 0
        await pilot.press("left")  # stays on the first step
        assert screen.step_list.cursor == 0


async def test_long_observation_is_collapsed_until_expanded(app):
    async with app.run_test(size=(120, 24)) as pilot:  # short enough for the text to scroll
        screen = await open_episode(pilot, "boil-0-s3", 0)
        text = screen.detail.text
        hidden = len(screen.detail.step.observation.splitlines()) - COLLAPSED_LINES
        assert f"… {hidden} more line(s) — press e to expand" in text
        assert "A door to the outside" not in text
        await pilot.press("e")
        await pilot.pause()
        assert screen.detail.expanded
        assert "A door to the outside" in screen.detail.text
        assert screen.detail.max_scroll_y > 0
        await pilot.press("j", "j")
        await pilot.pause()
        assert screen.detail.scroll_y == 2
        await pilot.press("k")
        await pilot.pause()
        assert screen.detail.scroll_y == 1


async def test_raw_record_on_demand(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "boil-0-s3", 1)
        assert '"source"' not in screen.detail.text
        await pilot.press("r")
        await pilot.pause()
        assert '"source": "scripted"' in screen.detail.text


async def test_raw_record_that_shares_the_observation_is_shown_verbatim(tmp_path):
    """The store keeps a text the raw record shares with the step once (``store.raw``); the
    detail pane shows the record as it was read."""
    output = "".join(f"file_{i}.py quokka\n" for i in range(40))
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
    ]
    source = tmp_path / "chat.jsonl"
    source.write_text(json.dumps({"task_id": "files", "messages": messages}) + "\n")
    db = tmp_path / "w.db"
    with Store(db) as store:
        import_paths(store, [source], format="openai-chat")
        [episode] = store.episodes()
        index = next(s.index for s in store.steps(episode.id) if s.observation == output)
    app = make_app(db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, episode.id, index)
        await pilot.press("r")
        await pilot.pause()
        assert json.dumps(messages[2], indent=2) in screen.detail.text


def tool_output() -> str:
    """A 20,000,000-character observation (made by the test that reads it, not at import)."""
    return "".join(f"{i:07d} {'of a tool run':<31}\n" for i in range(500_000))


async def test_a_20_mb_text_is_read_and_shown_a_window_at_a_time(app):
    output = tool_output()
    with Store(app.db_path) as store:
        add_failed_run(
            store,
            "huge",
            [
                Step(episode_id="huge", index=0, kind="action", action="cat log.txt"),
                Step(episode_id="huge", index=1, kind="observation", observation=output),
                Step(episode_id="huge", index=2, kind="action", action="wait"),
            ],
        )
    length = f"{len(output):,}"
    assert length == "20,000,000"
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "huge", 1)
        detail = screen.detail
        # collapsed: the first lines, and how long the text is
        first = "\n".join(output[:COLLAPSED_CHARS].splitlines()[:COLLAPSED_LINES])
        assert f"observation ({length} characters; showing 1–{len(first):,})" in detail.text
        assert first in detail.text and "… e expands it · ] pages through it" in detail.text
        await pilot.press("e")
        await settle(pilot)
        assert f"observation ({length} characters; showing 1–{WINDOW:,})" in detail.text
        assert output[:WINDOW] in detail.text
        assert f"… ] next {WINDOW:,} characters" in detail.text
        await pilot.press("right_square_bracket", "right_square_bracket")
        await settle(pilot)
        shown = f"showing {2 * WINDOW + 1:,}–{3 * WINDOW:,}"
        assert f"observation ({length} characters; {shown})" in detail.text
        assert output[2 * WINDOW : 3 * WINDOW] in detail.text
        assert "… ] next 4,000 characters · [ previous" in detail.text
        # what was read and drawn: a window of the text, never more
        assert [len(w.text) for w in detail.windows] == [WINDOW]
        assert all(
            len(getattr(cut.step, field)) <= WINDOW
            for cut in screen._steps.values()
            for field in ("content", "thought", "action", "observation")
        )
        assert len(detail.text) < WINDOW + 500
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert output[WINDOW : 2 * WINDOW] in detail.text
        await pilot.press("h", "l")  # away and back: the text starts over
        await settle(pilot)
        assert output[:WINDOW] in detail.text and screen.step_list.cursor == 1


async def test_H_and_L_move_between_trajectories_of_the_filter(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "boil-0-s3")
        await pilot.press("L")
        await settle(pilot)
        assert screen.episode_id == "thermo-0-s5" and screen.episode.id == "thermo-0-s5"
        assert screen.step_list.n_steps == 6 and screen.detail.step.episode_id == "thermo-0-s5"
        await pilot.press("L")
        await settle(pilot)
        assert screen.episode_id == "thermo-1-s2"
        await pilot.press("H", "H")
        await settle(pilot)
        assert screen.episode_id == "boil-0-s3"
        await pilot.press("H")  # nothing before the first
        await settle(pilot)
        assert screen.episode_id == "boil-0-s3"


async def test_H_and_L_follow_the_runs_filter(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.where = EpisodeFilter(family="boil")
        screen = await open_episode(pilot, "boil-0-s3")
        await pilot.press("L")
        await settle(pilot)
        assert screen.episode_id == "boil-1-s4"
        await pilot.press("L", "L")
        await settle(pilot)
        assert screen.episode_id == "boil-0-s1"
        await pilot.press("L")  # the last one of the filter
        await settle(pilot)
        assert screen.episode_id == "boil-0-s1"


async def test_ten_thousand_steps_open_with_only_a_window_loaded(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, LONG_ID)
        step_list = screen.step_list
        assert step_list.n_steps == LONG_STEPS
        assert step_list.virtual_size.height == LONG_STEPS
        assert len(step_list._rows) <= 2 * PAGE
        await pilot.press("dollar_sign")
        await settle(pilot)
        assert step_list.cursor == LONG_STEPS - 1
        assert screen.detail.step.index == LONG_STEPS - 1
        assert screen.detail.step.observation == "The end is near."
        assert step_list.has_row(LONG_STEPS - 1) and not step_list.has_row(5000)
        await pilot.press("pageup", "pageup")
        await settle(pilot)
        assert step_list.cursor < LONG_STEPS - 40 and step_list.has_row(step_list.cursor)
        for index in range(0, LONG_STEPS, 500):  # jump about: far pages are dropped again
            step_list.cursor = index
            await settle(pilot)
            assert screen.detail.step.index == index
        assert len(step_list._rows) <= KEEP_PAGES * PAGE
        assert step_list.has_row(LONG_STEPS - 500) and not step_list.has_row(0)


async def test_the_first_frame_asks_for_no_steps_beyond_those_read_with_the_episode(
    app, monkeypatch
):
    """Opened at step 5000 of 10,000, the screen reads the pages around it with the episode
    (not every page from the first one on) and asks for no more until the cursor moves."""
    asked = []
    monkeypatch.setattr(
        TrajectoryScreen, "_load_steps", lambda self, *request: asked.append(request)
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, LONG_ID, 5000)
        assert screen.detail.step.index == 5000 and screen.step_list.has_row(5000)
        assert asked == []
        await pilot.press("dollar_sign")  # the pages then in view are read, none between
        await settle(pilot)
        last_pages = (LONG_STEPS - 2 * PAGE, LONG_STEPS - PAGE)
        assert asked == [(LONG_ID, start, start + PAGE) for start in last_pages]


@given(
    cursor=st.integers(0, 999),
    bound=st.integers(1, 120),
    shorter=st.integers(0, 119),
    n_steps=st.integers(1, 1000),
)
def test_the_steps_read_first_hold_every_page_a_list_no_taller_wants(
    cursor, bound, shorter, n_steps
):
    """Whatever the list's own height (at most the bound), once its cursor is scrolled into
    view the pages it wants are among the steps read with the episode."""
    cursor, height = min(cursor, n_steps - 1), max(1, bound - shorter)
    start, stop = first_steps(cursor, bound, n_steps)
    top = max(0, cursor - height + 1)  # the cursor's row scrolled into view from the top
    held = set(range(start // PAGE, (stop - 1) // PAGE + 1))
    assert wanted_pages(top, height, cursor, n_steps) <= held
    assert start % PAGE == 0 and start <= cursor < stop <= n_steps


async def test_find_in_trajectory_wraps_and_ignores_case(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, LONG_ID)
        await pilot.press("slash", *"THE END", "enter")
        await settle(pilot)
        assert screen.step_list.cursor == LONG_STEPS - 1
        assert screen.step_list.has_focus
        await pilot.press("slash", *"CALLED", "enter")
        await settle(pilot)
        assert screen.step_list.cursor == 0  # wrapped around to the first step
        await pilot.press("slash", *"celsius", "enter")
        await settle(pilot)
        assert screen.step_list.cursor == 2
        await pilot.press("n")
        await settle(pilot)
        assert screen.step_list.cursor == 4
        await pilot.press("N", "N")
        await settle(pilot)
        assert screen.step_list.cursor == 0
        await pilot.press("slash", *"zq", "enter")
        await settle(pilot)
        assert screen.step_list.cursor == 0


async def test_question_mark_shows_the_screen_help(app):
    async with app.run_test(size=SIZE) as pilot:
        await open_episode(pilot, "boil-0-s3")
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.help.title == "Trajectory"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, TrajectoryScreen)
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, TrajectoryScreen)


async def test_clicking_a_step_selects_it(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "thermo-1-s2")
        await pilot.click("#steps", offset=(10, 4))  # row 3 under the top border
        await settle(pilot)
        assert screen.step_list.cursor == 3
        assert screen.detail.step.action == "focus on thermometer"


async def test_an_episode_without_steps(app):
    with Store(app.db_path) as store:
        add_failed_run(store, "empty", [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "empty")
        assert screen.detail.text == "this episode has no steps"
        await pilot.press("l", "dollar_sign", "v", "enter", "slash", "x", "enter")
        await settle(pilot)
        assert app.screen is screen and screen.step_list.cursor == 0


async def test_a_steps_agent_is_shown_in_the_list_and_the_detail(app):
    with Store(app.db_path) as store:
        add_failed_run(
            store,
            "group-chat",
            [
                Step(episode_id="group-chat", index=0, kind="message", role="user", content="2+2?"),
                Step(episode_id="group-chat", index=1, kind="message", agent="Coder", content="4"),
            ],
        )
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "group-chat", 1)
        assert "step 1 · message · agent · Coder" in screen.detail.text
        assert "Coder: 4" in screen.step_list._line(1).plain
        assert ":" not in screen.step_list._line(0).plain.split("2+2?")[0]
