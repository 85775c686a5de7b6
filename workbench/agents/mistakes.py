"""The scripted agent's mistakes, planned on any world's gold path.

A world declares its mistakes as :class:`~workbench.envs.lexicon.MistakeMode` s (its plugin's
``mistake_modes``; :data:`~workbench.envs.lexicon.GENERIC_MODES` when it declares none). Each
names a *kind*, a planner here that reads the gold path only through the world's
:class:`~workbench.envs.lexicon.Lexicon` — which actions move, open, take, check, decide or
wait, and what they act on — so no kind knows any one world's vocabulary:

=========================  ========================================================================
``act-on-closed``          acts on what a gold step opens (or walks through it) without opening it
``wrong-object``           takes another admissible action of the same verb (wrong object or exit)
``no-wait``                goes on before a change it should wait for (waiting or monitoring) is over
``decide-before-check``    commits to a wrong answer at the check that should have informed it
``repeat-invalid``         repeats an action the world does not understand, to the end
``stop-early``             stops before the task is complete
``skip-step``              leaves out one step that later steps depend on, and carries on
``skip-route``             heads for a place two rooms away as if the rooms between were not there
=========================  ========================================================================

Planning draws from the episode's random generator in the world's mode order, so the same seed
makes the same mistakes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property

from workbench import patterns
from workbench.agents.guidance import STOP
from workbench.envs.lexicon import GENERIC_MODES, PLAIN, ActionRole, Lexicon, MistakeMode

DEFAULT_RATE = 0.12
"""Probability that each mode fires in an episode (where the plan has a place for it)."""

ALIASES: dict[str, str] = {
    "closed-door": "act-on-closed",
    "decide-before-measure": "decide-before-check",
    "wrong-container": "wrong-object",
}
"""Former mode names (of the agent that knew one world only), still accepted in rates."""

NEVER_SKIPPED = ("move", "check", "wait")
"""Roles of steps ``skip-step`` never leaves out (walking past rooms is ``skip-route``)."""


@dataclass
class Mistake:
    """A planned deviation from the gold path."""

    mode: str
    """The mode's name, recorded as ground truth."""
    index: int
    """Plan index where the agent deviates."""
    proposed: str
    """The action the agent proposes instead (``STOP`` to stop; empty: chosen when reached)."""
    resume: int
    """Plan index the agent continues from after taking the mistaken action."""
    persistent: bool = False
    """The agent keeps proposing it (a loop) until guidance stops it or steps run out."""
    fired: bool = False
    """Whether the agent has taken the mistaken action yet."""
    choose: MistakeMode | None = None
    """The mode whose kind picks the action when the step is reached (``proposed`` empty)."""


@dataclass(frozen=True)
class Plan:
    """What a kind plans on: the gold path, the task, and how the world's actions read."""

    gold: list[str]
    """The world's gold path."""
    instruction: str
    """The task description (it may name the answers a decision can take)."""
    lexicon: Lexicon
    """The world's reading of its actions."""

    @cached_property
    def roles(self) -> tuple[ActionRole, ...]:
        """How each gold step reads (read once: the kinds ask again and again)."""
        return tuple(self.lexicon.role(action) for action in self.gold)

    def role(self, i: int) -> str:
        """The role of gold step ``i``."""
        return self.roles[i].role


Planner = Callable[[MistakeMode, Plan, random.Random], list[Mistake]]


def plan_mistakes(
    gold: list[str],
    instruction: str,
    rates: Mapping[str, float],
    rng: random.Random,
    modes: tuple[MistakeMode, ...] = GENERIC_MODES,
    lexicon: Lexicon = PLAIN,
) -> list[Mistake]:
    """Choose which mistakes this episode makes and where (one per fired mode, no overlaps).

    Args:
        gold: the world's gold path.
        instruction: the task description.
        rates: probability per mode name (modes missing here never fire).
        rng: the episode's generator; every mode draws from it in ``modes`` order.
        modes: the world's mistake modes.
        lexicon: the world's reading of its actions.

    Raises:
        ValueError: a mode names a kind no planner implements.
    """
    plan = Plan(gold, instruction, lexicon)
    chosen: dict[int, Mistake] = {}
    for mode in modes:
        if rng.random() >= rates.get(mode.name, 0.0):
            continue
        candidates = _planner(mode)(mode, plan, rng)
        if candidates:
            mistake = rng.choice(candidates)
            chosen.setdefault(mistake.index, mistake)
    return [chosen[i] for i in sorted(chosen)]


def _planner(mode: MistakeMode) -> Planner:
    planner = KINDS.get(mode.kind)
    if planner is None:
        raise ValueError(
            f"mistake mode {mode.name!r} has unknown kind {mode.kind!r}; kinds: {', '.join(KINDS)}"
        )
    return planner


def choose_when_reached(
    mistake: Mistake, planned: str, valid: list[str], lexicon: Lexicon, rng: random.Random
) -> str | None:
    """The mistaken action of a ``wrong-object`` mistake, among the actions valid now: same
    verb (and, with ``same_target``, same object) as the planned one, but not it. ``None``
    when there is none; otherwise it is kept in ``mistake.proposed``."""
    mode = mistake.choose
    if mode is None:
        return mistake.proposed or None
    want = lexicon.role(planned)
    options = []
    for action in valid:
        found = lexicon.role(action)
        if (
            action != planned
            and found.verb == want.verb
            and (not mode.same_target or found.target == want.target)
            and not _excluded(mode, action)
        ):
            options.append(action)
    if not options:
        return None
    mistake.proposed = rng.choice(sorted(options))
    return mistake.proposed


def _excluded(mode: MistakeMode, action: str) -> bool:
    return bool(mode.exclude) and patterns.search(mode.exclude, action) is not None


# -- the kinds ------------------------------------------------------------------------------


def act_on_closed(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """Where a step opens something the next step needs, take the next step without it."""
    gold = plan.gold
    return [
        Mistake(mode.name, i, gold[i + 1], i + 2)
        for i in range(len(gold) - 1)
        if plan.role(i) == "open" and plan.lexicon.opens_way(gold[i], gold[i + 1])
    ]


def wrong_object(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """At a step of the mode's verbs, another valid action of its verb (chosen when reached)."""
    return [
        Mistake(mode.name, i, "", i + 1, choose=mode)
        for i, action in enumerate(plan.gold)
        if _wrong_object_step(mode, plan.roles[i], action)
    ]


def _wrong_object_step(mode: MistakeMode, role: ActionRole, action: str) -> bool:
    """Whether ``wrong-object`` may swap ``action``: it acts on something, with one of the
    mode's verbs (any when it names none), and the mode does not exclude it."""
    in_verbs = not mode.verbs or role.verb in mode.verbs
    return bool(role.target) and in_verbs and not _excluded(mode, action)


def no_wait(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """At the start of a waiting segment, go straight to the step after it."""
    found = []
    n = len(plan.gold)
    for i in range(n):
        end = waiting_end(plan, i)
        if end is not None and end < n and (i == 0 or waiting_end(plan, i - 1) is None):
            found.append(Mistake(mode.name, i, plan.gold[end], end + 1))
    return found


def waiting_end(plan: Plan, i: int) -> int | None:
    """If a waiting segment starts at ``i``, the index just after it.

    Waiting is either wait-role actions or monitoring repeated while a change happens (the
    same two actions alternating at least three times, e.g. examine + measure).
    """
    gold, n = plan.gold, len(plan.gold)
    if plan.role(i) == "wait":
        end = i
        while end < n and plan.role(end) == "wait":
            end += 1
        return end
    if (
        i + 5 < n
        and gold[i] == gold[i + 2] == gold[i + 4]
        and gold[i + 1] == gold[i + 3] == gold[i + 5]
    ):
        end = i + 2
        while end < n and gold[end] == gold[end - 2]:
            end += 1
        return end
    return None


def decide_before_check(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """At the first check that informs a decision, decide at once, guessing another answer
    the task allows; then carry on after the decision."""
    found = []
    for d, action in enumerate(plan.gold):
        choices = plan.lexicon.choices(action, plan.instruction)
        if not choices or plan.role(d) != "decide":
            continue
        last = max((i for i in range(d) if plan.role(i) == "decide"), default=-1)
        checks = [c for c in range(last + 1, d) if plan.role(c) == "check"]
        if checks:
            found.append(Mistake(mode.name, checks[0], rng.choice(choices), d + 1))
    return found


def repeat_invalid(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """At a step, an action the world will not understand, repeated until stopped."""
    n = len(plan.gold)
    return [
        Mistake(mode.name, i, garble(plan.gold[i], rng), i, persistent=True)
        for i in range(1, n - 1)
    ]


def garble(action: str, rng: random.Random) -> str:
    """An action the world will not understand, phrased the way a model might."""
    return rng.choice([f"{action} carefully", f"try to {action}", f"{action} now please"])


def stop_early(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """Stop somewhere after the first third of the plan, before its last step."""
    n = len(plan.gold)
    return [Mistake(mode.name, i, STOP, n) for i in range(max(1, n // 3), n - 1)]


def skip_step(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """Leave out a step that acts on something a later step needs (taking, opening, using
    it — not walking, checking or waiting) and carry on with the next."""
    gold, found = plan.gold, []
    for i in range(len(gold) - 1):
        role = plan.roles[i]
        later = " ".join(gold[i + 1 :]).lower()
        if role.role not in NEVER_SKIPPED and role.target and role.target in later:
            found.append(Mistake(mode.name, i, gold[i + 1], i + 2))
    return found


def skip_route(mode: MistakeMode, plan: Plan, rng: random.Random) -> list[Mistake]:
    """At the start of a walk through two rooms or more, go straight to its last room."""
    return [Mistake(mode.name, i, plan.gold[end], end + 1) for i, end in routes(plan)]


def routes(plan: Plan) -> list[tuple[int, int]]:
    """``(start, end)`` of every walk through two rooms or more: navigation actions only,
    ending with the move into the place it leads to."""
    found = []
    i, n = 0, len(plan.gold)
    while i < n:
        end = i
        while end < n and plan.lexicon.is_navigation(plan.gold[end]):
            end += 1
        moves = [k for k in range(i, end) if plan.role(k) == "move"]
        if len(moves) >= 2:
            found.append((i, moves[-1]))
        i = max(end, i + 1)
    return found


KINDS: dict[str, Planner] = {
    "act-on-closed": act_on_closed,
    "wrong-object": wrong_object,
    "no-wait": no_wait,
    "decide-before-check": decide_before_check,
    "repeat-invalid": repeat_invalid,
    "stop-early": stop_early,
    "skip-step": skip_step,
    "skip-route": skip_route,
}
"""The planner of each kind a :class:`~workbench.envs.lexicon.MistakeMode` may name."""


# -- mode names -----------------------------------------------------------------------------


def world_modes(env_name: str) -> tuple[Lexicon, tuple[MistakeMode, ...]]:
    """The lexicon and mistake modes of the world ``env_name``; the plain reading and the
    generic modes when no installed plugin registers it."""
    from workbench.envs.registry import environment_plugin
    from workbench.plugins import PluginError

    try:
        plugin = environment_plugin(env_name)
    except PluginError:
        return PLAIN, GENERIC_MODES
    return plugin.lexicon, plugin.mistake_modes


@cache
def known_modes() -> tuple[str, ...]:
    """Every mode name of the installed worlds and the generic modes, in first-seen order
    (a world whose plugin cannot be loaded adds none)."""
    from workbench.envs.registry import environment_names

    names = [m.name for env in environment_names() for m in world_modes(env)[1]]
    return tuple(dict.fromkeys([*names, *(m.name for m in GENERIC_MODES)]))


def mode_name(name: str) -> str:
    """The current name of the mode ``name`` (a former name is translated).

    Raises:
        ValueError: no installed world has such a mode (the message lists the known ones).
    """
    name = ALIASES.get(name, name)
    if name not in known_modes():
        raise ValueError(f"unknown mode {name!r}; modes: {', '.join(known_modes())}")
    return name


def current_rates(rates: Mapping[str, float]) -> dict[str, float]:
    """``rates`` under the modes' current names.

    Raises:
        ValueError: a name no installed world knows (one line listing the known ones).
    """
    unknown = sorted(n for n in rates if ALIASES.get(n, n) not in known_modes())
    if unknown:
        raise ValueError(f"unknown mistake modes {unknown}; known: {', '.join(known_modes())}")
    return {mode_name(n): p for n, p in rates.items()}


def default_rates() -> dict[str, float]:
    """:data:`DEFAULT_RATE` for every known mode."""
    return dict.fromkeys(known_modes(), DEFAULT_RATE)
