"""ScienceWorld (PyPI ``scienceworld==1.2.3``): 30 task families of elementary science, judged
by the simulator. It bundles its jar and needs Java; one JVM per adapter, reused across
episodes.

Success is a score of 100. A negative score (e.g. focusing on the wrong object) ends the
episode at once as a critical failure, as the simulator's own wrapper does.

Reproducibility: a world loaded *without* gold-path generation is the same on every load of a
variation, but the simulator's gold-path generator is not deterministic (it may pick another
equally valid route, and it leaves doors changed). So episodes are always played in a world
loaded without it, and the gold path of a variation is generated once, on a separate load, and
kept in a :class:`GoldPaths` cache (the store, for runs) so every later episode sees the same one.
The variations the demo and default-seed runs play first come with their gold paths made once
(:data:`GOLD_FILE`), the same on every machine.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
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
from workbench.envs.class_archive import ClassArchive
from workbench.envs.lexicon import ActionRole, Exit, Lexicon, MistakeMode, Role, Scene

SUCCESS_SCORE = 100
DEFAULT_STEP_LIMIT = 100


SPLITS_FILE = Path(__file__).with_name("scienceworld_splits.json")
"""ScienceWorld 1.2.3's own train/dev/test variations of every family, as the simulator lists
them (``scripts/scienceworld_splits.py`` regenerates the file; a test checks it)."""


@cache
def splits() -> dict[str, dict[str, list[int]]]:
    """Variations per family and split, read without starting the simulator."""
    return json.loads(SPLITS_FILE.read_text())["splits"]


DOCS_FILE = Path(__file__).with_name("scienceworld_docs.json")
"""What ScienceWorld 1.2.3 documents of itself, as the simulator reports it: a spread of
distinct task descriptions per family (train variations only) with the places and objects of
each variation's world, and its action templates with commands it accepted
(``scripts/scienceworld_docs.py`` regenerates the file; a test checks it)."""

GOLD_FILE = Path(__file__).with_name("scienceworld_gold.json")
"""Gold paths of the variations the demo and default-seed runs play first, generated once by
``scripts/scienceworld_gold.py`` with no simplifications; a world uses one (and keeps it like
one it made) before generating its own, so those runs follow the same routes on every machine
and spend no time in the simulator's slow generator."""


JVM_OPTIONS = (
    "-XX:+UseSerialGC",
    "-XX:CICompilerCount=2",
    "-XX:CompileThresholdScaling=3",
    "-Xss1m",
    "-Xms512m",
    "-Xmn256m",
    "-Xmx2g",
    "-XX:-UsePerfData",
)
"""Options of the simulator's JVM: the serial collector (no collector threads beside the
simulator's), the fewest JIT compiler threads tiered compilation allows, and a bounded heap,
whatever the machine's size — the JVM's defaults scale all three with its cores (the G1
collector's parallel and concurrent threads, up to a dozen compiler threads, a quarter of
memory), so each worker's JVM competed with the others for every core. Measured with
``bench/runner_scaling.py``: 17 threads instead of 24 on 2 cores, CPU per episode no higher,
and the same actions and outcomes as with the defaults (gold paths kept alike). The quick
compiler alone (``-XX:TieredStopAtLevel=1``) cost more CPU per episode than it saved, and so
did the optimizing one alone (``-XX:-TieredCompilation``: compilers −40%, simulator +35%) and
less inlining (``-XX:MaxInlineLevel=9 -XX:InlineSmallCode=1000``: compilers −30%, simulator
slower).

Then, per thread of the JVM (400 episodes on 2 workers): the optimizing compiler was a
quarter of its CPU — a cost each worker's JVM pays again while it warms up, over its first
half-minute — and the serial collector, at about 300 young collections a minute in a young
generation of ~100 MB, a fifth. Compiling only methods three times as hot as the default
thresholds (``CompileThresholdScaling=3``) cut the compilers' CPU by a third (the
simulator's own thread took about 5% more), and a 256 MB young generation (512 MB heap from the
start) cut the collector's by 55%: on 2 cores, two workers played 21% more episodes a
minute (median of 3 runs each, interleaved), one worker 5% more."""

JVM_OPTIONS_VARIABLE = "WORKBENCH_SCIENCEWORLD_JVM"
"""Environment variable that replaces :data:`JVM_OPTIONS` and the class-data archive
(:func:`class_archive`; space-separated; empty: the JVM's own defaults), read when a simulator
starts. The simulator's episodes depend on its JVM's history through identity hash codes (it
iterates hash sets of its objects), which is why gold paths are kept; adding
``-XX:+UnlockExperimentalVMOptions -XX:hashCode=2`` (every identity hash the same) made fresh
runs on 1 and 2 workers play alike, at about 30% more CPU."""


def jvm_options() -> list[str]:
    """The options the next simulator's JVM starts with: :data:`JVM_OPTIONS` and its class-data
    archive (made first when there is none yet), or what :data:`JVM_OPTIONS_VARIABLE` says
    instead."""
    given = os.environ.get(JVM_OPTIONS_VARIABLE)
    if given is not None:
        return shlex.split(given)
    archive = class_archive()
    archive.make(_train_class_archive)
    return [*JVM_OPTIONS, *archive.options()]


def class_archive() -> ClassArchive:
    """The archive of the classes the simulator loads, for the ``java`` on ``PATH``, the
    simulator's jar and :data:`JVM_OPTIONS` (see :mod:`workbench.envs.class_archive`): kept in
    the per-user cache, made the first time a simulator starts without one."""
    from scienceworld.constants import JAR_PATH

    folder = user_cache_dir("scienceworld")
    return ClassArchive.for_jvm(folder, "classes", "java", JAR_PATH, JVM_OPTIONS)


def make_class_archive() -> bool:
    """Make the simulator's class-data archive unless it exists, failed before, or
    :data:`JVM_OPTIONS_VARIABLE` replaces it; whether the next simulator starts from one."""
    if os.environ.get(JVM_OPTIONS_VARIABLE) is not None:
        return False
    return class_archive().make(_train_class_archive)


def _train_class_archive(options: list[str]) -> None:
    """Start a simulator with ``options`` added to :data:`JVM_OPTIONS`, load a task, look
    around, list the valid actions and stop it, waiting for its JVM to exit."""
    simulator = _started([*JVM_OPTIONS, *options])
    process = simulator._gateway.java_process
    try:
        simulator.load(task_names()[0], 0, "")
        simulator.step("look around")
        simulator.get_valid_action_object_combinations_with_templates()
    finally:
        simulator.close()
        try:
            process.wait(timeout=ARCHIVE_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            raise


def _started(options: list[str]) -> Any:
    """A simulator, its JVM started with ``options`` (through :data:`_LAUNCH_OPTIONS`).

    Its own step limit is set high: this adapter's callers enforce ``step_limit``.
    """
    import scienceworld.scienceworld as simulator
    from scienceworld import ScienceWorldEnv

    if not getattr(simulator.launch_gateway, "with_jvm_options", False):
        simulator.launch_gateway = _with_jvm_options(simulator.launch_gateway)
    token = _LAUNCH_OPTIONS.set(options)
    try:
        return ScienceWorldEnv("", envStepLimit=10_000)
    finally:
        _LAUNCH_OPTIONS.reset(token)


JVM_LOG = ("-Xlog:disable", "-Xlog:all=warning:stderr")
"""Where the simulator's JVM writes its warnings: standard error, whatever other options it is
given (they come after, and may say otherwise). py4j reads the gateway's port from the JVM's
first line of standard output, where the JVM's own logging writes by default: a warning at
start-up (an option it cannot honour, a class-data archive it cannot use) stopped the start
with ``ValueError: invalid literal for int()``."""

ARCHIVE_WAIT = 120
"""Seconds the training run's JVM may take to write its class-data archive and exit."""
_LAUNCH_OPTIONS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "launch_options", default=None
)
"""Options the next JVM started in this context takes instead of :func:`jvm_options`."""


def _with_jvm_options(launch: Callable[..., Any]) -> Callable[..., Any]:
    """py4j's ``launch_gateway``, which the simulator calls without JVM options, with
    :data:`JVM_LOG` and :func:`jvm_options` before any the simulator passes itself."""

    @functools.wraps(launch)
    def launched(*args: Any, javaopts: Sequence[str] = (), **kwargs: Any) -> Any:
        options = _LAUNCH_OPTIONS.get()
        options = jvm_options() if options is None else options
        return launch(*args, javaopts=[*JVM_LOG, *options, *javaopts], **kwargs)

    launched.with_jvm_options = True  # type: ignore[attr-defined]
    return launched


class JavaMissing(RuntimeError):
    """ScienceWorld needs a Java runtime on PATH."""


@cache
def task_names() -> list[str]:
    """The 30 ScienceWorld task families, from the package's own task list (no JVM needed)."""
    from importlib.resources import files

    tasks = json.loads((files("scienceworld") / "tasks.json").read_text())
    return [task["task_name"] for task in tasks]


class ScienceWorld:
    """Adapter over ``scienceworld.ScienceWorldEnv`` implementing :class:`Environment`.

    Args:
        step_limit: most actions per episode (recorded with every episode).
        simplifications: ScienceWorld simplification string, e.g. ``"easy"`` or
            ``"openDoors,teleportAction"``; empty for the full game.
        gold_paths: where canonical gold paths are kept (default: this adapter's memory).
    """

    name = "scienceworld"

    def __init__(
        self,
        step_limit: int = DEFAULT_STEP_LIMIT,
        simplifications: str = "",
        gold_paths: GoldPaths | None = None,
    ) -> None:
        if shutil.which("java") is None:
            raise JavaMissing(
                "ScienceWorld needs Java; install a headless JRE (Debian: apt-get install -y default-jre-headless)"
            )
        self.step_limit = step_limit
        self.simplifications = simplifications
        self._sim: Any = None
        self._gold_paths = gold_paths or MemoryGoldPaths()
        self._gold: list[str] = []
        self._score = 0
        self._checked: dict[tuple[str, str], str] = {}
        """The simulator's name of each family, by family and simplifications, once its
        Python side has checked both (it keeps only the last name it loaded, and anyone with
        the simulator may load another)."""

    # -- catalogue ----------------------------------------------------------------------------

    def families(self) -> list[str]:
        return task_names()

    def tasks(self, family: str, split: Split) -> list[EnvTask]:
        if family not in task_names():
            raise ValueError(
                f"unknown ScienceWorld family {family!r}; known: {', '.join(task_names())}"
            )
        return [EnvTask(family, v, split) for v in splits()[family].get(split, [])]

    @property
    def _env(self) -> Any:
        """The simulator, started (one JVM) on first use: listing tasks needs none."""
        if self._sim is None:
            self._sim = _started(jvm_options())
        return self._sim

    # -- episodes -----------------------------------------------------------------------------

    def reset(self, task: EnvTask, seed: int) -> Reset:
        """Load the task's variation and start it. ScienceWorld's world is fixed by the
        variation, so ``seed`` only reaches the agent; it is accepted to keep the protocol uniform.

        The world is built once per episode: a load starts it at its first move (the
        simulator's ``reset`` is another whole load, and after a load that generated a gold
        path, one that generates it again). The task and simplification names are checked by
        the simulator's Python side the first time they are used, then loaded directly.
        """
        key = task.task_id(self.name)
        gold = self._gold_paths.gold_path(key)
        shipped = None if gold is not None or self.simplifications else shipped_gold_path(key)
        if shipped is not None:
            gold = self._gold_paths.put_gold_path(key, shipped)
        checked = self._checked.get((task.family, self.simplifications))
        if gold is None:  # (the simulator then loads the world afresh)
            self._env.load(task.family, task.variation, self.simplifications, generateGoldPath=True)
            gold = self._gold_paths.put_gold_path(
                key, [str(a) for a in self._env.get_gold_action_sequence()]
            )
        elif checked is not None:
            self._env.server.load(checked, task.variation, self.simplifications, False)
        else:
            self._env.load(task.family, task.variation, self.simplifications)
        if checked is None:  # (the name the simulator's Python side just loaded)
            self._checked[task.family, self.simplifications] = self._env.taskName
        self._gold = gold
        server = self._env.server
        self._score = 0
        observation = server.step("look around")
        return Reset(
            instruction=str(server.getTaskDescription()),
            observation=str(observation),
            info={
                "variation": task.variation,
                "simplifications": self.simplifications,
                "scienceworld_version": _version(),
            },
        )

    def step(self, action: str) -> Transition:
        server = self._env.server
        observation = str(server.step(action))
        score = round(100 * server.getScore())
        reward, self._score = score - self._score, score
        done = bool(server.getCompleted()) or score < 0
        return Transition(
            observation=observation, reward=float(reward), done=done, score=float(score)
        )

    def success(self) -> bool:
        return self._score >= SUCCESS_SCORE

    def valid_actions(self) -> list[str]:
        """The simulator's valid action-object combinations, in its (sorted) order.

        Read as one JSON document (the simulator's list with templates): the plain list
        comes back over py4j one element per round trip — 800 to 3,000 of them per call in
        the families' kitchens, a sixth of a worker's time in episodes that ask.
        """
        combinations = self._env.get_valid_action_object_combinations_with_templates()
        return sorted(str(c["action"]) for c in combinations)

    def look(self) -> str:
        return str(self._env.look())

    def inventory(self) -> str:
        return str(self._env.inventory())

    def gold_path(self) -> list[str]:
        return list(self._gold)

    def close(self) -> None:
        if self._sim is not None:
            with contextlib.suppress(Exception):  # a JVM that is already gone is closed
                self._sim.close()
            self._sim = None


def shipped_gold_path(key: str) -> list[str] | None:
    """The gold path :data:`GOLD_FILE` holds for a task key, if it was made for this version
    of the simulator."""
    path = _shipped_gold().get(key)
    return list(path) if path is not None else None


@cache
def _shipped_gold() -> dict[str, list[str]]:
    """The file's gold paths by task key, read once; none when made for another version."""
    document = json.loads(GOLD_FILE.read_text())
    return document["paths"] if document["scienceworld_version"] == _version() else {}


@cache
def _version() -> str:
    from importlib.metadata import version

    return version("scienceworld")


_BOX = re.compile(r"^(?:move|put) (.+?) (?:to|in) (?:the )?(\w+) box$")
_COLOURS = re.compile(r"\b(red|green|blue|orange|yellow|purple|violet)\b")
_DOOR = re.compile(r"door to (?:the )?([\w ]+?) \(that is (open|closed)\)")
_ROOM = re.compile(r"This (?:room|outside location) is called the ([\w ]+?)\.")


class ScienceWorldLexicon(Lexicon):
    """ScienceWorld's action grammar: doors are opened towards a room (``open door to X``),
    moves name the room (``go to X``), a task is judged on what the agent focuses on and on
    the answer box it fills, measuring is using the thermometer or building a circuit, and
    ``wait``/``wait1`` let time pass."""

    verbs: ClassVar[Mapping[str, Role]] = {
        **Lexicon.verbs,
        "open door to": "open",
        "focus on": "decide",
        "use thermometer": "check",
        "connect": "check",
        "move": "other",
        # checking is measuring: looking and reading inform no answer box
        "look at": "other",
        "read": "other",
        "examine": "other",
    }

    def role(self, action: str) -> ActionRole:
        text = action.strip().lower()
        if text.startswith("wait"):
            return ActionRole("wait", "", "wait")
        box = _BOX.match(text)
        if box:
            return ActionRole("decide", box.group(1), text.split(" ", 1)[0])
        return super().role(text)

    def target(self, verb: str, rest: str) -> str:
        """What is moved, as named before the destination (``substance in metal pot``: the
        location names which one), else the plain reading's object."""
        if verb == "move":
            return rest.strip().lower().rsplit(" to ", 1)[0]
        return super().target(verb, rest)

    def is_navigation(self, action: str) -> bool:
        return action.startswith(("open door to ", "go to "))

    def opens_way(self, opened: str, then: str) -> bool:
        return opened.startswith("open door to ") and then == "go to " + opened[13:]

    def scene(self, text: str) -> Scene | None:
        room = _ROOM.search(text)
        if room is None:
            return None
        exits = tuple(
            Exit(
                name,
                "open" if state == "open" else "closed",
                f"go to {name}",
                f"open door to {name}",
            )
            for name, state in _DOOR.findall(text)
        )
        return Scene(room.group(1), exits)

    def choices(self, decision: str, instruction: str) -> list[str]:
        box = _BOX.match(decision)
        if box is None:
            return []
        colours = sorted(set(_COLOURS.findall(instruction)))
        chosen = box.group(2)
        return [decision.replace(f"{chosen} box", f"{c} box") for c in colours if c != chosen]


MISTAKE_MODES = (
    MistakeMode("act-on-closed", "act-on-closed"),
    MistakeMode("wrong-focus", "wrong-object", verbs=("focus on",)),
    MistakeMode("no-wait", "no-wait"),
    MistakeMode("decide-before-check", "decide-before-check"),
    MistakeMode(
        "wrong-object", "wrong-object", verbs=("move",), exclude=r" box$", same_target=True
    ),
    MistakeMode("repeat-invalid", "repeat-invalid"),
    MistakeMode("stop-early", "stop-early"),
    MistakeMode("skip-route", "skip-route"),
)
"""ScienceWorld's modes, in the order (and with the chances of firing) its episodes have
always been played: the generic kinds read through :class:`ScienceWorldLexicon`, and two of
its own — focusing on the wrong object (the simulator may end the run at once) and not
waiting for a change (boiling, melting) to finish."""


# -- its documentation ---------------------------------------------------------------------

_OBJECT_KINDS = {
    "containers": "Containers",
    "containers.furniture": "Furniture",
    "devices": "Devices",
    "document": "Documents",
    "electricalcomponent": "Electrical components",
    "environmentoutside": "Things outside",
    "livingthing": "Living things",
    "livingthing.animals": "Animals",
    "livingthing.plant": "Plants",
    "misc": "Pictures and other things",
    "substance": "Substances",
    "substance.food": "Foods",
    "substance.paint": "Paints",
    "taskitems": "Task items",
}
"""The simulator's object packages that hold things an agent meets, and what they are."""


@cache
def _docs() -> dict[str, Any]:
    return json.loads(DOCS_FILE.read_text())


@cache
def _titles() -> dict[str, tuple[str, str]]:
    """Each family's title and topic, from the package's own task list."""
    from importlib.resources import files

    tasks = json.loads((files("scienceworld") / "tasks.json").read_text())
    return {t["task_name"]: (t["task"], t["topic"]) for t in tasks}


def documentation(options: EnvOptions, families: Sequence[str] = ()) -> list[DocPassage]:
    """ScienceWorld's documentation as passages, read without starting the simulator: each
    family's task descriptions (one passage per distinct description, played in the train
    variation it was read from), its action help (each template with commands it accepted)
    and its object help (the kinds of objects it models)."""
    wanted = list(families) or task_names()
    for family in wanted:
        if family not in task_names():
            raise ValueError(
                f"unknown ScienceWorld family {family!r}; known: {', '.join(task_names())}"
            )
    return [*_task_passages(wanted), *_action_passages(), *_object_passages()]


def _task_passages(families: Sequence[str]) -> list[DocPassage]:
    docs = _docs()
    passages = []
    for family in families:
        title, topic = _titles()[family]
        for variation in docs["families"].get(family, []):
            entities = dict.fromkeys([*variation["objects"], *docs["common"]])
            named = [n for n in variation["named"] if n in entities]
            known = [*entities, *variation["places"]]
            examples = [c for c in variation.get("examples", []) if _names_any(c, known)]
            passages.append(
                DocPassage(
                    id=f"task:{family}:{variation['variation']}",
                    kind="task",
                    text=f"{title} ({topic})\n{variation['description']}",
                    family=family,
                    variation=variation["variation"],
                    entities=tuple(dict.fromkeys([*named, *entities])),
                    places=tuple(variation["places"]),
                    examples=tuple(examples),
                )
            )
    return passages


def _action_passages() -> list[DocPassage]:
    passages = []
    for action in _docs()["actions"]:
        template = action["template"]
        examples = "; ".join(action["examples"])
        text = f"Action `{template}`" + (f", for example: {examples}." if examples else ".")
        passages.append(
            DocPassage(
                id="action:" + "-".join(template.lower().split()),
                kind="action",
                text=text,
                template=template,
                examples=tuple(action["examples"]),
            )
        )
    return passages


def _object_passages() -> list[DocPassage]:
    from importlib.resources import files

    kinds: dict[str, list[str]] = {}
    for line in (files("scienceworld") / "object_type_ids.tsv").read_text().splitlines():
        path = line.split("\t", 1)[0].removeprefix("scienceworld.objects.")
        package, _, name = path.rpartition(".")
        if package in _OBJECT_KINDS:
            kinds.setdefault(package, []).append(_words(name))
    return [
        DocPassage(
            id=f"object:{package}",
            kind="object",
            text=f"{_OBJECT_KINDS[package]} in ScienceWorld: {', '.join(names)}.",
            entities=tuple(names),
        )
        for package, names in kinds.items()
    ]


def _names_any(command: str, names: Sequence[str]) -> bool:
    """Whether the command names one of ``names`` (a command on an object the simulator calls
    by a kind word, ``look at door``, names none)."""
    return any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", command) for n in names)


def _words(name: str) -> str:
    """A class name as words: ``UltraColdFreezer`` → ``ultra cold freezer``."""
    return " ".join(re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name)).lower()


def _make(options: EnvOptions) -> ScienceWorld:
    return ScienceWorld(options.step_limit, options.simplifications, options.gold_paths)


PLUGIN = EnvironmentPlugin(
    name="scienceworld",
    make=_make,
    families=task_names,
    demo_families=("boil", "use-thermometer", "find-living-thing", "test-conductivity"),
    evolve_families=("boil", "find-living-thing", "test-conductivity"),
    lexicon=ScienceWorldLexicon(),
    mistake_modes=MISTAKE_MODES,
    documentation=documentation,
)
"""ScienceWorld as registered in the workbench's ``pyproject.toml``. The demo plays AutoRefine's
pair (boil, use-thermometer) and two more. ``workbench evolve`` leaves use-thermometer out:
ScienceWorld 1.2.3 reports a different temperature on every load of the same variation, so the
same agent on the same held-out case passes or fails by chance and the ledger would count noise
as change."""
