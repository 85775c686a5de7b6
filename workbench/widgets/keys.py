"""Keyboard stepping for notebook widgets: a small focusable anywidget that turns key presses
into named actions on the Python side (ipywidgets itself has no key events)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

_ESM = """
function render({ model, el }) {
  const bindings = model.get("bindings");
  el.tabIndex = 0;
  el.classList.add("wb-keys");
  el.style.cssText = "padding: 2px 8px; border: 1px dashed #999; cursor: pointer; font-size: 90%;";
  el.textContent = model.get("hint");
  el.addEventListener("focus", () => { el.style.borderStyle = "solid"; });
  el.addEventListener("blur", () => { el.style.borderStyle = "dashed"; });
  el.addEventListener("click", () => el.focus());
  el.addEventListener("keydown", (event) => {
    const action = bindings[event.key];
    if (action === undefined) return;
    // keep JupyterLab's own shortcuts (arrows, j/k) away while the widget has focus
    event.preventDefault();
    event.stopPropagation();
    model.send({ action });
  });
}
export default { render };
"""


class KeyListener(anywidget.AnyWidget):
    """A focusable strip that sends ``{"action": name}`` for each mapped key; click it (or tab
    to it) first. ``on_action`` callbacks receive the action name."""

    _esm = traitlets.Unicode(_ESM).tag(sync=True)
    bindings = traitlets.Dict().tag(sync=True)
    """Key (``event.key``) → action name."""
    hint = traitlets.Unicode("").tag(sync=True)

    def __init__(self, bindings: dict[str, str], hint: str, **kwargs: Any) -> None:
        super().__init__(bindings=bindings, hint=hint, **kwargs)
        self._actions: list[Callable[[str], None]] = []
        self.on_msg(self._received)

    def on_action(self, callback: Callable[[str], None]) -> None:
        self._actions.append(callback)

    def press(self, key: str) -> None:
        """Act as if ``key`` had been pressed in the browser (for scripts and tests)."""
        self._received(self, {"action": self.bindings[key]}, [])

    def _received(self, _: Any, content: dict[str, Any], buffers: list[Any]) -> None:
        action = content.get("action") if isinstance(content, dict) else None
        if action in self.bindings.values():
            for callback in self._actions:
                callback(action)
