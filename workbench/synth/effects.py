"""What each step of a trajectory observably did, read offline in any world.

Backward construction writes instructions from these effects, the filters replay a span and
compare the effects it reproduces, and state digests decide which examples are duplicates. The
reading never names a world: actions and room texts are read through the world's
:class:`~workbench.envs.lexicon.Lexicon` (an action's role and target, the place a room text
shows, the error an observation reports), scores from the step's reward and the running score
the runner records in ``Step.raw``, and state changes from what a world records there itself
(``admissible``: the commands it accepts after the step, when it offers them).

An action step has these effects, each a short string:

- ``reached <place>`` — a move that was not refused and left the agent somewhere else (the
  place a room text names, else the move's target unless it is a compass direction);
- ``opened <thing>`` / ``took <thing>`` — an open or take the world did not refuse;
- ``decided: <action>`` — a decision (focus, answer, eat…) the world did not refuse;
- ``changed: <action>`` — any other action the world did not refuse, when there is evidence
  it changed something: the commands the world accepts changed, the score moved, or the
  observation reports the action's own verb or says something is *now* so;
- ``score +N`` / ``score -N`` — the score moved.

Checking and waiting change nothing themselves (their score change still counts). A step is
*refused* when the lexicon reads an error in its observation or the observation says the thing
is *already* so (a world-neutral English phrase: nothing changed).

The state after a step is the task, the agent's place, the set of changes so far (everything
but places and scores) and the running score; :func:`state_digest` hashes it, so two spans that
end in the same observed state from the same start carry equal digests.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from store.records import Step
from workbench.envs.lexicon import DIRECTIONS, Lexicon

UNCHANGED = re.compile(r"\balready\b", re.IGNORECASE)
"""An observation saying the action found things as they were (``The door is already open``)."""

NOW = re.compile(r"\bnow\b", re.IGNORECASE)
"""An observation saying something is now so (``The stove is now activated``)."""

REACHED, OPENED, TOOK, DECIDED, CHANGED, SCORE = (
    "reached ",
    "opened ",
    "took ",
    "decided: ",
    "changed: ",
    "score ",
)
"""The prefixes of the effect strings."""


@dataclass(frozen=True)
class StepReading:
    """One action step as the effect reading sees it."""

    index: int
    """The step's stored index."""
    action: str
    observation: str
    effects: tuple[str, ...]
    """What the step observably did (see the module docstring)."""
    refused: str
    """The refusal or error the observation reports (empty when none)."""
    location: str
    """Where the agent is after the step (empty when never known)."""
    score: float
    """The running score after the step."""
    state: str
    """The digest of the state after the step."""


@dataclass(frozen=True)
class Reading:
    """A whole trajectory's reading: the state it starts in and every action step."""

    task_id: str
    start_location: str
    start_state: str
    """The digest of the state before the first action."""
    steps: list[StepReading] = field(default_factory=list)

    def position(self, index: int) -> int:
        """The position in :attr:`steps` of the step with stored index ``index``."""
        for position, step in enumerate(self.steps):
            if step.index == index:
                return position
        raise KeyError(f"no action step {index}")

    def state_before(self, index: int) -> str:
        """The digest of the state before step ``index``."""
        position = self.position(index)
        return self.steps[position - 1].state if position else self.start_state

    def location_before(self, index: int) -> str:
        """Where the agent was before step ``index``."""
        position = self.position(index)
        return self.steps[position - 1].location if position else self.start_location

    def span(self, start: int, end: int) -> list[StepReading]:
        """The action steps from ``start`` to ``end`` (stored indices, inclusive)."""
        return [s for s in self.steps if start <= s.index <= end]

    def effects(self, start: int, end: int) -> list[str]:
        """Every effect of the steps from ``start`` to ``end``, in order."""
        return [e for s in self.span(start, end) for e in s.effects]


def state_digest(task_id: str, location: str, changes: Sequence[str], score: float) -> str:
    """A short, stable digest of an observed state (changes in any order)."""
    payload = json.dumps([task_id, location, sorted(set(changes)), round(score, 6)])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def normalised(action: str) -> str:
    """An action as effects quote it: lower case, single spaces."""
    return " ".join(action.lower().split())


def score_of(step: Step, before: float) -> float:
    """The running score after ``step``: the one the runner recorded, else the reward added."""
    raw = step.raw if isinstance(step.raw, dict) else {}
    recorded = raw.get("score")
    if isinstance(recorded, int | float) and not isinstance(recorded, bool):
        return float(recorded)
    return before + (step.reward or 0.0)


def admissible_of(step: Step | None) -> frozenset[str] | None:
    """The commands the world accepted after ``step``, when it recorded them."""
    raw = step.raw if step is not None and isinstance(step.raw, dict) else {}
    listed = raw.get("admissible")
    if not isinstance(listed, list):
        return None
    return frozenset(str(a) for a in listed)


def refusal(observation: str, lexicon: Lexicon) -> str:
    """The refusal an observation reports (an error, or things found as they were)."""
    error = lexicon.error(observation)
    if error:
        return error
    found = UNCHANGED.search(observation)
    return found.group(0).lower() if found else ""


def reports_change(action: str, observation: str, lexicon: Lexicon) -> bool:
    """Whether an observation says the action changed something: it names the action's own
    verb (``You move the pot to the stove``) or says something is now so."""
    verb = lexicon.role(action).verb or action.split(" ", 1)[0]
    stem = verb.split(" ")[0].lower()[:4]
    words = re.findall(r"[a-z]+", observation.lower())
    if lexicon.scene(observation) is not None:
        return False  # a room text describes; it reports no change
    return bool(NOW.search(observation)) or (
        len(stem) >= 3 and any(w.startswith(stem) for w in words)
    )


class _Reader:
    """Walks a trajectory keeping the observed state."""

    def __init__(self, task_id: str, lexicon: Lexicon, first: Step | None) -> None:
        self.task_id, self.lexicon = task_id, lexicon
        scene = lexicon.scene(first.observation) if first is not None else None
        self.location = scene.location if scene else ""
        self.changes: list[str] = []
        self.score = 0.0
        self.admissible = admissible_of(first)

    def digest(self) -> str:
        return state_digest(self.task_id, self.location, self.changes, self.score)

    def read(self, step: Step) -> StepReading:
        score = score_of(step, self.score)
        delta = round(score - self.score, 6)
        admissible = admissible_of(step)
        changed_commands = (
            None if admissible is None or self.admissible is None else admissible != self.admissible
        )
        refused = refusal(step.observation, self.lexicon)
        effects = [] if refused else self._effects(step, delta, changed_commands)
        if delta:
            effects.append(f"{SCORE}{delta:+g}")
        self.changes += [e for e in effects if not e.startswith((REACHED, SCORE))]
        self.score, self.admissible = score, admissible
        return StepReading(
            step.index,
            step.action,
            step.observation,
            tuple(effects),
            refused,
            self.location,
            score,
            self.digest(),
        )

    def _effects(self, step: Step, delta: float, changed_commands: bool | None) -> list[str]:
        role = self.lexicon.role(step.action)
        if role.role == "move":
            return self._moved(step, role.target)
        if role.role == "open" and role.target:
            return [f"{OPENED}{role.target}"]
        if role.role == "take" and role.target:
            return [f"{TOOK}{role.target}"]
        if role.role == "decide":
            return [f"{DECIDED}{normalised(step.action)}"]
        if role.role == "other":
            evidence = (
                changed_commands
                or bool(delta)
                or (
                    changed_commands is None
                    and reports_change(step.action, step.observation, self.lexicon)
                )
            )
            return [f"{CHANGED}{normalised(step.action)}"] if evidence else []
        return []  # check, wait: they inform or pass time

    def _moved(self, step: Step, target: str) -> list[str]:
        place = arrived(self.lexicon, step.observation, target)
        if not place or place == self.location:
            return []
        self.location = place
        return [f"{REACHED}{place}"]


def arrived(lexicon: Lexicon, observation: str, target: str) -> str:
    """Where a move the world did not refuse took the agent: the place its answer's room text
    names, else the place the move named (a direction names none: ``""``)."""
    scene = lexicon.scene(observation)
    return scene.location if scene else ("" if target in DIRECTIONS else target)


def location_after(lexicon: Lexicon, location: str, action: str, observation: str) -> str:
    """Where the agent is after ``action`` answered by ``observation``, read as trajectories
    are read here: only a move the world did not refuse changes it."""
    role = lexicon.role(action)
    if role.role != "move" or refusal(observation, lexicon):
        return location
    return arrived(lexicon, observation, role.target) or location


def read_trajectory(task_id: str, steps: Sequence[Step], lexicon: Lexicon) -> Reading:
    """The effects and states of every action step of a trajectory.

    Args:
        task_id: the task it plays (part of every state: the same place in two tasks is not
            the same state).
        steps: its steps in order; the ones without an action (the first observation,
            messages) only inform the starting place.
        lexicon: how its world reads actions and room texts.
    """
    first = steps[0] if steps and not steps[0].action else None
    reader = _Reader(task_id, lexicon, first)
    reading = Reading(task_id, reader.location, reader.digest())
    reading.steps.extend(reader.read(step) for step in steps if step.action)
    return reading
