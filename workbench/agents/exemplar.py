"""The exemplar agent: acts by retrieval of synthesized examples alone, with no model.

At each step it retrieves examples for the current situation as Learn-by-interact's agentic
retrieval does (:meth:`~workbench.synth.retrieval.ExampleIndex.agentic`: observation-based,
then model-based with the offline query writer), and in those examples looks for the
**point** most like where the episode is now: the example's observation most like the
current one (word for word best), with the actions that led there agreeing with the
episode's latest actions (the longer the agreement, the better; actions are compared with the
task's entities abstracted, :func:`workbench.compare.normalize_action`). It then takes the
example's next action from that point, carried into the current task
(:mod:`workbench.agents.entities`: the example's phrases replaced by those standing for them
in the current instruction and in the observations the two episodes met at matching points)
and grounded to an action the world accepts (:func:`workbench.agents.llm.ground`, against
:meth:`Environment.valid_actions`). An action whose object (read through the world's
lexicon) the episode has never seen is taken only when no candidate's is seen.

Among the points, those from which the example went on to gain score are preferred: each
later step of the example whose score rose (in the episode it comes from) adds to the point's
promise, each whose score fell takes from it, discounted by how far ahead it is (only the
sign counts, so no world's scale matters). The examples were retrieved by likeness alone; the
promise is what a reader of them would look for first.

With no example at all, or no point like the current situation, it stops and fails honestly
(``fallback="stop"``, the default), or takes the greedy choice of the scripted explorer
(``fallback="explorer"``: the valid action naming the instruction's words, with an observable
effect, not repeated where it was taken): with no example at all it then plays as that
explorer does, so an experiment with and without examples compares the same agent. It is
deterministic (no sampling: ties go to the better-ranked example and the earlier point; the
explorer's ties go to the episode's seed), and records, for every step, which example and point
drove it (or that the fallback did) and how the action was carried and grounded (episode
metadata ``exemplar``). Rules in the guidance review its actions as they do the other agents'
(a veto skips to the next candidate).

This measures what synthesized data is worth without a model: the same tasks with and
without examples, or with examples of one kind against another.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from store import Store, SynthExample
from workbench.agents.base import AgentSpec, Interaction, OutOfSteps
from workbench.agents.entities import EntityMap, Pair, phrase_pairs, seen_text, words
from workbench.agents.explorer import Exploration, ExplorerAgent
from workbench.agents.guidance import Guidance, review
from workbench.agents.llm import ground
from workbench.compare import normalize_action
from workbench.envs.registry import lexicon_of
from workbench.synth.effects import location_after, read_trajectory
from workbench.synth.heuristic_queries import HeuristicQueryWriter
from workbench.synth.queries import QueryWriter
from workbench.synth.retrieval import (
    M1,
    M2,
    ExampleIndex,
    Hit,
    same_text,
    split_examples,
    tokens,
)

NAME = "exemplar"

MIN_MATCH = 0.2
"""Least likeness of observations for a point to be followed without agreeing actions."""
AGREEMENT_WEIGHT = 0.25
"""What each agreeing action before a point adds to its likeness."""
AGREEMENT_DEPTH = 6
"""Most agreeing actions counted."""
ALIGN_DEPTH = 8
"""Most earlier observations aligned for the entity map."""
CANDIDATES = 12
"""Most points tried at one step."""
REPEATS = 2
"""Most times the same action is taken on the same observation (a loop is left)."""
PROMISE_WEIGHT = 0.5
"""What a point's promise (its example's discounted score changes ahead) adds to its score."""
PROMISE_DISCOUNT = 0.7
"""How much less each step further ahead counts in a point's promise."""
ELSEWHERE_WEIGHT = 0.5
"""What a point loses when its example was somewhere else (another place, carried into this
task) than the agent is now."""
TAKEN_WEIGHT = 0.5
"""What each earlier time the episode took an action takes from a point that proposes it."""
FALLBACKS = ("stop", "explorer")
"""What the agent may do where no example applies."""


def likeness(current: str, theirs: str) -> float:
    """How alike two observations are: 1 word for word, else the share of words in common."""
    if same_text(current) == same_text(theirs):
        return 1.0
    ours, other = set(tokens(current)), set(tokens(theirs))
    return len(ours & other) / (len(ours | other) or 1)


@dataclass(frozen=True)
class Course:
    """What an example's episode shows at each of its actions."""

    gains: list[int]
    """Whether the score rose (1), fell (-1) or stayed (0) at the action."""
    places: list[str]
    """Where the agent was when it took the action (``""``: not known)."""


@dataclass(frozen=True)
class Point:
    """A place in a retrieved example to act from."""

    hit: Hit
    rank: int
    """The example's place among the retrieved ones."""
    position: int
    """The example's position in the index."""
    step: int
    """Which of the example's actions comes next (its trajectory's observation ``step``)."""
    likeness: float
    agreeing: int
    """How many of the actions before it agree with the episode's latest ones."""
    promise: float = 0.0
    """The example's score changes from this point on (signs, discounted by distance)."""

    @property
    def score(self) -> float:
        return self.likeness + AGREEMENT_WEIGHT * self.agreeing + PROMISE_WEIGHT * self.promise


@dataclass(frozen=True)
class Choice:
    """The action chosen at one step and where it came from."""

    point: Point
    action: str
    carried: str
    how: str
    pairs: list[Pair]
    seen: bool
    """Whether the action's object is one the episode has seen."""
    elsewhere: bool = False
    """Whether the example took it somewhere else than the agent is (both places known)."""


class ExemplarAgent:
    """Acts by retrieving kept synthesized examples (see the module docstring).

    Args:
        store: the database whose kept examples are retrieved.
        kind: only examples of this kind (``backward`` or ``whole``; ``None``: both).
        m1: most examples from observation-based retrieval per step.
        m2: most examples from model-based retrieval per step.
        query_writer: writes the model-based query (default: the offline one).
        fallback: where no example applies, ``stop`` or take the ``explorer``'s greedy choice.
    """

    name = NAME

    def __init__(
        self,
        store: Store,
        *,
        kind: str | None = None,
        m1: int = M1,
        m2: int = M2,
        query_writer: QueryWriter | None = None,
        fallback: str = "stop",
    ) -> None:
        if fallback not in FALLBACKS:
            raise ValueError(f"unknown fallback {fallback!r}; known: {', '.join(FALLBACKS)}")
        self.store, self.kind, self.m1, self.m2 = store, kind, m1, m2
        self.query_writer = query_writer or HeuristicQueryWriter()
        self.fallback = fallback
        self._indexes: dict[str, ExampleIndex] = {}
        self._courses: dict[int | None, Course] = {}

    def course(self, example: SynthExample) -> Course:
        """What the episode an example comes from shows at each of the example's actions
        (steps trimmed from the example left out); empty when they cannot be matched."""
        if example.id not in self._courses:
            self._courses[example.id] = self._read_course(example)
        return self._courses[example.id]

    def _read_course(self, example: SynthExample) -> Course:
        episode = self.store.episode(example.episode_id)
        steps = self.store.steps(example.episode_id)
        if episode is None or not steps:
            return Course([], [])
        reading = read_trajectory(episode.task_id, steps, lexicon_of(example.env))
        removed = set((example.checks.get("repeats") or {}).get("removed", []))
        wanted = [i for i in range(example.start, example.end + 1) if i not in removed]
        known = {s.index for s in reading.steps}
        if len(wanted) != len(example.actions) or not set(wanted) <= known:
            return Course([], [])
        scores = {s.index: s.score for s in reading.steps}
        before = {s.index: scores.get(s.index - 1, 0.0) for s in reading.steps}
        signs = [(scores[i] > before[i]) - (scores[i] < before[i]) for i in wanted]
        return Course(signs, [reading.location_before(i) for i in wanted])

    def index(self, env: str) -> ExampleIndex:
        """The index of the kept examples of world ``env`` (opened once per agent)."""
        if env not in self._indexes:
            self._indexes[env] = ExampleIndex.open(self.store, env=env, kind=self.kind)
        return self._indexes[env]

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        index = self.index(interaction.env.name)
        episode = _Episode(self, interaction, index, guidance, rng)
        with contextlib.suppress(OutOfSteps):
            episode.play()
        return {
            NAME: {
                "index": index.digest[:16],
                "examples": len(index),
                "kind": self.kind or "all",
                "dense": index.dense,
                "steps": episode.records,
                "stopped": episode.stopped,
                "fallback": self.fallback,
                "fallback_steps": episode.fallback_steps,
            }
        }


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> ExemplarAgent:
    """The exemplar agent on the run's database (registered as ``exemplar``): ``spec.examples``
    examples per step (default 10, the paper's 5 + 5), of ``spec.example_kind``."""
    if db_path is None:
        raise ValueError("the exemplar agent reads its examples from the run's database")
    m1, m2 = split_examples(spec.examples or M1 + M2)
    return ExemplarAgent(
        Store(db_path), kind=spec.example_kind, m1=m1, m2=m2, fallback=spec.example_fallback
    )


class _Episode:
    """One episode of the exemplar agent."""

    def __init__(
        self,
        agent: ExemplarAgent,
        io: Interaction,
        index: ExampleIndex,
        guidance: Guidance,
        rng: random.Random,
    ) -> None:
        self.agent, self.io, self.index, self.guidance = agent, io, index, guidance
        self.records: list[dict[str, Any]] = []
        self.stopped = "done"
        self.repeats: Counter[tuple[str, str]] = Counter()
        self.taken: Counter[str] = Counter()
        self.refused: set[str] = set()
        scene = io.lexicon.scene(io.reset.observation)
        self.place = scene.location if scene else ""
        """Where the agent is, read as the examples' episodes are read (``""``: not known)."""
        self.explorer = (
            Exploration(io, rng, ExplorerAgent.greedy()) if agent.fallback == "explorer" else None
        )
        self.fallback_steps = 0

    def play(self) -> None:
        if not len(self.index) and self.explorer is None:
            self.stopped = "no examples"
            return
        while not self.io.done:
            choice = self._choose() if len(self.index) else None
            if choice is not None:
                self._take(choice)
            elif self.explorer is None:
                self.stopped = "no usable example"
                return
            elif not self._fall_back():
                self.stopped = "no fallback action"
                return

    # -- choosing ---------------------------------------------------------------------------

    def _choose(self) -> Choice | None:
        io = self.io
        history = [(t.action, t.observation) for t in io.taken]
        retrieved = self.index.agentic(
            io.instruction,
            history,
            io.observation,
            self.agent.query_writer,
            self.agent.m1,
            self.agent.m2,
        )
        points = self._points(retrieved.hits)
        if not points:
            return None
        valid = io.env.valid_actions()
        seen_words = self._seen_words(valid)
        best: tuple[bool, float, int] | None = None
        chosen: Choice | None = None
        for k, point in enumerate(points[:CANDIDATES]):  # best score first
            if best is not None and best[0] and point.score < best[1]:
                break  # no later point can be worth more
            choice = self._carry(point, valid, seen_words)
            if choice is None:
                continue
            key = (choice.seen, self._worth(choice), -k)
            if best is None or key > best:
                best, chosen = key, choice
        return chosen

    def _worth(self, choice: Choice) -> float:
        """A choice's point score, less what taking its action again is worth (each earlier
        time the episode took it, once more when the world refused it last time) and less
        :data:`ELSEWHERE_WEIGHT` when its example was somewhere else than the agent is."""
        times = self.taken[choice.action] + (choice.action in self.refused)
        return choice.point.score - TAKEN_WEIGHT * times - ELSEWHERE_WEIGHT * choice.elsewhere

    def _points(self, hits: list[Hit]) -> list[Point]:
        """Every point of the retrieved examples like the current situation, best first."""
        mine = [normalize_action(t.action, self.io.instruction) for t in self.io.taken]
        found = []
        for rank, hit in enumerate(hits):
            position = self.index.position(hit.example.id)
            trajectory = self.index.trajectory(position)
            theirs = [normalize_action(a, hit.example.instruction) for a in hit.example.actions]
            for step in range(len(hit.example.actions)):
                alike = likeness(self.io.observation, trajectory[step])
                agreeing = _agreement(mine, theirs[:step])
                if alike >= MIN_MATCH or agreeing:
                    promise = _promise(self.agent.course(hit.example).gains[step:])
                    found.append(Point(hit, rank, position, step, alike, agreeing, promise))
        found.sort(key=lambda p: (-p.score, p.rank, p.step))
        return found

    def _carry(self, point: Point, valid: list[str], seen_words: set[str]) -> Choice | None:
        """The point's next action carried into this task and grounded; ``None`` when it
        would repeat a loop or a rule vetoes it."""
        io = self.io
        example_action = point.hit.example.actions[point.step]
        entity_map = self._entity_map(point)
        seen = seen_text(self._seen_texts(valid))
        head, rest = _verb_and_rest(example_action, io.lexicon.role(example_action).verb)
        carried, pairs = entity_map.carry(rest, seen) if rest else ("", [])
        carried = f"{head} {carried}".strip()
        action, how = ground(carried, valid, seen="\n".join(self._seen_texts([])))
        if self.repeats[(same_text(io.observation), action)] >= REPEATS:
            return None
        verdict = review(self.guidance, action, io.evidence()) if self.guidance.rules else None
        if verdict is not None and verdict.response == "veto":
            return None
        target = io.lexicon.role(action).target
        known = not target or set(words(target)) <= seen_words
        places = self.agent.course(point.hit.example).places
        theirs = places[point.step] if point.step < len(places) else ""
        there = entity_map.carry(theirs, seen)[0] if theirs else ""
        elsewhere = bool(there and self.place) and _normal(there) != _normal(self.place)
        return Choice(point, action, carried, how, pairs, known, elsewhere)

    def _entity_map(self, point: Point) -> EntityMap:
        """The pairs that carry the example's actions here: from the two instructions, then
        from the observations at the point and at the steps before it."""
        io, example = self.io, point.hit.example
        trajectory = self.index.trajectory(point.position)
        entity_map = EntityMap()
        entity_map.add(phrase_pairs(example.instruction, io.instruction, "instruction"))
        mine = [io.reset.observation, *(t.observation for t in io.taken)]
        for back in range(min(point.step, len(mine) - 1, ALIGN_DEPTH) + 1):
            entity_map.add(
                phrase_pairs(trajectory[point.step - back], mine[-1 - back], "observation")
            )
        return entity_map

    def _seen_texts(self, valid: list[str]) -> list[str]:
        io = self.io
        return [io.instruction, io.reset.observation, *(t.observation for t in io.taken), *valid]

    def _seen_words(self, valid: list[str]) -> set[str]:
        return {w for text in self._seen_texts(valid) for w in words(text)}

    # -- acting -----------------------------------------------------------------------------

    def _take(self, choice: Choice) -> None:
        io = self.io
        point, example = choice.point, choice.point.hit.example
        verdict = (
            review(self.guidance, choice.action, io.evidence()) if self.guidance.rules else None
        )
        action, source = choice.action, "agent"
        if verdict is not None:  # a replacing rule (a veto was skipped while choosing)
            io.record_use(verdict.rule.id, "rule")
            action, source = verdict.action, f"rule:{verdict.rule.id}"
        self.records.append(
            {
                "step": io.next_step,
                "example": example.id,
                "point": point.step,
                "retriever": point.hit.retriever,
                "likeness": round(point.likeness, 3),
                "agreeing": point.agreeing,
                "promise": round(point.promise, 3),
                "elsewhere": choice.elsewhere,
                "example_action": example.actions[point.step],
                "carried": choice.carried,
                "pairs": [[p.source, p.target] for p in choice.pairs],
                "action": action,
                "grounded": choice.how,
            }
        )
        self._act(
            action,
            f"Example {example.id} ({example.instruction}) did "
            f"'{example.actions[point.step]}' here.",
            source,
        )

    def _fall_back(self) -> bool:
        """Take the explorer's greedy choice (reviewed by the rules like any action);
        ``False`` when the world accepts nothing or a rule vetoes it."""
        assert self.explorer is not None
        action = self.explorer.choose()
        if action is None:
            return False
        io, source = self.io, "agent"
        verdict = review(self.guidance, action, io.evidence()) if self.guidance.rules else None
        if verdict is not None and verdict.response == "veto":
            return False
        if verdict is not None:
            io.record_use(verdict.rule.id, "rule")
            action, source = verdict.action, f"rule:{verdict.rule.id}"
        self.records.append({"step": io.next_step, "example": None, "action": action})
        self.fallback_steps += 1
        self._act(action, "No example applies here: the explorer's choice.", source)
        return True

    def _act(self, action: str, thought: str, source: str) -> None:
        io = self.io
        self.repeats[(same_text(io.observation), action)] += 1
        result = io.act(action, thought, source)
        self.taken[action] += 1
        self.place = location_after(io.lexicon, self.place, action, result.observation)
        if io.lexicon.error(result.observation):
            self.refused.add(action)
        else:
            self.refused.discard(action)
        if self.explorer is not None:
            self.explorer.observe(action, result.observation)


def _verb_and_rest(action: str, verb: str) -> tuple[str, str]:
    """An action's verb phrase (as its world's lexicon reads it) and the rest: only the rest
    is carried into another task (a pair never replaces what the action does)."""
    mine, theirs = words(action), words(verb)
    if theirs and mine[: len(theirs)] == theirs:
        return " ".join(theirs), " ".join(mine[len(theirs) :])
    return "", action


def _normal(place: str) -> str:
    return " ".join(words(place))


def _promise(signs: list[int]) -> float:
    """Score changes ahead (signs), each discounted by how far ahead it is."""
    return sum(sign * PROMISE_DISCOUNT**ahead for ahead, sign in enumerate(signs))


def _agreement(mine: list[str], theirs: list[str]) -> int:
    """How many of the latest actions of two action lists agree, newest first (at most
    :data:`AGREEMENT_DEPTH`)."""
    count = 0
    while (
        count < min(len(mine), len(theirs), AGREEMENT_DEPTH)
        and mine[-1 - count] == theirs[-1 - count]
    ):
        count += 1
    return count
