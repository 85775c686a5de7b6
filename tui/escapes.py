"""Stored text on the terminal: control characters shown, never obeyed.

An imported log may carry terminal escapes (a clipboard write ``ESC ] 52``, a cleared screen
``ESC [ 2J``, a hyperlink or a window title, a C1 ``CSI``). Textual and rich drop a few
control characters (bell, backspace, carriage return…) but pass ``ESC`` and C1 through to the
terminal. The terminal UI shows them as the CLI does, as ``\\xNN``
(:func:`workbench.escapes.shown`; bidirectional overrides and hidden line breaks
too), at two levels:

- before layout, where widgets take stored text (:func:`shown` for a string,
  :func:`escaped` for a rich ``Text``; :class:`~tui.widgets.record_table.RecordTable` escapes
  every cell), so a line's width counts the escape;
- after rendering, :class:`ControlFilter`, which the app applies to every line every widget
  draws (tables, Markdown, inputs, toasts, titles…): whatever a widget did not escape is
  escaped there, cut to the line's width. Nothing drawn reaches the terminal unescaped.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

from workbench.escapes import UNSAFE, shown

__all__ = ["UNSAFE", "ControlFilter", "escaped", "shown"]


def escaped(text: Text) -> Text:
    """``text`` with each control character shown as ``\\xNN`` in the style it had (the same
    ``text`` when it has none)."""
    if not UNSAFE.search(text.plain):
        return text
    cuts = sorted({i for m in UNSAFE.finditer(text.plain) for i in (m.start(), m.end())})
    out = text.blank_copy()  # the whole text's style, once
    for part in text.divide(cuts):
        part.style = ""
        if UNSAFE.fullmatch(part.plain):
            escape = Text(shown(part.plain))
            for span in part.spans:
                escape.stylize(span.style)
            part = escape
        out.append_text(part)
    return out


class ControlFilter(LineFilter):
    """The app's last guard: any control character left in a drawn line's text is shown as
    ``\\xNN`` (as the CLI's console shows it), the line cut back to its width."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(UNSAFE.search(text) for text, _, control in segments if not control):
            return segments
        width = Segment.get_line_length(segments)
        safe = [s if s.control else Segment(shown(s.text), s.style) for s in segments]
        return Segment.adjust_line_length(safe, width)
