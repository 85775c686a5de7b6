"""Trajectory screen: time to first paint and memory, a 10,000-step episode against a 10-step one.

The step list is virtual (it reads a window of steps around the cursor), so opening a long
episode should cost about what opening a short one does. One database holds both episodes;
each is opened in a fresh process (a headless ``run_test()`` app at 120x36): the time from
pushing the screen to the frame that shows its step list and first step's detail (median of
``--repeat`` openings after one warm-up), and the process's peak resident memory (``VmHWM``). Prints both
measures and their long/short ratios (target ≤ 1.5 for each).

    python bench/tui_open.py [--steps 10000] [--observation 400] [--repeat 11]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._tui import child_result, failed_runs  # noqa: E402
from store import Step, Task  # noqa: E402

CHILD = """
import asyncio, json, statistics, sys
from bench._tui import headless, peak_mb, seconds_to_frame
from tui.screens.trajectory import TrajectoryScreen

db, episode_id, warmup_id, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

async def open_once(app, pilot, eid):
    screen = TrajectoryScreen(app.session, eid)
    elapsed = await seconds_to_frame(pilot, screen, screen.painted.wait())
    assert screen.detail.step is not None and screen.step_list.has_row(0)
    app.pop_screen()
    await pilot.pause()
    return elapsed

async def main():
    async with headless(db) as (app, pilot):
        await open_once(app, pilot, warmup_id)
        times = [await open_once(app, pilot, episode_id) for _ in range(repeat)]
    print(json.dumps({"seconds": statistics.median(times), "peak_mb": peak_mb()}))

asyncio.run(main())
"""


def build(path: Path, long_steps: int, observation: int) -> None:
    """A database with a 10-step episode, a long one, and a warm-up episode."""
    rng = random.Random(0)
    words = ["the", "a", "kitchen", "thermometer", "pot", "water", "stove", "door", "sink"]
    task = Task(id="sw:boil:0", environment="sw", family="boil", instruction="boil")
    runs = (
        (
            episode_id,
            [
                Step(
                    episode_id=episode_id,
                    index=i,
                    kind="action",
                    thought="thinking " * 5,
                    action=f"go to room {i % 7}",
                    observation=" ".join(rng.choices(words, k=observation // 6)),
                    raw={"i": i},
                )
                for i in range(n)
            ],
        )
        for episode_id, n in (("warmup", 10), ("short", 10), ("long", long_steps))
    )
    failed_runs(path, task, runs)


def measure(db: Path, episode_id: str, repeat: int) -> dict[str, float]:
    return child_result(CHILD, str(db), episode_id, "warmup", str(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000, help="steps of the long episode")
    parser.add_argument("--observation", type=int, default=400, help="characters per observation")
    parser.add_argument("--repeat", type=int, default=11, help="openings measured per episode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        build(db, args.steps, args.observation)
        short = measure(db, "short", args.repeat)
        long = measure(db, "long", args.repeat)
    for name, n, result in (("short", 10, short), ("long", args.steps, long)):
        print(
            f"{name:>5} ({n:6,} steps): first paint {result['seconds'] * 1000:7.1f} ms, "
            f"peak RSS {result['peak_mb']:6.1f} MB"
        )
    for label, key in (("first paint", "seconds"), ("peak RSS", "peak_mb")):
        ratio = long[key] / short[key]
        verdict = "OK" if ratio <= 1.5 else "ABOVE TARGET"
        print(f"ratio long/short {label}: {ratio:.2f} (target <= 1.5) {verdict}")


if __name__ == "__main__":
    main()
