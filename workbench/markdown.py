"""Markdown files written from text nobody controls (model replies, trajectories, imported
logs): whatever the text holds, the file keeps its structure, holds no live HTML and no raw
control character.

Every function here shows control characters and the characters that disguise text as
``\\x1b``, ``\\u202e`` (:func:`workbench.escapes.shown`: a file shown in a terminal cannot drive
it, and reads as it is), and makes HTML from the text inert: a ``<`` that could open a tag, a
comment, an autolink or an HTML block (one followed by a letter, ``/``, ``!`` or ``?``) is
written ``\\<``, and an ``&`` that starts an entity ``\\&``; CommonMark shows both as the
characters themselves, and a reader (or a model reading the file as a prompt) still sees the
text, ``\\<X>`` placeholders included, with one backslash more.

- :func:`front_matter` — one ``key: <JSON>`` line per value between ``---`` lines (YAML reads
  JSON scalars and lists as they are; controls and HTML are ``\\uXXXX`` escapes there);
  :func:`read_front_matter` reads it back.
- :func:`literal` — one line that renders as written: every Markdown character escaped (for
  headings).
- :func:`escaped` — one line that renders as written, with only the characters that act where
  they stand escaped (for text inside a line: a label, a clause of a sentence).
- :func:`inline` — one line of prose: newlines folded, HTML made inert, a leading block marker
  escaped, so it can neither start a heading, list, quote, fence, HTML block, link reference
  or front matter nor hide the rest of the file in a comment; the rest is left as written
  (these files are prompt text too: emphasis and code spans stay).
- :func:`prose` — lines of text kept as lines (hard breaks), as :func:`escaped` writes each,
  starting no block.
- :func:`code_span` — one line as a code span; :func:`fenced` — a fenced block that nothing
  inside it can close (inside both, only control characters need showing).
- :func:`write_atomically` — a file replaced whole or not at all.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from workbench.escapes import json_dumps, json_escape, shown

_ENTITY = r"&(?=#?[A-Za-z0-9]+;)"
"""An ``&`` that starts an entity or a numeric character reference."""
_HTML = re.compile(rf"(?<!\\)((?:\\\\)*)(<(?=[A-Za-z/!?])|{_ENTITY})")
"""A ``<`` that can open a tag, comment, declaration, processing instruction or autolink, or
an ``&`` that starts an entity, behind an even number of backslashes (none escape it)."""
_JSON_HTML = re.compile(rf"<(?=[A-Za-z/!?])|{_ENTITY}")
"""The same characters in JSON text (where a backslash never escapes them)."""
_SPECIAL = re.compile(rf"([\\`*_{{}}\[\]<>()#+\-.!|~]|{_ENTITY})")
_ACTIVE = re.compile(rf"([\\`*\[\]<>|]|{_ENTITY})|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
"""What acts inside a line: escapes, code, emphasis, links, HTML, tables' pipes, entities."""
_BLOCK_START = re.compile(
    r"^(#|>|[-+*](\s|$)|=|\d+[.)](\s|$)|`{3}|~{3}|\||---"
    r"|(?P<rule>[*_])(\s*(?P=rule)){2,}\s*$"  # a thematic break
    r"|[-*_][-*_\s]*$"  # part of one, after a list marker ("- " + "--")
    r"|\[(\\.|[^\\\[\]])*\]:)"  # a link reference definition
)
_PROSE_START = re.compile(r"^([#>+=~-]|\d+[.)])")
"""What starts a block in a line :func:`escaped` wrote (it escapes the other starts)."""


def _one_line(text: str) -> str:
    """``text`` on one line: whitespace (line breaks included) folded, the rest shown."""
    return shown(" ".join(text.split()))


def literal(text: str) -> str:
    """``text`` as one line of Markdown that renders literally (special characters escaped)."""
    return _SPECIAL.sub(r"\\\1", _one_line(text))


def escaped(text: str) -> str:
    """``text`` as one line that renders as written, readably: only the characters that act
    inside a line are escaped (not those that act at a line's start: see :func:`prose`)."""
    return _ACTIVE.sub(lambda m: "\\" + m.group(0), _one_line(text))


def inline(text: str) -> str:
    """``text`` as one line of prose that cannot change the document's structure."""
    line = _HTML.sub(r"\1\\\2", _one_line(text))
    if not _BLOCK_START.match(line):
        return line
    if line[0].isdigit():  # "1." starts a list; only punctuation can be escaped
        return re.sub(r"^(\d+)([.)])", r"\1\\\2", line)
    return "\\" + line


def prose(text: str) -> str:
    """Text whose line breaks are kept (as hard breaks), each line as :func:`escaped` writes
    it, starting no block."""
    lines = [escaped(line) for line in text.strip().splitlines() if line.strip()]
    return "\\\n".join(_PROSE_START.sub(_escape_start, line) for line in lines)


def _escape_start(match: re.Match[str]) -> str:
    marker = match.group(0)  # "1." starts a list: only its punctuation can be escaped
    return marker[:-1] + "\\" + marker[-1]


def code_span(text: str) -> str:
    """``text`` on one line as a code span (fenced with more backticks than it holds)."""
    line = _one_line(text)
    fence = _fence(line, 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def fenced(text: str, info: str = "text") -> str:
    """``text`` in a fenced block that nothing inside it can close; newlines and tabs are kept,
    other control characters shown (a ``\\r\\n`` line end is a newline)."""
    text = shown(text.replace("\r\n", "\n")).rstrip()
    fence = _fence(text, 3)
    return f"{fence}{info}\n{text}\n{fence}"


def _fence(text: str, least: int) -> str:
    """A run of backticks longer than any in ``text``, and at least ``least`` long."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(least, longest + 1)


def front_matter(values: dict[str, Any]) -> str:
    """A front-matter block: one ``key: <JSON>`` line per value. A ``<`` that could open a
    tag is written ``\\u003c`` and an ``&`` that starts an entity ``\\u0026``, so a renderer
    that takes the block for Markdown finds no HTML in it either; YAML and JSON read both
    escapes back as the characters."""
    lines = [f"{key}: {_JSON_HTML.sub(json_escape, json_dumps(values[key]))}" for key in values]
    return "---\n" + "\n".join(lines) + "\n---\n"


def read_front_matter(text: str) -> dict[str, Any]:
    """The front matter of a file written with :func:`front_matter`.

    Raises:
        ValueError: the text does not start with a front-matter block of ``key: <JSON>``
            lines.
    """
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        raise ValueError("no front matter (a block between two '---' lines) at the start")
    block = text[4 : text.index("\n---\n", 3)]
    values = {}
    for number, line in enumerate(block.splitlines(), start=2):
        key, sep, value = line.partition(": ")
        if not sep:
            raise ValueError(f"front matter line {number}: expected 'key: value'")
        try:
            values[key] = json.loads(value)
        except json.JSONDecodeError as error:
            raise ValueError(f"front matter line {number} ({key}): {error}") from None
    return values


def write_atomically(path: Path, text: str, *, parents: bool = True) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed into place, making its
    missing folders (with ``parents=False``, a missing folder is an ``OSError``)."""
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
