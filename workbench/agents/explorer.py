"""The scripted explorer: the offline agent of Learn-by-interact's interaction step.

It plays the instruction it is given (a synthesized task) by pursuing what the instruction
names, in any world, through what the world reports: its valid (admissible) actions, its room
texts read by the world's lexicon, and the role of each action. At each step it prefers, among
a varied sample of the valid actions (:func:`~workbench.agents.base.sample_actions`), those
that name the instruction's words, then those that change the world observably (taking,
opening, moving somewhere new), and it avoids repeating an action where it already took it,
actions the world refused, and judged final acts (``decide``: they may end the episode) —
unless the instruction asks for that very act, its verb followed by its object (``Eat the
meal.``: ``eat meal``), which it then takes like any effect, as an agent trying the task
would. With
a fixed chance per step it picks any action of the sample instead (exploration), and in some
episodes it first follows part of the world's documented route (its gold path).

So its trajectories reach real effects (things taken and opened, rooms entered, score gained)
while often not doing what the instruction literally asks: backward construction then writes
the instruction that matches what they did. Everything it draws comes from the episode's seed,
so an episode replays identically. It follows no guidance: synthesis explores the world as
it is.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections import Counter
from typing import Any

from workbench.agents.base import (
    ARTICLES,
    AgentSpec,
    Interaction,
    OutOfSteps,
    sample_actions,
    words_of,
)
from workbench.agents.guidance import Guidance
from workbench.agents.scripted import thought_for
from workbench.envs.lexicon import ActionRole, Lexicon, Role

EXPLORE = 0.2
"""Chance per step of taking any action of the sample instead of the best one."""
FOLLOW = 0.35
"""Chance per episode of first following part of the world's documented route."""
SAMPLE = 48
"""Valid actions considered per step (a varied sample: every verb gets a turn)."""
SAMPLE_CHARS = 4000

ROLE_BONUS: dict[Role, float] = {
    "take": 1.5,
    "open": 1.5,
    "move": 1.0,
    "other": 0.5,
    "check": 0.2,
    "wait": -0.5,
    "decide": -3.0,
}
"""How much each role of action is preferred: effects first, judged final acts last."""
NAMED = 2.5
"""Preference for an action naming a word of the instruction (plus ``NAMED_MORE`` per extra)."""
NAMED_MORE = 0.5
REPEATED = 1.5
"""Penalty per earlier time the action was taken in the same place."""
REFUSED = 2.0
"""Penalty for an action the world refused last time."""
NEW_PLACE = 1.0
"""Preference for moving to a place not yet visited."""

META = re.compile(r"^(?:reset|restart|quit|save|restore|undo|help|hint|score|task|goal)\b")
"""Commands about the game rather than the world (plain English), never taken."""
# fmt: off
FILLER = frozenset({
    "a", "an", "and", "the", "to", "of", "in", "on", "at", "into", "onto", "from", "with",
    "then", "first", "next", "it", "its", "your", "you", "task", "is", "are", "be", "find",
    "go", "get", "make", "do", "some", "all", "that", "this", "there", "here",
})
# fmt: on
"""Words of an instruction that name nothing to pursue."""


class ExplorerAgent:
    """The scripted explorer (deterministic given the episode seed).

    Args:
        explore: chance per step of a random pick from the sample.
        follow: chance per episode of following a prefix of the documented route first.
    """

    name = "explorer"

    def __init__(self, explore: float = EXPLORE, follow: float = FOLLOW) -> None:
        self.explore = explore
        self.follow = follow

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        """Explore until the episode ends, the step limit is reached or nothing is valid;
        returns what it did under ``explorer``: the route steps it followed, how many picks
        were random, and the instruction's words it pursued."""
        run = Exploration(interaction, rng, self)
        with contextlib.suppress(OutOfSteps):
            run.play()
        return {"explorer": run.summary()}

    @classmethod
    def greedy(cls) -> ExplorerAgent:
        """The explorer without chance: no random picks, no documented route — at every step
        the best-scored valid action (another agent's fallback where it has nothing better)."""
        return cls(explore=0.0, follow=0.0)


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> ExplorerAgent:
    """The explorer (registered as ``explorer``; it reads neither the database nor a manual)."""
    return ExplorerAgent()


def _unarticled(text: str) -> list[str]:
    return [w for w in words_of(text) if w not in ARTICLES]


class Exploration:
    """One explored episode: where the agent is, what it did where, what it pursues.

    Another agent can drive it step by step: :meth:`choose` the next action, and
    :meth:`observe` every action taken (by whoever chose it) with the world's answer.
    """

    def __init__(self, interaction: Interaction, rng: random.Random, agent: ExplorerAgent) -> None:
        self.io, self.rng, self.agent = interaction, rng, agent
        self.lexicon: Lexicon = interaction.lexicon
        self.targets = self._targets(interaction.instruction)
        self.asked = " ".join(["", *_unarticled(interaction.instruction), ""])
        self.place = self._where(interaction.observation)
        self.visited = {self.place} if self.place else set()
        self.done_here: Counter[tuple[str, str]] = Counter()
        self.refused: set[str] = set()
        self.route = self._route()
        self.followed = len(self.route)
        self.random_picks = 0

    def _targets(self, instruction: str) -> set[str]:
        """The instruction's words that name something (not verbs of the world, not filler)."""
        verbs = {w for phrase in self.lexicon.verbs for w in words_of(phrase)}
        return set(words_of(instruction)) - FILLER - verbs

    def _route(self) -> list[str]:
        """A prefix of the documented route, in the episodes that follow one."""
        if self.rng.random() >= self.agent.follow:
            return []
        gold = [a for a in self.io.env.gold_path() if not META.match(a.lower())]
        if not gold:
            return []
        return gold[: self.rng.randint(1, max(1, 2 * len(gold) // 3))]

    def play(self) -> None:
        while not self.io.done:
            action = self.route.pop(0) if self.route else self.choose()
            if action is None:
                return
            result = self.io.act(action, thought_for(action, self.lexicon))
            self.observe(action, result.observation)

    def observe(self, action: str, observation: str) -> None:
        """Note an action taken where the agent is and what the world answered."""
        self.done_here[(self.place, action)] += 1
        if self.lexicon.error(observation):
            self.refused.add(action)
        else:
            self.refused.discard(action)
        self._arrive(observation)

    def _where(self, text: str) -> str:
        scene = self.lexicon.scene(text)
        return scene.location if scene is not None else ""

    def _arrive(self, observation: str) -> None:
        """Update where the agent is: from the observation when it is a room text, else by
        looking (which takes no step)."""
        place = self._where(observation) or self._where(self.io.env.look())
        if place:
            self.place = place
            self.visited.add(place)

    def _valid(self) -> list[str]:
        """The actions the world accepts now (reported with the last step when the world
        offers them there), without commands about the game itself."""
        last = self.io.taken[-1].info.get("admissible") if self.io.taken else None
        valid = last if isinstance(last, list) else self.io.env.valid_actions()
        return [a for a in valid if not META.match(a.lower())]

    def choose(self) -> str | None:
        """The next action (``None``: the world accepts none)."""
        valid = self._valid()
        if not valid:
            return None
        context = f"{self.io.instruction}\n{self.io.observation}"
        sample = sample_actions(valid, context, SAMPLE, SAMPLE_CHARS) or valid[:SAMPLE]
        if self.rng.random() < self.agent.explore:
            self.random_picks += 1
            safe = [a for a in sample if self.lexicon.role(a).role != "decide"]
            return self.rng.choice(safe or sample)
        return max(sample, key=lambda a: (self._score(a), self.rng.random()))

    def _score(self, action: str) -> float:
        role = self.lexicon.role(action)
        here = set(words_of(self.place))  # where it is already: no longer worth pursuing
        named = len(self.targets.intersection(words_of(action)) - here)
        kind = "take" if role.role == "decide" and self._asked(role) else role.role
        score = ROLE_BONUS[kind] + (NAMED + NAMED_MORE * (named - 1) if named else 0.0)
        score -= REPEATED * self.done_here[(self.place, action)]
        if action in self.refused:
            score -= REFUSED
        if role.role == "move" and role.target and role.target not in self.visited:
            score += NEW_PLACE
        return score

    def _asked(self, role: ActionRole) -> bool:
        """Whether the instruction asks for a judged act: names its verb followed by its
        object (``eat the meal`` asks for ``eat meal``; articles aside)."""
        verb, target = words_of(role.verb), words_of(role.target)
        return bool(verb and target) and f" {' '.join(verb + target)} " in self.asked

    def summary(self) -> dict[str, Any]:
        return {
            "route": self.followed,
            "random_picks": self.random_picks,
            "targets": sorted(self.targets),
            "places": sorted(self.visited),
        }
