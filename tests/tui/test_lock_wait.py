"""A write from the terminal UI that finds the database locked by another writer is shown as a
notification, and goes through once the lock is free."""

from __future__ import annotations

import asyncio
import sqlite3

from store import Batch, Store
from tui.app import make_app

WAITING = "waiting for the database lock held by another writer"


async def test_a_write_that_waits_for_the_lock_says_so_and_then_goes_through(db_path):
    Store(db_path).close()
    app = make_app(db_path, poll_interval=0)
    async with app.run_test() as pilot:
        holder = sqlite3.connect(db_path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock

        def write() -> None:  # as a worker thread writes
            with app.session.pool.store() as store:
                store.put_batch(Batch(id="b", name="b", kind="import"))

        writing = asyncio.ensure_future(asyncio.to_thread(write))
        while not any(WAITING in str(n.message) for n in app._notifications):
            assert not writing.done()
            await pilot.pause(0.05)
        holder.execute("COMMIT")
        holder.close()
        await writing
    with Store(db_path) as store:
        assert store.batch("b") is not None
