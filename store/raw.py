"""A step's raw record stored without the text the step already holds.

Importers keep each step's source record verbatim in ``Step.raw``, so a tool's output is in
the row twice: as the step's ``observation`` and as a string inside ``raw``. A row that
holds a 50 MB observation then holds 100 MB, and every copy made to write it (the JSON
encoding, SQLite's bound parameter, its record) is twice as big too.

So a string inside ``raw`` that contains one of the step's texts (:data:`TEXTS`, at least
:data:`SHORTEST` characters) is stored as a *reference*: the raw column then holds
:data:`MARK` followed by the JSON array ``[value, refs]``, where ``value`` is the raw value
with ``null`` in place of each such string and ``refs`` lists them, each as ``[field,
before, after, *path]``: the string is ``before + <the step's field> + after``, and ``path``
(keys of objects, indices of arrays) leads to it from the top of ``value`` (an empty path:
the raw value is that string). :func:`restored` puts the strings back when a row is read, so
every reader still sees the verbatim source record.

The mark cannot collide with data: JSON text never starts with ``~`` (a raw column written
before this, or a value with nothing to share, is plain JSON as ever), and everything after
the mark is this module's own array, whose strings are never read as references.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

TEXTS = ("observation", "action", "thought", "content")
"""The step fields whose text a raw string may be stored as a reference to."""

SHORTEST = 256
"""Characters a step's text needs for its copies in ``raw`` to be stored as references
(shorter ones cost less to store twice than to look for)."""

MARK = "~"
"""What a raw column starts with when it holds references (no JSON text starts with it)."""

Path = tuple[str | int, ...]


def shared(raw: Any, texts: Mapping[str, str]) -> tuple[Any, list[list[Any]]] | None:
    """``(value, refs)`` for ``raw`` with every string that contains one of ``texts``
    (field → text, each at least :data:`SHORTEST` long) taken out; ``None`` when there is
    none (or ``raw`` nests too deep to look through)."""
    if not texts:
        return None
    refs: list[list[Any]] = []
    try:
        value = _taken_out(raw, texts, (), refs)
    except RecursionError:
        return None
    return (value, refs) if refs else None


def _taken_out(value: Any, texts: Mapping[str, str], path: Path, refs: list[list[Any]]) -> Any:
    """``value`` with the strings holding a text replaced by ``None`` (a container is copied
    only when something in it is replaced), each noted in ``refs``."""
    kind = type(value)
    if kind is str:
        for field, text in texts.items():
            if value is text:
                refs.append([field, "", "", *path])
                return None
            if len(value) >= len(text):
                at = value.find(text)
                if at >= 0:
                    refs.append([field, value[:at], value[at + len(text) :], *path])
                    return None
        return value
    if kind is dict:
        out = None
        for key, item in value.items():
            if type(item) in _LOOKED_INTO and type(key) is str:  # (JSON makes other keys text)
                new = _taken_out(item, texts, (*path, key), refs)
                if new is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = new
        return value if out is None else out
    if kind is list:
        copy = None
        for index, item in enumerate(value):
            if type(item) in _LOOKED_INTO:
                new = _taken_out(item, texts, (*path, index), refs)
                if new is not item:
                    if copy is None:
                        copy = list(value)
                    copy[index] = new
        return value if copy is None else copy
    return value


_LOOKED_INTO = (str, dict, list)


def stored(raw: Any, texts: Mapping[str, str], encode: Callable[[Any], str]) -> str | None:
    """The raw column's text for ``raw`` with references to ``texts`` (see the module), or
    ``None`` when nothing in it is shared (then ``raw`` is stored as plain JSON)."""
    found = shared(raw, texts)
    if found is None:
        return None
    return MARK + encode(list(found))


def long_texts(values: Mapping[str, Any]) -> dict[str, str]:
    """The step texts (of :data:`TEXTS`, field → text) long enough to be shared."""
    return {
        field: text
        for field in TEXTS
        if type(text := values.get(field)) is str and len(text) >= SHORTEST
    }


def restored(column: str, texts: Mapping[str, Any]) -> Any:
    """The raw value a raw column's text holds, with the strings it shares with the step's
    ``texts`` (field → text, as read from the same row) put back."""
    if not column.startswith(MARK):
        return json.loads(column)
    value, refs = json.loads(column[len(MARK) :])
    for field, before, after, *path in refs:
        text = texts.get(field)
        if type(text) is not str:
            raise ValueError(f"raw refers to the step's {field}, which is not text")
        string = f"{before}{text}{after}" if before or after else text
        if not path:
            value = string
            continue
        place = value
        for key in path[:-1]:
            place = place[key]
        place[path[-1]] = string
    return value
