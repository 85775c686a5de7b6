"""Text nobody controls (imported logs, model replies) shown on a terminal or written to files:
no character in it may drive a terminal that shows it, or disguise what it says.

- :data:`CONTROL` — control characters other than newline and tab (C0, DEL, C1): what would
  drive a terminal (``ESC`` starts a clipboard write, a cleared screen, a window title, a
  hyperlink; a C1 ``CSI`` does alone).
- :data:`UNSAFE` — those, and the characters that disguise text: the line and paragraph
  separators (U+2028, U+2029: a line break nothing shows) and the bidirectional embeddings,
  overrides and isolates (U+202A-U+202E, U+2066-U+2069: text shown in another order than it
  is read).
- :func:`shown` — those characters made visible (``\\x1b``, ``\\u202e``): what every face
  that prints data (the CLI's consoles, the terminal UI's widgets) and every Markdown file
  shows of them.
- :func:`json_dumps` — ``json.dumps(value, ensure_ascii=False)`` with those of them that JSON
  leaves raw (DEL, C1 and the disguising ones; JSON escapes C0 itself) written as ``\\uXXXX``
  escapes: lossless, since every JSON reader reads the escape back as the character.

Only the standard library is imported: the engine's writers and every face (the CLI and the
terminal UI, which may not import each other) use it.
"""

from __future__ import annotations

import re
from typing import Any

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters other than newline and tab."""

DISGUISING = "\u2028\u2029\u202a-\u202e\u2066-\u2069"
"""A character class of the characters that disguise text: line and paragraph separators, and
bidirectional embeddings, overrides and isolates."""

UNSAFE = re.compile(f"{CONTROL.pattern}|[{DISGUISING}]")
"""Control characters other than newline and tab, and the characters that disguise text."""

RAW_IN_JSON = re.compile(f"[\x7f-\x9f{DISGUISING}]")
"""The characters of :data:`UNSAFE` that ``json.dumps`` writes raw (it escapes C0 itself)."""


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every character of :data:`UNSAFE` shown as ``\\xNN`` (below U+0100) or
    ``\\uNNNN``; newline and tab are kept."""
    return UNSAFE.sub(_visible, text)


def json_escape(match: re.Match[str]) -> str:
    """The matched character as a JSON ``\\uXXXX`` escape (for ``re.sub`` over JSON text)."""
    return f"\\u{ord(match.group()):04x}"


def json_dumps(value: object, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)`` holding no raw control character
    and no character that disguises text (see :data:`RAW_IN_JSON`): they are written as
    ``\\uXXXX`` escapes, which read back as the same characters.

    Outside JSON strings the text is ASCII, so only strings' characters are escaped. ASCII
    text without DEL (most logs) is returned as ``json.dumps`` wrote it without a regular
    expression's scan; the scan costs about 5% of an export's time otherwise.
    """
    import json  # here, not at the top: the CLI imports this module as it starts

    text = json.dumps(value, ensure_ascii=False, **options)
    return text if text.isascii() and "\x7f" not in text else RAW_IN_JSON.sub(json_escape, text)
