"""Trajectory screen on a step whose observation is 200 MB, against one of 4 KB.

Before steps were read cut (``Store.cut_steps``), pressing ``e`` on such a step did not return
in five minutes. One database holds both episodes; each is opened in a fresh process (a
headless ``run_test()`` app at 120x36) at its long step: the time to the frame that shows the
step, then to the frames after ``e`` (expand) and ``]`` (the next window, read with
``Store.step_text``), and the process's peak resident memory (Linux: ``VmHWM``). Prints each measure and its
long/short ratio: memory stays that of a window of the text.

    python bench/tui_long_text.py [--mb 200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._tui import child_result, failed_runs  # noqa: E402
from store import Step, Task  # noqa: E402

CHILD = r"""
import asyncio, json, sys, time
from bench._tui import draw, headless, peak_mb
from tui.screens.trajectory import TrajectoryScreen

db, episode_id = sys.argv[1], sys.argv[2]

async def frame(pilot, screen):
    await pilot.app.workers.wait_for_complete()
    await draw(pilot, screen)

async def main():
    async with headless(db) as (app, pilot):
        screen = TrajectoryScreen(app.session, episode_id, start=1)
        started = time.perf_counter()
        await app.push_screen(screen)
        await screen.painted.wait()
        await frame(pilot, screen)
        opened = time.perf_counter()
        await pilot.press("e")
        await frame(pilot, screen)
        expanded = time.perf_counter()
        await pilot.press("right_square_bracket")
        await frame(pilot, screen)
        paged = time.perf_counter()
    print(json.dumps({
        "open": opened - started, "e": expanded - opened, "]": paged - expanded,
        "peak_mb": peak_mb(),
    }))

asyncio.run(main())
"""


def build(path: Path, mb: int) -> None:
    """Two episodes whose step 1 observes 200 MB (``long``) or 4 KB (``short``)."""
    line = "".join(f"{i % 10}" for i in range(79)) + "\n"
    task = Task(id="sw:t:0", environment="sw", family="t", instruction="read it")
    runs = (
        (
            episode_id,
            [
                Step(episode_id=episode_id, index=0, kind="action", action="cat big.log"),
                Step(
                    episode_id=episode_id,
                    index=1,
                    kind="observation",
                    observation=line * (size // len(line)),
                ),
                Step(episode_id=episode_id, index=2, kind="action", action="wait"),
            ],
        )
        for episode_id, size in (("short", 4_000), ("long", mb * 1_000_000))
    )
    failed_runs(path, task, runs)


def measure(db: Path, episode_id: str) -> dict[str, float]:
    return child_result(CHILD, str(db), episode_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="megabytes of the long observation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        build(db, args.mb)
        short = measure(db, "short")
        long = measure(db, "long")
    for key, unit in (("open", "s"), ("e", "s"), ("]", "s"), ("peak_mb", "MB")):
        print(
            f"{key:>7}: {args.mb} MB step {long[key]:8.2f} {unit}, 4 KB step "
            f"{short[key]:8.2f} {unit}, ratio {long[key] / short[key]:6.2f}"
        )


if __name__ == "__main__":
    main()
