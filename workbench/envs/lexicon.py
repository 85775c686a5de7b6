"""How a world's actions and room texts read, in terms every stage can use.

A world speaks its own vocabulary (one opens ``door to kitchen`` and goes ``to kitchen``,
another opens a ``wooden door`` and goes ``east``). The stages that must not know any one
world — the scripted agent's mistakes, the compiler's mechanisms, a subagent's exploration —
read actions and scenes through a :class:`Lexicon` instead: what *role* an action plays
(moving, opening, taking, checking, deciding, waiting), what it acts on, which exits a room
text shows and whether they are open, and whether an observation reports an error.

:class:`Lexicon` itself reads plain English text adventures (``go X``/``go to X``, ``open X``,
``take X``, ``examine X``…), which covers worlds that register none; a world subclasses it
where its vocabulary differs. Every pattern here is a world-neutral English phrase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Literal, get_args

Role = Literal["move", "open", "take", "check", "decide", "wait", "other"]
"""What an action does, whatever the world calls it:

- ``move``: goes somewhere (a room, a direction); its target is where;
- ``open``: opens or unlocks a door or container; its target is what it opens;
- ``take``: picks up or takes an object;
- ``check``: gathers information without changing the world (examine, read, measure);
- ``decide``: commits to an answer or a final act the world judges (focus, answer, eat);
- ``wait``: lets time pass;
- ``other``: anything else (use, cook, put, connect…).
"""

ROLES: frozenset[str] = frozenset(get_args(Role))
"""Every role's name."""

_COMPASS = {
    "north": "south",
    "east": "west",
    "up": "down",
    "in": "out",
    "northeast": "southwest",
    "northwest": "southeast",
}
OPPOSITE: dict[str, str] = _COMPASS | {b: a for a, b in _COMPASS.items()}
"""Each compass word's opposite (the way back through an exit named by direction)."""
DIRECTIONS = frozenset(OPPOSITE)
"""Compass words: exits that worlds name by direction rather than by the place they lead to."""

ExitState = Literal["open", "closed", "locked"]


@dataclass(frozen=True)
class ActionRole:
    """The role of one action and what it acts on."""

    role: Role
    target: str = ""
    """The place, door or object the action is about (lower case, articles dropped)."""
    verb: str = ""
    """The action's verb phrase (``go to``, ``open``, ``focus on``, ``take``…)."""


@dataclass(frozen=True)
class Exit:
    """A way out of the current place."""

    name: str
    """Where it leads (a room) or its direction (``east``), as the move action names it."""
    state: ExitState = "open"
    go: str = ""
    """The action that takes it."""
    open: str = ""
    """The action that opens it when it is not open (empty: none is known)."""


@dataclass(frozen=True)
class Scene:
    """What a room text shows: where the agent is and the exits it sees."""

    location: str
    exits: tuple[Exit, ...] = ()
    visible: tuple[str, ...] = field(default=())
    """Objects the text names, when the world reports them."""

    def as_text(self) -> str:
        """The scene as evidence lines patterns can search (the same shape in every world):
        ``here: kitchen`` then ``exit: hallway (closed)`` per exit."""
        lines = [f"here: {self.location}"]
        lines += [f"exit: {e.name} ({e.state})" for e in self.exits]
        return "\n".join(lines)


_ARTICLE = re.compile(r"^(?:the|a|an|some)\s+", re.IGNORECASE)

_ERROR = re.compile(
    r"no known action matches|is not open|ambiguous request|can't|cannot|not possible"
    r"|it's not clear|there is nothing|is not here|not a verb i recogni[sz]e"
    r"|you don't see|you see no|you need to|is locked|first\.?$|nothing happens",
    re.IGNORECASE | re.MULTILINE,
)


def _plain(text: str) -> str:
    return _ARTICLE.sub("", text.strip().lower()).strip()


class Lexicon:
    """Plain text-adventure English; worlds subclass it where their vocabulary differs."""

    verbs: ClassVar[Mapping[str, Role]] = {
        "go to": "move",
        "go": "move",
        "walk to": "move",
        "move to": "move",
        "unlock": "open",
        "open": "open",
        "pick up": "take",
        "take": "take",
        "get": "take",
        "examine": "check",
        "look at": "check",
        "read": "check",
        "inspect": "check",
        "check": "check",
        "measure": "check",
        "wait": "wait",
        "answer": "decide",
    }
    """Verb phrases and their roles, matched longest first at the start of an action."""

    def known_verb(self, text: str) -> str | None:
        """The longest verb phrase of :attr:`verbs` that ``text`` (lower case) starts with."""
        return next((v for v in self._longest_first if text == v or text.startswith(v + " ")), None)

    @cached_property
    def _longest_first(self) -> tuple[str, ...]:
        return tuple(sorted(self.verbs, key=len, reverse=True))

    def role(self, action: str) -> ActionRole:
        """What ``action`` does and what it acts on."""
        text = action.strip().lower()
        verb = self.known_verb(text)
        if verb is not None:
            return ActionRole(self.verbs[verb], self.target(verb, text[len(verb) :]), verb)
        head = text.split(" ", 1)
        return ActionRole("other", self.target(head[0], head[1]) if len(head) > 1 else "", head[0])

    def target(self, verb: str, rest: str) -> str:
        """The object of ``verb`` in the rest of the action (``with``/``from`` parts dropped)."""
        rest = re.split(r"\s+(?:with|from|into|in|on|to)\s+", rest.strip(), maxsplit=1)[0]
        return _plain(rest)

    def is_navigation(self, action: str) -> bool:
        """Whether ``action`` is part of walking somewhere: a move, or opening a door."""
        found = self.role(action)
        return found.role == "move" or (found.role == "open" and "door" in found.target)

    def opens_way(self, opened: str, then: str) -> bool:
        """Whether ``then`` needs what ``opened`` opened: it moves (through a door) or acts
        on the opened thing."""
        target = self.role(opened).target
        follow = self.role(then)
        return bool(target) and (follow.role == "move" or target in then.lower())

    def scene(self, text: str) -> Scene | None:
        """The place and exits a room text shows; ``None`` when it is not a room text.
        The plain reading knows no room format: worlds that report rooms override it."""
        return None

    def error(self, observation: str) -> str | None:
        """The error an observation reports, normalised (``None`` when it reports none)."""
        found = _ERROR.search(observation)
        return found.group(0).lower().rstrip(".") if found else None

    def choices(self, decision: str, instruction: str) -> list[str]:
        """Other answers the task allows in place of the decision ``decision`` (for a
        mistaken guess); empty when the world does not say."""
        return []


PLAIN = Lexicon()
"""The reading used for worlds that register no lexicon (and for imported logs)."""


class PhraseFree(Lexicon):
    """The plain reading without its error phrases: how the analyzer reads a log of no
    installed world, where a text-game phrase (``cannot``, ``first.``) inside an agent's
    free text is no error (signals that hold for any log are read instead)."""

    def error(self, observation: str) -> str | None:
        return None


PHRASE_FREE = PhraseFree()


@dataclass(frozen=True)
class MistakeMode:
    """One mistake a scripted agent can make in a world: a name recorded as ground truth,
    the generic kind that plans it (see :mod:`workbench.agents.mistakes`), and the kind's
    parameters."""

    name: str
    kind: str
    verbs: tuple[str, ...] = ()
    """Verb phrases the kind is limited to (e.g. ``wrong-object`` on ``focus on``)."""
    exclude: str = ""
    """A regex; actions matching it are never the mistaken choice (nor planned for one)."""
    same_target: bool = False
    """``wrong-object``: keep the object and change the rest (e.g. the wrong container)."""


GENERIC_MODES = (
    MistakeMode("act-on-closed", "act-on-closed"),
    MistakeMode("wrong-object", "wrong-object"),
    MistakeMode("decide-before-check", "decide-before-check"),
    MistakeMode("repeat-invalid", "repeat-invalid"),
    MistakeMode("stop-early", "stop-early"),
    MistakeMode("skip-step", "skip-step"),
    MistakeMode("skip-route", "skip-route"),
)
"""The modes of a world that declares none, each read through its lexicon:

- ``act-on-closed``: acts on a door or container (or walks through it) without opening it;
- ``wrong-object``: a different admissible command of the same verb (wrong object, wrong exit);
- ``decide-before-check``: commits to a decision before the check that should inform it;
- ``repeat-invalid``: repeats a command the world does not accept, to the end;
- ``stop-early``: stops before the task is complete;
- ``skip-step``: leaves out one step of the plan and carries on;
- ``skip-route``: heads for a place two rooms away, as if the rooms between were not there.
"""
