"""The Compare screen: a failure beside a success, the first divergence highlighted."""

from __future__ import annotations

from store import Episode, Outcome, Step, Store, Task
from tests.tui.conftest import SIZE, add_failed_run, screen_for_key, settle, shown, steps_for
from tui.screens.compare import CompareScreen
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.alignment_table import AlignmentTable
from tui.widgets.step_detail import StepDetail


async def open_compare(pilot, episode_id: str) -> CompareScreen:
    await settle(pilot)
    pilot.app.screen.open_trajectory(episode_id)
    return await screen_for_key(pilot, "c", CompareScreen)


def info(screen: CompareScreen) -> str:
    return screen.query_one("#compare-info").content.plain


async def test_compare_against_the_same_task(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, "boil-0-s3")
        comparison = screen.comparison
        assert comparison.success.id == "boil-0-s1"
        divergence = comparison.alignment.first_divergence
        assert (divergence.failed_step, divergence.success_step) == (2, 2)
        assert "failed step 2 ↔ success step 2 (substitute)" in info(screen)
        table = screen.query_one(AlignmentTable)
        assert table.cursor_row == divergence.pair  # opens on the divergence
        failed_pane = screen.query_one("#failed-step", StepDetail)
        success_pane = screen.query_one("#success-step", StepDetail)
        assert failed_pane.step.action == "focus on sink"
        assert success_pane.step.action == "focus on substance in metal pot"


async def test_variations_align_through_entity_abstraction_and_d_jumps_back(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "c")  # thermo-1-s2, straight from the runs table
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        comparison = screen.comparison
        # no success of use-thermometer:1: the family's success (same agent) is chosen
        assert comparison.failed.id == "thermo-1-s2" and comparison.success.id == "thermo-0-s1"
        pairs = comparison.alignment.pairs
        assert [p.op for p in pairs] == ["match"] * 5 + ["substitute"]
        assert "failed step 6 ↔ success step 6" in info(screen)

        table = screen.query_one(AlignmentTable)
        await pilot.press("g")
        await settle(pilot)
        assert table.cursor_row == 0
        assert screen.query_one("#failed-step", StepDetail).step.action == "go to bathroom"
        assert screen.query_one("#success-step", StepDetail).step.action == "go to kitchen"
        await pilot.press("d")
        await settle(pilot)
        assert table.cursor_row == 5
        await pilot.press("k", "k")  # both sides move together
        await settle(pilot)
        assert screen.query_one("#failed-step", StepDetail).step.index == 4
        assert screen.query_one("#success-step", StepDetail).step.index == 4

        await pilot.press("enter")  # open the failed run at this step
        await settle(pilot)
        assert isinstance(app.screen, TrajectoryScreen)
        assert app.screen.episode_id == "thermo-1-s2" and app.screen.step_list.cursor == 4
        await pilot.press("q")
        await pilot.press("s")  # ... or the successful one
        await settle(pilot)
        assert app.screen.episode_id == "thermo-0-s1" and app.screen.step_list.cursor == 4


async def test_failure_without_any_success_says_so(app):
    with Store(app.db_path) as store:
        store.put_task(Task(id="other:1", environment="other", family="lonely", instruction="x"))
        lonely = [Step(episode_id="lonely-1", index=0, kind="action", action="look")]
        add_failed_run(store, "lonely-1", lonely, task="other:1")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, "lonely-1")
        assert screen.comparison is None
        assert "no successful run of task other:1 or of family lonely" in info(screen)


FAILED = "demo-train:test-conductivity:123:fail"
PASSED = "demo-train:test-conductivity:123:pass"
TOUCH = "connect the metal fork to the red wire terminal of the battery in the workshop"


def add_conductivity_runs(path) -> None:
    """A failure and a success of one task, with long ids and long actions."""
    with Store(path) as store:
        store.put_task(
            Task(
                id="scienceworld:test-conductivity:123",
                environment="scienceworld",
                family="test-conductivity",
                instruction="Determine if the metal fork is electrically conductive.",
            )
        )
        for episode_id, success, last in ((FAILED, False, "wait"), (PASSED, True, TOUCH)):
            actions = [("", TOUCH, "The fork is now connected."), ("", last, "Done.")]
            store.add_episode(
                Episode(
                    id=episode_id,
                    task_id="scienceworld:test-conductivity:123",
                    batch_id="demo-train",
                    outcome=Outcome(success=success),
                ),
                steps_for(episode_id, actions),
            )


async def test_episode_ids_are_shown_whole_and_actions_cut(app):
    add_conductivity_runs(app.db_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, FAILED)
        assert screen.comparison.success.id == PASSED
        header, *pairs = shown(screen.query_one(AlignmentTable))
        assert f"failed · {FAILED} " in header and header.endswith(f"success · {PASSED}")
        touch = next(line for line in pairs if line.startswith("     1  connect the metal"))
        assert TOUCH not in touch and touch.count("…") == 2  # both sides cut
