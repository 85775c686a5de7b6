"""Every claimed format read right on real public files (issue 43, point 1).

The files are in ``tests/data/real/`` (origin, licence and how each was cut in its README);
what a person reading them says they hold is in :mod:`tests.ingest.real_expectations`. Each
file is imported on its own, format detected, into its own store; then per file its format
and episode count, and per episode its outcome, step count, task instruction, tool calls and
speakers are checked. What the importers get wrong today is marked there, per check, as an
expected failure naming the point of issue 43 that covers it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store import Store
from tests.ingest.real_expectations import (
    FILES,
    REAL,
    EpisodeExpect,
    RealFile,
    calls_kept,
    file_episodes,
    instruction_kept,
    outcome_right,
    speaker_kept,
    steps_right,
)
from workbench.ingest import formats, import_paths

Imported = dict[tuple[str, bool], Store]


@pytest.fixture(scope="module")
def imported() -> Iterator[Imported]:
    """Stores of the real files, each imported once when first asked for (with its results
    file or without)."""
    stores: Imported = {}
    yield stores
    for store in stores.values():
        store.close()


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("real")


def _store(imported: Imported, real: RealFile, tmp: Path, results: bool) -> Store:
    key = (real.path, results)
    if key not in imported:
        store = Store(tmp / f"{len(imported)}.db")
        imported[key] = store
        import_paths(store, [real.full_path], results=real.results_path if results else None)
    return imported[key]


def _marked(aspect: str, reasons: dict[str, str]) -> pytest.MarkDecorator | tuple[()]:
    reason = reasons.get(aspect)
    return pytest.mark.xfail(strict=True, reason=reason) if reason else ()


def _file_params(aspect: str) -> list:
    return [pytest.param(real, id=real.path, marks=_marked(aspect, real.xfail)) for real in FILES]


def _episode_params(aspect: str) -> list:
    return [
        pytest.param(
            real,
            number,
            expect,
            id=f"{real.path}#{number}",
            marks=_marked(aspect, expect.xfail),
        )
        for real in FILES
        for number, expect in enumerate(real.episodes)
    ]


def test_every_claimed_format_has_real_files() -> None:
    """The corpus holds at least one real file of each format it can (README's table says
    which formats still have fewer than two, and why)."""
    covered = {real.format for real in FILES}
    assert covered <= set(formats.names())
    assert all(real.full_path.is_file() for real in FILES)
    assert (REAL / "README.md").is_file()


@pytest.mark.parametrize("real", _file_params("format"))
def test_format_is_detected(real: RealFile) -> None:
    assert formats.detect(real.full_path).name == real.format


@pytest.mark.parametrize("real", _file_params("episodes"))
def test_episode_count(real: RealFile, imported: Imported, tmp: Path) -> None:
    store = _store(imported, real, tmp, results=False)
    assert len(file_episodes(store, real)) == len(real.episodes)


def _episode(imported: Imported, real: RealFile, number: int, tmp: Path, results: bool = False):
    store = _store(imported, real, tmp, results=results)
    episodes = file_episodes(store, real)
    assert len(episodes) == len(real.episodes)
    return store, episodes[number]


@pytest.mark.parametrize(("real", "number", "expect"), _episode_params("outcomes"))
def test_outcome(
    real: RealFile, number: int, expect: EpisodeExpect, imported: Imported, tmp: Path
) -> None:
    """Succeeded, failed or unknown as the file (or its report, given as ``--results``)
    states it."""
    _, episode = _episode(imported, real, number, tmp, results=bool(real.results))
    assert outcome_right(episode, expect), episode.outcome


@pytest.mark.parametrize(("real", "number", "expect"), _episode_params("steps"))
def test_step_count(
    real: RealFile, number: int, expect: EpisodeExpect, imported: Imported, tmp: Path
) -> None:
    """Counted as ``real.steps_rule`` says (README's mapping of that format to steps)."""
    _, episode = _episode(imported, real, number, tmp)
    assert steps_right(episode, expect), episode.n_steps


@pytest.mark.parametrize(("real", "number", "expect"), _episode_params("instruction"))
def test_instruction_is_kept(
    real: RealFile, number: int, expect: EpisodeExpect, imported: Imported, tmp: Path
) -> None:
    store, episode = _episode(imported, real, number, tmp)
    assert instruction_kept(store, episode, expect), store.task(episode.task_id)


@pytest.mark.parametrize(("real", "number", "expect"), _episode_params("calls"))
def test_tool_calls_keep_their_arguments(
    real: RealFile, number: int, expect: EpisodeExpect, imported: Imported, tmp: Path
) -> None:
    store, episode = _episode(imported, real, number, tmp)
    assert calls_kept(store.steps(episode.id), expect)


@pytest.mark.parametrize(("real", "number", "expect"), _episode_params("speaker"))
def test_speaker_is_kept(
    real: RealFile, number: int, expect: EpisodeExpect, imported: Imported, tmp: Path
) -> None:
    """The speakers the file has: each step's role, and the named agent where the file
    names one (a sub-agent's transcript)."""
    store, episode = _episode(imported, real, number, tmp)
    assert speaker_kept(store.steps(episode.id), expect)
