"""Markdown files written from text nobody controls (model replies, trajectories, imported
logs): whatever the text holds, the file keeps its structure.

- :func:`front_matter` — one ``key: <JSON>`` line per value between ``---`` lines (YAML reads
  JSON scalars and lists as they are); :func:`read_front_matter` reads it back.
- :func:`literal` — one line that renders as written: every Markdown character escaped (for
  headings).
- :func:`inline` — one line of prose: newlines folded, a leading block marker and HTML
  comment openers escaped, so it can neither start a heading, list, quote, fence, HTML block
  or front matter nor hide the rest of the file in a comment; the rest is left as written
  (these files are prompt text too: ``<X>`` placeholders stay readable).
- :func:`fenced` — a fenced block that nothing inside it can close.
- :func:`write_atomically` — a file replaced whole or not at all.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~])")
_HTML_BLOCK = (
    r"<([!?/]|(script|pre|style|textarea|div|table|details|section|iframe|p|html|body|head)\b)"
)
_BLOCK_START = re.compile(
    rf"^(#|>|[-+*](\s|$)|=|\d+[.)](\s|$)|`{{3}}|~{{3}}|\||---|{_HTML_BLOCK})", re.IGNORECASE
)


def literal(text: str) -> str:
    """``text`` as one line of Markdown that renders literally (special characters escaped)."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def inline(text: str) -> str:
    """``text`` as one line of prose that cannot change the document's structure."""
    line = " ".join(text.split()).replace("<!--", "<\\!--")
    if not _BLOCK_START.match(line):
        return line
    if line[0].isdigit():  # "1." starts a list; only punctuation can be escaped
        return re.sub(r"^(\d+)([.)])", r"\1\\\2", line)
    return "\\" + line


def fenced(text: str, info: str = "text") -> str:
    """``text`` in a fenced block that nothing inside it can close."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def front_matter(values: dict[str, Any]) -> str:
    """A front-matter block: one ``key: <JSON>`` line per value."""
    lines = [f"{key}: {json.dumps(values[key], ensure_ascii=False)}" for key in values]
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


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
