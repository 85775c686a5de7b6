"""Stores opened without a lock-wait hook of their own report their waits to the process's
hook: the CLI sets its line for every store a command opens, and a local pool's workers are
given the same hook."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Store, locks
from workbench.cli import main
from workbench.cli.options import lock_wait
from workbench.executors import LocalPool

SEEN: list[tuple[int, float]] = []
TOLD = threading.Event()


def remember(retry: int, waited: float) -> None:
    SEEN.append((retry, waited))
    TOLD.set()


@pytest.fixture
def process_hook() -> Iterator[None]:
    SEEN.clear()
    TOLD.clear()
    locks.report_waits(remember)
    yield
    locks.report_waits(None)


def test_a_store_without_a_hook_tells_the_processs_hook_and_goes_on(db_path: Path, process_hook):
    with Store(db_path) as store:
        holder = sqlite3.connect(db_path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        writer = threading.Thread(target=store.put_gold_path, args=("task", ["look around"]))
        writer.start()
        try:
            assert TOLD.wait(timeout=600), "the write never reported waiting"
        finally:
            holder.execute("COMMIT")
            holder.close()
        writer.join()
        assert store.gold_path("task") == ["look around"]
    assert SEEN[0][0] == 1 and store.locks.waits == len(SEEN)


def test_a_store_with_its_own_hook_tells_only_it(db_path: Path, process_hook):
    own = threading.Event()
    with Store(db_path, on_lock_wait=lambda retry, waited: own.set()) as store:
        holder = sqlite3.connect(db_path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        writer = threading.Thread(target=store.put_gold_path, args=("task", ["look"]))
        writer.start()
        try:
            assert own.wait(timeout=600)
        finally:
            holder.execute("COMMIT")
            holder.close()
        writer.join()
    assert SEEN == []


def test_a_local_pools_workers_get_the_processs_hook(process_hook):
    with LocalPool(1) as pool:
        assert pool._started().submit(locks.process_hook).result(timeout=600) is remember


def test_a_hook_a_worker_could_not_import_is_not_handed_over():
    locks.report_waits(lambda retry, waited: None)
    try:
        with LocalPool(1) as pool:
            assert pool._started().submit(locks.process_hook).result(timeout=600) is None
    finally:
        locks.report_waits(None)


def test_a_command_sets_the_cli_line_while_it_runs_and_leaves_none(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
):
    seen = []
    original = locks.report_waits

    def spy(hook):
        seen.append(hook)
        original(hook)

    monkeypatch.setattr("store.locks.report_waits", spy)
    Store(db_path).close()
    result = CliRunner().invoke(main, ["--db", str(db_path), "ls"])
    assert result.exit_code == 0, result.output
    assert seen == [lock_wait, None] and locks.process_hook() is None
