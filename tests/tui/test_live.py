"""Live data: episodes written by another process appear on the Runs screen."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tests.tui.conftest import SIZE, settle
from tui.app import make_app
from tui.screens.runs import RunsScreen
from tui.widgets.episode_table import EpisodeTable
from tui.widgets.run_summary import RunSummary

ROOT = Path(__file__).resolve().parents[2]

WRITER = """
import sys
from store import Episode, Outcome, Step, Store

store = Store(sys.argv[1])
for i in range(int(sys.argv[2])):
    eid = f"live-{i:03d}"
    store.add_episode(
        Episode(id=eid, task_id="scienceworld:boil:0", agent="scripted", batch_id="demo-train",
                outcome=Outcome(success=i % 2 == 0, score=100.0 if i % 2 == 0 else 0.0)),
        [Step(episode_id=eid, index=0, kind="observation", observation="fresh from a run"),
         Step(episode_id=eid, index=1, kind="action", action="go to kitchen")],
    )
store.close()
print("done")
"""


async def test_new_episodes_appear_while_a_writer_process_adds_them(tui_db):
    app = make_app(tui_db, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.query_one(EpisodeTable)
        assert len(table.ids) == 8
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tui_db), "40"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # the app keeps polling (and reading in its workers) while the writer commits
        out, err = await asyncio.get_running_loop().run_in_executor(None, writer.communicate)
        assert writer.returncode == 0, err
        assert out.strip() == "done" and "locked" not in err
        await settle(pilot)
        if len(table.ids) < 48:  # the poll timer has yet to notice the last commit
            screen.loaded.clear()
            await asyncio.wait_for(screen.loaded.wait(), timeout=600)
            await settle(pilot)
        assert len(table.ids) == 48
        assert {f"live-{i:03d}" for i in range(40)} <= set(table.ids)
        # failures first still: new failures sit before every success
        outcomes = [eid for eid in table.ids if eid.startswith("live-")]
        assert outcomes[:20] == [f"live-{i:03d}" for i in range(1, 40, 2)]
        line = screen.query_one(RunSummary).content.plain
        assert "48 episodes" in line and "25 failed" in line and "22 passed" in line
