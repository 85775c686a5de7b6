"""The offline compiler: intervention specs and contract proposals read off the evidence.

Spec extraction recognises five failure mechanisms in a failed run's causal step and its
contrastive success, each with what it needs to be *observable* before the decision:

==========================  =======================================================================
``repeated-rejection``      the run repeats an action the environment just rejected (the same
                            rejection comes back); visible: that rejection in the recent history
``blocked-precondition``    an action fails because something named in it is not ready (a closed
                            door); visible: the line of an earlier observation that says so;
                            the success first does another action on the same object
``premature-decision``      the run commits (and fails) where the success first runs a short
                            procedure and then makes the same kind of decision from its result;
                            visible: that the result is not there yet
``unnamed-commitment``      an irreversible commitment (a critical failure) to an object the task
                            does not name, where the success commits to one it names
``unreachable-target``      the target is elsewhere: an action on a place or object the agent is
                            not at is rejected, where the success walks there through other
                            places first; visible: no exit to it (nor mention of it) in the scene.
                            A move in a compass direction the room has no exit in names no place
                            to seek: it becomes a veto where the scene shows no such exit
==========================  =======================================================================

Every reading goes through the run's world's :class:`~workbench.envs.lexicon.Lexicon` (its
errors, verbs, action roles and scenes), so the mechanisms fire in any world that reports them.
Members with the same mechanism, trigger and correction form one spec, whatever their cluster.
A member that fits none is reported with the reason. Every claim cites the steps it was read
from. A mechanism says what to correct, not who owns it: the spec's state owner and lifetime,
and the closure report of every attempted schema (see :func:`propose`), are read off what the
members' runs demand (:mod:`workbench.compile.obligations`) — the same demands the closure
controller decides against, whichever reasoner proposed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from store import (
    Activation,
    ArtifactKind,
    Citation,
    Claim,
    Execution,
    InterventionSpec,
    Observed,
    Scope,
)
from store.artifacts import Lifetime, StateOwner
from workbench.analyze.causes import error_signature, is_critical
from workbench.analyze.families import short_name
from workbench.compare import entity_phrases, normalize_action, tool_call, verb_of
from workbench.compile import recorded, wording
from workbench.compile.contracts import RETURN_SCHEMA, input_schema, slug
from workbench.compile.obligations import evidence_patterns, read_demands, runs_of
from workbench.compile.proposals import (
    Approach,
    AttemptProposal,
    Demands,
    KindChoice,
    MemberCase,
    ObligationReport,
    SpecProposal,
)
from workbench.envs.lexicon import DIRECTIONS, ActionRole, Lexicon, Scene
from workbench.envs.registry import INSTALLED, lexicon_of
from workbench.llm.steps import CaseStep

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
NUMBER_PATTERN = r"-?\d+(?:\.\d+)?"
UNSEEN = "?"
"""Key part of a blocked-precondition reading whose run never showed the precondition: it
joins a reading with the same trigger and correction that did."""
MAX_PROCEDURE = 4
"""Longest corrective procedure read off a success (longer ones are not one skill)."""
SUBAGENT_STEPS = 80
"""Step budget of a compiled subagent's delegated loop (a search of a whole house)."""
NO_SUCCESS = "its step budget spent, or every way tried, without success"
"""A subagent's failure termination when the spec names none."""
HISTORY = 6
"""Recent steps an agent's evidence shows (see :meth:`workbench.agents.base.Interaction.evidence`)."""
LOOKBACK = 8
"""How far before its decision a success's skipped procedure may start."""


# -- text helpers -------------------------------------------------------------------------------


def escape(text: str) -> str:
    """``re.escape`` that leaves spaces and dashes readable (they are literal anyway)."""
    return re.escape(text).replace("\\ ", " ").replace("\\-", "-")


def _phrases(names: dict[str, str]) -> re.Pattern[str] | None:
    if not names:
        return None
    alternatives = "|".join(escape(p) for p in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


def pattern_of(text: str, names: dict[str, str] | None = None) -> str:
    """A regex matching ``text`` with each named phrase as its placeholder (``{1}``,
    ``{E2}``) and any number where it has a number."""
    names = {k.lower(): v for k, v in (names or {}).items() if k}
    phrases = _phrases(names)
    out, position = [], 0
    tokens = [(m.start(), m.end(), None) for m in _NUMBER.finditer(text)]
    if phrases is not None:
        tokens += [(m.start(), m.end(), names[m.group().lower()]) for m in phrases.finditer(text)]
    for start, end, name in sorted(tokens, key=lambda t: (t[0], -t[1])):
        if start < position:
            continue
        out.append(escape(text[position:start]))
        out.append(NUMBER_PATTERN if name is None else "{" + name + "}")
        position = end
    out.append(escape(text[position:]))
    return "".join(out)


def template_of(action: str, names: dict[str, str]) -> str:
    """``action`` with each named phrase replaced by its placeholder."""
    phrases = _phrases({k.lower(): v for k, v in names.items() if k})
    if phrases is None:
        return action
    lowered = {k.lower(): v for k, v in names.items()}
    return phrases.sub(lambda m: "{" + lowered[m.group().lower()] + "}", action)


def entity_names(instruction: str) -> dict[str, str]:
    """The instruction's entity phrases mapped to their placeholder names (``E1``...)."""
    return {phrase: name for name, phrase in entity_phrases(instruction).items()}


def split_action(action: str, lexicon: Lexicon | None = None) -> tuple[str, str]:
    """``(verb, argument)`` of an action, its verb read through ``lexicon`` (without one:
    the installed worlds'; see :func:`workbench.compare.verb_of`)."""
    verb = verb_of(action, lexicon)
    return verb, " ".join(action.split())[len(verb) :].strip()


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def cite(episode_id: str, start: int, end: int | None = None) -> Citation:
    return Citation(episode_id=episode_id, start=start, end=start if end is None else end)


# -- spec extraction ------------------------------------------------------------------------------


@dataclass
class Draft:
    """One member's reading: the mechanism and the spec it supports."""

    key: tuple[str, ...]
    member: MemberCase
    mechanism: str
    activation: Activation
    scope: Scope
    execution: Execution


class _Member:
    """A member case with its steps indexed."""

    def __init__(self, member: MemberCase) -> None:
        self.m = member
        self.case = member.case
        self.steps = member.case.steps
        self.at = {s.index: s for s in self.steps}
        self.failed = self.at.get(member.start)
        self.contrast = member.case.contrast_steps
        self.contrast_at = {s.index: s for s in self.contrast}
        self.lexicon = lexicon_of(member.case.environment)

    def error(self, observation: str) -> str | None:
        """The error ``observation`` reports, as the run's world reads it."""
        return error_signature(observation, self.lexicon)

    def split(self, action: str) -> tuple[str, str]:
        """``(verb, argument)`` of ``action``, as the run's world reads it."""
        return split_action(action, self.lexicon)

    @property
    def id(self) -> str:
        return self.case.episode_id

    def prior(self, index: int) -> list[tuple[int, str]]:
        """Observations seen before step ``index``, latest first (step 0 included)."""
        seen = [(0, self.m.initial_observation)]
        seen += [(s.index, s.observation) for s in self.steps if s.index < index]
        return seen[::-1]

    def contrast_prior(self, index: int) -> list[tuple[int, str]]:
        seen = [(0, self.m.contrast_initial_observation)]
        seen += [(s.index, s.observation) for s in self.contrast if s.index < index]
        return seen[::-1]

    def cite_failed(self, end: int | None = None) -> Citation:
        assert self.failed is not None
        return cite(self.id, self.failed.index, end)

    def cite_contrast(self, start: int, end: int | None = None) -> list[Citation]:
        if self.case.contrast_id is None:
            return []
        return [cite(self.case.contrast_id, start, end)]


def _repeated_rejection(x: _Member) -> Draft | str:
    failed = x.failed
    assert failed is not None
    signature = x.error(failed.observation)
    if signature is None or is_critical(failed):
        return "no rejection at the causal step"
    attempts = [failed] + [
        s
        for s in x.steps
        if s.index > failed.index
        and s.action == failed.action
        and x.error(s.observation) == signature
    ]
    if len(attempts) < 2:
        return "the rejected action is not repeated"
    # the first repeat whose previous attempt is still in the recent history the agent sees
    repeats = [
        later
        for earlier, later in itertools.pairwise(attempts)
        if later.index - earlier.index <= HISTORY
    ]
    if not repeats:
        return "the action is repeated only after its rejection left the recent history"
    rejection = first_line(failed.observation)
    seen = r"> {1}\n" + pattern_of(rejection)
    span = x.cite_failed(repeats[-1].index)
    contrast = x.cite_contrast(x.m.contrast_step) if x.m.contrast_step is not None else []
    activation = Activation(
        trigger=Claim(
            text="any action the agent proposes",
            value="(.+)",
            citations=[cite(x.id, repeats[0].index)],
        ),
        boundary=Claim(
            text="the first attempt of an action, before any rejection",
            citations=[x.cite_failed(), *contrast],
        ),
        observations=[
            Observed(
                text=f"that same action was just rejected with '{rejection}'",
                value=seen,
                citations=[span],
            )
        ],
    )
    scope = Scope(
        objective=Claim(
            text="do not repeat an action the environment rejected; go on with the plan instead",
            value="veto",
            citations=[span],
        ),
        decisions=[Claim(text="veto the repeated action", value="veto", citations=[span])],
    )
    execution = Execution(
        state=Claim(text="none: the rejection is in the recent history", citations=[span]),
        completion=Claim(text="the rejected action is not taken again", citations=[span]),
    )
    return Draft(
        ("repeated-rejection", seen), x.m, "repeated-rejection", activation, scope, execution
    )


def _blocked_precondition(x: _Member) -> Draft | str:
    failed = x.failed
    assert failed is not None
    if x.error(failed.observation) is None or is_critical(failed):
        return "no blocking error at the causal step"
    verb, argument = x.split(failed.action)
    if not verb or not argument:
        return "the failed action has no object"
    correction = x.contrast_at.get(x.m.contrast_step) if x.m.contrast_step is not None else None
    template = ""
    if correction is not None and argument.lower() in correction.action.lower():
        template = template_of(correction.action, {argument: "1"})
    elif x.m.correction.count("<X>") == 1 and "<E" not in x.m.correction:
        template = x.m.correction.replace("<X>", "{1}")
    if "{1}" not in template or x.split(template)[0] in ("", verb):
        return "no corrective action on the same object"
    line, seen_at = next(
        (
            (first, index)
            for index, text in x.prior(failed.index)
            for first in text.splitlines()
            if re.search(rf"(?<![\w-]){escape(argument)}(?![\w-])", first, re.IGNORECASE)
        ),
        ("", 0),
    )
    precondition = pattern_of(line.strip(), {argument: "1"}) if line else UNSEEN
    shown = template.replace("{1}", "<X>")
    seen_line = re.sub(
        rf"(?<![\w-]){escape(argument)}(?![\w-])", "<X>", line.strip(), flags=re.IGNORECASE
    )
    if line and _seen_in_contrast(x, verb, precondition, template):
        return "the success saw the same precondition and was not blocked"
    trigger = escape(verb) + " (.+)"
    contrast_cite = x.cite_contrast(x.m.contrast_step) if x.m.contrast_step is not None else []
    completion_text = correction.observation if correction is not None else ""
    unblocked = [
        s.index for s in x.contrast if x.split(s.action)[0] == verb and not x.error(s.observation)
    ]
    activation = Activation(
        trigger=Claim(
            text=f"the agent proposes '{verb} <X>'", value=trigger, citations=[x.cite_failed()]
        ),
        boundary=Claim(
            text=f"'{verb} <X>' where nothing says <X> is blocked",
            citations=[c for i in unblocked[:2] for c in x.cite_contrast(i)],
        ),
        observations=[
            Observed(
                text=f"an earlier observation says '{seen_line}' about that <X>",
                value=precondition,
                citations=[cite(x.id, seen_at)],
            ),
            Observed(
                text=f"'{shown}' was just done",
                value="> " + escape(template).replace(r"\{1\}", "{1}") + r"\n",
                absent=True,
                citations=[x.cite_failed(), *contrast_cite],
            ),
        ]
        if line
        else [],
    )
    scope = Scope(
        objective=Claim(
            text=f"'{shown}' before '{verb} <X>' while it is blocked",
            value=template,
            citations=[x.cite_failed(), *contrast_cite],
        ),
        decisions=[
            Claim(
                text=f"replace '{verb} <X>' with '{shown}'",
                value=template,
                citations=contrast_cite or [x.cite_failed()],
            )
        ],
    )
    execution = Execution(
        state=Claim(text="none: the precondition is visible", citations=[cite(x.id, seen_at)]),
        completion=Claim(
            text=f"the corrective action is accepted ('{first_line(completion_text)}')"
            if completion_text
            else "the corrective action is accepted",
            value=pattern_of(first_line(completion_text)) if completion_text else "",
            citations=contrast_cite or [x.cite_failed()],
        ),
        inputs=["1"],
    )
    return Draft(
        ("blocked-precondition", trigger, precondition, template),
        x.m,
        "blocked-precondition",
        activation,
        scope,
        execution,
    )


def _seen_in_contrast(x: _Member, verb: str, precondition: str, template: str) -> bool:
    """Whether the success took the same kind of action, without first taking the corrective
    one, while the precondition was visible (then it does not predict the failure)."""
    taken: set[str] = set()
    for step in x.contrast:
        taken.add(step.action.lower())
        other_verb, argument = x.split(step.action)
        if other_verb != verb or not argument or x.error(step.observation):
            continue
        if template.replace("{1}", argument).lower() in taken:
            continue  # the success did what the spec prescribes first
        filled = precondition.replace("{1}", escape(argument))
        for _, text in x.contrast_prior(step.index):
            if re.search(rf"(?<![\w-]){escape(argument)}(?![\w-])", text, re.IGNORECASE):
                if any(re.search(filled, line) for line in text.splitlines()):
                    return True
                break
    return False


def _premature_decision(x: _Member) -> Draft | str:
    failed = x.failed
    assert failed is not None
    if not (is_critical(failed) or x.error(failed.observation)):
        return "the causal step is not a failed decision"
    if x.m.contrast_step is None or x.case.contrast_id is None:
        return "no success shows what to do first"
    verb, _ = x.split(failed.action)
    order = [s.index for s in x.contrast]
    if x.m.contrast_step not in order:
        return "the contrast step is not an action"
    start = order.index(x.m.contrast_step)
    decision = next(
        (q for q in range(start, len(order)) if x.split(x.contrast[q].action)[0] == verb),
        None,
    )
    if not verb or decision is None:
        return f"the success never decides '{verb}' after the divergence"
    names = entity_names(x.case.contrast_instruction)
    taken = {normalize_action(s.action, x.case.instruction) for s in x.steps}
    available = set(entity_phrases(x.case.instruction))
    procedure = [
        s
        for s in x.contrast[max(0, decision - LOOKBACK) : decision]
        if (used := set(re.findall(r"\{(E\d+)\}", template_of(s.action, names))))
        and used <= available  # the failed run's task names them too
        and normalize_action(s.action, x.case.contrast_instruction) not in taken
    ][-MAX_PROCEDURE:]
    if not procedure:
        return (
            "the success does nothing on the task's objects, before deciding, that the run skipped"
        )
    templates = [template_of(s.action, names) for s in procedure]
    pattern = _decision_pattern(
        template_of(failed.action, entity_names(x.case.instruction)),
        template_of(x.contrast[decision].action, names),
    )
    if pattern is None:
        return "the failed and the successful decision have different shapes"
    result = first_line(procedure[-1].observation)
    if x.error(result):
        return "the success's procedure ends in a rejection, not an observable result"
    seen = pattern_of(result, names)
    roles = wording.input_names(templates, x.lexicon)
    said = [wording.readable(t, roles) for t in templates]
    expected = wording.as_pattern(result, names, roles)
    where = x.cite_contrast(procedure[0].index, x.contrast[decision].index)
    regime = _regime(x.m)
    activation = Activation(
        trigger=Claim(
            text=f"the agent is about to '{verb} …' (decide)",
            value=pattern,
            citations=[x.cite_failed()],
        ),
        boundary=Claim(
            text=f"'{verb} …' once the result is visible",
            citations=x.cite_contrast(x.contrast[decision].index),
        ),
        observations=[
            Observed(
                text=f"'{expected}' is visible",
                value=seen,
                absent=True,
                citations=[x.cite_failed(), *where],
            ),
            *regime,
        ],
    )
    decisions = [
        Claim(text=words, value=t, citations=x.cite_contrast(s.index))
        for s, t, words in zip(procedure, templates, said, strict=True)
    ]
    decisions.append(
        Claim(
            text=f"then decide '{verb} …' from the result (the parent decides)",
            value="parent",
            citations=x.cite_contrast(x.contrast[decision].index),
        )
    )
    scope = Scope(
        objective=Claim(
            text=f"before deciding '{verb} …', run {'; '.join(said)} and read the result",
            value="; ".join(templates),
            citations=where,
        ),
        decisions=decisions,
    )
    result_cite = x.cite_contrast(procedure[-1].index)
    execution = Execution(
        state=Claim(
            text=f"the result of '{said[-1]}' until the decision", value=seen, citations=where
        ),
        completion=Claim(text=f"'{expected}' is observed", value=seen, citations=result_cite),
        inputs=sorted({p for t in templates for p in re.findall(r"\{(E\d+)\}", t)}),
    )
    return Draft(
        ("premature-decision", pattern, *templates, x.case.family),
        x.m,
        "premature-decision",
        activation,
        scope,
        execution,
    )


def _decision_pattern(failed: str, succeeded: str) -> str | None:
    """A pattern for both decisions: shared words kept, what is decided left free (words that
    differ, and every named object after the first — the object decided about)."""
    left, right = failed.split(), succeeded.split()
    if len(left) != len(right) or left[0] != right[0]:
        return None
    parts, named = [], 0
    for a, b in zip(left, right, strict=True):
        placeholder = re.fullmatch(r"\{E\d+\}", a) is not None
        named += placeholder
        if a != b or (placeholder and named > 1):
            parts.append(".+?")
        elif placeholder:
            parts.append(a)
        else:
            parts.append(escape(a))
    return " ".join(parts)


def _regime(member: MemberCase) -> list[Observed]:
    """The task regime as an observation (the instruction's shared opening), if known."""
    if not member.regime:
        return []
    return [
        Observed(
            text=f"the task reads '{member.regime} …'",
            value="instruction: " + escape(member.regime),
            citations=[cite(member.case.episode_id, 0)],
        )
    ]


def _unnamed_commitment(x: _Member) -> Draft | str:
    failed = x.failed
    assert failed is not None
    if not is_critical(failed):
        return "the causal step is not an irreversible commitment"
    verb, argument = x.split(failed.action)
    if not verb or not argument:
        return "the commitment has no object"
    if _names(x.case.instruction, argument):
        return "the task names the object committed to"
    named = next(
        (
            s
            for s in x.contrast
            if x.split(s.action)[0] == verb
            and _names(x.case.contrast_instruction, x.split(s.action)[1])
        ),
        None,
    )
    if named is None:
        return f"no success shows '{verb}' on an object its task names"
    trigger = escape(verb) + r" (.+?)(?: in [\w ]+)?"
    contrast_cite = x.cite_contrast(named.index)
    activation = Activation(
        trigger=Claim(
            text=f"the agent is about to '{verb} <X>'", value=trigger, citations=[x.cite_failed()]
        ),
        boundary=Claim(text=f"'{verb}' on an object the task names", citations=contrast_cite),
        observations=[
            Observed(
                text="the task names <X>",
                value=r"instruction: [^\n]*(?<![\w-]){1}(?![\w-])",
                absent=True,
                citations=[cite(x.id, 0), *contrast_cite],
            ),
            *_regime(x.m),
        ],
    )
    scope = Scope(
        objective=Claim(
            text=f"'{verb}' only on an object the task names",
            value="veto",
            citations=[x.cite_failed(), *contrast_cite],
        ),
        decisions=[
            Claim(
                text=f"veto '{verb} <X>' when the task does not name <X>",
                value="veto",
                citations=[x.cite_failed()],
            )
        ],
    )
    execution = Execution(
        state=Claim(text="none: the instruction is always visible", citations=[cite(x.id, 0)]),
        completion=Claim(text="the unnamed commitment is not made", citations=[x.cite_failed()]),
    )
    return Draft(
        ("unnamed-commitment", trigger, x.case.family),
        x.m,
        "unnamed-commitment",
        activation,
        scope,
        execution,
    )


def _names(instruction: str, argument: str) -> bool:
    """Whether the instruction names the object an argument refers to (its location part
    ``in the …`` aside)."""
    head = re.sub(r" in [\w ]+$", "", argument)
    return (
        bool(head)
        and re.search(rf"(?<![\w-]){escape(head)}(?![\w-])", instruction, re.IGNORECASE) is not None
    )


def _unreachable_target(x: _Member) -> Draft | str:
    """The target is elsewhere: the run acts on a place or object that is not where it is
    (the world rejects it and the last scene shows no exit to it, nor mentions it), and a
    success walks there through other places before acting on it."""
    failed = x.failed
    assert failed is not None
    acted = x.lexicon.role(failed.action)
    verb, target = x.split(failed.action)
    if acted.role not in ("move", "take", "other") or not acted.target or not target:
        return "the causal step acts on no place or object"
    if x.error(failed.observation) is None:
        return "the world did not reject the action on its target"
    seen = next(
        ((text, found) for _, text in x.prior(failed.index) if (found := x.lexicon.scene(text))),
        None,
    )
    if seen is None:
        return "no room text before the action shows where the run was"
    text, scene = seen
    if _in_sight(acted, text, scene):
        return f"'{acted.target}' was in sight where the run was"
    route = _route_to(x, failed.action)
    if route is None:
        return f"no success reaches '{acted.target}' through other places before acting on it"
    if acted.role == "move" and acted.target in DIRECTIONS:
        return _no_such_exit(x, verb, route)
    return _elsewhere_draft(x, verb, acted.role == "move", route)


def _moves(x: _Member, route: list[CaseStep]) -> list[str]:
    """Where each move of ``route`` went (its targets, in order)."""
    roles = [x.lexicon.role(s.action) for s in route]
    return [r.target for r in roles if r.role == "move"]


def _no_such_exit(x: _Member, verb: str, route: list[CaseStep]) -> Draft:
    """The spec of a move through a direction the room has no exit in (a compass world): a
    direction names no place to seek, so the move is vetoed where the scene shows no such
    exit, and the agent walks the way it planned."""
    moves = _moves(x, route)
    where = x.cite_contrast(route[0].index, route[-1].index)
    activation = Activation(
        trigger=Claim(
            text=f"the agent proposes '{verb} <X>'",
            value=escape(verb) + " (.+)",
            citations=[x.cite_failed()],
        ),
        observations=[
            Observed(
                text="the room's exits are shown", value=r"\nhere: ", citations=[x.cite_failed()]
            ),
            Observed(
                text="an exit <X> is shown where the agent is",
                value=r"\nexit: (?i:{1}) \(",
                absent=True,
                citations=[x.cite_failed(), *where],
            ),
        ],
        boundary=Claim(
            text=f"'{verb} <X>' where an exit <X> is shown",
            citations=x.cite_contrast(route[-1].index),
        ),
    )
    span = [x.cite_failed(), *where]
    scope = Scope(
        objective=Claim(
            text="do not move through an exit the room does not show; walk through the places "
            f"between instead (the success went {' → '.join(moves)})",
            value="veto",
            citations=span,
        ),
        decisions=[Claim(text=f"veto '{verb} <X>'", value="veto", citations=span)],
    )
    execution = Execution(
        state=Claim(text="none: the room's exits are in the evidence", citations=span),
        completion=Claim(text="the move is not made", citations=[x.cite_failed()]),
    )
    return Draft(
        ("unreachable-target", verb, "veto"),
        x.m,
        "unreachable-target",
        activation,
        scope,
        execution,
    )


def _in_sight(acted: ActionRole, text: str, scene: Scene) -> bool:
    """Whether the scene shows an exit to the target (a place) or mentions it (an object)."""
    if any(e.name.lower() == acted.target for e in scene.exits):
        return True
    if acted.role == "move":
        return False
    named = rf"(?<![\w-]){escape(acted.target)}(?![\w-])"
    return acted.target in scene.visible or re.search(named, text, re.IGNORECASE) is not None


def _elsewhere_draft(x: _Member, verb: str, place: bool, route: list[CaseStep]) -> Draft:
    """The spec of a target found elsewhere: a subagent explores exits until it is there
    (a place) or sees it (an object)."""
    moves = _moves(x, route)
    where = x.cite_contrast(route[0].index, route[-1].index)
    arrived = first_line(route[-1].observation)
    if place:
        absent = ("an exit to <X> is visible where the agent is", r"\nexit: (?i:{1}) \(")
        reach = ("reach", "arrives in <X>", r"\nhere: (?i:{1})(?:\n|$)")
    else:
        absent = ("<X> is in sight where the agent is", LOOK_MENTIONS)
        reach = ("find", "sees <X>", r"(?<![\w-])(?i:{1})(?![\w-])")
    activation = Activation(
        trigger=Claim(
            text=f"the agent proposes '{verb} <X>'",
            value=escape(verb) + (" (.+)" if place else OBJECT_PART),
            citations=[x.cite_failed()],
        ),
        observations=[
            Observed(
                text=absent[0], value=absent[1], absent=True, citations=[x.cite_failed(), *where]
            )
        ],
        boundary=Claim(
            text=f"'{verb} <X>' where <X> is in sight",
            citations=x.cite_contrast(route[-1].index),
        ),
    )
    scope = Scope(
        objective=Claim(
            text=f"{reach[0]} <X> through the places between "
            f"(the success went {' → '.join(moves)})",
            value=reach[0] + " the {1}",
            citations=[x.cite_failed(), *where],
        ),
        decisions=[
            Claim(text=s.action, value=s.action, citations=x.cite_contrast(s.index)) for s in route
        ],
    )
    execution = Execution(
        state=Claim(
            text="the places visited so far and the way back (a ledger the parent does not keep)",
            citations=where,
        ),
        completion=Claim(
            text=f"it {reach[1]} ('{arrived}')",
            value=reach[2],
            citations=x.cite_contrast(route[-1].index),
        ),
        failure=Claim(
            text="every reachable place explored, or its step budget spent, without success",
            citations=[x.cite_failed()],
        ),
        inputs=["1"],
    )
    return Draft(
        ("unreachable-target", verb), x.m, "unreachable-target", activation, scope, execution
    )


OBJECT_PART = r" (.+?)(?: (?:with|from|into|in|on|to) .+)?"
"""Action pattern after an object's verb: the object, without the ``from``/``with`` part that
says where it is or what it is done with (as :meth:`~workbench.envs.lexicon.Lexicon.target`
reads it)."""
LOOK_MENTIONS = r"look:(?:(?!\ninventory:)[\s\S])*?(?<![\w-])(?i:{1})(?![\w-])"
"""Evidence pattern: the room text mentions ``{1}``."""


def _route_to(x: _Member, action: str) -> list[CaseStep] | None:
    """The success's walk that ends by doing ``action`` (accepted) after navigation steps
    through other places: two moves, or two navigation steps before it, at least."""
    wanted = " ".join(action.lower().split())
    for k, step in enumerate(x.contrast):
        if " ".join(step.action.lower().split()) != wanted or x.error(step.observation):
            continue
        start = k
        while start > 0 and x.lexicon.is_navigation(x.contrast[start - 1].action):
            start -= 1
        route = x.contrast[start : k + 1]
        moves = sum(x.lexicon.role(s.action).role == "move" for s in route)
        if moves >= 2 or (moves and len(route) - 1 >= 2):
            return route
    return None


MECHANISMS = (
    _repeated_rejection,
    _unreachable_target,
    _blocked_precondition,
    _premature_decision,
    _unnamed_commitment,
)


def read_member(member: MemberCase) -> Draft | list[str]:
    """The first mechanism the member shows, or why none fits. A member only a log is left
    of (imported, nothing to replay it on) whose causal step is a structured tool call is
    read first as its recorded divergence from its success — a rule its contract gate checks
    on those recorded steps: the world mechanisms read text commands, not calls."""
    x = _Member(member)
    if x.failed is None:
        if member.recorded:
            return [recorded.NO_ACTION]
        return ["the run stopped without a failed action at its causal step"]
    calls = member.recorded and tool_call(x.failed.action) is not None
    divergence = _recorded_reading(member) if calls else []
    if isinstance(divergence, Draft):
        return divergence
    reasons = []
    for mechanism in MECHANISMS:
        found = mechanism(x)
        if isinstance(found, Draft):
            return found
        reasons.append(found)
    if member.recorded and not calls:
        return _recorded_reading(member)
    return divergence or reasons


def _recorded_reading(member: MemberCase) -> Draft | list[str]:
    """For a run only its log is left of: the recorded divergence from its success, or why
    there is none (the world mechanisms' reasons mean little to a log's reader)."""
    found = recorded.read(member)
    if isinstance(found, str):
        return [found]
    key, activation, scope, execution = found
    return Draft(key, member, recorded.MECHANISM, activation, scope, execution)


def extract_specs(members: Sequence[MemberCase]) -> list[SpecProposal]:
    """Group members by mechanism, trigger and correction into spec proposals; members that
    fit no mechanism become one unsupported proposal per cluster, with the reasons."""
    groups: dict[tuple[str, ...], list[Draft]] = {}
    unread: dict[int, list[tuple[MemberCase, list[str]]]] = {}
    for member in members:
        found = read_member(member)
        if isinstance(found, Draft):
            groups.setdefault(found.key, []).append(found)
        else:
            unread.setdefault(member.cluster_id, []).append((member, found))
    for key in [k for k in groups if k[0] == "blocked-precondition" and k[2] == UNSEEN]:
        seen = next((k for k in groups if k[:2] == key[:2] and k[3:] == key[3:] and k != key), None)
        drafts = groups.pop(key)
        if seen is not None:
            groups[seen] += drafts
        else:
            for draft in drafts:
                unread.setdefault(draft.member.cluster_id, []).append(
                    (draft.member, ["nothing visible before the step says why it is blocked"])
                )
    proposals = [_owned(_merge(drafts), drafts) for drafts in groups.values()]
    for cluster_id, items in sorted(unread.items()):
        reasons = {r for _, found in items for r in found}
        why = "; ".join(sorted(reasons))
        if not all(m.recorded for m, _ in items):
            why = f"no mechanism with an observable trigger fits ({why})"
        proposals.append(
            SpecProposal(
                members=[m.analysis_id for m, _ in items],
                mechanism="unrecognised",
                supported=False,
                reason=f"cluster {cluster_id}: {why}",
            )
        )
    return proposals


def _merge(drafts: list[Draft]) -> SpecProposal:
    """One proposal from drafts with the same key: the first's claims, everyone's citations."""
    first = drafts[0]
    activation = first.activation.model_copy(deep=True)
    scope = first.scope.model_copy(deep=True)
    execution = first.execution.model_copy(deep=True)
    for other in drafts[1:]:
        _add(activation.trigger, other.activation.trigger)
        if activation.boundary and other.activation.boundary:
            _add(activation.boundary, other.activation.boundary)
        for mine, theirs in zip(
            activation.observations, other.activation.observations, strict=False
        ):
            _add(mine, theirs)
        _add(scope.objective, other.scope.objective)
        for mine, theirs in zip(scope.decisions, other.scope.decisions, strict=False):
            _add(mine, theirs)
        _add(execution.state, other.execution.state)
        _add(execution.completion, other.execution.completion)
    return SpecProposal(
        members=[d.member.analysis_id for d in drafts],
        mechanism=first.mechanism,
        activation=activation,
        scope=scope,
        execution=execution,
    )


def _owned(proposal: SpecProposal, drafts: list[Draft]) -> SpecProposal:
    """``proposal`` with who owns its state and for how long as its members' runs show it
    (:func:`~workbench.compile.obligations.read_demands`), not as its mechanism assumes."""
    spec = InterventionSpec(
        run_id=0,
        reasoner="heuristic",
        activation=proposal.activation,
        scope=proposal.scope,
        execution=proposal.execution,
    )
    demands = read_demands(spec, runs_of(d.member for d in drafts))
    assert proposal.execution is not None
    execution = proposal.execution.model_copy(
        update={"owner": OWNERS[demands.state.level], "lifetime": lifetime_of(demands)}
    )
    return proposal.model_copy(update={"execution": execution})


OWNERS: dict[str, StateOwner] = {"none": "none", "parent": "parent", "private": "private"}
"""Who can hold the state, by the state demand's level."""


def lifetime_of(demands: Demands) -> Lifetime:
    """How long the state lives, by the demands: one decision, a procedure, or a loop of
    its own (a private ledger, discovered decisions or a search for coverage)."""
    if (demands.decision.level, demands.completion.level) == ("one", "immediate"):
        return "step"
    delegated = (
        demands.state.level == "private"
        or demands.decision.level == "discovered"
        or demands.completion.level == "coverage"
    )
    return "delegation" if delegated else "procedure"


def _add(claim: Claim, other: Claim) -> None:
    claim.citations = list(dict.fromkeys([*claim.citations, *other.citations]))


# -- contract proposals ---------------------------------------------------------------------------


def _all(claims: Iterable[Claim]) -> list[Citation]:
    return list(dict.fromkeys(c for claim in claims for c in claim.citations))


def _report(
    obligation: str, closed: bool, slot: str, citations: list[Citation], witness: str
) -> ObligationReport:
    return ObligationReport(
        obligation=obligation,  # type: ignore[arg-type]
        status=closed,
        slot=slot if closed else "",
        citations=citations,
        witness="" if closed else witness,
    )


SLOTS: dict[ArtifactKind, dict[str, str]] = {
    "rule": {
        "observation": "guard",
        "state": "guard",
        "decision": "response",
        "completion": "positive",
    },
    "skill": {
        "observation": "applicability",
        "state": "inputs",
        "decision": "procedure",
        "completion": "expected_result",
    },
    "subagent": {
        "observation": "input_schema",
        "state": "owned_state",
        "decision": "invocation",
        "completion": "success",
    },
}
"""The contract slot that owns each obligation, per schema."""


def obligations(
    spec: InterventionSpec, kind: ArtifactKind, demands: Demands
) -> list[ObligationReport]:
    """The heuristic's closure report for ``kind``: open, with the evidence's witness and
    citations, where the cluster's runs demand more than the schema owns; otherwise closed
    by the schema's slot, citing the spec's evidence for it (unless the spec gives the schema
    nothing to own it with)."""
    assert spec.activation and spec.scope and spec.execution
    activation, scope, execution = spec.activation, spec.scope, spec.execution
    cited = {
        "observation": _all([activation.trigger, *activation.observations]),
        "state": _all([execution.state]),
        "decision": _all(scope.decisions) or _all([scope.objective]),
        "completion": _all([execution.completion]),
    }
    reports = []
    unheld = "" if contract_for(spec, kind, demands) else _unheld(spec, kind)
    for obligation in ("observation", "state", "decision", "completion"):
        demand = demands[obligation]
        if demand.exceeds(kind):
            reports.append(
                _report(obligation, False, "", list(demand.citations), demand.witness(kind))
            )
            continue
        lack = _lacks(spec, kind, obligation) or unheld
        slot = SLOTS[kind][obligation]
        if obligation == "observation" and kind == "rule" and not activation.observations:
            slot = "activation"
        reports.append(_report(obligation, not lack, slot, cited[obligation], lack))
    return reports


def _lacks(spec: InterventionSpec, kind: ArtifactKind, obligation: str) -> str:
    """What the spec lacks for ``kind`` to own ``obligation`` (empty when nothing): a rule or
    skill needs a trigger, a skill a procedure and an observable result, a subagent declared
    inputs, a closed objective and a failure termination."""
    assert spec.activation and spec.scope and spec.execution
    if obligation == "observation" and not spec.activation.trigger.value:
        return "the trigger is not evaluable from parent-visible evidence"
    if kind == "skill" and obligation == "decision" and not _procedure(spec):
        return "there is no procedure: the correction is a veto"
    if kind == "skill" and obligation == "completion" and not spec.execution.completion.value:
        return "no observable result ends the procedure"
    if kind != "subagent":
        return ""
    if obligation == "observation" and not spec.execution.inputs:
        return "no declared input binds the objective"
    if obligation == "decision" and _objective(spec) is None:
        return (
            "there is no closed objective to delegate: the correction happens inside the "
            "parent's own decisions"
        )
    if obligation == "completion" and not spec.execution.completion.value:
        return "no observable success termination"
    return ""


def _unheld(spec: InterventionSpec, kind: ArtifactKind) -> str:
    """Why the spec gives ``kind`` no contract (then no slot of it can own anything)."""
    assert spec.scope
    if kind == "rule":
        return f"no rule holds a correction of {len(spec.scope.decisions)} decisions"
    if kind == "skill":
        return "no skill holds it: there is no procedure with an observable result"
    return "no subagent holds it: there is no objective over declared inputs to hand over"


def _procedure(spec: InterventionSpec) -> list[str]:
    """The spec's decisions the procedure takes (not the parent's own, nor a veto)."""
    assert spec.scope
    return [d.value for d in spec.scope.decisions if d.value not in ("parent", "veto", "")]


def _objective(spec: InterventionSpec) -> str | None:
    """The objective a subagent could be handed: a template over the declared inputs."""
    assert spec.scope and spec.execution
    value = spec.scope.objective.value
    inputs = spec.execution.inputs
    if not value or value == "veto" or not any("{" + i + "}" in value for i in inputs):
        return None
    return value


def propose(spec: InterventionSpec, kind: ArtifactKind, demands: Demands) -> AttemptProposal:
    """The heuristic's contract for ``kind`` and its closure report against ``demands``."""
    return AttemptProposal(
        kind=kind,
        contract=contract_for(spec, kind, demands),
        report=obligations(spec, kind, demands),
    )


def contract_for(
    spec: InterventionSpec, kind: ArtifactKind, demands: Demands | None = None
) -> dict | None:
    """The contract ``kind`` takes for ``spec`` (``None``: the spec gives it nothing to hold;
    a subagent also needs the approach its runs show, in ``demands``)."""
    if kind == "subagent":
        return _subagent(spec, demands.approach if demands else None)
    return {"rule": _rule, "skill": _skill}[kind](spec)


def name_for(spec: InterventionSpec) -> str:
    """A readable artifact name for the spec."""
    assert spec.activation and spec.scope
    trigger_verb = (
        split_action(spec.activation.trigger.text.split("'")[1])[0]
        if "'" in (spec.activation.trigger.text)
        else ""
    )
    first = spec.scope.decisions[0].value if spec.scope.decisions else ""
    families = "-".join(dict.fromkeys(short_name(f) for f in spec.families))
    if spec.mechanism == "repeated-rejection":
        seen = spec.activation.observations[0].text if spec.activation.observations else ""
        rejection = seen.split("'")[1] if seen.count("'") >= 2 else "rejection"
        return slug(f"no repeat after {' '.join(rejection.split()[:5])}")
    if spec.mechanism == "unreachable-target":
        if spec.scope.objective.value.startswith("reach "):
            return "reach-room-through-others"
        if spec.scope.objective.value == "veto":
            return slug(f"{trigger_verb or 'move'} only through shown exits")
        return slug(f"find the target before {trigger_verb or 'acting'}")
    if spec.mechanism == recorded.MECHANISM:
        seen = spec.activation.observations[0].text if spec.activation.observations else ""
        first = seen.split("'")[1] if seen.count("'") >= 2 else "check"
        return slug(f"{first} before {trigger_verb or 'acting'}")
    if spec.mechanism == "unnamed-commitment":
        return slug(f"{trigger_verb} only on named {families}")
    action_verb = split_action(first)[0] or "act"
    return slug(f"{action_verb} before {trigger_verb or 'acting'} {families}")


def _sources(spec: InterventionSpec) -> list[Citation]:
    """Decision points the artifact must act on: the trigger's citations in runs whose
    required observations were recorded (others cannot show the evidence offline)."""
    assert spec.activation
    observed = {
        c.episode_id for o in spec.activation.observations if not o.absent for c in o.citations
    }
    cited = spec.activation.trigger.citations
    return [c for c in cited if c.episode_id in observed] if observed else list(cited)


def _negatives(spec: InterventionSpec) -> list[Citation]:
    """Decision points on the negative boundary: the artifact must stay silent there."""
    assert spec.activation
    return list(spec.activation.boundary.citations) if spec.activation.boundary else []


def _contract(spec: InterventionSpec, kind: ArtifactKind, form: dict, **slots: object) -> dict:
    """A contract of ``kind``: name, description, the type's slots, and its form (whose
    activation is the spec's trigger and required observations)."""
    assert spec.activation and spec.scope
    when, unless = evidence_patterns(spec)
    objective = spec.scope.objective.text
    return {
        "kind": kind,
        "name": name_for(spec),
        "description": objective[:1].upper() + objective[1:] + ".",
        **slots,
        "form": {
            "kind": kind,
            "id": "x",
            "when_action": spec.activation.trigger.value,
            "when_evidence": when,
            "unless_evidence": unless,
            **form,
        },
    }


def _probes(spec: InterventionSpec, **extra: object) -> list[dict]:
    """A probe at each decision point the artifact must act on."""
    return [
        {"episode_id": c.episode_id, "step": c.start, "action": "", **extra} for c in _sources(spec)
    ]


def _rule(spec: InterventionSpec) -> dict | None:
    assert spec.activation and spec.scope and spec.execution
    decision = spec.scope.decisions[0].value if spec.scope.decisions else ""
    if len(spec.scope.decisions) != 1 or decision == "parent":
        return None
    return _contract(
        spec,
        "rule",
        {
            "response": "veto" if decision == "veto" else "replace",
            "replacement": "" if decision == "veto" else decision,
        },
        activation=spec.activation.trigger.text,
        guard=wording.guard_text(spec.activation.observations),
        response=spec.scope.decisions[0].text,
        positive=[{"citation": c.model_dump()} for c in _sources(spec)],
        negative=[{"citation": c.model_dump()} for c in _negatives(spec)],
    )


def _skill(spec: InterventionSpec) -> dict | None:
    assert spec.activation and spec.scope and spec.execution
    steps = [d.value for d in spec.scope.decisions if d.value not in ("parent", "veto")]
    if not steps or not spec.execution.completion.value:
        return None
    guard = wording.guard_text(spec.activation.observations)
    return _contract(
        spec,
        "skill",
        {"steps": steps, "until": spec.execution.completion.value},
        applicability=spec.activation.trigger.text + (f"; {guard}" if guard != "none" else ""),
        inputs=_inputs(steps) or ["the proposed action"],
        procedure=[d.text for d in spec.scope.decisions],
        recovery="a rejected step does not stop the procedure; if the expected result is not "
        "observed the skill reports so and the parent continues with its own plan",
        expected_result=spec.execution.completion.text,
        probes=_probes(spec),
    )


def _inputs(steps: list[str]) -> list[str]:
    """A skill's declared inputs by role: each placeholder its steps use, named for what it
    is in the first step that uses it, and where its value comes from."""
    names = wording.input_names(steps, INSTALLED)
    described = []
    for placeholder, name in names.items():
        first = next(s for s in steps if "{" + placeholder + "}" in s)
        source = (
            "a phrase the task names"
            if placeholder.startswith("E")
            else "what the proposed action names"
        )
        described.append(f"<{name}>: {source}; used in '{wording.readable(first, names)}'")
    return described


def _subagent(spec: InterventionSpec, approach: Approach | None) -> dict | None:
    """A subagent over named inputs bound to the trigger's groups, running the strategy its
    runs show with the tools that strategy needs."""
    assert spec.activation and spec.scope and spec.execution
    execution = spec.execution
    objective = _objective(spec)
    if objective is None or not execution.completion.value or approach is None:
        return None
    failure = execution.failure.text if execution.failure else NO_SUCCESS
    inputs = _subagent_inputs(spec)
    names = {p: i["name"] for p, i in zip(execution.inputs, inputs, strict=True)}
    unreachable = {i["name"]: "nowhere" for i in inputs}
    return _contract(
        spec,
        "subagent",
        {
            "inputs": inputs,
            "objective": _named(objective, names),
            "success": _named(execution.completion.value, names),
            "strategy": approach.strategy,
            "action": _named(approach.action, names),
            "tools": list(approach.tools),
            "max_steps": SUBAGENT_STEPS,
        },
        invocation=spec.activation.trigger.text,
        input_schema=input_schema(inputs),
        owned_state=execution.state.text,
        tools=list(approach.tools),
        success=execution.completion.text,
        failure=failure,
        return_schema=RETURN_SCHEMA,
        probes=_probes(spec) + _probes(spec, expect="failure", inputs=unreachable)[:1],
    )


def _subagent_inputs(spec: InterventionSpec) -> list[dict]:
    """The subagent's inputs: one per declared input of the spec, named (never numbered),
    bound to the trigger group or task phrase it stands for."""
    assert spec.activation and spec.execution
    found = []
    for k, placeholder in enumerate(spec.execution.inputs, start=1):
        name = "target" if k == 1 else f"target_{k}"
        what = (
            f"the phrase the task names as {{{placeholder}}}"
            if placeholder.startswith("E")
            else f"the <X> the agent named ({spec.activation.trigger.text})"
        )
        found.append({"name": name, "description": what, "bind": "{" + placeholder + "}"})
    return found


def _named(template: str, names: dict[str, str]) -> str:
    """``template`` with the spec's placeholders replaced by the subagent's input names."""
    for placeholder, name in names.items():
        template = template.replace("{" + placeholder + "}", "{" + name + "}")
    return template


def select_kind(spec: InterventionSpec) -> KindChoice:
    """Direct type selection by the correction's size, as a compiler without closure picks
    (the ``no-closure`` ablation): one decision is a rule, a short sequence a skill, a longer
    one a subagent — whatever the state, lifetime and completion the evidence calls for."""
    assert spec.scope
    size = len(spec.scope.decisions)
    if size <= 1:
        return KindChoice(kind="rule", why="the correction is one decision")
    if size <= MAX_PROCEDURE:
        return KindChoice(kind="skill", why=f"the correction is {size} decisions in a row")
    return KindChoice(kind="subagent", why=f"the correction takes {size} decisions")


class HeuristicCompiler:
    """The offline :class:`~workbench.compile.proposals.Compiler`: specs read off the
    members' mechanisms, contracts and closure reports off what the cluster's runs demand."""

    name = "heuristic"

    def extract_specs(self, members: list[MemberCase]) -> list[SpecProposal]:
        """Specs read off the members' mechanisms (see :func:`extract_specs`)."""
        return extract_specs(members)

    def propose_contract(
        self, spec: InterventionSpec, kind: ArtifactKind, carried: list[str], demands: Demands
    ) -> AttemptProposal:
        """The contract ``kind`` takes for ``spec``, with a closure report read off
        ``demands`` (the carried witnesses are demands of that same reading)."""
        return propose(spec, kind, demands)

    def select_kind(self, spec: InterventionSpec) -> KindChoice:
        """The type by the correction's size (see :func:`select_kind`)."""
        return select_kind(spec)
