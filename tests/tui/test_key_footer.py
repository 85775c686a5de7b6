"""The footer: the keys of the screen shown, rebuilt only when they change."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from tests.tui.conftest import SIZE, settle
from tui.screens.trajectory import TrajectoryScreen
from tui.widgets.key_footer import KeyFooter


def keys(screen) -> list[tuple[str, str]]:
    return [(key.key_display, key.description) for key in screen.query(FooterKey)]


async def test_the_footer_is_built_once_per_screen_and_follows_its_keys(app, monkeypatch):
    built: list[str] = []
    recompose = KeyFooter.recompose

    async def counted(self: KeyFooter) -> None:
        built.append(type(self.screen).__name__)
        await recompose(self)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        runs = app.screen
        assert built == ["RunsScreen"]  # focus and stack changes asked several times
        assert ("enter", "") not in keys(runs) and ("/", "Search") in keys(runs)
        assert not any(key.has_class("-compact") for key in runs.query(FooterKey))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TrajectoryScreen)
        assert built == ["RunsScreen", "TrajectoryScreen"]
        assert ("v", "Mark span") in keys(app.screen)
        app.screen.query_one(KeyFooter).compact = True  # keys restyle without a rebuild
        await pilot.pause()
        assert all(key.has_class("-compact") for key in app.screen.query(FooterKey))
        assert len(built) == 2
