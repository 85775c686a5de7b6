"""TextWorld (PyPI ``textworld==1.7.0``): text adventures generated from a seed by TextWorld's
own challenge generators, played in-process (one Z-machine per adapter, reused).

Families carry their difficulty level, TextWorld-style (``tw-cooking-level2``); a task's
variation is the game seed, and each split is its own range of seeds (:data:`SPLITS`), so a
test game is never a training game. The levels (:data:`LEVELS`) are chosen for small games an
offline scripted agent finishes in a few steps:

- ``tw-cooking``: 1 = one room (the kitchen), one ingredient to take out of a closed container
  (``--recipe 1 --take 1 --go 1 --open``); 2 = six rooms behind closed doors, the ingredient is
  also to be cooked and cut (``--go 6 --cook --cut``); 3 = as 2 with two ingredients
  (``--recipe 2 --take 2``). The split also picks the generator's own food split (train foods
  for train seeds, unseen foods or preparations for dev and test), as ``tw-make --split`` does.
- ``tw-treasure_hunter``: 1, 2, 3 = the generator's levels 1, 5 and 12 (five open rooms and a
  one- or three-step quest; then ten rooms with closed doors and containers).
- ``tw-coin_collector``: 1, 2, 3 = the generator's levels 2, 5 and 105 (a chain of two and
  five rooms; ten rooms with dead-end distractors).

Games are generated once per family and seed into the run's cache folder (beside its
database) and reused. A game is written to a temporary folder and renamed into place, so
parallel workers never read half a game, and a manifest of its files' hashes is checked on
every use: a damaged cached game is regenerated, never played. The same seed gives the same
game everywhere: each game is generated in a child process with a fixed ``PYTHONHASHSEED``
(TextWorld's generators iterate over sets), and the story file then differs between
compilations only in its serial number (the compile date), which :func:`game_hash` masks.

Success is the game's ``won``; the score is the game's own points (``max_score`` is recorded
with the episode). Losing (e.g. burning an ingredient) ends the episode.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from store.records import Split
from workbench.envs.base import (
    DocPassage,
    EnvironmentPlugin,
    EnvOptions,
    EnvTask,
    GoldPaths,
    MemoryGoldPaths,
    Reset,
    Transition,
    user_cache_dir,
)
from workbench.envs.lexicon import Exit, Lexicon, MistakeMode, Role, Scene

DEFAULT_STEP_LIMIT = 50

_COOKING = {"recipe": 1, "take": 1, "go": 1, "open": True, "cook": False, "cut": False}
LEVELS: dict[str, dict[int, dict[str, Any]]] = {
    "tw-cooking": {
        1: _COOKING,
        2: {**_COOKING, "go": 6, "cook": True, "cut": True},
        3: {**_COOKING, "recipe": 2, "take": 2, "go": 6, "cook": True, "cut": True},
    },
    "tw-treasure_hunter": {1: {"level": 1}, 2: {"level": 5}, 3: {"level": 12}},
    "tw-coin_collector": {1: {"level": 2}, 2: {"level": 5}, 3: {"level": 105}},
}
"""The generator settings of each challenge's levels (``tw-make <challenge>`` options)."""

SPLITS: dict[str, range] = {
    "train": range(0, 1000),
    "dev": range(1000, 1500),
    "test": range(1500, 2000),
}
"""The game seeds of each split (disjoint)."""

_FOOD_SPLIT = {"train": "train", "dev": "valid", "test": "test"}
_FAMILY = re.compile(r"^(tw-\w+)-level(\d+)$")
_DOOR_NOUNS = ("door", "portal", "gate", "passageway", "gateway", "hatch")
"""What TextWorld calls its doors (the grammars' door nouns; cooking doors are all ``door``)."""


@cache
def families() -> list[str]:
    """Every family, ``<challenge>-level<N>`` (no TextWorld import)."""
    return [f"{name}-level{level}" for name, levels in LEVELS.items() for level in levels]


def parse_family(family: str) -> tuple[str, int]:
    """The challenge and level a family names.

    Raises:
        ValueError: the challenge or its level is unknown (the message lists the valid ones).
    """
    found = _FAMILY.match(family)
    if family in LEVELS:
        named = ", ".join(f"{family}-level{n}" for n in LEVELS[family])
        raise ValueError(f"{family} needs a level: {named}")
    if found is None or found.group(1) not in LEVELS:
        raise ValueError(f"unknown TextWorld family {family!r}; known: {', '.join(families())}")
    challenge, level = found.group(1), int(found.group(2))
    if level not in LEVELS[challenge]:
        known = ", ".join(str(n) for n in LEVELS[challenge])
        raise ValueError(f"{challenge} has no level {level}; levels: {known}")
    return challenge, level


def split_of(seed: int) -> str:
    """The split whose seed range holds ``seed``.

    Raises:
        ValueError: no split holds it.
    """
    for split, seeds in SPLITS.items():
        if seed in seeds:
            return split
    raise ValueError(f"TextWorld seed {seed} is in no split; {_ranges()}")


def _ranges() -> str:
    return ", ".join(f"{s} {r.start}-{r.stop - 1}" for s, r in SPLITS.items())


def columns(family: str, variation: int) -> dict[str, str]:
    """What tables show of a task: its challenge, level and seed."""
    found = _FAMILY.match(family)
    if found is None:
        return {"family": family, "variation": str(variation)}
    return {"family": found.group(1), "level": found.group(2), "seed": str(variation)}


# -- the game cache ----------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """The per-user cache used when a run names no folder."""
    return user_cache_dir("textworld")


def game_hash(z8: bytes) -> str:
    """A story file's hash without its serial number (header bytes 0x12-0x17, the date it was
    compiled), the same wherever and whenever the game is generated."""
    return hashlib.sha256(z8[:0x12] + b"\0" * 6 + z8[0x18:]).hexdigest()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Game:
    """A generated game in the cache."""

    folder: Path
    """Its folder (``game.z8``, ``game.json`` and ``manifest.json``)."""
    manifest: dict[str, Any]
    """What was recorded at generation: file hashes, ``game_hash``, settings."""

    @property
    def z8(self) -> Path:
        """The story file TextWorld plays (its ``game.json`` beside it)."""
        return self.folder / "game.z8"


class GameCache:
    """Generated games by family and seed under ``root``, generated on first use."""

    FILES = ("game.z8", "game.json")

    def __init__(self, root: str | Path = "") -> None:
        self.root = Path(root) if root else default_cache_dir()

    def folder(self, family: str, seed: int) -> Path:
        """Where the game of ``family`` and ``seed`` is kept."""
        return self.root / f"textworld-{_version()}" / family / str(seed)

    def game(self, family: str, seed: int) -> Game:
        """The game of ``family`` and ``seed``, generated unless a sound copy is cached.

        Raises:
            ValueError: it cannot be generated there (the message names the folder).
        """
        folder = self.folder(family, seed)
        found = self.verified(folder)
        if found is None:
            try:
                if folder.exists():
                    shutil.rmtree(folder)  # damaged: never played
                self._generate(family, seed, folder)
            except OSError as exc:
                raise ValueError(f"cannot keep TextWorld games in {self.root}: {exc}") from None
            found = self.verified(folder)
        if found is None:
            raise ValueError(f"the cached TextWorld game {folder} is damaged; delete the folder")
        return found

    def verified(self, folder: Path) -> Game | None:
        """The game in ``folder`` when its files match its manifest, else ``None``."""
        try:
            manifest = json.loads((folder / "manifest.json").read_text())
            if all(_sha(folder / name) == manifest["files"][name] for name in self.FILES):
                return Game(folder, manifest)
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None

    def _generate(self, family: str, seed: int, folder: Path) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{seed}-", dir=folder.parent))
        try:
            settings = generate(family, seed, work / "game.z8")
            files = {name: _sha(work / name) for name in self.FILES}
            manifest = {
                "family": family,
                "seed": seed,
                "settings": settings,
                "files": files,
                "game_hash": game_hash((work / "game.z8").read_bytes()),
            }
            (work / "manifest.json").write_text(json.dumps(manifest, indent=1))
            with contextlib.suppress(OSError):  # another worker renamed its copy first
                os.rename(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def generate(family: str, seed: int, path: Path) -> dict[str, Any]:
    """Run :func:`make_game` in this process's generating child (:class:`_Generator`), which
    runs with a fixed ``PYTHONHASHSEED``: TextWorld's generators iterate over sets (the cooking
    game's losing conditions, the grammar's exclusions), so the story file would otherwise
    differ from process to process.

    Raises:
        ValueError: the generator failed (its last error line).
    """
    with _GENERATOR_LOCK:
        global _generator
        if _generator is None or not _generator.alive():
            _generator = _Generator()
        return _generator.make(family, seed, path)


class _Generator:
    """A child process that generates games on request, one JSON line each way. It is started
    once and kept: starting Python and loading TextWorld's grammars costs more than making a
    small game. It exits when this process closes its input."""

    def __init__(self) -> None:
        command = [sys.executable, "-W", "ignore", "-m", __name__, "--serve"]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.process = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def alive(self) -> bool:
        """Whether the child still runs."""
        return self.process.poll() is None

    def make(self, family: str, seed: int, path: Path) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps([family, seed, str(path)]) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except OSError as exc:
            raise ValueError(f"TextWorld could not generate {family} seed {seed}: {exc}") from None
        if not line:
            code = self.process.wait()
            raise ValueError(
                f"TextWorld could not generate {family} seed {seed}: its generator exited ({code})"
            )
        answer = json.loads(line)
        if "error" in answer:
            raise ValueError(
                f"TextWorld could not generate {family} seed {seed}: {answer['error']}"
            )
        return answer["settings"]


_GENERATOR_LOCK = threading.Lock()
_generator: _Generator | None = None


def serve() -> None:
    """The generating child's loop: ``[family, seed, path]`` in, ``{"settings"}`` or
    ``{"error"}`` out, one line each, until its input closes. Answers go to the original
    standard output; anything the generator or its compilers print goes to standard error."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        family, seed, path = json.loads(line)
        try:
            answer: dict[str, Any] = {"settings": make_game(family, seed, Path(path))}
        except Exception as exc:  # the parent reports it as one line
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            answer = {"error": f"{type(exc).__name__}: {lines[-1]}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def make_game(family: str, seed: int, path: Path) -> dict[str, Any]:
    """Generate and compile the game of ``family`` and ``seed`` to ``path`` (a ``.z8``, its
    ``.json`` beside it) with TextWorld's own challenge generator; the settings used."""
    import textworld
    import textworld.challenges
    from textworld.generator import compile_game

    challenge, level = parse_family(family)
    settings = dict(LEVELS[challenge][level])
    if challenge == "tw-cooking":
        settings |= {"drop": False, "recipe_seed": 0, "split": _FOOD_SPLIT[split_of(seed)]}
    options = textworld.GameOptions()
    options.seeds = seed
    options.path = str(path)
    options.file_ext = ".z8"
    options.force_recompile = True
    _, make, _ = textworld.challenges.CHALLENGES[challenge]
    compile_game(make(settings=dict(settings), options=options), options)
    return settings


@cache
def _version() -> str:
    from importlib.metadata import version

    return version("textworld")


# -- the adapter -------------------------------------------------------------------------------

_PROMPT = re.compile(r"\s*>[^\n]*\Z")
"""The prompt and status line (``>   -= Kitchen =-0/3``) that end each feedback."""


def clean(feedback: str) -> str:
    """A feedback without the trailing prompt and status line."""
    return _PROMPT.sub("", feedback or "").strip()


def first_observation(feedback: str, objective: str) -> str:
    """The first feedback without TextWorld's ASCII-art banner and the objective under it."""
    text = clean(feedback)
    if objective and objective in text:
        return text.split(objective, 1)[1].strip()
    lines = text.splitlines()
    last_art = max((i for i, line in enumerate(lines) if "$$" in line), default=-1)
    return "\n".join(lines[last_art + 1 :]).strip()


class TextWorld:
    """Adapter over a ``textworld.start`` game implementing :class:`Environment`.

    Args:
        step_limit: most actions per episode (recorded with every episode).
        gold_paths: where canonical gold paths are kept (default: this adapter's memory).
        cache_dir: where generated games are kept (empty: the per-user cache).
    """

    name = "textworld"

    def __init__(
        self,
        step_limit: int = DEFAULT_STEP_LIMIT,
        gold_paths: GoldPaths | None = None,
        cache_dir: str = "",
    ) -> None:
        self.step_limit = step_limit
        self.games = GameCache(cache_dir)
        self._gold_paths = gold_paths or MemoryGoldPaths()
        self._env: Any = None
        self._loaded: Path | None = None
        self._state: Any = None
        self._gold: list[str] = []

    # -- catalogue ----------------------------------------------------------------------------

    def families(self) -> list[str]:
        return families()

    def tasks(self, family: str, split: Split) -> list[EnvTask]:
        parse_family(family)
        return [EnvTask(family, seed, split) for seed in SPLITS.get(split, ())]

    def check(self, task: EnvTask) -> None:
        """Raise a one-line ``ValueError`` when ``task`` is no task of this world."""
        parse_family(task.family)
        seeds = SPLITS.get(task.split)
        if seeds is None:
            raise ValueError(f"TextWorld has no {task.split!r} split; {_ranges()}")
        if task.variation not in seeds:
            raise ValueError(
                f"seed {task.variation} is outside the {task.split} seeds of {task.family} "
                f"({seeds.start}-{seeds.stop - 1})"
            )

    # -- episodes -----------------------------------------------------------------------------

    def reset(self, task: EnvTask, seed: int) -> Reset:
        """Start the game of ``task`` (generated on first use). The game is fixed by its seed
        (the variation); ``seed`` only reaches the agent."""
        self.check(task)
        game = self.games.game(task.family, task.variation)
        self._state = self._start(game.z8).reset()
        key = task.task_id(self.name)
        self._gold = self._gold_paths.gold_path(key) or self._gold_paths.put_gold_path(
            key, [str(a) for a in self._state.get("extra.walkthrough") or []]
        )
        objective = str(self._state.objective or "")
        return Reset(
            instruction=objective,
            observation=first_observation(self._state.feedback, objective),
            info={
                "variation": task.variation,
                "level": parse_family(task.family)[1],
                "seed": task.variation,
                "max_score": self._state.max_score,
                "game_hash": game.manifest["game_hash"],
                "textworld_version": _version(),
            },
        )

    def _start(self, z8: Path) -> Any:
        """The game process, started once and loaded with each new game. (Jericho warns that
        it does not know generated games: TextWorld reads their score and state itself.)"""
        import textworld

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*is not fully supported")
            if self._env is None:
                self._env = textworld.start(str(z8), _infos())
            elif z8 != self._loaded:
                self._env.load(str(z8))
        self._loaded = z8
        return self._env

    def step(self, action: str) -> Transition:
        before = self._state.score or 0
        self._state, score, _ = self._env.step(action)
        score = score or 0
        return Transition(
            observation=clean(self._state.feedback),
            reward=float(score - before),
            done=bool(self._state.won or self._state.lost),
            score=float(score),
            info={"admissible": self.valid_actions()},
        )

    def success(self) -> bool:
        return bool(self._state is not None and self._state.won)

    def valid_actions(self) -> list[str]:
        return [str(a) for a in self._state.admissible_commands or []]

    def look(self) -> str:
        return str(self._state.description or "").strip()

    def inventory(self) -> str:
        return str(self._state.inventory or "").strip()

    def gold_path(self) -> list[str]:
        return list(self._gold)

    def close(self) -> None:
        if self._env is not None:
            with contextlib.suppress(Exception):  # a game that is already gone is closed
                self._env.close()
            self._env, self._loaded = None, None


def _infos() -> Any:
    import textworld

    # No ``policy_commands``: they make TextWorld re-plan the quest after every step (half
    # the time of a step); the gold path is the generator's walkthrough, read at reset.
    return textworld.EnvInfos(
        admissible_commands=True,
        won=True,
        lost=True,
        score=True,
        max_score=True,
        description=True,
        inventory=True,
        objective=True,
        facts=True,
        extras=["walkthrough"],
    )


# -- how its actions and rooms read ------------------------------------------------------------

_ROOM = re.compile(r"^-= (.+?) =-\s*$", re.MULTILINE)
_DIRECTION = r"(north|south|east|west)"
_DOOR = re.compile(rf"There is (an open|a closed) ([\w' -]+?) leading {_DIRECTION}\.")
_OPENING = re.compile(rf"\bexits? to the {_DIRECTION}\b|\btry going {_DIRECTION}\b")
_REFUSAL = re.compile(
    r"already|i only understood you as far as|fixed in place|plainly inedible"
    r"|you still miss something|still needs to be (?:cooked|cut)|can only (?:cook|cut|prepare)"
    r"|requires a (?:knife|source of heat)|you need to specify|seems to be locked"
    r"|you should cook|you cannot drink|please give one of the answers above"
    r"|there is no door in that direction",
    re.IGNORECASE,
)


class TextWorldLexicon(Lexicon):
    """TextWorld's command grammar. Roles:

    - ``go <direction>`` moves; ``open``/``unlock … with <key>`` open;
    - ``take X`` / ``take X from Y`` take (the target is X);
    - ``examine``/``read`` (the cookbook too), ``look``, ``inventory`` check: they inform
      without changing the world;
    - ``eat`` decides (eating the meal is the judged final act; eating an ingredient loses);
    - ``prepare meal``, ``slice/dice/chop X with knife``, ``cook X with <heat>``, ``put``,
      ``insert``, ``drop``, ``close``, ``lock`` are ``other`` (they change the world but are
      not a verdict).
    """

    verbs: ClassVar[Mapping[str, Role]] = {
        **Lexicon.verbs,
        "look": "check",
        "inventory": "check",
        "eat": "decide",
        "drink": "decide",
        "prepare": "other",
        "slice": "other",
        "dice": "other",
        "chop": "other",
        "cook": "other",
        "put": "other",
        "insert": "other",
        "drop": "other",
        "close": "other",
        "lock": "other",
    }

    def is_door(self, name: str) -> bool:
        """Whether ``name`` names a door (TextWorld's door nouns: door, gate, hatch…)."""
        return name.split(" ")[-1] in _DOOR_NOUNS if name else False

    def is_navigation(self, action: str) -> bool:
        found = self.role(action)
        return found.role == "move" or (found.role == "open" and self.is_door(found.target))

    def opens_way(self, opened: str, then: str) -> bool:
        target = self.role(opened).target
        if not target:
            return False
        follow = self.role(then)
        if follow.role == "move":
            return self.is_door(target)
        return re.search(rf"\b{re.escape(target)}\b", then.lower()) is not None

    def scene(self, text: str) -> Scene | None:
        room = _ROOM.search(text)
        if room is None:
            return None
        body = text[room.end() :]
        exits = [
            Exit(direction, "open" if state == "an open" else "closed", f"go {direction}")
            if state == "an open"
            else Exit(direction, "closed", f"go {direction}", f"open {door}")
            for state, door, direction in _DOOR.findall(body)
        ]
        exits += [
            Exit(direction, "open", f"go {direction}")
            for match in _OPENING.finditer(body)
            for direction in match.groups()
            if direction
        ]
        return Scene(room.group(1).strip().lower(), tuple(exits))

    def error(self, observation: str) -> str | None:
        text = observation.strip()
        if _ROOM.match(text):
            return None  # a room text (after a move or a look) reports no error
        found = _REFUSAL.search(text)
        if found:
            return found.group(0).lower()
        return super().error(text)


LEXICON = TextWorldLexicon()

MISTAKE_MODES = (
    MistakeMode("act-on-closed", "act-on-closed"),
    MistakeMode("wrong-object", "wrong-object", verbs=("take", "go", "cook")),
    MistakeMode("decide-before-check", "decide-before-check"),
    MistakeMode("repeat-invalid", "repeat-invalid"),
    MistakeMode("stop-early", "stop-early"),
    MistakeMode("skip-step", "skip-step", exclude=r"^(?:inventory|look|examine )"),
    MistakeMode("skip-route", "skip-route"),
)
"""TextWorld's modes, all generic kinds read through :class:`TextWorldLexicon`: walking into
a closed door or taking from a closed container; taking the wrong ingredient, going the wrong
way or cooking with the wrong heat (``cook X with oven`` roasts, a recipe may want it fried);
eating before reading the cookbook; repeating a refused command; stopping early; leaving out a
step that changes the world (a checking step left out changes nothing); walking as if the
rooms between were not there."""


# -- its documentation ---------------------------------------------------------------------

INTRO_GAMES = 2
"""Games per family whose intros document it: the family's first train seeds."""

_SLOT = re.compile(r"\{(\w+)\}")
_COMMAND = re.compile(r'([\w/-]+)\s*::\s*"([^"]+)"\s*::\s*"([^"]+)"')
_TYPE = re.compile(r"^type (\w+)\s*(?::\s*([\w, ]+?))?\s*\{", re.MULTILINE)
EXAMPLES_PER_COMMAND = 2
"""Commands kept per template of a game's knowledge base, filled with the game's objects."""
EXAMPLES_PER_GAME = 40
"""Most example commands kept of one game."""
_KIND = re.compile(r'kind :: "([^"]+)"')


def documentation(options: EnvOptions, chosen: Sequence[str] = ()) -> list[DocPassage]:
    """TextWorld's documentation as passages, read without starting a game: each challenge's
    own description (its generator's docstring, with the level's settings), the intro of the
    first :data:`INTRO_GAMES` train games of each family (objective, the cookbook's recipe,
    the game's objects and rooms; the games are generated into the cache folder if missing)
    and the commands of the games' knowledge base, each with what it does."""
    wanted = list(chosen) or families()
    for family in wanted:
        parse_family(family)
    games = GameCache(options.cache_dir)
    passages: list[DocPassage] = []
    commands: dict[str, list[str]] = {}
    for family in wanted:
        passages.append(challenge_passage(family))
        for seed in SPLITS["train"][:INTRO_GAMES]:
            data = json.loads((games.game(family, seed).folder / "game.json").read_text())
            passages.append(_intro_passage(family, seed, data))
            for template, meaning in _commands(data["KB"]["logic"]):
                meanings = commands.setdefault(template, [])
                if meaning not in meanings:
                    meanings.append(meaning)
    examples = [e for p in passages for e in p.examples]
    passages += [_command_passage(t, meanings, examples) for t, meanings in commands.items()]
    return passages


def challenge_passage(family: str) -> DocPassage:
    """The challenge's description as its generator documents it, and the level's settings."""
    challenge, level = parse_family(family)
    folder = challenge.replace("-", "_")
    source = _package_dir() / "challenges" / folder / f"{folder.removeprefix('tw_')}.py"
    prose = _prose(ast.get_docstring(ast.parse(source.read_text())) or "")
    settings = " ".join(
        f"--{k}" if v is True else f"--{k} {v}" for k, v in LEVELS[challenge][level].items() if v
    )
    return DocPassage(
        id=f"task:{family}",
        kind="task",
        text=f"{prose}\n\nLevel {level} is generated with `tw-make {challenge} {settings}`.",
        family=family,
    )


def _package_dir() -> Path:
    """TextWorld's installed folder, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("textworld")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("TextWorld is not installed (pip install textworld==1.7.0)")
    return Path(next(iter(spec.submodule_search_locations)))


def _prose(docstring: str) -> str:
    """A generator's docstring without its reStructuredText label, title and references."""
    body = docstring.split("\nReferences\n", 1)[0]
    lines = [line for line in body.splitlines() if not line.startswith(".. ")]
    text = re.sub(r"\s*\[\w+\]_", "", "\n".join(lines))
    text = re.sub(r"^.+\n=+\n", "", text.strip(), count=1, flags=re.MULTILINE)
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n\n".join(paragraphs)


def _intro_passage(family: str, seed: int, data: dict[str, Any]) -> DocPassage:
    """What a generated game tells the player first, with the objects and rooms it holds."""
    metadata = data.get("metadata") or {}
    objective = str(data.get("objective") or "").strip()
    recipe = str(metadata.get("recipe") or "").strip()
    text = objective + (f"\n\n{recipe}" if recipe else "")
    infos = [info for _, info in data.get("infos", []) if info.get("name")]
    places = [i["name"] for i in infos if i.get("type") == "r"]
    things = [i["name"] for i in infos if i.get("type") not in ("r", "P", "I")]
    named = [t for t in things if re.search(rf"\b{re.escape(t)}\b", text, re.IGNORECASE)]
    entities = list(dict.fromkeys([*named, *things]))
    typed = {i["name"]: i["type"] for i in infos}
    return DocPassage(
        id=f"intro:{family}:{seed}",
        kind="intro",
        text=text,
        family=family,
        variation=seed,
        entities=tuple(entities),
        places=tuple(places),
        examples=tuple(_examples(data["KB"]["logic"], [(e, typed[e]) for e in entities])),
    )


def _examples(logic: str, things: list[tuple[str, str]]) -> list[str]:
    """The knowledge base's commands filled with the game's things of the right types (the
    game's own type hierarchy: food is an object, an oven a container...), those its intro
    names first."""
    parents = _type_parents(logic)
    found: list[str] = []
    for _, command, _ in _COMMAND.findall(logic):
        slots = _SLOT.findall(command)
        if not slots:
            continue
        fits = [[name for name, kind in things if _is_a(kind, slot, parents)] for slot in slots]
        made = 0
        for names in itertools.product(*fits):
            if made == EXAMPLES_PER_COMMAND or len(found) == EXAMPLES_PER_GAME:
                break
            if len(set(names)) < len(names):
                continue
            text = command
            for slot, name in zip(slots, names, strict=True):
                text = text.replace("{" + slot + "}", name, 1)
            if text not in found:
                found.append(text)
                made += 1
    return found


def _type_parents(logic: str) -> dict[str, list[str]]:
    """Each type of the knowledge base and the types it derives from."""
    return {
        m.group(1): [p.strip() for p in (m.group(2) or "").split(",") if p.strip()]
        for m in _TYPE.finditer(logic)
    }


def _is_a(kind: str, wanted: str, parents: dict[str, list[str]]) -> bool:
    seen, todo = set(), [kind]
    while todo:
        current = todo.pop()
        if current == wanted:
            return True
        if current not in seen:
            seen.add(current)
            todo += parents.get(current, [])
    return False


def _commands(logic: str) -> list[tuple[str, str]]:
    """The knowledge base's commands: ``(template with OBJ slots, what it does)``."""
    kinds = _slot_kinds(logic)
    found = []
    for _, command, meaning in _COMMAND.findall(logic):
        template = _SLOT.sub("OBJ", command)
        found.append((template, _SLOT.sub(lambda m: kinds.get(m.group(1), "thing"), meaning)))
    return found


def _slot_kinds(logic: str) -> dict[str, str]:
    """What each type of the knowledge base is called (``f`` → ``food``)."""
    kinds = {}
    starts = [(m.group(1), m.end()) for m in _TYPE.finditer(logic)]
    for (name, start), (_, end) in zip(starts, [*starts[1:], ("", len(logic))], strict=True):
        kind = _KIND.search(logic, start, end)
        if kind:
            kinds[name] = kind.group(1).removesuffix("-like")
    return kinds


def _command_passage(template: str, meanings: list[str], examples: list[str]) -> DocPassage:
    words = [w for w in template.split() if w != "OBJ"]
    pattern = re.compile("^" + re.escape(template).replace("OBJ", ".+") + "$")
    return DocPassage(
        id="command:" + "-".join(words),
        kind="action",
        text=f"`{template.replace('OBJ', '…')}`: {'; '.join(meanings)}.",
        template=template,
        examples=tuple(dict.fromkeys(e for e in examples if pattern.match(e)))[:3],
    )


def _make(options: EnvOptions) -> TextWorld:
    return TextWorld(options.step_limit, options.gold_paths, options.cache_dir)


PLUGIN = EnvironmentPlugin(
    name="textworld",
    make=_make,
    families=families,
    demo_families=("tw-cooking-level2", "tw-treasure_hunter-level2", "tw-coin_collector-level2"),
    demo_size=(32, 12),  # every episode a new game: generating them is most of the demo's time
    lexicon=LEXICON,
    mistake_modes=MISTAKE_MODES,
    columns=columns,
    documentation=documentation,
)
"""TextWorld as registered in the workbench's ``pyproject.toml``."""


if __name__ == "__main__":  # the generating child of `generate`
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        print(json.dumps(make_game(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))))
