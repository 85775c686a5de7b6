"""What each screen looks like (pytest-textual-snapshot; baselines in __snapshots__/).

Update the baselines after an intended change with ``pytest --snapshot-update tests/tui``
and look at the report before committing them.
"""

from __future__ import annotations

from store import Span, Store
from tests.tui.conftest import SIZE, WHEN, settle
from tui.app import make_app


def app_with_spans(tui_db):
    with Store(tui_db) as store:
        for start, end, kind, label in (
            (1, 3, "contrast", "same-start"),
            (4, 4, "evidence", "measured-31"),
            (5, 6, "causal", "wrong-box"),
        ):
            store.add_span(
                Span(
                    episode_id="thermo-1-s2",
                    start=start,
                    end=end,
                    kind=kind,
                    label=label,
                    note="seen in triage" if kind == "causal" else "",
                    created_at=WHEN,
                    updated_at=WHEN,
                )
            )
    return make_app(tui_db, poll_interval=0)


async def open_trajectory(pilot, episode_id="thermo-1-s2", step=6):
    await settle(pilot)
    pilot.app.screen.open_trajectory(episode_id, step)
    await settle(pilot)


def test_runs_screen(snap_compare, app):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_runs_screen_search_hits(snap_compare, app):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("slash", *"thermometer", "enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_trajectory_screen_with_spans(snap_compare, tui_db):
    assert snap_compare(app_with_spans(tui_db), terminal_size=SIZE, run_before=open_trajectory)


def test_trajectory_screen_marking(snap_compare, tui_db):
    async def run_before(pilot):
        await open_trajectory(pilot, "boil-1-s4", 1)
        await pilot.press("v", "l", "l")
        await settle(pilot)

    assert snap_compare(
        make_app(tui_db, poll_interval=0), terminal_size=SIZE, run_before=run_before
    )


def test_compare_screen(snap_compare, tui_db):
    async def run_before(pilot):
        await open_trajectory(pilot)
        await pilot.press("c")
        await settle(pilot)

    assert snap_compare(app_with_spans(tui_db), terminal_size=SIZE, run_before=run_before)


def test_span_modal(snap_compare, tui_db):
    async def run_before(pilot):
        await open_trajectory(pilot, step=5)
        await pilot.press("E")
        await settle(pilot)
        await pilot.press("down", "down", "tab", "tab", "tab")  # focus on Save: no cursor blink
        await settle(pilot)

    assert snap_compare(app_with_spans(tui_db), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, app):
    async def run_before(pilot):
        await open_trajectory(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
