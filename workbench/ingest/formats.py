"""The importers, in the order auto-detection tries them (most specific first)."""

from __future__ import annotations

from pathlib import Path

from workbench.ingest import (
    agentbench,
    atif,
    claude_code,
    codex,
    group_chat,
    inspect_log,
    jsonl,
    mini_swe_agent,
    openai_chat,
    openhands,
    otlp,
    react_text,
    swe_agent,
)
from workbench.ingest.base import Importer, IngestError

IMPORTERS: tuple[Importer, ...] = (
    jsonl,
    otlp,  # OTLP trace exports: their own resourceSpans/scopeSpans shape
    mini_swe_agent,  # before swe_agent and openai_chat: it has both "info" and "messages"
    swe_agent,
    inspect_log,
    atif,
    openhands,
    codex,
    agentbench,
    claude_code,  # JSON lines of single messages with Claude Code's session fields
    group_chat,  # messages naming their speaker, no tool calls: before openai_chat
    openai_chat,  # generic message lists: after every format that also carries messages
    react_text,  # plain text: last
)
"""Every importer; detection asks each in turn and takes the first that claims a file."""

HEAD_BYTES = 1 << 16


def by_name(name: str) -> Importer:
    """The importer called ``name``; raises ``KeyError`` listing the known names."""
    for importer in IMPORTERS:
        if importer.name == name:
            return importer
    raise KeyError(f"unknown format {name!r}; known formats: {', '.join(names())}")


def names() -> list[str]:
    """Names of all importers, in detection order."""
    return [importer.name for importer in IMPORTERS]


def head_of(path: Path) -> str:
    """The first 64 KiB of a file as text (undecodable bytes replaced, a byte order mark
    dropped)."""
    with open(path, "rb") as handle:
        return handle.read(HEAD_BYTES).decode("utf-8-sig", errors="replace")


def detect(path: Path) -> Importer:
    """The importer for ``path``; raises :class:`IngestError` when no format claims it."""
    head = head_of(path)
    for importer in IMPORTERS:
        if importer.sniff(path, head):
            return importer
    for importer in IMPORTERS:  # a file another one is read with (e.g. its summary)
        main = getattr(importer, "companion_of", lambda _: None)(path)
        if main:
            raise IngestError(path, "", "", f"read with {main} ({importer.name}), not alone")
    what = (
        "binary data, not a known trajectory format" if "\x00" in head else "cannot tell the format"
    )
    raise IngestError(path, "", "", f"{what}; pass --format (one of: {', '.join(names())})")
