"""Shared fixtures: real SQLite files on disk, one per test; the scripted chat server and a
model client on it."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from store import Store
from tests.llm_server import ChatServer, serve
from workbench.llm import ChatClient

DATA = Path(__file__).parent / "data"

for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)
"""pytest-xdist's workers inherit ``COLUMNS=80``; rich would fix the CLI console's width to it
when the console is made, and the listing tests give each command its own terminal width."""

pytest_plugins = ("tests.synthesized",)
"""Real synthesized episodes and examples, built once per session for every test folder."""

settings.register_profile("workbench", deadline=None)
settings.load_profile("workbench")
"""No hypothesis deadline anywhere: examples touch SQLite files, and a loaded machine is slow."""


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Collect the session's garbage now and freeze what survives, before a pytest-xdist
    worker reports that it has finished.

    After that report the controller ends the worker through execnet, which waits 5 s, then
    sends the worker a SIGINT (and kills it 10 s later), while pytest's own last cleanup runs
    five full collections to flush unraisable exceptions. Over a whole session's heap on a
    loaded machine those took longer than 5 s, and the SIGINT's ``KeyboardInterrupt`` was
    raised in the only Python code a collection runs — hypothesis's gc callback — printing a
    traceback at the end of the run. Frozen objects are not scanned again, so those
    collections are quick; what this collection finds unraisable still reaches pytest."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Path of a fresh database file (not yet created)."""
    return tmp_path / "workbench.db"


@pytest.fixture
def store(db_path: Path) -> Store:
    """A fresh store on a real file in the test's temporary directory."""
    with Store(db_path) as opened:
        yield opened


@pytest.fixture
def data_dir() -> Path:
    """The folder of test input files (``tests/data``)."""
    return DATA


@pytest.fixture
def tau_compiled(db_path: Path) -> Path:
    """A database of the tau-bench results sample (``tests/data/openai-chat``) imported,
    analysed and compiled through the CLI: one rule staged from imported logs, its stored form
    holding the compiler's placeholder name and description."""
    from click.testing import CliRunner

    from workbench.cli import main

    for args in (
        ["import", str(DATA / "openai-chat" / "tau_results.json")],
        ["analyze"],
        ["compile"],
    ):
        done = CliRunner().invoke(main, ["--db", str(db_path), *args], catch_exceptions=False)
        assert done.exit_code == 0, done.output
    return db_path


@pytest.fixture(scope="session")
def scienceworld():
    """One real ScienceWorld simulator (one JVM) shared by the whole test session."""
    from workbench.envs.scienceworld import ScienceWorld

    env = ScienceWorld(step_limit=100)
    yield env
    env.close()


@pytest.fixture(scope="session")
def readme_example(tmp_path_factory: pytest.TempPathFactory):
    """README's Example played once on a fresh demo database: ``(folder, played commands)``;
    the database is ``folder / "workbench.db"``."""
    from tests.readme_example import play

    folder = tmp_path_factory.mktemp("readme-example")
    return folder, play(folder)


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A started chat-completions server on 127.0.0.1, stopped after the test."""
    yield from serve()


@pytest.fixture
def client(store: Store, chat_server: ChatServer) -> ChatClient:
    """A client of ``chat_server`` logging to the test's store (no pauses between retries)."""
    return ChatClient(
        store,
        model="test-model",
        api_key=chat_server.api_key,
        base_url=chat_server.base_url,
        backoff=0,
        timeout=300,  # a loaded machine answers late; nothing here measures speed
    )


@pytest.fixture(scope="session")
def scienceworld_runs(scienceworld, tmp_path_factory: pytest.TempPathFactory):
    """Real ScienceWorld episodes with seeded mistakes, analysed and compiled
    (:data:`tests.recorded_runs.SCIENCEWORLD`)."""
    from tests.recorded_runs import SCIENCEWORLD, record

    path = tmp_path_factory.mktemp("scienceworld-runs") / "workbench.db"
    return record(scienceworld, "scienceworld", path, SCIENCEWORLD)


@pytest.fixture(scope="session")
def textworld_runs(tmp_path_factory: pytest.TempPathFactory):
    """Real TextWorld episodes with seeded mistakes, analysed and compiled
    (:data:`tests.recorded_runs.TEXTWORLD`); its games are generated beside the database."""
    from tests.recorded_runs import TEXTWORLD, record
    from workbench.envs.base import EnvOptions
    from workbench.envs.registry import make_environment
    from workbench.runner import cache_dir_beside

    path = tmp_path_factory.mktemp("textworld-runs") / "workbench.db"
    options = EnvOptions(step_limit=60, cache_dir=cache_dir_beside(path))
    env = make_environment("textworld", options)
    try:
        return record(env, "textworld", path, TEXTWORLD)
    finally:
        env.close()
