"""What may reach a terminal from stored text: every face that prints data (the CLI's consoles,
the terminal UI's widgets) shows control characters through :func:`plain`, so an escape
sequence in an imported log (a clipboard write, a cleared screen, a window title, a hyperlink)
is shown, never obeyed.

Only the standard library is imported here: the CLI and the terminal UI both import it, and
neither may import the other.
"""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters other than newline and tab: printed text must not drive the terminal."""


def plain(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN`` (``ESC`` as ``\\x1b``, a C1 CSI as
    ``\\x9b``); newline and tab are kept."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
