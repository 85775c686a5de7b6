"""The small protocol every environment adapter speaks, and what its plugin registers."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from store.records import Split
from workbench.envs.lexicon import GENERIC_MODES, PLAIN, Lexicon, MistakeMode


@dataclass(frozen=True)
class EnvTask:
    """One runnable task instance: a family and a variation of it in one split."""

    family: str
    variation: int
    split: Split

    @property
    def key(self) -> str:
        """Stable text key, e.g. ``boil:3``."""
        return f"{self.family}:{self.variation}"

    def task_id(self, environment: str) -> str:
        """The id its task is stored under: ``<environment>:<family>:<variation>``."""
        return f"{environment}:{self.key}"


@dataclass
class Reset:
    """What the agent sees when an episode starts."""

    instruction: str
    """The task description."""
    observation: str
    """The first observation."""
    info: dict[str, Any] = field(default_factory=dict)
    """Environment facts to record with the episode (variation, simulator version, ...)."""


@dataclass
class Transition:
    """What one action did."""

    observation: str
    reward: float
    done: bool
    score: float
    """The environment's running score."""
    info: dict[str, Any] = field(default_factory=dict)
    """Facts the world reports about the new state, recorded with the step (e.g.
    ``admissible``: the commands it accepts now, when it offers them cheaply)."""


class Environment(Protocol):
    """An interactive environment. Success is read from it, never from a model."""

    name: str
    """Environment name recorded on tasks (its plugin's name)."""

    step_limit: int
    """Most actions an episode may take."""

    def families(self) -> list[str]:
        """Task families (task types) the environment offers."""
        ...

    def tasks(self, family: str, split: Split) -> list[EnvTask]:
        """Task instances of a family in a split (the environment's own split)."""
        ...

    def reset(self, task: EnvTask, seed: int) -> Reset:
        """Start an episode of ``task``."""
        ...

    def step(self, action: str) -> Transition:
        """Take one action."""
        ...

    def success(self) -> bool:
        """Whether the current episode has solved its task (read from the simulator)."""
        ...

    def valid_actions(self) -> list[str]:
        """Actions the environment accepts now (may be expensive; call when needed)."""
        ...

    def look(self) -> str:
        """What the agent would see by looking around, without taking a step."""
        ...

    def inventory(self) -> str:
        """What the agent carries, without taking a step."""
        ...

    def gold_path(self) -> list[str]:
        """A known solution of the current task, when the environment offers one."""
        ...

    def close(self) -> None:
        """Release the environment (e.g. stop its JVM)."""
        ...


class GoldPaths(Protocol):
    """Where canonical gold paths are kept (``Store`` implements it)."""

    def gold_path(self, key: str) -> list[str] | None:
        """The path kept for ``key`` (a task id), if any."""
        ...

    def put_gold_path(self, key: str, actions: list[str]) -> list[str]:
        """Keep ``actions`` unless a path is already kept; return the kept one."""
        ...


class MemoryGoldPaths:
    """Gold paths kept in memory: canonical for one adapter's lifetime (when no store keeps
    them across episodes and processes)."""

    def __init__(self) -> None:
        self._paths: dict[str, list[str]] = {}

    def gold_path(self, key: str) -> list[str] | None:
        return self._paths.get(key)

    def put_gold_path(self, key: str, actions: list[str]) -> list[str]:
        return self._paths.setdefault(key, actions)


@dataclass(frozen=True)
class DocPassage:
    """One passage of a world's documentation, what Learn-by-interact proposes tasks from."""

    id: str
    """Stable id, e.g. ``task:boil`` or ``command:open``."""
    kind: str
    """``task`` (a documented goal, with the family it is played in), ``action`` (a command and
    what it does), ``object`` (something the world has) or ``intro`` (a game's opening text)."""
    text: str
    """The passage."""
    family: str = ""
    """For a ``task`` or ``intro`` passage, the family whose variations play it."""
    entities: tuple[str, ...] = ()
    """Objects the passage names (or, for a passage read from one variation, that variation's
    world holds), most relevant first, that tasks may recombine."""
    places: tuple[str, ...] = ()
    """Rooms and other locations the passage names or its variation's world has."""
    variation: int | None = None
    """For a passage read from one task instance (a variation's task description, a generated
    game's intro), that variation: a task proposed from it is played there. Always a train
    variation: synthesis never reads held-out tasks."""
    template: str = ""
    """For an ``action`` passage, the command it documents with ``OBJ`` in each object slot
    (``put OBJ on OBJ``)."""
    examples: tuple[str, ...] = ()
    """Commands the world accepts that the passage documents: for an ``action`` passage,
    commands of its template; for a passage read from one variation, commands on that
    variation's objects."""


@dataclass(frozen=True)
class EnvOptions:
    """What a run tells the environment it builds (the same in every worker)."""

    step_limit: int = 100
    """Most actions per episode (recorded with every episode)."""
    simplifications: str = ""
    """Variant of the world in the environment's own syntax; empty for the standard one."""
    gold_paths: GoldPaths | None = None
    """Where gold paths are kept canonical across episodes (the run's store), if anywhere."""
    cache_dir: str = ""
    """A folder the world may keep generated files in (games, indexes), beside the run's
    database; empty: the world picks a per-user cache folder."""


def user_cache_dir(world: str) -> Path:
    """The per-user folder a world keeps files in that no database owns (``$XDG_CACHE_HOME``
    or ``~/.cache``, then ``workbench/<world>``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "workbench" / world


@dataclass(frozen=True)
class EnvironmentPlugin:
    """What a package registers under the ``workbench.environments`` entry-point group.

    It is all the engine, the command line and the user interfaces know of a world: everything
    else goes through the :class:`Environment` that ``make`` returns. Building the plugin object
    must stay cheap (no simulator import): it is loaded to list families and defaults.
    """

    name: str
    """The name tasks are recorded under and ``--env`` chooses (the entry point's name)."""
    make: Callable[[EnvOptions], Environment]
    """Builds the environment of a run, of a worker or of a sandboxed check. A simulator
    behind it should start on first use: planning a run only lists tasks."""
    families: Callable[[], list[str]]
    """Its task families, read without starting a simulator."""
    demo_families: tuple[str, ...]
    """Families the demo, ``manual build`` and the terminal UI's rule building play."""
    demo_size: tuple[int, int] = (120, 40)
    """Episodes the demo plays on train and on test tasks of this world."""
    evolve_families: tuple[str, ...] = ()
    """Default stream and held-out families of ``workbench evolve`` (empty: the demo's)."""
    lexicon: Lexicon = PLAIN
    """How its actions and room texts read (roles, targets, exits, errors)."""
    mistake_modes: tuple[MistakeMode, ...] = GENERIC_MODES
    """The mistakes the scripted agent makes in it, in the order they are planned."""
    documentation: Callable[[EnvOptions, Sequence[str]], list[DocPassage]] | None = None
    """Its documentation as passages (task descriptions, command help, object help, game
    intros), read without starting a simulator, for the given families (empty: all of them);
    the options say where generated files may be kept (``cache_dir``). ``None``: the world
    documents nothing to synthesize from."""
    columns: Callable[[str, int], dict[str, str]] | None = None
    """What tables show of a task, from its family and variation (e.g. ``{"family":
    "tw-cooking", "level": "2", "seed": "17"}``); ``None``: family and variation."""

    def task_columns(self, family: str, variation: int) -> dict[str, str]:
        """The columns tables show for a task of this world."""
        if self.columns is None:
            return {"family": family, "variation": str(variation)}
        return self.columns(family, variation)

    def evolve_defaults(self) -> tuple[str, ...]:
        """The families ``workbench evolve`` learns and scores on when none are given."""
        return self.evolve_families or self.demo_families
