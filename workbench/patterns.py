"""Regular expressions that come from artifacts (rules, skills, subagents a model or a
heuristic wrote), evaluated with a time limit wherever an agent follows them.

Python's own ``re`` cannot be interrupted: one pathological pattern (nested repetition on a
long observation) can hold an episode for minutes. These helpers run the pattern with the
``regex`` engine, which reads ``re`` syntax the same way and stops a match past
:data:`PATTERN_SECONDS`, raising :class:`PatternTimeout` — a clear error that ends the episode
which met it (a broken artifact fails its episode; it never hangs it).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex

PATTERN_SECONDS = 0.5
"""Most seconds one artifact pattern may take on one text."""


class PatternTimeout(RuntimeError):
    """An artifact pattern ran past its time limit."""


@lru_cache(maxsize=4096)
def compiled(pattern: str) -> Any:
    """``pattern`` compiled once (``re`` syntax)."""
    return regex.compile(pattern)


def _run(method: str, pattern: str, text: str) -> Any:
    try:
        return getattr(compiled(pattern), method)(text, timeout=PATTERN_SECONDS)
    except TimeoutError:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        raise PatternTimeout(
            f"the artifact pattern {shown!r} ran past its {PATTERN_SECONDS:g} s limit"
        ) from None


def search(pattern: str, text: str) -> Any:
    """``re.search(pattern, text)``, with the time limit."""
    return _run("search", pattern, text)


def fullmatch(pattern: str, text: str) -> Any:
    """``re.fullmatch(pattern, text)``, with the time limit."""
    return _run("fullmatch", pattern, text)
