"""Big synthetic import files, written fast: one-step episodes in the workbench's JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

TASKS = 50
"""Tasks a bulk file's episodes are spread over."""


def bulk_line(prefix: str, k: int, word: str, batch: str | None = None) -> str:
    """Episode ``k`` of a bulk file: id ``<prefix>-<k>``, one step whose action holds ``word``
    (so a search tells the file's steps apart), in ``batch`` (default ``<prefix>-batch``)."""
    task = f"{prefix}:t{k % TASKS}"
    batch = batch or f"{prefix}-batch"
    return json.dumps(
        {
            "format": "trajectory-workbench",
            "version": 1,
            "task": {"id": task, "environment": "bulk", "family": f"f{k % 5}", "split": "train"},
            "batch": {"id": batch, "name": batch, "kind": "import"},
            "episode": {
                "id": f"{prefix}-{k:07d}",
                "task_id": task,
                "agent": "bulk",
                "batch_id": batch,
                "outcome": {"success": k % 3 != 0, "message": ""},
                "source": {"path": "x", "format": "workbench", "hash": "h", "record": str(k)},
            },
            "steps": [{"index": 0, "kind": "action", "action": f"{word} {k}", "observation": "ok"}],
        }
    )


def write_bulk(
    path: Path,
    records: int,
    prefix: str = "bulk",
    word: str = "zebrafish",
    batch: str | None = None,
) -> Path:
    """A file of ``records`` bulk episodes (see :func:`bulk_line`)."""
    with open(path, "w") as handle:
        for k in range(records):
            handle.write(bulk_line(prefix, k, word, batch) + "\n")
    return path
