"""The one matcher of regular expressions that somebody else wrote: patterns of artifacts
(rules, skills, subagents a model or a heuristic wrote) wherever an agent follows them, and
the patterns of a user's mapping file (``workbench import --map``) on every line of a log.

Python's own ``re`` cannot be interrupted: one pathological pattern (nested repetition on a
long line) can hold a process for minutes. These helpers run the pattern with the ``regex``
engine, which reads ``re`` syntax the same way and stops a match past
:data:`PATTERN_SECONDS`, raising :class:`PatternTimeout` — a clear error that ends what met it
(a broken artifact fails its episode, a broken mapping its file; neither hangs).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex

PATTERN_SECONDS = 0.5
"""Most seconds one pattern may take on one text."""


class PatternTimeout(RuntimeError):
    """A pattern ran past its time limit."""


@lru_cache(maxsize=4096)
def compiled(pattern: str) -> Any:
    """``pattern`` compiled once (``re`` syntax)."""
    return regex.compile(pattern)


def error(pattern: str) -> str | None:
    """Why ``pattern`` is not a regular expression this matcher runs; ``None`` if it is."""
    try:
        compiled(pattern)
    except regex.error as problem:
        return str(problem)
    return None


def _run(method: str, pattern: str, text: str) -> Any:
    try:
        return getattr(compiled(pattern), method)(text, timeout=PATTERN_SECONDS)
    except TimeoutError:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        raise PatternTimeout(
            f"the pattern {shown!r} ran past its {PATTERN_SECONDS:g} s limit"
            f" (on a text of {len(text):,} characters)"
        ) from None


def search(pattern: str, text: str) -> Any:
    """``re.search(pattern, text)``, with the time limit."""
    return _run("search", pattern, text)


def fullmatch(pattern: str, text: str) -> Any:
    """``re.fullmatch(pattern, text)``, with the time limit."""
    return _run("fullmatch", pattern, text)
