"""Small real synthesized episodes in both worlds, built once per session (for every test
folder: ``tests/conftest.py`` loads this module as a plugin), and copies of them.

``recorded_db``: a synth-workspace database with one ScienceWorld episode (the scripted agent
repeating an invalid command) and one TextWorld episode (taking a wrong exit and coming back),
played by the real simulators. ``constructed_db``: the same after backward construction with
the heuristic relabeler. ``filtered_db``: constructed, plus hand-made examples (a duplicate by
state, one whose claimed effect is tampered with, one whose actions are not its episode's),
then filtered — first interrupted after one replay, then run again to the end — with both
reports. Tests copy what they change (the database and the worlds' cache beside it).

For tasks and exploration: ``games``, a TextWorld game cache holding the two games that
document :data:`COOKING` (a game takes seconds to generate); ``textworld_env`` on it; and
``proposed``, a database with heuristic proposals for :data:`LIVING` and :data:`COOKING`.

For the faces (terminal UI, widgets): ``synthesized``, the whole pipeline on TextWorld —
tasks proposed from :data:`COOKING`'s documentation, a few explored, then (in a copy)
constructed backward and filtered.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from store import Store, SynthExample
from store.synth import SYNTH_WORKSPACE
from workbench.envs.base import Environment, EnvOptions
from workbench.envs.registry import environment_plugin, make_environment
from workbench.executors import InProcess
from workbench.progress import Cancelled
from workbench.runner import AgentSpec, EpisodeJob, Played, RunConfig, cache_dir_beside, run_batch
from workbench.synth.backward import construct, view_of
from workbench.synth.explore import explore
from workbench.synth.filters import FilterReport, filter_examples
from workbench.synth.heuristic_proposer import HeuristicProposer
from workbench.synth.heuristic_relabeler import HeuristicRelabeler
from workbench.synth.tasks import propose_tasks

SW_FAMILY = "find-living-thing"
TW_FAMILY = "tw-coin_collector-level2"


def copy_db(source: Path, folder: Path) -> Path:
    """A copy of a database and of the worlds' cache beside it, in ``folder``."""
    target = folder / source.name
    with sqlite3.connect(source) as origin, sqlite3.connect(target) as copy:
        origin.backup(copy)  # the write-ahead log too, whoever still holds it open
    cache = source.with_suffix(".cache")
    if cache.is_dir():
        shutil.copytree(cache, target.with_suffix(".cache"))
    return target


class ByWorld:
    """An executor playing each job in this process on the session's environment of its
    world (one JVM, one game cache for every test)."""

    def __init__(self, envs: dict[str, Environment]) -> None:
        self.players = {name: InProcess(env) for name, env in envs.items()}

    def run(self, jobs: list[EpisodeJob]) -> Iterator[tuple[EpisodeJob, Played | BaseException]]:
        for job in jobs:
            yield from self.players[job.config.env].run([job])

    def close(self) -> None:
        """The environments are the session's: nothing to close."""


@pytest.fixture(scope="session")
def worlds(scienceworld, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ByWorld]:
    games = tmp_path_factory.mktemp("synth-games")
    textworld = make_environment("textworld", EnvOptions(cache_dir=str(games)))
    yield ByWorld({"scienceworld": scienceworld, "textworld": textworld})
    textworld.close()


@pytest.fixture(scope="session")
def recorded_db(worlds: ByWorld, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synth-recorded") / "synth.db"
    runs = [
        RunConfig(
            env="scienceworld",
            families=[SW_FAMILY],
            episodes=1,
            seed=2,
            step_limit=10,
            agent=AgentSpec(rates={"repeat-invalid": 1.0}),
        ),
        RunConfig(
            env="textworld",
            families=[TW_FAMILY],
            episodes=1,
            seed=3,
            step_limit=6,
            agent=AgentSpec(rates={"wrong-object": 1.0}),
        ),
    ]
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        for config in runs:
            run_batch(store, config, executor=worlds, batch=f"explore-{config.env[:2]}")
    return path


@pytest.fixture(scope="session")
def constructed_db(recorded_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = copy_db(recorded_db, tmp_path_factory.mktemp("synth-constructed"))
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        construct(store, relabeler=HeuristicRelabeler())
    return path


@dataclass
class Filtered:
    path: Path
    interrupted: FilterReport | None
    """Set when the interrupted run returned instead of raising (it must not)."""
    pending_after_interrupt: int
    replays_after_interrupt: int
    report: FilterReport
    duplicate: int
    """The hand-made example that duplicates a constructed one by state."""
    original: int
    """The constructed example it duplicates."""
    tampered: int
    foreign: int


class CancelAfterFirst:
    """Progress that asks the job to stop once the first unit is done."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def start(self, total, description=""):
        pass

    def advance(self, amount=1, description=None):
        self.event.set()

    def finish(self):
        pass


def hand_made(store: Store) -> tuple[SynthExample, SynthExample, SynthExample, int]:
    """Three examples written next to the constructed ones: a span one idle step longer than a
    constructed one (same start and end states), one claiming an effect its actions never had,
    and one whose actions are not its episode's."""
    episode = next(e for e in store.episodes() if e.family == SW_FAMILY)
    view = view_of(store, episode.id)
    steps = {s.index: s for s in view.reading.steps}
    clean = [
        e
        for e in store.synth_examples(episode_id=episode.id, kind="backward")
        if all(not steps[i].refused for i in range(e.start, e.end + 1))
    ]
    original = next(
        e
        for e in clean
        if e.end + 1 in steps and not steps[e.end + 1].effects and not steps[e.end + 1].refused
    )
    longer, removed = view.case(original.start, original.end + 1, "summary")
    duplicate = view.example(longer, removed, "backward", "Act, then look.", "heuristic")
    target = next(e for e in clean if e.id != original.id)
    tampered = target.model_copy(
        update={"id": None, "kind": "whole", "effects": [*target.effects, "took golden key"]}
    )
    foreign = original.model_copy(
        update={"id": None, "kind": "whole", "actions": ["dance", *original.actions[1:]]}
    )
    assert original.id is not None
    return duplicate, tampered, foreign, original.id


@pytest.fixture(scope="session")
def filtered_db(
    constructed_db: Path, worlds: ByWorld, tmp_path_factory: pytest.TempPathFactory
) -> Filtered:
    path = copy_db(constructed_db, tmp_path_factory.mktemp("synth-filtered"))
    executor = worlds
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        duplicate, tampered, foreign, original = hand_made(store)
        duplicate, tampered, foreign = store.add_synth_examples([duplicate, tampered, foreign])
        stop = threading.Event()
        interrupted = None
        with contextlib.suppress(Cancelled):
            interrupted = filter_examples(
                store, executor=executor, progress=CancelAfterFirst(stop), cancel=stop
            )
        pending = store.synth_counts().get("pending", 0)
        replays = sum(1 for b in store.batches() if b.kind == "replay")
        report = filter_examples(store, executor=executor)
    return Filtered(
        path,
        interrupted,
        pending,
        replays,
        report,
        duplicate.id,
        original,
        tampered.id,
        foreign.id,
    )


# -- tasks and exploration --

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


# -- the whole pipeline, for the faces --

EXPLORED = 3
"""Tasks the faces' pipeline explores (a few short TextWorld episodes)."""


@dataclass(frozen=True)
class Synthesized:
    """One TextWorld synthesis, at two stages (each a database with its game cache beside)."""

    explored: Path
    """Tasks proposed from :data:`COOKING`'s documentation, :data:`EXPLORED` of them played
    by the explorer; no example yet."""
    filtered: Path
    """The same, constructed backward (heuristic relabeler) and filtered (replays played)."""


@pytest.fixture(scope="session")
def synthesized(
    games: Path, textworld_env, tmp_path_factory: pytest.TempPathFactory
) -> Synthesized:
    explored = tmp_path_factory.mktemp("synthesized-explored") / "workbench.db"
    beside(explored, games)
    with Store(explored) as store, InProcess(textworld_env) as executor:
        propose_tasks(store, "textworld", 2, proposer=HeuristicProposer(), families=[COOKING])
        explore(store, executor=executor, env="textworld", limit=EXPLORED, step_limit=10)
    filtered = copy_db(explored, tmp_path_factory.mktemp("synthesized-filtered"))
    with (
        Store(filtered, workspace=SYNTH_WORKSPACE) as synth,
        InProcess(textworld_env) as executor,
    ):
        construct(synth, relabeler=HeuristicRelabeler())
        filter_examples(synth, executor=executor)
    return Synthesized(explored, filtered)
