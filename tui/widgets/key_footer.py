"""The footer of every screen: Textual's :class:`~textual.widgets.Footer`, rebuilt only when the
keys it shows change."""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class KeyFooter(Footer):
    """Textual's footer, showing the same keys, without its redundant rebuilds.

    Textual's footer rebuilds all its keys (a recompose, which styles each one again) every
    time its screen asks for its bindings to be refreshed: on each focus change, each change
    of the screen stack and each ``refresh_bindings`` call. Opening a screen asks several
    times in a row, for the same keys. This one rebuilds once per burst of requests, and only
    when what it would show differs from what it shows.
    """

    _shown: Hashable = None
    """What the keys shown were built from (``None``: none built yet)."""
    _refresh_pending = False
    """A rebuild is already asked for after the next refresh."""

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                # Born in the footer's style: otherwise each key is styled compact, then not.
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._refresh_pending:
            self._refresh_pending = True
            self.call_after_refresh(self._refresh_keys)

    async def _refresh_keys(self) -> None:
        self._refresh_pending = False
        if not self.is_attached:  # its screen was closed meanwhile
            return
        shown = self._keys()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()

    def _keys(self) -> Hashable:
        """Everything :meth:`Footer.compose` reads to build the keys."""
        app = self.app
        return (
            self.show_command_palette and app.ENABLE_COMMAND_PALETTE,
            tuple(
                (key, binding, app.get_key_display(binding), enabled, tooltip)
                for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
                if binding.show or key == app.COMMAND_PALETTE_BINDING
            ),
        )
