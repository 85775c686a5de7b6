"""The self-instruct judgment of Learn-by-interact (§2.2, Algorithm 1 line 5): a passage of a
world's documentation in, ``N`` task instructions out.

Whatever the backend, a proposal must be playable and grounded: it names the world task it is
played in (one of the request's :class:`Ground`\\ s: a train variation of a family) and only
objects and places that task's world holds or the passage names, and every entity it lists
appears in its instruction. :func:`check_proposals` decides that mechanically, the same for
the heuristic and the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from workbench.envs.base import DocPassage
from workbench.envs.lexicon import PLAIN, Lexicon

DEFAULT_N = 3
"""Instructions proposed per passage: the paper samples three per document."""


@dataclass(frozen=True)
class Ground:
    """A world task a proposal may be played in: one train variation of a family, with the
    goal its documentation states and what its world holds."""

    family: str
    variation: int
    source: str
    """The passage it was read from (its id)."""
    goal: str = ""
    """The documented goal of the task, its first sentence that names something (may be empty)."""
    entities: tuple[str, ...] = ()
    """Objects its world holds (or its passage names), most relevant first."""
    places: tuple[str, ...] = ()
    """Rooms and locations its world has."""
    examples: tuple[str, ...] = ()
    """Commands its world accepts on its objects, as documented."""

    def knows(self, name: str) -> bool:
        """Whether ``name`` is one of its objects or places (case-insensitive)."""
        return name.lower() in {n.lower() for n in (*self.entities, *self.places)}


@dataclass(frozen=True)
class ProposalRequest:
    """What a proposer reads to propose tasks from one passage."""

    passage: DocPassage
    grounds: tuple[Ground, ...]
    """Where tasks from the passage may be played: the passage's own variation first when it
    has one, then other train variations of its family (or of any family, for a passage that
    belongs to none)."""
    actions: tuple[DocPassage, ...] = ()
    """The world's documented commands (its ``action`` passages with a template)."""
    n: int = DEFAULT_N
    """How many instructions to propose."""
    seed: int = 0
    """The seed a heuristic draws with (recorded with every task)."""
    lexicon: Lexicon = PLAIN
    """How the world's commands read (which templates move, take, open...)."""


@dataclass(frozen=True)
class Proposal:
    """One proposed task: what to do, in which world task, naming which objects and places."""

    instruction: str
    ground: Ground
    entities: tuple[str, ...] = ()


class Proposer(Protocol):
    """Proposes task instructions from documentation (the self-instruct step)."""

    name: str
    """Recorded as each task's proposer: ``heuristic`` or ``openai:<model>``."""

    def propose(self, request: ProposalRequest) -> list[Proposal]:
        """At most ``request.n`` distinct proposals from ``request.passage``, each passing
        :func:`check_proposals`.

        Raises:
            ModelError: a model-backed proposer's answer still failed its check after one
                correction (or the call failed).
        """
        ...


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (split after ``.``, ``!`` or ``?``; lines are sentences too)."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if p.strip()]


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as whole words (case-insensitive)."""
    return _name_pattern(name).search(text) is not None


@cache
def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)


def documented_goal(passage: DocPassage) -> str:
    """A task or intro passage's goal: its first real sentence (four words or more, ending
    in ``.``, ``!`` or ``?``) that names one of its objects or places, else its first real
    sentence; leading connectives (``First,``, ``Then,``...) dropped. Empty for other
    passages."""
    if passage.kind not in ("task", "intro"):
        return ""
    real = [s for s in sentences(passage.text) if len(s.split()) >= 4 and s[-1] in ".!?"]
    names = (*passage.entities, *passage.places)
    goal = next((s for s in real if any(mentions(s, n) for n in names)), real[0] if real else "")
    goal = _CONNECTIVE.sub("", goal)
    return goal[:1].upper() + goal[1:]


_CONNECTIVE = re.compile(
    r"^(?:(?:and |okay, and )?then|first(?: off| thing)?|next|after that|following that"
    r"|finally|once done)\s*,?\s+",
    re.IGNORECASE,
)


def check_proposals(request: ProposalRequest, proposals: Sequence[Proposal]) -> list[str]:
    """What is wrong with ``proposals`` for ``request`` (empty when nothing is): more than
    ``n``, an empty or repeated instruction, a world task that is not one of the grounds, an
    entity its world task does not hold (nor the passage names), an entity the instruction
    does not name."""
    problems = []
    if len(proposals) > request.n:
        problems.append(f"{len(proposals)} tasks were proposed, at most {request.n} were asked")
    grounds = {(g.family, g.variation): g for g in request.grounds}
    own = {n.lower() for n in (*request.passage.entities, *request.passage.places)}
    seen: set[str] = set()
    for number, proposal in enumerate(proposals, start=1):
        text = proposal.instruction.strip()
        if not text:
            problems.append(f"task {number} has no instruction")
            continue
        if text.lower() in seen:
            problems.append(f"task {number} repeats an earlier instruction")
        seen.add(text.lower())
        ground = grounds.get((proposal.ground.family, proposal.ground.variation))
        if ground is None:
            where = f"{proposal.ground.family} variation {proposal.ground.variation}"
            problems.append(f"task {number} is played in {where}, which is not a listed world task")
            continue
        for entity in proposal.entities:
            if not ground.knows(entity) and entity.lower() not in own:
                problems.append(
                    f"task {number} names {entity!r}, which world task {ground.source} "
                    "does not hold"
                )
            elif not mentions(text, entity):
                problems.append(
                    f"task {number} lists {entity!r} but its instruction never names it"
                )
    return problems
