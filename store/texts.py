"""A step's texts read a window at a time: what a reader shows of steps whose texts may be
hundreds of megabytes, in memory and time bounded by what it shows.

SQLite hands a text value to its caller whole (a ``substr`` of a 200 MB observation still
reads all of it into memory first), so a long text is read here through SQLite's incremental
blob I/O instead: its size in bytes is known without reading it, its head is read in pieces
of :data:`PIECE` bytes (each cut at a character's end and decoded alone), and its length in
characters is counted from its bytes (every UTF-8 byte but a continuation byte starts one),
a piece at a time. A text up to :data:`PIECE` bytes is read and decoded whole.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from store.records import Step
from store.rows import from_row

CUT_TEXTS = ("content", "thought", "action", "observation")
"""The texts of a step that :func:`cut_steps` cuts and :func:`step_text` pages."""
WINDOW = 4000
"""Characters of a text a reader holds at once (the terminal UI's step detail, a comparison's
actions, a synthesized example's span): every real action fits, and a text of hundreds of
megabytes costs what this window of it does."""
PIECE = 1 << 20
"""Bytes of a long text read at a time."""
SMALL_CACHE = -2048
"""SQLite's page cache (negative: in KiB) while a long text is read."""
_CONTINUATION = bytes(range(0x80, 0xC0))
_FIELDS = ("episode_id", "index", "kind", "role", "agent", "tool_name", "tool_call_id", "reward")
"""The short fields of a step, read as they are (then ``timestamp``, then the texts)."""
_STEPS = (
    f"SELECT id, {', '.join(chr(34) + f + chr(34) for f in _FIELDS)}, timestamp, "
    "typeof(raw) = 'null' FROM steps "
    'WHERE episode_id = ? AND "index" >= ? AND "index" < ? ORDER BY "index"'
)


@dataclass(frozen=True)
class CutStep:
    """A step read with each text cut to a window (:func:`cut_steps`)."""

    step: Step
    """The step, each of its texts the window's characters of it (from :attr:`offset`)."""
    lengths: dict[str, int]
    """The full length in characters of each of :data:`CUT_TEXTS`, and the stored raw
    record's length in bytes as ``raw`` (0 when there is none)."""
    offset: int = 0
    """Where in each text the window starts."""

    def cut(self, field: str) -> bool:
        """Whether ``field``'s text (or the raw record) holds more than the step shows."""
        if field == "raw":
            return self.lengths["raw"] > 0 and self.step.raw is None
        return self.lengths[field] > len(getattr(self.step, field))


def cut_steps(
    conn: sqlite3.Connection, episode_id: str, start: int, stop: int, chars: int, offset: int
) -> list[CutStep]:
    """Steps ``start`` to ``stop`` (exclusive) of an episode, each text cut to the ``chars``
    characters from ``offset``, with every text's full length.

    A step with a cut text comes without its raw record (the record may hold the text again,
    and is stored with references to the step's full texts: ``store.raw``), as does a step
    whose raw record is longer than ``chars`` bytes; ``lengths["raw"]`` tells its size.
    """
    rows = conn.execute(_STEPS, (episode_id, start, stop)).fetchall()
    return [_cut(conn, row, max(chars, 0), max(offset, 0)) for row in rows]


def step_text(
    conn: sqlite3.Connection, episode_id: str, index: int, field: str, start: int, chars: int
) -> str:
    """Characters ``start`` to ``start + chars`` of one text of one step (``""`` past its
    end, or when there is no such step).

    Raises:
        ValueError: ``field`` is not one of :data:`CUT_TEXTS`.
    """
    if field not in CUT_TEXTS:
        raise ValueError(f"a step's texts are {', '.join(CUT_TEXTS)}; not {field!r}")
    row = conn.execute(
        'SELECT id FROM steps WHERE episode_id = ? AND "index" = ?', (episode_id, index)
    ).fetchone()
    if row is None:
        return ""
    return window(conn, field, row[0], max(start, 0), max(chars, 0))[0]


def window(
    conn: sqlite3.Connection, column: str, rowid: int, offset: int, chars: int
) -> tuple[str, int]:
    """``(characters offset to offset + chars, length in characters)`` of one step text."""
    with conn.blobopen("steps", column, rowid, readonly=True) as blob:
        if len(blob) <= PIECE:
            text = blob.read().decode("utf-8")
            return text[offset : offset + chars], len(text)
        parts, seen = [], 0
        with _small_cache(conn):
            for piece in _pieces(blob):
                count = len(piece.translate(None, _CONTINUATION))
                if seen + count > offset and seen < offset + chars:
                    text = piece.decode("utf-8")
                    parts.append(text[max(offset - seen, 0) : offset + chars - seen])
                seen += count
        return "".join(parts), seen


@contextmanager
def _small_cache(conn: sqlite3.Connection) -> Iterator[None]:
    """SQLite's page cache kept at :data:`SMALL_CACHE` while a long text is read: its pages
    are read once, and would otherwise fill the whole cache."""
    size = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = {SMALL_CACHE}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {size}")


def _pieces(blob: Any) -> Iterator[bytes]:
    """A text's bytes in pieces of whole characters (a character cut by a read is carried
    to the next piece)."""
    carried = b""
    while data := blob.read(PIECE):
        data = carried + data
        end = _whole(data)
        carried = data[end:]
        yield data[:end]
    if carried:
        yield carried


def _whole(data: bytes) -> int:
    """How many bytes at the start of ``data`` are whole UTF-8 characters."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:  # the last character's first byte
            needs = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= needs else len(data) - back
    return len(data)


def _cut(conn: sqlite3.Connection, row: tuple[Any, ...], chars: int, offset: int) -> CutStep:
    rowid, short = row[0], len(_FIELDS)
    values: dict[str, Any] = dict(zip(_FIELDS, row[1 : 1 + short], strict=True))
    values["timestamp"] = row[1 + short]
    lengths: dict[str, int] = {}
    for field in CUT_TEXTS:
        values[field], lengths[field] = window(conn, field, rowid, offset, chars)
    whole = all(lengths[f] == len(values[f]) for f in CUT_TEXTS)
    values["raw"], lengths["raw"] = None, 0
    if not row[2 + short]:
        with conn.blobopen("steps", "raw", rowid, readonly=True) as blob:
            lengths["raw"] = len(blob)
            if whole and len(blob) <= chars:  # (its references need the texts whole)
                values["raw"] = blob.read().decode("utf-8")
    return CutStep(from_row(Step, values), lengths, offset)
