"""Marking spans: v/l/enter and the dialog, saved to SQLite at once; edit, delete, undo."""

from __future__ import annotations

from textual.widgets import Input, RadioSet

from store import Span, Store
from tests.tui.conftest import SIZE, settle
from tui.screens.span_modal import SpanModal
from tui.screens.trajectory import TrajectoryScreen

EPISODE = "thermo-1-s2"


def stored_spans(path) -> list[Span]:
    """The spans as another process sees them: through a second Store on the file."""
    with Store(path) as other:
        return other.spans(EPISODE)


async def open_trajectory(pilot, step: int = 0) -> TrajectoryScreen:
    await settle(pilot)
    pilot.app.screen.open_trajectory(EPISODE, step)
    await settle(pilot)
    return pilot.app.screen


async def test_mark_a_span_with_v_l_enter_and_the_dialog(app, tui_db):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_trajectory(pilot, 4)
        await pilot.press("v", "l", "l")
        assert screen.step_list.selection == (4, 6)
        await pilot.press("enter")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, SpanModal)
        assert (modal.span.start, modal.span.end, modal.span.kind) == (4, 6, "causal")
        await pilot.press("down", "down", "enter")  # evidence
        await pilot.press("tab", *"wrong-box", "tab", *"warm juice is not cold", "enter")
        await settle(pilot)
        assert app.screen is screen
        [span] = stored_spans(tui_db)
        assert (span.start, span.end, span.kind, span.label, span.note) == (
            4,
            6,
            "evidence",
            "wrong-box",
            "warm juice is not cold",
        )
        assert span.author == "human"
        assert screen.step_list.spans == [span]
        assert "evidence 4–6" in screen.detail.text and "wrong-box" in screen.detail.text

        await pilot.press("u")
        await settle(pilot)
        assert stored_spans(tui_db) == []
        assert screen.step_list.spans == []


async def test_escape_cancels_the_dialog_and_the_selection(app, tui_db):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_trajectory(pilot, 1)
        await pilot.press("v", "l", "escape")
        assert screen.step_list.selection is None
        await pilot.press("v", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SpanModal)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        assert stored_spans(tui_db) == []


async def test_label_completion_from_labels_already_used(app, tui_db):
    with Store(tui_db) as store:
        store.add_span(
            Span(episode_id="boil-0-s3", start=2, end=2, kind="causal", label="premature-focus")
        )
    async with app.run_test(size=SIZE) as pilot:
        await open_trajectory(pilot, 3)
        await pilot.press("v", "enter")
        await settle(pilot)
        await pilot.press("tab", *"prem")
        await settle(pilot)
        label = app.screen.query_one("#span-label", Input)
        assert label._suggestion == "premature-focus"
        await pilot.press("right", "ctrl+s")
        await settle(pilot)
        [span] = stored_spans(tui_db)
        assert (span.start, span.end, span.label) == (3, 3, "premature-focus")


async def test_edit_delete_and_undo_each(app, tui_db):
    with Store(tui_db) as store:
        original = store.add_span(
            Span(episode_id=EPISODE, start=5, end=6, kind="causal", label="wrong-box", note="n")
        )
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_trajectory(pilot, 6)
        assert screen.step_list.spans == [original]

        await pilot.press("E")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, SpanModal) and modal.span.id == original.id
        assert modal.query_one("#span-label", Input).value == "wrong-box"
        assert modal.query_one(RadioSet).pressed_button.name == "causal"
        modal.query_one("#span-label", Input).value = "skipped-measurement"
        await pilot.press("ctrl+s")
        await settle(pilot)
        [edited] = stored_spans(tui_db)
        assert edited.id == original.id and edited.label == "skipped-measurement"

        await pilot.press("u")  # undo the edit
        await settle(pilot)
        [restored] = stored_spans(tui_db)
        assert restored.label == "wrong-box"

        await pilot.press("D")
        await settle(pilot)
        assert stored_spans(tui_db) == []

        await pilot.press("u")  # undo the delete: the span comes back
        await settle(pilot)
        [back] = stored_spans(tui_db)
        assert (back.start, back.end, back.kind, back.label, back.note) == (
            5,
            6,
            "causal",
            "wrong-box",
            "n",
        )
        assert screen.step_list.spans == [back]

        await pilot.press("u")  # nothing left from this session
        await settle(pilot)
        assert len(stored_spans(tui_db)) == 1


async def test_E_and_D_outside_a_span_change_nothing(app, tui_db):
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_trajectory(pilot, 0)
        await pilot.press("E", "D")
        await settle(pilot)
        assert app.screen is screen
        assert stored_spans(tui_db) == []


async def test_spans_survive_a_restart(tui_db):
    from tui.app import make_app

    first = make_app(tui_db, poll_interval=0)
    async with first.run_test(size=SIZE) as pilot:
        await open_trajectory(pilot, 2)
        await pilot.press("v", "enter")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
    second = make_app(tui_db, poll_interval=0)
    async with second.run_test(size=SIZE) as pilot:
        screen = await open_trajectory(pilot, 2)
        assert [(s.start, s.end, s.kind) for s in screen.step_list.spans] == [(2, 2, "causal")]
