"""Manual screen: time to first paint on a 2,000-line manual against a 20-line one.

The manual is formulated (heuristic formulator) from enough Builder rules to be about
``--lines`` lines long; the baseline is a manual of that manual's first 20 lines. Each
database is opened in a fresh process (a headless ``run_test()`` app at 120x36): the time
from pushing the Manual screen to the frame that shows its manual (median of ``--repeat``
openings after one warm-up). The screen shows a long manual a part at a time
(``tui.widgets.manual_view``), so the long one should open about as fast as the short one:
prints both and their ratio (target: under a second, ratio ≤ 2).

    python bench/manual_open.py [--lines 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._tui import child_result  # noqa: E402
from store import Manual, Store  # noqa: E402
from workbench.manual.formulate import formulate  # noqa: E402
from workbench.manual.heuristic import HeuristicFormulator  # noqa: E402
from workbench.manual.operations import OPERATIONS, apply  # noqa: E402

CHILD = """
import asyncio, json, statistics, sys
from bench._tui import headless, seconds_to_frame
from tui.screens.manual import ManualScreen

db, repeat = sys.argv[1], int(sys.argv[2])

async def loaded(pilot, screen):
    while not screen.loaded:  # the manual (its first part) is mounted
        await pilot.pause()

async def open_once(app, pilot):
    screen = ManualScreen(app.session)
    elapsed = await seconds_to_frame(pilot, screen, loaded(pilot, screen))
    app.pop_screen()
    await pilot.pause()
    return elapsed

async def main():
    async with headless(db) as (app, pilot):
        await open_once(app, pilot)
        times = [await open_once(app, pilot) for _ in range(repeat)]
    print(json.dumps({"seconds": statistics.median(times)}))

asyncio.run(main())
"""

SCENARIOS = ["boil", "melt", "freeze", "thermometer", "conductivity", "living-thing"]
TYPES = ["Corrected Error", "Success Process", "Useful Helper Method"]


def rule(i: int) -> dict:
    """A Builder rule of the shape the heuristic Builder writes."""
    scenario = SCENARIOS[i % len(SCENARIOS)]
    return {
        "op": "write_rule",
        "type": TYPES[i % len(TYPES)],
        "content": f"In {scenario} tasks: look at the room before acting on object {i}, and "
        "check each action's result before going on.",
        "example": f"go to kitchen\nlook around\nfocus on object {i}",
        "validation_logs": [f"ep-{i}@{i % 7}", f"ep-{i + 1}"],
    }


def build(long: Path, short: Path, lines: int) -> int:
    """A database whose manual is about ``lines`` lines long, and one whose manual is that
    manual's first 20 lines; the long manual's length."""
    rules = max(1, lines // 22)  # a rule takes about 22 lines with its evidence
    with Store(long) as store:
        apply(store, OPERATIONS.validate_python([rule(i) for i in range(rules)]), "bench", "ep")
        markdown = formulate(store, HeuristicFormulator()).markdown
    with Store(short) as store:
        head = "".join(markdown.splitlines(keepends=True)[:20])
        store.add_manual(Manual(version=1, markdown=head, reasoner="heuristic"))
    return len(markdown.splitlines())


def measure(db: Path, repeat: int) -> float:
    return child_result(CHILD, str(db), str(repeat))["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000, help="lines of the long manual")
    parser.add_argument("--repeat", type=int, default=5, help="openings measured per manual")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        long, short = Path(tmp) / "long.db", Path(tmp) / "short.db"
        n = build(long, short, args.lines)
        short_s = measure(short, args.repeat)
        long_s = measure(long, args.repeat)
    print(f"   20-line manual: first paint {short_s * 1000:7.1f} ms")
    print(f"{n:5,}-line manual: first paint {long_s * 1000:7.1f} ms")
    ratio = long_s / short_s
    verdict = "OK" if long_s < 1.0 and ratio <= 2 else "ABOVE TARGET"
    print(f"ratio long/short: {ratio:.2f} (target: under 1 s, ratio <= 2) {verdict}")


if __name__ == "__main__":
    main()
