"""What the synthesis tests share: one TextWorld game cache for the session (a game takes
seconds to generate, so the tests play the two games one family documents), the worlds'
documentation, and a database with heuristic proposals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from store import Store
from workbench.envs.base import EnvOptions
from workbench.envs.registry import environment_plugin, make_environment
from workbench.runner import cache_dir_beside
from workbench.synth.heuristic_proposer import HeuristicProposer
from workbench.synth.tasks import propose_tasks

COOKING = "tw-cooking-level1"
"""The TextWorld family the tests document and play (one room, a closed fridge)."""
BOIL = "boil"
"""A ScienceWorld family the tests document."""
LIVING = "find-living-thing"
"""The ScienceWorld family the tests play (its gold path, generated at reset, is quick)."""


@pytest.fixture(scope="session")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TextWorld game cache holding the games that document :data:`COOKING`."""
    folder = tmp_path_factory.mktemp("synth-games")
    environment_plugin("textworld").documentation(EnvOptions(cache_dir=str(folder)), [COOKING])
    return folder


def beside(db_path: Path, games: Path) -> None:
    """Put the session's games where a run on ``db_path`` looks for them."""
    shutil.copytree(games, cache_dir_beside(str(db_path)), dirs_exist_ok=True)


@pytest.fixture(scope="session")
def textworld_env(games: Path):
    """One TextWorld adapter on the session's games."""
    env = make_environment("textworld", EnvOptions(step_limit=12, cache_dir=str(games)))
    yield env
    env.close()


@pytest.fixture
def proposed(db_path: Path, games: Path) -> Path:
    """A database with heuristic proposals for :data:`LIVING` and :data:`COOKING` (seed 0)."""
    beside(db_path, games)
    with Store(db_path) as store:
        for env, family in (("scienceworld", LIVING), ("textworld", COOKING)):
            propose_tasks(store, env, 2, proposer=HeuristicProposer(), families=[family])
    return db_path
