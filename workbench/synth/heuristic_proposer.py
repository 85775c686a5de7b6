"""The offline self-instruct backend (:class:`HeuristicProposer`): documented goals and
commands recombined with the objects and places the world reports, drawn with a seed.

From a passage it builds every candidate of a few shapes, then draws ``n`` of them with a
random generator seeded by the run's seed and the passage's id (so the same seed proposes the
same tasks in any process):

- a documented goal with one of its objects swapped for the object another variation of the
  same family names in its goal (played in that variation);
- a command the world task's documentation shows its world accepts (``take carrot from
  fridge`` → ``Take the carrot from the fridge.``) — or, where it shows none, a documented
  command template filled with the world task's objects (``pick up the thermometer``) —
  alone, after finding its object, after going to a place of that world, or followed by
  another one;
- going to one of the world task's places, for a command that moves;
- for an object passage, finding one of its objects that a world task holds, then acting on it.

Every name it puts in an instruction comes from the world task's passage (its world's objects
and places), so proposals pass :func:`~workbench.synth.proposer.check_proposals` by
construction. It reads templates through the world's lexicon only to tell a command that moves
(filled with a place) from one that acts on objects.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence

from workbench.synth.proposer import (
    Ground,
    Proposal,
    ProposalRequest,
    check_proposals,
    mentions,
)

SLOT = "OBJ"
ENTITIES = 6
"""Objects of a world task a candidate may name (its most relevant ones)."""
PLACES = 4
"""Places of a world task a candidate may name."""
GROUNDS = 6
"""World tasks a passage's candidates are spread over."""


class HeuristicProposer:
    """The :class:`~workbench.synth.proposer.Proposer` that recombines documentation."""

    name = "heuristic"

    def propose(self, request: ProposalRequest) -> list[Proposal]:
        """``request.n`` distinct proposals (fewer when there are fewer candidates), the same
        for the same seed and passage: each shape of candidate gets a turn in a seeded order,
        and within a shape the candidates come in a seeded order."""
        rng = random.Random(f"{request.seed}:{request.passage.id}")
        shapes = _candidates(request, rng)
        queues = [shapes[name] for name in sorted(shapes) if shapes[name]]
        for queue in queues:
            rng.shuffle(queue)
        rng.shuffle(queues)
        chosen: list[Proposal] = []
        seen: set[str] = set()
        for candidate in _round_robin(queues):
            key = candidate.instruction.lower()
            if key not in seen and not check_proposals(request, [candidate]):
                seen.add(key)
                chosen.append(candidate)
            if len(chosen) == request.n:
                break
        return chosen


def _round_robin(queues: list[list[Proposal]]) -> Iterator[Proposal]:
    for depth in range(max((len(q) for q in queues), default=0)):
        for queue in queues:
            if depth < len(queue):
                yield queue[depth]


Shapes = dict[str, list[Proposal]]


def _candidates(request: ProposalRequest, rng: random.Random) -> Shapes:
    passage = request.passage
    grounds = request.grounds[:GROUNDS]
    shapes: Shapes = {}
    if passage.kind in ("task", "intro"):
        own = grounds[:1] if passage.variation is not None else grounds
        for ground in own:
            shapes.setdefault("goal", []).extend(_swapped_goals(ground, grounds))
            _acts(shapes, request, ground, _goal_names(ground), rng)
    elif passage.kind == "action" and passage.template:
        for ground in grounds:
            _acts(shapes, request, ground, ground.entities[:ENTITIES], rng, passage.template)
    else:
        for ground in grounds:
            shared = [e for e in passage.entities if ground.knows(e)][:ENTITIES]
            finds = [_proposal(f"Find the {e}.", ground, [e]) for e in shared]
            shapes.setdefault("find", []).extend(finds)
            _acts(shapes, request, ground, shared or ground.entities[:ENTITIES], rng)
    return shapes


def _goal_names(ground: Ground) -> list[str]:
    """The objects its goal names, then its other most relevant objects."""
    named = [e for e in ground.entities if mentions(ground.goal, e)]
    return list(dict.fromkeys([*named, *ground.entities]))[:ENTITIES]


def _swapped_goals(ground: Ground, grounds: Sequence[Ground]) -> Iterator[Proposal]:
    """The goal with one object it names replaced by one another variation of its family
    names in its goal (played there)."""
    if not ground.goal:
        return
    named = _outermost([e for e in ground.entities if mentions(ground.goal, e)])
    for entity in named:
        for other in grounds:
            if other.family != ground.family or other is ground:
                continue
            for replacement in _outermost([e for e in other.entities if mentions(other.goal, e)]):
                if mentions(ground.goal, replacement):
                    continue
                text = _replace(ground.goal, entity, replacement)
                names = [n for n in (*other.entities, *other.places) if mentions(text, n)]
                yield _proposal(text, other, names)


def _outermost(names: Sequence[str]) -> list[str]:
    """The names that are not part of a longer one (``orange`` in ``orange juice``)."""
    return [n for n in names if not any(n != m and mentions(m, n) for m in names)]


Phrase = tuple[str, list[str]]
"""A command as words of an instruction (``take the carrot from the fridge``) and the names
it uses."""


def _acts(
    shapes: Shapes,
    request: ProposalRequest,
    ground: Ground,
    objects: Sequence[str],
    rng: random.Random,
    template: str = "",
) -> None:
    """Documented commands on the world task's objects (those its world accepts when it
    documents them, else the documented templates filled with its objects): alone, after
    finding the object, after going to a place, or followed by another one."""
    phrases = _phrases(request, ground, objects, template)
    places = list(ground.places[:PLACES])
    if _moves(request, template):
        shapes.setdefault("go", []).extend(
            _proposal(f"Go to the {p}.", ground, [p]) for p in places
        )
    for phrase, used in phrases:
        shapes.setdefault("act", []).append(_proposal(f"{phrase}.", ground, used))
        if used and used[0] in ground.entities:
            find = f"Find the {used[0]}, then {phrase}."
            shapes.setdefault("find", []).append(_proposal(find, ground, used))
        if places:
            place = rng.choice(places)
            go = _proposal(f"Go to the {place} and {phrase}.", ground, [place, *used])
            shapes.setdefault("go", []).append(go)
        others = [p for p in phrases if p[0] != phrase]
        if others:
            after, more = rng.choice(others)
            text = f"{phrase}, then {after}."
            shapes.setdefault("chain", []).append(_proposal(text, ground, [*used, *more]))


def _moves(request: ProposalRequest, template: str) -> bool:
    """Whether the passage's template (or, for a passage of no template, any documented
    one) moves the agent with a slot to fill."""
    templates = [template] if template else [a.template for a in request.actions]
    return any(
        SLOT in t and request.lexicon.role(t.replace(SLOT, "it")).role == "move" for t in templates
    )


def _phrases(
    request: ProposalRequest, ground: Ground, objects: Sequence[str], template: str
) -> list[Phrase]:
    """The commands candidates are made of: the world task's documented commands (of
    ``template`` when one is given) naming ``objects`` first; without any, the templates
    filled with ``objects``."""
    pattern = re.compile("^" + re.escape(template).replace(SLOT, ".+") + "$") if template else None
    accepted = [c for c in ground.examples if pattern is None or pattern.match(c)]
    if accepted:
        phrases = [_phrase(c, ground) for c in accepted]
        wanted = {o.lower() for o in objects}
        return sorted(phrases, key=lambda p: not wanted.intersection(n.lower() for n in p[1]))
    templates = [template] if template else [a.template for a in request.actions]
    filled = []
    for each in templates:
        if SLOT not in each or request.lexicon.role(each.replace(SLOT, "it")).role in (
            "move",
            "wait",
        ):
            continue
        for entity in objects:
            phrase = _fill(each, [entity, *objects])
            if phrase is not None:
                filled.append(phrase)
    return filled


def _phrase(command: str, ground: Ground) -> Phrase:
    """A command with ``the`` before each object or place of the world task it names."""
    names = sorted({*ground.entities, *ground.places}, key=len, reverse=True)
    if not names:
        return command, []
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(re.escape(n) for n in names) + r")(?![\w-])", re.IGNORECASE
    )
    used: list[str] = []

    def the(match: re.Match[str]) -> str:
        used.append(match.group(1))
        return f"the {match.group(1)}"

    return pattern.sub(the, command), list(dict.fromkeys(used))


def _fill(template: str, names: Sequence[str]) -> tuple[str, list[str]] | None:
    """The template with its slots filled by distinct names in order, and the names used
    (``None`` when it has no slot or too few names)."""
    slots = template.split().count(SLOT)
    distinct = list(dict.fromkeys(names))
    if slots == 0 or len(distinct) < slots:
        return None
    words, used = [], distinct[:slots]
    taken = iter(used)
    for word in template.split():
        words.append(f"the {next(taken)}" if word == SLOT else word)
    return " ".join(words), used


def _replace(text: str, old: str, new: str) -> str:
    """``text`` with the first whole-word ``old`` replaced by ``new``."""
    lower = text.lower()
    at = lower.find(old.lower())
    while at >= 0:
        end = at + len(old)
        if (at == 0 or not lower[at - 1].isalnum()) and (
            end == len(text) or not lower[end].isalnum()
        ):
            return text[:at] + new + text[end:]
        at = lower.find(old.lower(), at + 1)
    return text


def _proposal(text: str, ground: Ground, names: Sequence[str]) -> Proposal:
    instruction = text[:1].upper() + text[1:]
    named = [n for n in dict.fromkeys(names) if mentions(instruction, n)]
    return Proposal(instruction=instruction, ground=ground, entities=tuple(named))
