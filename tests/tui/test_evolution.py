"""The Evolution screen: opened with E from Runs, four panels per regime, the checkpoint
table, refresh and live updates."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual_plotext import PlotextPlot

from store import Evolution, Store
from tests.evolution.records import (
    GATED,
    NAME,
    add_gated_checkpoint,
    checkpoint,
    write_experiment,
)
from tests.tui.conftest import SIZE, rows, screen_for_key, settle, shown
from tui.app import make_app
from tui.screens.evolution import PANELS, EvolutionScreen, panel_lines, read_evolution
from tui.screens.help import HelpScreen


@pytest.fixture
def evo_db(tmp_path: Path) -> Path:
    path = tmp_path / "evolution.db"
    write_experiment(path)
    return path


async def open_evolution(pilot) -> EvolutionScreen:
    return await screen_for_key(pilot, "E", EvolutionScreen)


def rendered(screen: EvolutionScreen, panel: str) -> str:
    return str(screen.plot(panel).render())


async def test_e_opens_the_panels_and_the_table(evo_db):
    app = make_app(evo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        info = screen.query_one("#evo-info").content.plain
        assert info == (
            f"{NAME} · 8 checkpoints · gated 62% at 15 tasks, no-replay-gate 50% at 15 tasks"
        )
        for panel in PANELS:
            labels = [line.label for line in screen.lines[panel] if line.label]
            assert labels == ["gated", "no-replay-gate"], panel
            text = rendered(screen, panel)
            assert "gated" in text and "no-replay-gate" in text, panel
        gated = screen.lines["pass_rate"][0]
        assert gated.x == [0, 5, 10, 15]
        assert gated.y == pytest.approx([42, 48, 54, 62])
        degradation = screen.lines["degradation"][1]
        assert degradation.y[2] == pytest.approx(3 / 21)
        table = rows(screen.table)
        assert len(table) == 8
        assert table[3] == [
            "gated",
            "15",
            "31/50  62%",
            "3",
            "2",
            "1",
            "4/6 67%",
            "0",
            "0",
            "+0.00",
            "6",
        ]
        assert table[6][:3] == ["no-replay-gate", "10", "20/50  40%"]
        assert table[6][-2] == "+0.14"
        # one experiment: no picker
        assert not screen.query_one("#evo-picker").has_class("several")
        await pilot.press("q")
        await settle(pilot)
        assert not isinstance(app.screen, EvolutionScreen)


async def test_counts_are_shown_whole(evo_db):
    """A held-out set of hundreds: every count and rate whole, however wide."""
    big = checkpoint(NAME, "gated", len(GATED), (20, 33, (4, 2, 1), 5, 0, 0))
    big = big.model_copy(update={"passed": 151, "total": 200, "stored": 140, "used": 123})
    with Store(evo_db) as store:
        store.put_checkpoint(big)
    app = make_app(evo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        table = shown(screen.table)
        assert table[0].split()[:3] == ["regime", "tasks", "pass"]
        assert table[5].split()[:9] == [
            "gated",
            "20",
            "151/200",
            "76%",
            "4",
            "2",
            "1",
            "123/140",
            "88%",
        ]


async def test_r_shows_a_new_checkpoint(evo_db):
    app = make_app(evo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        assert screen.table.row_count == 8
        add_gated_checkpoint(evo_db)
        await pilot.press("r")
        await settle(pilot)
        assert screen.table.row_count == 9
        assert rows(screen.table)[4][:3] == ["gated", "20", "33/50  66%"]
        assert screen.lines["pass_rate"][0].x == [0, 5, 10, 15, 20]
        assert "9 checkpoints" in screen.query_one("#evo-info").content.plain


async def test_follows_checkpoints_written_meanwhile(evo_db):
    app = make_app(evo_db, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        add_gated_checkpoint(evo_db)
        while screen.table.row_count != 9:  # the screen polls every 50 ms; no time bound
            await pilot.pause(0.05)
            await app.workers.wait_for_complete()
        assert screen.table.row_count == 9
        assert screen.lines["sizes"][0].y[-1] == 7


async def test_picker_switches_experiments(evo_db):
    write_experiment(evo_db, name="rq3-small", upto=2)
    app = make_app(evo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        assert screen.data.name == "rq3-small"  # the newest
        assert screen.table.row_count == 4
        picker = screen.query_one("#evo-picker")
        assert picker.has_class("several")
        picker.value = NAME
        await settle(pilot)
        assert screen.data.name == NAME
        assert screen.table.row_count == 8


async def test_empty_database_says_how_to_start(tmp_path):
    app = make_app(tmp_path / "empty.db", poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        assert screen.query_one("#evo-info").content.plain.startswith(
            "No evolution experiment in this database."
        )
        assert screen.table.row_count == 0
        assert all(not lines for lines in screen.lines.values())
        assert_empty_state(screen)


def assert_empty_state(screen: EvolutionScreen) -> None:
    """One message in place of the four panels and the table: what they will show, and how
    to start an experiment."""
    message = screen.query_one("#evo-empty")
    assert message.display and "Start one from a shell: workbench evolve" in str(message.content)
    assert not screen.query_one("#evo-panels").display and not screen.table.display
    assert all(plot.region.area == 0 for plot in screen.query(PlotextPlot))  # none drawn


async def test_an_experiment_without_checkpoints_shows_the_empty_state_until_one_comes(tmp_path):
    db = tmp_path / "e.db"
    with Store(db) as store:
        store.put_evolution(Evolution(name=NAME))
    app = make_app(db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        assert "no checkpoints yet" in screen.query_one("#evo-info").content.plain
        assert_empty_state(screen)
        with Store(db) as store:
            store.put_checkpoint(checkpoint(NAME, "gated", 0, GATED[0]))
        await pilot.press("r")
        await settle(pilot)
        assert not screen.query_one("#evo-empty").display
        assert screen.query_one("#evo-panels").display and screen.table.row_count == 1
        assert "gated" in rendered(screen, "pass_rate")


async def test_help_lists_the_keys(evo_db):
    app = make_app(evo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert any(key == "E" for key, _ in app.screen.help.keys)
        await pilot.press("escape")
        screen = await open_evolution(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert app.screen.help.title == "Evolution"
        assert screen.HELP.keys[0][0] == "r"


def test_read_evolution_falls_back_to_the_newest(evo_db):
    with Store(evo_db) as store:
        store.put_evolution(Evolution(name="later"))
        data = read_evolution(store, "gone")
        assert data.name == "later" and data.series == []
        data = read_evolution(store, NAME)
        assert [s.regime for s in data.series] == ["gated", "no-replay-gate"]
        use = panel_lines(data.series)["use_rate"][0]
        assert use.x == [5, 10, 15]  # nothing stored at 0 tasks: no point
        assert use.y == pytest.approx([50, 75, 400 / 6])


async def test_all_three_regimes_render(evo_db):
    from tests.evolution.records import GATED

    with Store(evo_db) as store:
        for position, row in enumerate(GATED):
            store.put_checkpoint(checkpoint(NAME, "no-preservation", position, row))
    app = make_app(evo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        info = screen.query_one("#evo-info").content.plain
        assert "no-preservation 62% at 15 tasks" in info
        assert [line.label for line in screen.lines["pass_rate"]] == [
            "gated",
            "no-replay-gate",
            "no-preservation",
        ]
        assert sum(r[0] == "no-preservation" for r in rows(screen.table)) == 4


NOTHING_ADMITTED = [(tasks, 21, (0, 0, 0), 0, 0, 0) for tasks in (0, 5, 10, 15)]
"""A regime that never admitted an artifact: empty repository, no use rate to draw."""


@pytest.mark.parametrize("upto", [len(NOTHING_ADMITTED), 1])
async def test_a_regime_that_admitted_nothing_draws_empty(evo_db, upto):
    with Store(evo_db) as store:
        for position, row in enumerate(NOTHING_ADMITTED[:upto]):
            store.put_checkpoint(checkpoint(NAME, "no-preservation", position, row))
    app = make_app(evo_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        for panel in PANELS:
            rendered(screen, panel)  # plotext builds every panel without an IndexError
        await pilot.pause()
        assert app.return_code is None and isinstance(app.screen, EvolutionScreen)
        use = screen.plot("use_rate")
        assert "no-preservation" not in rendered(screen, "use_rate")
        assert use.border_subtitle == "nothing to draw: no-preservation"
        assert "no-preservation" in rendered(screen, "pass_rate")
        assert screen.plot("pass_rate").border_subtitle == ""
        assert sum(r[0] == "no-preservation" for r in rows(screen.table)) == upto


async def test_a_panel_with_nothing_at_all_is_empty(tmp_path):
    with Store(tmp_path / "e.db") as store:
        store.put_evolution(Evolution(name="fresh"))
        store.put_checkpoint(checkpoint("fresh", "gated", 0, NOTHING_ADMITTED[0]))
    app = make_app(tmp_path / "e.db", poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_evolution(pilot)
        for panel in PANELS:
            rendered(screen, panel)
        assert screen.plot("use_rate").border_subtitle == "nothing to draw: gated"
