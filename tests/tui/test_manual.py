"""The Manual screen: manual versions and diffs, rules with their history and validation log,
formulating in a worker."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from textual.app import App

from store import Store
from tests.tui.conftest import SIZE, rows, screen_for_key, settle, shown
from tui.app import WorkbenchApp, make_app
from tui.screens.help import HelpScreen
from tui.screens.manual import ManualScreen, log_cells, read_manual
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.manual_view import ManualView, parts
from workbench.manual.formulate import formulate
from workbench.manual.heuristic import HeuristicFormulator
from workbench.manual.operations import OPERATIONS, apply

BOIL_RULE = "In boil tasks: focus on the substance in the pot, never on the sink."
BOIL_RULE_2 = "In boil tasks: focus on the substance in the metal pot, then heat it on the stove."
THERMO_RULE = "In thermometer tasks: measure the substance before choosing a box."


def write_rules(store: Store) -> None:
    apply(
        store,
        OPERATIONS.validate_python(
            [
                {
                    "op": "write_rule",
                    "type": "Corrected Error",
                    "content": BOIL_RULE,
                    "example": "focus on sink → critical failure",
                    "validation_logs": ["boil-0-s3@2", "boil-0-s1"],
                },
                {
                    "op": "write_rule",
                    "type": "Success Process",
                    "content": THERMO_RULE,
                    "validation_logs": ["thermo-0-s1@4-5", "rule_1"],
                },
            ]
        ),
        "builder:heuristic",
        "boil-0-s3",
    )


def update_boil_rule(store: Store) -> None:
    apply(
        store,
        OPERATIONS.validate_python(
            [
                {
                    "op": "update_rule",
                    "rule_id": "rule_1",
                    "content": BOIL_RULE_2,
                    "validation_logs": ["boil-0-s3@2", "boil-0-s1", "boil-1-s4@3"],
                }
            ]
        ),
        "builder:heuristic",
        "boil-1-s4",
    )


@pytest.fixture
def manual_db(tui_db: Path) -> Path:
    """The test database with two rules, a manual, an update of rule_1 and a second manual."""
    with Store(tui_db) as store:
        write_rules(store)
        formulate(store, HeuristicFormulator())
        update_boil_rule(store)
        formulate(store, HeuristicFormulator())
        with store.transaction():  # fixed times, so the snapshot does not change by the day
            store.conn.execute(
                "UPDATE manuals SET created_at = '2026-11-20T10:0' || version || ':00Z'"
            )
            store.conn.execute(
                "UPDATE rule_events SET at = '2026-11-20T09:' || (10 + id) || ':00Z'"
            )
    return tui_db


async def open_manual(pilot) -> ManualScreen:
    screen = await screen_for_key(pilot, "M", ManualScreen)
    assert screen.loaded
    return screen


def info(screen: ManualScreen) -> str:
    return screen.query_one("#manual-info").content.plain


def markdown(screen: ManualScreen) -> str:
    return screen.query_one("#manual-view").markdown


def diff_shown(screen: ManualScreen) -> str:
    return screen.query_one("#diff-text").content.plain


async def test_manual_rules_and_history(manual_db):
    app = make_app(manual_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_manual(pilot)
        assert info(screen).startswith("manual v2 of 2 · 2 rules, 0 artifacts · heuristic · ")
        assert BOIL_RULE_2 in markdown(screen)
        assert screen.query_one("#manual-view").display
        assert rows(screen.rule_table) == [
            ["rule_1", "Corrected Error", BOIL_RULE_2, "3"],
            ["rule_2", "Success Process", THERMO_RULE, "2"],
        ]
        history = rows(screen.history_table)
        assert [row[:3] for row in history] == [
            ["write", "builder:heuristic", "boil-0-s3"],
            ["update", "builder:heuristic", "boil-1-s4"],
        ]
        assert screen.history_table.border_title == "history of rule_1 · 2"
        assert rows(screen.log_table) == [
            ["boil-0-s3@2", "step 2"],
            ["boil-0-s1", "episode"],
            ["boil-1-s4@3", "step 3"],
        ]
        await pilot.press("down")
        await settle(pilot)
        assert [row[0] for row in rows(screen.history_table)] == ["write"]
        assert rows(screen.log_table) == [["thermo-0-s1@4-5", "steps 4-5"], ["rule_1", "rule"]]

        # the earlier version
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert info(screen).startswith("manual v1 of 2")
        assert BOIL_RULE in markdown(screen) and BOIL_RULE_2 not in markdown(screen)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.manual.version == 2


async def test_enter_on_a_log_entry_opens_the_cited_step(manual_db):
    app = make_app(manual_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_manual(pilot)
        await pilot.press("down", "enter")  # rule_2: into its validation log
        await settle(pilot)
        assert screen.focused is screen.log_table
        await pilot.press("enter")  # thermo-0-s1@4-5
        await settle(pilot)
        trajectory = app.screen
        assert isinstance(trajectory, TrajectoryScreen)
        assert trajectory.episode_id == "thermo-0-s1"
        assert trajectory.step_list.cursor == 4

        await pilot.press("q")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("down", "enter")  # "rule_1": selects that rule
        await settle(pilot)
        assert screen.rule.id == "rule_1" and screen.focused is screen.rule_table


async def test_diff_against_the_previous_version(manual_db):
    app = make_app(manual_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_manual(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert screen.diffing and not screen.query_one("#manual-view").display
        text = diff_shown(screen)
        assert text.startswith("--- manual v1\n+++ manual v2\n")
        assert any(line.startswith("+") and BOIL_RULE_2 in line for line in text.splitlines())
        assert any(line.startswith("-") and BOIL_RULE in line for line in text.splitlines())
        assert screen.query_one("#diff-view").border_title == "diff v1 → v2"
        await pilot.press("d")
        assert not screen.diffing and screen.query_one("#manual-view").display

        await pilot.press("left_square_bracket", "d")  # v1 has nothing before it
        await settle(pilot)
        assert not screen.diffing


async def test_formulate_advances_the_version_after_a_rule_change(manual_db):
    app = make_app(manual_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_manual(pilot)
        await pilot.press("f")  # nothing changed: still v2
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running and screen.manual.version == 2

        with Store(manual_db) as store:
            apply(
                store,
                OPERATIONS.validate_python([{"op": "delete_rule", "rule_id": "rule_2"}]),
                "human",
            )
        await pilot.press("f")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running
        assert screen.manual.version == 3 and info(screen).startswith("manual v3 of 3 · 1 rule,")
        assert THERMO_RULE not in markdown(screen)
        assert [row[0] for row in rows(screen.rule_table)] == ["rule_1"]


async def test_empty_database_help_and_cancel(tui_db):
    app = make_app(tui_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_manual(pilot)
        assert info(screen).startswith("No rules and no manual yet.")
        assert "No manual yet" in markdown(screen)
        assert screen.rule_table.row_count == 0 and screen.log_table.row_count == 0
        await pilot.press("d", "left_square_bracket", "enter")  # nothing to show: no crash
        await pilot.press("f")  # nothing to formulate: an error, not a crash
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert not screen.running and screen.manual is None

        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen) and app.screen.help.title == "Manual"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        screen._cancel = threading.Event()
        running = screen._cancel
        screen.refresh_bindings()
        await pilot.press("escape")
        assert running.is_set()


def test_read_manual_and_log_cells(manual_db):
    with Store(manual_db) as store:
        data = read_manual(store)
    assert [m.version for m in data.manuals] == [1, 2]
    assert [e.op for e in data.events["rule_1"]] == ["write", "update"]
    assert data.manual(None).version == 2 and data.manual(7) is None
    assert [c.plain for c in log_cells("door-1@3-5")] == ["door-1@3-5", "steps 3-5"]
    assert [c.plain for c in log_cells("rule_12")] == ["rule_12", "rule"]


LONG_EPISODE = "demo-train:test-conductivity:123"
LONG_TYPE = "Useful Helper Method"


async def test_ids_are_shown_whole_and_free_text_cut(manual_db):
    with Store(manual_db) as store:
        apply(
            store,
            OPERATIONS.validate_python(
                [
                    {
                        "op": "update_rule",
                        "rule_id": "rule_2",
                        "type": LONG_TYPE,
                        "validation_logs": [f"{LONG_EPISODE}@4-5", "rule_1"],
                    }
                ]
            ),
            "builder:heuristic",
            LONG_EPISODE,
        )
    app = make_app(manual_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_manual(pilot)
        await pilot.press("down")  # rule_2
        await settle(pilot)
        boil, thermo = shown(screen.rule_table)[1:3]
        assert thermo.startswith(f" rule_2  {LONG_TYPE}  In thermometer")
        *_, content, log = thermo.split()
        assert content.endswith("…") and log == "2"  # the content cut, its log count whole
        assert boil.startswith(" rule_1  Corrected Error ") and boil.split()[-2].endswith("…")
        history = shown(screen.history_table)
        assert history[2].split()[:3] == ["update", "builder:heuristic", LONG_EPISODE]
        log = shown(screen.log_table)
        assert log[1].split() == [f"{LONG_EPISODE}@4-5", "steps", "4-5"]


def test_manual_screen(snap_compare, manual_db):
    async def run_before(pilot):
        await open_manual(pilot)

    app: WorkbenchApp = make_app(manual_db, poll_interval=0)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def builder_rules(n: int) -> list[dict]:
    """``n`` rules of the shape the Builder writes, over six scenarios."""
    scenarios = ["boil", "melt", "freeze", "thermometer", "conductivity", "living-thing"]
    types = ["Corrected Error", "Success Process", "Useful Helper Method"]
    return [
        {
            "op": "write_rule",
            "type": types[i % 3],
            "content": f"In {scenarios[i % 6]} tasks: look before acting on object {i}.",
            "example": f"go to kitchen\nlook around\nfocus on object {i}",
            "validation_logs": [f"ep-{i}@{i % 7}", f"ep-{i + 1}"],
        }
        for i in range(n)
    ]


async def test_a_long_manual_shows_its_first_part_at_once_and_the_rest_as_it_scrolls(tui_db):
    with Store(tui_db) as store:
        apply(store, OPERATIONS.validate_python(builder_rules(90)), "builder:heuristic", "ep")
        manual = formulate(store, HeuristicFormulator()).markdown
    assert len(manual.splitlines()) >= 2000
    pieces = parts(manual)
    app = make_app(tui_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_manual(pilot)
        view = screen.query_one(ManualView)
        assert view.markdown == manual
        shown = view.shown  # the first part, and the next one the view nears
        assert shown.startswith(pieces[0]) and "# Manual\n" in shown
        assert "## Evidence" not in shown and view.pending >= len(pieces) - 2
        view.focus()
        view.scroll_end(animate=False, immediate=True)  # near the end of what is shown
        await settle(pilot)
        assert len(view.shown) > len(shown) and manual.startswith(view.shown)
        assert "## Evidence" not in view.shown
        assert await view.go_to("evidence")  # a link to a heading not shown yet: the rest
        await settle(pilot)
        assert view.shown == manual and not view.pending
        assert 0 < view.scroll_y < view.max_scroll_y
        await pilot.press("end")
        await settle(pilot)
        assert view.scroll_y == view.max_scroll_y


def test_a_manual_is_cut_before_headings_never_inside_code():
    markdown = "# A\n\ntext\n\n## B\n\n```text\n## not a heading\n```\n\n## C\n\nend\n"
    assert parts(markdown, lines=1) == [
        "# A\n\ntext\n\n",
        "## B\n\n```text\n## not a heading\n```\n\n",
        "## C\n\nend\n",
    ]
    assert parts(markdown, lines=5) == [
        "# A\n\ntext\n\n## B\n\n```text\n## not a heading\n```\n\n",
        "## C\n\nend\n",
    ]
    assert parts("") == [""] and "".join(parts(markdown, lines=3)) == markdown


async def test_a_manual_shown_while_a_part_is_being_added_keeps_all_its_parts():
    def document(name: str) -> str:
        return "".join(f"# {name} {i}\n\n" + "line\n\n" * 45 for i in range(6))

    class Viewer(App[None]):
        def compose(self):
            yield ManualView()

    app = Viewer()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ManualView)
        await view.show(document("old"))
        await settle(pilot)
        adding = asyncio.create_task(view.show_more())
        while not view._lock.locked():  # the old document's next part is being added
            await asyncio.sleep(0)
        await view.show(document("new"))
        await adding
        await view.show_more(view.pending)
        assert view.shown == document("new")
