"""Whether a file is an AgentBench output, from a bounded read of its head."""

from __future__ import annotations

from pathlib import Path

from workbench.ingest.base import json_key

_SNIFF = (json_key("index"), json_key("output", "{"), json_key("history", "["))
_SNIFF_ERRORS = (json_key("index"), json_key("error"), json_key("info"), json_key("output"))


def sniff(path: Path, head: str) -> bool:
    """JSON lines of ``{"index", "output": {..., "history": [...]}}`` sample records, or an
    ``error.jsonl`` of them (``{"index", "error", "info", "output"}``)."""
    if not head.lstrip().startswith("{"):
        return False
    if all(p.search(head) for p in _SNIFF):
        return True
    return path.name == "error.jsonl" and all(p.search(head) for p in _SNIFF_ERRORS)


def companion_of(path: Path) -> str | None:
    """The file an ``overall.json`` is read with (``runs.jsonl`` or ``error.jsonl`` beside it),
    so a folder import says why it is not imported alone."""
    if path.name != "overall.json":
        return None
    beside = [name for name in ("runs.jsonl", "error.jsonl") if path.with_name(name).exists()]
    return " and ".join(beside) or None
