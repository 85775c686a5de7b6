"""Small HTML pieces the widgets share: escaped text, tables and status lines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

STATUS_COLOURS = {"ok": "#1a7f37", "error": "#cf222e", "warning": "#9a6700", "info": "#57606a"}


def text(value: object) -> str:
    """``value`` as escaped HTML text."""
    return escape(str(value))


def pre(value: str) -> str:
    """A preformatted, wrapping block of escaped text."""
    style = "white-space: pre-wrap; margin: 0.2em 0; font-family: monospace"
    return f'<pre style="{style}">{escape(value)}</pre>'


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw`` (then they are HTML already)."""
    cell = str if raw else text
    head = "".join(
        f"<th style='text-align:left; padding-right:1em'>{text(h)}</th>" for h in headers
    )
    body = "".join(
        "<tr>" + "".join(f"<td style='padding-right:1em'>{cell(c)}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def status(message: str, level: str = "info") -> str:
    """A one-line status message in the colour of its level."""
    return f"<span style='color:{STATUS_COLOURS[level]}'>{escape(message)}</span>"


def mark(passed: bool | None, yes: str = "pass", no: str = "fail") -> str:
    """``pass`` in green, ``fail`` in red, ``–`` when unknown."""
    if passed is None:
        return "–"
    return status(yes, "ok") if passed else status(no, "error")
