"""A long Markdown document shown a part at a time.

Textual's :class:`~textual.widgets.Markdown` makes a widget of every block and lays them all
out again as they mount: a 2,000-line manual took seconds to appear. :class:`ManualView` cuts
the document at its headings into parts of about :data:`PART_LINES` lines (:func:`parts`),
shows the first at once and adds the next as the view nears the end of what it shows; ``end``
and a link to a heading not shown yet add the rest at once.
"""

from __future__ import annotations

import asyncio
import re
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Markdown

PART_LINES = 80
"""Lines a part holds at least (it ends before a heading): the first part fills a screen."""

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
"""The line opening (or closing) a fenced code block: no heading inside one."""
HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def parts(markdown: str, lines: int = PART_LINES) -> list[str]:
    """``markdown`` cut before headings (never inside a fenced code block) into parts of at
    least ``lines`` lines, the last one excepted; joined, the parts are ``markdown``."""
    found: list[str] = []
    current: list[str] = []
    fence = ""
    for line in markdown.splitlines(keepends=True):
        if not fence and len(current) >= lines and HEADING.match(line):
            found.append("".join(current))
            current = []
        current.append(line)
        if not fence:
            marker = FENCE.match(line)
            fence = marker[1] if marker else ""
        elif _closes(line, fence):
            fence = ""
    if current or not found:
        found.append("".join(current))
    return found


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes the code block ``fence`` opened (the same character, at least
    as many, nothing else)."""
    marker = line.strip()
    return len(marker) >= len(fence) and set(marker) == {fence[0]}


class ManualView(VerticalScroll, can_focus=True):
    """A Markdown document, its parts shown as they are needed (:func:`parts`)."""

    DEFAULT_CSS = """
    ManualView {
        height: 1fr;
        scrollbar-gutter: stable;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "scroll_end", "End", show=False),
    ]

    def __init__(self, markdown: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.markdown = markdown
        """The whole document."""
        self._pending: list[str] = []
        self._lock = asyncio.Lock()
        self._generation = 0
        self._filling = False

    @property
    def documents(self) -> list[Markdown]:
        """The parts shown, in order."""
        return list(self.query_children(Markdown))

    @property
    def shown(self) -> str:
        """What of the document is shown so far."""
        return "".join(document.source for document in self.documents)

    @property
    def pending(self) -> int:
        """Parts not shown yet."""
        return len(self._pending)

    async def on_mount(self) -> None:
        if self.markdown:
            await self.show(self.markdown)

    async def show(self, markdown: str) -> None:
        """Show ``markdown`` from its top: its first part now, the rest as it is needed."""
        self._generation += 1
        self.markdown = markdown
        async with self._lock:  # a part being added is taken off the pending it came from
            first, *self._pending = parts(markdown)
            await self.remove_children()
            self.scroll_home(animate=False, immediate=True)
            await self._add(first)
        self.call_after_refresh(self._want_more)

    async def show_more(self, count: int = 1) -> bool:
        """Add the next ``count`` parts (as one document: they are laid out once); whether
        there was one."""
        generation = self._generation
        async with self._lock:
            if generation != self._generation or not self._pending:
                return False
            await self._add("".join(self._pending[:count]))
            del self._pending[:count]
        return True

    async def _add(self, part: str) -> None:
        document = Markdown(open_links=False)
        await self.mount(document)
        await document.update(part)

    def _want_more(self) -> None:
        """Add the next part (after the next refresh) if the view shows the end of what it
        holds."""
        near_end = self.max_scroll_y - self.scroll_y <= self.size.height
        if self._pending and near_end and not self._filling:
            self._filling = True
            self.call_after_refresh(self._fill)

    async def _fill(self) -> None:
        try:
            added = await self.show_more()
        finally:
            self._filling = False
        if added:  # laid out, it may still not reach the view's end
            self.call_after_refresh(self._want_more)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._want_more()

    def on_resize(self) -> None:
        self._want_more()

    async def action_scroll_end(self) -> None:
        await self.show_more(self.pending)
        self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    async def go_to(self, anchor: str) -> bool:
        """Scroll to the heading ``anchor`` names (adding the parts not shown yet when it is
        not among those shown); whether it was found."""
        if not any(document.goto_anchor(anchor) for document in self.documents):
            await self.show_more(self.pending)
            return any(document.goto_anchor(anchor) for document in self.documents)
        return True

    async def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Links inside the document move to their heading; others are not followed (the
        document's text is data)."""
        event.stop()
        if event.href.startswith("#"):
            await self.go_to(event.href[1:])
