"""Paths into a JSON record: dotted keys, list indices, wildcards and alternatives.

``info.reward``, ``traj[0].role``, ``traj[*].content`` (every element), ``$`` (the record
itself), and ``name | role``: the first of several paths that gives a value.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

Parts = tuple[str | int, ...]
"""A parsed path: keys, indices and ``"*"``."""

_SEGMENT = re.compile(r"([A-Za-z_][\w\-]*)|\[(\d+|\*)\]|\.")


def parse_path(text: str) -> Parts:
    """A path's parts: keys, indices and ``"*"``; raises ``ValueError`` for a bad path."""
    if text == "$":
        return ()
    parts: list[str | int] = []
    pos, expect_key = 0, True
    while pos < len(text):
        match = _SEGMENT.match(text, pos)
        if match is None or (match.group() == "." and expect_key):
            raise ValueError(f"bad path {text!r} at character {pos + 1}")
        key, index = match.group(1), match.group(2)
        if key is not None:
            if not expect_key:
                raise ValueError(f"bad path {text!r}: a key must follow '.'")
            parts.append(key)
        elif index is not None:
            parts.append("*" if index == "*" else int(index))
        expect_key, pos = match.group() == ".", match.end()
    if expect_key:
        raise ValueError(f"bad path {text!r}: it ends in '.' or is empty")
    return tuple(parts)


@lru_cache(maxsize=1024)
def parse_alternatives(text: str) -> tuple[Parts, ...]:
    """The paths of ``"a.b | c"``, in order (one for a plain path); raises ``ValueError``."""
    return tuple(parse_path(part.strip()) for part in text.split("|"))


def resolve(obj: Any, parts: Parts) -> list[Any]:
    """Every value at the path's parts in ``obj`` (none when it is absent)."""
    values = [obj]
    for part in parts:
        values = [found for value in values for found in _inside(value, part)]
    return values


def first_found(obj: Any, text: str) -> list[Any]:
    """The values at the first path of ``text`` (``"a | b"``) that gives one that is neither
    null nor empty text; when none does, those of the last path, as they are."""
    alternatives = parse_alternatives(text)
    for parts in alternatives[:-1]:
        values = resolve(obj, parts)
        if any(value is not None and value != "" for value in values):
            return values
    return resolve(obj, alternatives[-1])


def _inside(value: Any, part: str | int) -> list[Any]:
    """The values one path part reaches from ``value``."""
    if isinstance(value, list):
        if part == "*":
            return value
        return [value[part]] if isinstance(part, int) and part < len(value) else []
    if isinstance(value, dict) and isinstance(part, str) and part in value:
        return [value[part]]
    return []
