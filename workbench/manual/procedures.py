"""What a successful run's steps say beyond its raw path, read through the world's lexicon:

- its **phases** — consecutive actions grouped by what they do (walking somewhere; preparing:
  taking, opening, checking, using things; committing to a decision; waiting), a repeated
  cycle of actions kept as one phase with its count: what a *Success Process* rule
  summarises;
- its **cycles whose result changes** — the same actions repeated while what comes back
  changes (a reading that rises, a state that turns): how the environment behaves while
  time passes, a *Special Mechanism*;
- its **helpers** — two consecutive accepted actions that name the same thing, done with at
  least two different things in the run (``open … <place>``, then ``go … <place>``): a
  reusable method with that thing as its input, a *Useful Helper Method*.

Actions are abstracted with the task's own phrases (``<E1>``…, see
:func:`workbench.compare.normalize_action`); nothing here names any world.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from workbench.analyze.causes import error_signature
from workbench.compare import normalize_action
from workbench.compile.wording import input_names, readable
from workbench.envs.lexicon import Lexicon
from workbench.llm.steps import CaseStep

MAX_CYCLE = 3
"""Longest run of actions recognised as one repeated cycle."""
MIN_REPEATS = 3
"""Repeats that make a cycle (and a changing result a mechanism)."""
PHASE_KINDS = {"move": "navigate", "decide": "decide", "wait": "wait"}
"""The phase an action's role starts (every other role prepares: takes, opens, checks, uses)."""
PHASE_LABELS = {"decide": "commit to", "wait": "wait", "prepare": "prepare"}
SHOWN = 4
"""Distinct actions a phase names (the rest are counted)."""


@dataclass
class Phase:
    """Consecutive actions of one kind (or one repeated cycle)."""

    kind: str
    actions: list[str] = field(default_factory=list)
    """The phase's distinct actions, abstracted, in order."""
    repeats: int = 1
    """How often the cycle ran (1: not a cycle)."""
    steps: list[int] = field(default_factory=list)
    """The stored indices of its steps."""
    last: str = ""
    """Its last action, abstracted."""

    def describe(self, lexicon: Lexicon) -> str:
        """The phase in a few words: ``reach <E3> (4 steps)``, ``prepare: a; b``,
        ``commit to: c``, ``repeat ×9: x; y``."""
        if self.repeats > 1:
            return f"repeat ×{self.repeats}: " + "; ".join(self.actions)
        if self.kind == "navigate":
            target = _object(self.last, lexicon) if lexicon.role(self.last).role == "move" else ""
            return f"reach {target or 'the next place'} ({len(self.steps)} steps)"
        shown = "; ".join(self.actions[:SHOWN])
        more = len(self.actions) - SHOWN
        return f"{PHASE_LABELS.get(self.kind, 'prepare')}: {shown}" + (
            f" (and {more} more)" if more > 0 else ""
        )


def _object(action: str, lexicon: Lexicon) -> str:
    """What an abstracted action acts on, as written (placeholders kept)."""
    verb = lexicon.role(action).verb
    rest = action[len(verb) :].strip() if verb and action.lower().startswith(verb) else action
    return re.split(r"\s+(?:with|from|into|in|on|to)\s+", rest, maxsplit=1)[0] or action


def accepted(steps: list[CaseStep], lexicon: Lexicon) -> list[CaseStep]:
    """The steps whose action the environment accepted (no error came back)."""
    return [s for s in steps if s.action and not error_signature(s.observation, lexicon)]


def _cycle_at(actions: list[str], start: int) -> tuple[int, int]:
    """``(length, repeats)`` of the longest-covering cycle starting at ``start``."""
    best = (1, 1)
    for length in range(1, MAX_CYCLE + 1):
        unit = actions[start : start + length]
        if len(unit) < length:
            break
        repeats = 1
        while actions[start + repeats * length : start + (repeats + 1) * length] == unit:
            repeats += 1
        if repeats >= 2 and length * repeats > best[0] * best[1]:
            best = (length, repeats)
    return best


def phases(steps: list[CaseStep], instruction: str, lexicon: Lexicon) -> list[Phase]:
    """The run's phases (its accepted steps, in order)."""
    kept = accepted(steps, lexicon)
    actions = [normalize_action(s.action, instruction) for s in kept]
    found: list[Phase] = []
    position = 0
    while position < len(actions):
        length, repeats = _cycle_at(actions, position)
        covered = list(range(position, position + length * repeats))
        if repeats >= MIN_REPEATS or (repeats >= 2 and length > 1):
            unit = actions[position : position + length]
            found.append(Phase("cycle", unit, repeats, [kept[i].index for i in covered]))
            position += length * repeats
            continue
        action = actions[position]
        role = lexicon.role(kept[position].action).role
        navigating = lexicon.is_navigation(kept[position].action)
        kind = "navigate" if navigating else PHASE_KINDS.get(role, "prepare")
        last = found[-1] if found else None
        if last is not None and last.kind == kind and last.repeats == 1:
            if action not in last.actions:
                last.actions.append(action)
            last.steps.append(kept[position].index)
            last.last = action
        else:
            found.append(Phase(kind, [action], 1, [kept[position].index], action))
        position += 1
    return found


@dataclass
class Mechanism:
    """A repeated cycle whose result changed while it ran."""

    cycle: list[str]
    """The repeated actions, abstracted."""
    changed: str
    """The abstracted action whose result changed."""
    first: str
    """Its first result (as observed)."""
    last: str
    """Its last result."""
    steps: list[int]


def changing_cycles(steps: list[CaseStep], instruction: str, lexicon: Lexicon) -> list[Mechanism]:
    """Cycles of at least :data:`MIN_REPEATS` repeats in which one action's result changed."""
    by_index = {s.index: s for s in steps}
    found = []
    for phase in phases(steps, instruction, lexicon):
        if phase.repeats < MIN_REPEATS:
            continue
        for offset, action in enumerate(phase.actions):
            seen = [
                _first_line(by_index[i].observation)
                for k, i in enumerate(phase.steps)
                if k % len(phase.actions) == offset
            ]
            if lexicon.scene(by_index[phase.steps[offset]].observation) is not None:
                continue  # a room text changes with where one is, not with time
            if len(set(seen)) >= 2:
                found.append(Mechanism(phase.actions, action, seen[0], seen[-1], phase.steps))
                break
    return found


@dataclass
class Helper:
    """Two consecutive accepted actions naming the same thing, done with several things."""

    templates: list[str]
    """The two actions with the shared thing as ``{1}``."""
    fillers: list[str]
    """What stood for ``{1}`` each time (at least two different things)."""
    steps: list[int]

    def name(self, lexicon: Lexicon) -> str:
        """The helper's function name: its actions' verbs (``open_then_go_to``)."""
        verbs = [lexicon.role(t.replace("{1}", "x")).verb or t.split()[0] for t in self.templates]
        return "_then_".join(re.sub(r"[^a-z0-9]+", "_", v.lower()).strip("_") for v in verbs)

    def code(self, lexicon: Lexicon) -> str:
        """The helper as a Python function over ``act``."""
        argument = input_names(self.templates, lexicon).get("1", "value").replace("-", "_")
        body = [f'    act(f"{t.replace("{1}", "{" + argument + "}")}")' for t in self.templates]
        return "\n".join([f"def {self.name(lexicon)}({argument}):", *body])

    def words(self, lexicon: Lexicon) -> str:
        """The helper's steps with its input named by role."""
        names = input_names(self.templates, lexicon)
        return " then ".join(f"'{readable(t, names)}'" for t in self.templates)


def helpers(steps: list[CaseStep], instruction: str, lexicon: Lexicon) -> list[Helper]:
    """Pairs of consecutive accepted actions that share their object, as templates done with
    at least two different objects in the run."""
    kept = accepted(steps, lexicon)
    found: dict[tuple[str, str], Helper] = {}
    for first, second in itertools.pairwise(kept):
        shared = _shared_tail(first.action.lower(), second.action.lower())
        if not shared or lexicon.scene(second.observation) is not None:
            continue
        templates = [
            _template(first.action.lower(), shared),
            _template(second.action.lower(), shared),
        ]
        if any("<E" in normalize_action(t, instruction) for t in templates):
            continue  # the task's own objects: a procedure of this task, not a helper
        helper = found.setdefault(tuple(templates), Helper(templates, [], []))  # type: ignore[arg-type]
        if shared not in helper.fillers:
            helper.fillers.append(shared)
        helper.steps += [first.index, second.index]
    return [h for h in found.values() if len(h.fillers) >= 2]


LINKS = frozenset({"to", "in", "on", "into", "with", "from", "at", "the", "a", "an"})
"""Words that join an action to its object; a shared object never starts with one."""


def _shared_tail(first: str, second: str) -> str:
    """The longest run of whole words both actions end with, without a leading joining
    word (empty when none)."""
    a, b = first.split(), second.split()
    n = 0
    while n < min(len(a), len(b)) - 1 and a[-1 - n] == b[-1 - n]:
        n += 1
    shared = a[len(a) - n :] if n else []
    while shared and shared[0] in LINKS:
        shared = shared[1:]
    return " ".join(shared)


def _template(action: str, shared: str) -> str:
    return action[: len(action) - len(shared)] + "{1}"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
