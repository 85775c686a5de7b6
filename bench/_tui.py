"""What the terminal UI benchmarks share: a measuring script run in a fresh process and, in
that process, the app opened headless, a screen's frame drawn and the peak memory read.

A benchmark builds its database of failed runs (:func:`failed_runs`), then runs its script
with :func:`child_result`; the script runs at the project root, imports the rest of this
module as ``bench._tui`` and prints its measures as one JSON object on its last line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from store import Batch, Episode, Outcome, Step, Store, Task

ROOT = Path(__file__).resolve().parents[1]
SIZE = (120, 36)
"""Terminal size of every measured app."""


def failed_runs(path: Path, task: Task, runs: Iterable[tuple[str, list[Step]]]) -> None:
    """Write to ``path``, in one transaction, ``task`` and a failed run of it by agent
    ``bench`` (batch ``bench``) for each ``(episode id, steps)`` of ``runs``."""
    with Store(path) as store, store.transaction():
        store.put_batch(Batch(id="bench", name="bench", kind="run"))
        store.put_task(task)
        for episode_id, steps in runs:
            episode = Episode(
                id=episode_id,
                task_id=task.id,
                agent="bench",
                batch_id="bench",
                outcome=Outcome(success=False),
            )
            store.add_episode(episode, steps)


def child_result(script: str, *args: str) -> dict[str, float]:
    """Run ``script`` (Python source) with ``args`` in a fresh interpreter at the project
    root; the JSON object its last line printed."""
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@asynccontextmanager
async def headless(db: str) -> AsyncIterator[tuple[Any, Any]]:
    """``(app, pilot)``: the app on ``db`` running headless at :data:`SIZE`, live polling off,
    its start-up work done."""
    from tui.app import make_app  # imported in the measured process only, never the parent's

    app = make_app(db, poll_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        yield app, pilot


async def draw(pilot: Any, screen: Any) -> None:
    """Let ``screen``'s pending layout and refresh messages be handled, then draw its frame."""
    await pilot._wait_for_screen()
    screen._on_timer_update()


async def seconds_to_frame(pilot: Any, screen: Any, ready: Awaitable[object]) -> float:
    """Seconds from pushing ``screen`` to its drawn frame, once ``ready`` (awaited after the
    push) has seen it hold what is measured."""
    started = time.perf_counter()
    await pilot.app.push_screen(screen)
    await ready
    await draw(pilot, screen)
    return time.perf_counter() - started


def peak_mb() -> float:
    """This process's peak resident memory in MB (Linux: ``VmHWM``). Not ``ru_maxrss``: it
    keeps the peak of the parent that started the process (a benchmark that built a large
    database) across the ``exec``."""
    with open("/proc/self/status") as status:
        found = re.search(r"VmHWM:\s+(\d+)", status.read())
    assert found is not None
    return int(found.group(1)) / 1024
