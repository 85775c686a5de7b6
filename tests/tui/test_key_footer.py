"""The footer: the keys of the screen shown, rebuilt only when they change."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from tests.tui.conftest import SIZE, screen_for_key, settle
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


def footer(screen) -> str:
    """The footer of ``screen`` as it reads: each key with its description, grouped keys
    with their group's."""
    parts = []
    for node in screen.query_one(KeyFooter).query("FooterKey, FooterLabel"):
        if isinstance(node, FooterKey):
            parts.append(f"{node.key_display} {node.description}".rstrip())
        else:
            parts.append(str(node.content))
    return "  ".join(parts)


async def test_the_trajectory_footer_shows_step_keys_and_the_marking_keys_while_marking(app):
    async with app.run_test(size=SIZE) as pilot:
        screen = await screen_for_key(pilot, "enter", TrajectoryScreen)
        browsing = footer(screen)
        assert "h  l  Prev/next step" in browsing and "H  L  Prev/next run" in browsing
        assert "v Mark span" in browsing and "c Compare" in browsing
        assert "End span" not in browsing and "Cancel span" not in browsing
        await pilot.press("v")
        await settle(pilot)
        marking = footer(screen)
        assert "h  l  Prev/next step" in marking
        assert "⏎ End span" in marking and "esc Cancel span" in marking
        assert "v Mark span" not in marking and "Prev/next run" not in marking
        await pilot.press("c")  # not while marking: the comparison waits
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("escape")
        await settle(pilot)
        assert footer(screen) == browsing


async def test_the_span_dialog_shows_its_own_keys(app):
    async with app.run_test(size=SIZE) as pilot:
        trajectory = await screen_for_key(pilot, "enter", TrajectoryScreen)
        await pilot.press("v", "l", "enter")
        await settle(pilot)
        dialog = app.screen
        assert type(dialog).__name__ == "SpanModal"
        keys = footer(dialog)
        assert keys.startswith("esc Cancel  ^s Save") and "Mark span" not in keys
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is trajectory and "v Mark span" in footer(trajectory)
