"""What agents share: the interaction they act through, the protocol they implement, and the
plain-data spec their plugin builds them from."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from workbench.agents.guidance import Evidence, Guidance
from workbench.agents.subagents import OutOfBudget, World
from workbench.envs.base import Environment, Reset, Transition
from workbench.envs.lexicon import Lexicon
from workbench.envs.registry import lexicon_of

FIRST_ACTION_STEP = 1
"""Stored step index of an episode's first action: step 0 is the observation it starts from."""


ARTICLES = frozenset({"the", "a", "an"})
"""Words that matching an action to a listed one ignores."""
_STOPWORDS = ARTICLES | {"to", "in", "on", "of", "and", "is", "you", "it", "see", "that", "with"}


def words_of(text: str) -> list[str]:
    """The lower-case words (letters and digits) of ``text``."""
    return re.findall(r"[a-z0-9]+", text.lower())


def sample_actions(valid: Sequence[str], context: str, count: int, chars: int) -> list[str]:
    """A deterministic, varied sample: every verb gets a turn (round robin), within a verb the
    actions sharing most words with ``context`` first; returned in the original order."""
    seen = set(words_of(context)) - _STOPWORDS
    groups: dict[str, list[tuple[float, int, str]]] = {}
    for position, action in enumerate(valid):
        words = words_of(action)
        overlap = len(seen.intersection(words)) / (len(words) or 1)
        groups.setdefault(words[0] if words else "", []).append((-overlap, position, action))
    queues = [sorted(group) for group in groups.values()]
    queues.sort(key=lambda q: q[0])
    chosen: list[tuple[int, str]] = []
    used = 0
    depth = 0
    while len(chosen) < count and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(chosen) < count:
                _, position, action = queue[depth]
                if used + len(action) + 1 > chars:
                    return [a for _, a in sorted(chosen)]
                chosen.append((position, action))
                used += len(action) + 1
        depth += 1
    return [a for _, a in sorted(chosen)]


class OutOfSteps(Exception):
    """The episode's step limit is reached; the agent must stop."""


@dataclass
class Taken:
    """One recorded action and what came back."""

    thought: str
    action: str
    observation: str
    reward: float
    score: float
    source: str
    """Who chose the action: ``agent``, ``rule:<id>``, ``skill:<id>`` or ``subagent:<id>``."""
    info: dict[str, Any] = field(default_factory=dict)
    """What the world reported about the new state (see :attr:`Transition.info`)."""


@dataclass
class Interaction:
    """One episode being played: the agent acts through it and it records every step.

    Success is read from the environment when the episode ends, never from the agent.
    """

    env: Environment
    reset: Reset
    step_limit: int
    taken: list[Taken] = field(default_factory=list)
    done: bool = False
    score: float = 0.0
    uses: list[dict[str, Any]] = field(default_factory=list)
    """Guidance that fired: ``{"artifact": id, "kind": ..., "step": stored step index}``."""
    episode_id: str = ""
    """The id of the episode being played (the runner's planned id; empty outside a run)."""
    family: str = ""
    """The task type being played (empty when the caller does not say)."""
    delegations: list[dict[str, Any]] = field(default_factory=list)
    """Subagents run: each one's inputs and typed return, the actions it was refused included
    (see :func:`workbench.agents.subagents.delegation_record`)."""

    @property
    def instruction(self) -> str:
        return self.reset.instruction

    @property
    def observation(self) -> str:
        """The latest observation."""
        return self.taken[-1].observation if self.taken else self.reset.observation

    @property
    def next_step(self) -> int:
        """Stored step index the next action will get."""
        return len(self.taken) + FIRST_ACTION_STEP

    @property
    def steps_left(self) -> int:
        return self.step_limit - len(self.taken)

    def act(self, action: str, thought: str = "", source: str = "agent") -> Transition:
        """Take an action in the environment and record it."""
        if self.done:
            raise OutOfSteps("the episode is over")
        if self.steps_left <= 0:
            self.done = True
            raise OutOfSteps(f"step limit {self.step_limit} reached")
        result = self.env.step(action)
        self.score = result.score
        self.taken.append(
            Taken(
                thought,
                action,
                result.observation,
                result.reward,
                result.score,
                source,
                result.info,
            )
        )
        if result.done or self.steps_left <= 0:
            self.done = True
        return result

    @property
    def lexicon(self) -> Lexicon:
        """How this world reads actions and room texts (its plugin's lexicon; the plain one
        for an environment that is not installed)."""
        return lexicon_of(getattr(self.env, "name", ""))

    def evidence(self) -> Evidence:
        """What the agent can see now. Room and inventory cost one simulator call each, so
        they are read only when a pattern first searches the evidence: search it before
        acting. The room text is read through the world's lexicon (its scene lines)."""
        return Evidence(
            instruction=self.instruction,
            observation=self.observation,
            score=self.score,
            history=[(t.action, t.observation) for t in self.taken[-6:]],
            scene=lambda: (self.env.look(), self.env.inventory()),
            lexicon=self.lexicon,
        )

    def sample_valid(self, valid: Sequence[str], count: int, chars: int) -> list[str]:
        """At most ``count`` of the valid actions (``chars`` in all), chosen by
        :func:`sample_actions` for the task and the latest observation."""
        return sample_actions(valid, f"{self.instruction}\n{self.observation}", count, chars)

    def world(self, source: str) -> World:
        """The world as a subagent acting for ``source`` gets it: its actions are recorded
        as its own, and the episode's end ends its budget."""

        def act(action: str, thought: str) -> str:
            try:
                return self.act(action, thought, source).observation
            except OutOfSteps as ended:
                raise OutOfBudget(str(ended)) from ended

        return World(act, self.env.look, self.env.valid_actions, lambda: self.done)

    def record_use(self, artifact: str, kind: str) -> None:
        """Note that a guidance artifact fired at the next step."""
        self.uses.append({"artifact": artifact, "kind": kind, "step": self.next_step})


class Agent(Protocol):
    """An agent plays episodes through an :class:`Interaction`."""

    name: str
    """Recorded as the episode's agent."""

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        """Act until done or out of steps; returns metadata to keep with the episode."""
        ...


class AgentSpec(BaseModel):
    """How to build an agent inside a worker (plain data, so it crosses processes)."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(default="scripted", min_length=1)
    """The agent plugin's name (entry-point group ``workbench.agents``)."""
    rates: dict[str, float] | None = None
    """Scripted agent: probability of each mistake mode (default rates when ``None``)."""
    cmd: list[str] = Field(default_factory=list)
    """Command agent: the command line of the user's agent."""
    timeout: float = 60.0
    """Command agent: seconds to wait for each reply."""
    model: str | None = None
    """LLM agent: model name (default: ``WORKBENCH_MODEL``)."""
    script: dict[str, list[str]] = Field(default_factory=dict)
    """Script agent: the actions to play, in order, by planned episode id (a replay of
    recorded actions)."""
    examples: int = Field(default=0, ge=0)
    """Synthesized examples retrieved at each step (0: none; the exemplar agent's default is
    10), split between observation-based and model-based retrieval; the index is opened in
    the worker from the run's database."""
    example_kind: Literal["backward", "whole"] | None = None
    """Only retrieve examples of this kind (``None``: both)."""
    example_fallback: Literal["stop", "explorer"] = "stop"
    """Exemplar agent: what it does where no retrieved example applies — ``stop`` (fail
    honestly), or ``explorer`` (the scripted explorer's greedy choice: the valid action naming
    the instruction's words, with an effect, not repeated; with no example at all it plays
    exactly as that explorer does, the paired baseline of an examples experiment)."""


class AgentFactory(Protocol):
    """What a package registers under the ``workbench.agents`` entry-point group."""

    def __call__(self, spec: AgentSpec, db_path: str | None, manual: str) -> Agent:
        """The agent ``spec`` describes, built in the worker that runs it.

        Args:
            spec: the run's agent settings.
            db_path: the run's database file (``None`` in memory), e.g. to log model calls.
            manual: the formulated manual an agent that reads one puts in its prompt.
        """
        ...
