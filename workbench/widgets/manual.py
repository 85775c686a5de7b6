"""The formulated manual as HTML: a version picker, the diff against the previous version,
and export (the same engine call as ``workbench manual export``)."""

from __future__ import annotations

import os
from pathlib import Path

import ipywidgets as widgets
from markdown_it import MarkdownIt

from store import Manual, Store
from workbench.manual.formulate import ManualError, diff, export
from workbench.widgets import html

DIFF_COLOURS = {"+": "#1a7f37", "-": "#cf222e", "@": "#8250df"}


def markdown_html(markdown: str) -> str:
    """CommonMark (with tables) rendered to HTML; raw HTML in the source is escaped."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)


def diff_html(text: str) -> str:
    """A unified diff, added lines green and removed lines red."""
    if not text:
        return html.status("no change from the previous version", "info")
    lines = []
    for line in text.splitlines():
        colour = DIFF_COLOURS.get(line[:1]) if not line.startswith(("+++", "---")) else None
        escaped = html.text(line)
        lines.append(f"<span style='color:{colour}'>{escaped}</span>" if colour else escaped)
    style = "white-space: pre-wrap; font-family: monospace"
    return f"<pre style='{style}'>" + "\n".join(lines) + "</pre>"


class ManualView(widgets.VBox):
    """Every formulated manual version, rendered; its diff; export to a file.

    Args:
        db: the database file.
        path: the export path offered (default ``MANUAL.md``).

    Attributes:
        manuals: every version, oldest first; ``manual``: the one shown.
    """

    def __init__(
        self, db: str | os.PathLike[str], path: str | os.PathLike[str] = "MANUAL.md"
    ) -> None:
        self.store = Store(db)
        self.manuals: list[Manual] = []
        self.picker = widgets.Dropdown(description="version").add_class("wb-manual-version")
        self.show_diff = widgets.ToggleButton(description="diff against previous")
        self.show_diff.add_class("wb-diff")
        self.path = widgets.Text(value=str(path), description="export to")
        self.path.add_class("wb-export-path")
        self.export_button = widgets.Button(description="export").add_class("wb-export")
        self.status = widgets.HTML().add_class("wb-status")
        self.view = widgets.HTML().add_class("wb-manual")
        super().__init__(
            [
                widgets.HBox([self.picker, self.show_diff]),
                widgets.HBox([self.path, self.export_button]),
                self.status,
                self.view,
            ]
        )
        self.add_class("wb-manual-view")
        self.picker.observe(lambda _: self._show(), names="value")
        self.show_diff.observe(lambda _: self._show(), names="value")
        self.export_button.on_click(lambda _: self.export())
        self.refresh()

    @property
    def manual(self) -> Manual | None:
        return next((m for m in self.manuals if m.version == self.picker.value), None)

    def refresh(self) -> None:
        """Read the manual versions again and show the latest."""
        self.manuals = self.store.manuals()
        self.picker.options = [
            (f"v{m.version} · {m.reasoner} · {m.created_at:%Y-%m-%d %H:%M}", m.version)
            for m in self.manuals
        ]
        self.picker.value = self.manuals[-1].version if self.manuals else None
        self._show()

    def export(self) -> Path | None:
        """Write the shown version to the path field's file; ``None`` when it failed."""
        out = Path(self.path.value).expanduser()
        try:
            manual = export(self.store, out, self.picker.value)
        except (ManualError, OSError) as error:
            self.status.value = html.status(f"not exported: {error}", "error")
            return None
        self.status.value = html.status(f"exported manual v{manual.version} to {out}", "ok")
        return out

    def _show(self) -> None:
        manual = self.manual
        if manual is None:
            self.view.value = html.status(
                "no manual yet: `workbench manual formulate` (or f on the Manual screen)", "info"
            )
            return
        if not self.show_diff.value:
            self.view.value = markdown_html(manual.markdown)
        elif manual.version == 1:
            self.view.value = html.status("version 1 has no previous version", "info")
        else:
            self.view.value = diff_html(diff(self.store, manual.version - 1, manual.version))

    def close(self) -> None:
        """Close the widget and its store."""
        super().close()
        self.store.close()
