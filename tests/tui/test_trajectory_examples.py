"""The Trajectory screen marks a synthesized example's span like other spans and shows its
instruction; an episode without examples looks as before."""

from __future__ import annotations

from store import Store, SynthExample
from tests.tui.conftest import SIZE, settle
from tests.tui.test_trajectory import open_episode
from tui.app import make_app

INSTRUCTION = "Go to the kitchen, then focus on the sink."


async def test_an_examples_span_is_marked_with_its_instruction(tui_db):
    with Store(tui_db) as store:
        (example,) = store.add_synth_examples(
            [
                SynthExample(
                    episode_id="boil-0-s3",
                    start=1,
                    end=2,
                    env="scienceworld-like",
                    instruction=INSTRUCTION,
                    actions=["go to kitchen", "focus on sink"],
                    observations=["You move to the kitchen.", "You focus on the sink."],
                    effects=["reached kitchen", "decided: focus on sink"],
                    relabeler="heuristic",
                )
            ]
        )
    app = make_app(tui_db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "boil-0-s3", 0)
        marks = [screen.step_list._marks(i) for i in range(3)]
        assert [m.plain for m in marks] == ["  ", "▌ ", "▌ "]
        example_style = screen.step_list.get_component_rich_style("step-list--example")
        assert marks[1].spans[0].style == example_style
        assert "example" not in screen.detail.text
        await pilot.press("l")
        await settle(pilot)
        detail = screen.detail.text
        assert f"■ example {example.id} 1–2  backward · pending  {INSTRUCTION}" in detail
        await pilot.press("l", "l")
        await settle(pilot)
        assert "■ example" in screen.detail.text  # step 2 is the span's last


async def test_an_episode_without_examples_is_drawn_as_before(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_episode(pilot, "boil-0-s3", 1)
        assert screen.examples == [] and screen.step_list.examples == []
        assert all("▌" not in screen.step_list._marks(i).plain for i in range(3))
