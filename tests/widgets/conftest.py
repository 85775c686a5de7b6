"""Databases for the notebook widget tests: the terminal UI's realistic episodes and its
analysed / compiled repository, built once per session through the Store and copied for
each test (tests write to them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.tui.conftest import build, build_repository


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("widget-dbs")
    paths = {name: folder / f"{name}.db" for name in ("episodes", "analysed", "compiled")}
    build(paths["episodes"])
    build_repository(paths["analysed"], compiled=False)
    build_repository(paths["compiled"], compiled=True)
    return paths


def _copy(templates: dict[str, Path], name: str, tmp_path: Path) -> Path:
    return Path(shutil.copyfile(templates[name], tmp_path / f"{name}.db"))


@pytest.fixture
def episodes_db(templates: dict[str, Path], tmp_path: Path) -> Path:
    """ScienceWorld-like failed and successful episodes (and a 10,000-step one)."""
    return _copy(templates, "episodes", tmp_path)


@pytest.fixture
def analysed_db(templates: dict[str, Path], tmp_path: Path) -> Path:
    """An analysed boil family: two supported clusters, nothing compiled."""
    return _copy(templates, "analysed", tmp_path)


@pytest.fixture
def compiled_db(templates: dict[str, Path], tmp_path: Path) -> Path:
    """The analysed family with a spec, its attempts, an admitted skill and a staged rule."""
    return _copy(templates, "compiled", tmp_path)
