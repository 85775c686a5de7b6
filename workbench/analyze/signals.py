"""Error signals any agent's log shows, whatever its world or format.

A world reads its own errors through its :class:`~workbench.envs.lexicon.Lexicon` (its
``error`` hook: ``No known action matches``, ``The door is not open``). Tool-using agents
meet errors every log writes alike: a tool result flagged ``is_error``, a text that starts
with ``Error:``, an exception or traceback, a non-zero exit code, an HTTP 4xx/5xx status;
and an agent may itself give up (``I cannot``, ``I'm unable to``). This module reads those,
each as a short class name so that clusters group them (the literal message never matters).
"""

from __future__ import annotations

import re

CRITICAL_REWARD = -50.0
"""A step reward at or below this is a critical failure (worlds that end a run on a fatal
action give −100)."""

TOOL_ERROR = "[tool error] "
"""Prefix the analyzer puts on a tool result its log flagged as an error (``is_error``)."""

_SIGNALS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tool error", re.compile(re.escape(TOOL_ERROR.strip()))),
    ("traceback", re.compile(r"^Traceback \(most recent call last\)", re.MULTILINE)),
    (
        "exception",
        re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Fault)\b(?::|$)", re.MULTILINE),
    ),
    ("error", re.compile(r"^\s*(?:error|fatal|failed|failure)\b\s*[:!\-]", re.I | re.MULTILINE)),
    ("error", re.compile(r'^\s*\{\s*"(?:error|errors)"\s*:(?!\s*(?:null|\[\]|""|false))')),
    (
        "exit code",
        re.compile(
            r"\b(?:exit(?:ed)?(?: with)?|return)\s*(?:code|status)\s*[:=]?\s*-?[1-9]\d*\b"
            r'|"?returncode"?\s*[:=]\s*-?[1-9]\d*',
            re.I,
        ),
    ),
    (
        "http error",
        re.compile(
            r"\bHTTP(?:/\d(?:\.\d)?)?\s*(?:error\s*)?[45]\d\d\b"
            r"|\bstatus(?:[ _]code)?\s*[:=]?\s*[45]\d\d\b"
            r"|\b[45]\d\d (?:Bad Request|Unauthorized|Forbidden|Not Found|Conflict"
            r"|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable)\b",
            re.I,
        ),
    ),
)
"""Signal classes of tool results and observations, tried in order."""

_REFUSAL = re.compile(
    r"\b(?:I\s+(?:cannot|can't|can not|am unable to|am not able to|won't be able to)(?!\s+wait\b)"
    r"|I'm\s+(?:unable to|not able to|sorry, but I can't)"
    r"|unfortunately,? I (?:can't|cannot))\b",
    re.I,
)
"""How an agent's reply says it gives up or refuses."""


def generic_error(text: str) -> str | None:
    """The class of error ``text`` (a tool result or observation) reports: ``tool error``,
    ``traceback``, ``exception``, ``error``, ``exit code`` or ``http error``; ``None`` when
    it reports none."""
    return next((name for name, pattern in _SIGNALS if pattern.search(text)), None)


def refusal(reply: str) -> str | None:
    """``refusal`` when an agent's text reply refuses or gives up, else ``None``."""
    return "refusal" if _REFUSAL.search(reply) else None
