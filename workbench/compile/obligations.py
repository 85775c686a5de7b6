"""What a spec's evidence demands of the artifact that would own it, obligation by obligation.

AutoRefine closes a schema only when its owner can observe, retain, control and complete the
intervention. Here those four demands are read off the steps of the cluster's runs — the
failed runs at their causal steps, the successes where they carry out the correction — in any
world (actions and room texts are read through the world's
:class:`~workbench.envs.lexicon.Lexicon`), and each cites the steps that show it:

=============  ===============================================================================
observation    ``visible``: the activation holds on what the parent sees at a causal step (its
               latest observation, room text and recent history); ``hidden``: at none.
state          ``none``: nothing the correction does depends on what an earlier step of it
               showed; ``parent``: a later decision depends on an earlier step's observation,
               within the parent's recent history; ``private``: the correction lasts longer
               than that history, or walks back to a place it left (the way back and the places
               tried must be kept), so what it depends on outlives the parent's context.
decision       ``one``: one decision at one control point; ``fixed``: several, the same in
               every run; ``discovered``: their order depends on what is discovered (a decision
               acts on something nothing visible at the start showed, is taken in a place the
               correction reached, or the runs take different ways).
completion     ``immediate``: observed where the decision is taken; ``result``: at the end of
               the procedure; ``coverage``: what it ends on was out of sight when the
               correction started and was reached only through other places, so that it is
               nowhere can be told only by covering every place.
=============  ===============================================================================

Each schema owns up to a level (:data:`~workbench.compile.proposals.CAPACITY`); a demand
above it is an insufficiency witness whatever a reasoner claims
(:func:`workbench.compile.closure.decide`), and it names the steps that show it. How the
successes went about a correction of several decisions is read too (:func:`approach_of`): the
strategy a subagent would run offline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from store import Citation, InterventionSpec
from workbench.agents.guidance import Evidence, RuleForm, match
from workbench.compare import entity_phrases
from workbench.compile.proposals import HISTORY, Approach, Demand, Demands, MemberCase
from workbench.envs.lexicon import DIRECTIONS, Lexicon
from workbench.envs.registry import lexicon_of
from workbench.llm.steps import CaseStep

# -- the runs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One run of the cluster's evidence: its steps (step 0 is where it started)."""

    episode_id: str
    instruction: str
    lexicon: Lexicon = field(repr=False, compare=False)
    steps: tuple[CaseStep, ...]

    def step(self, index: int) -> CaseStep | None:
        """The stored step ``index``, if the run has it."""
        return next((s for s in self.steps if s.index == index), None)

    def indices(self) -> set[int]:
        """Stored indices of its steps."""
        return {s.index for s in self.steps}

    def evidence(self, index: int) -> Evidence:
        """What an agent could see before the action at ``index``: the latest observation,
        the latest room text (the latest observation the world reads as a scene) and the
        recent history."""
        observation, look = "", ""
        history: list[tuple[str, str]] = []
        for step in self.steps:
            if step.index >= index:
                break
            if step.action:
                history.append((step.action, step.observation))
            observation = step.observation or observation
            if step.observation and self.lexicon.scene(step.observation) is not None:
                look = step.observation
        return Evidence(
            instruction=self.instruction,
            observation=observation,
            look=look,
            history=history[-HISTORY:],
            lexicon=self.lexicon,
        )

    def place(self, index: int) -> str:
        """Where the agent was before the action at ``index``: the latest room text's place,
        or where an accepted move after it went (empty when unknown)."""
        here = ""
        for step in self.steps:
            if step.index >= index:
                break
            arrived = arrival(self.lexicon, step)
            here = arrived if arrived is not None else here
        return here

    def seen(self, index: int) -> str:
        """The text of :meth:`evidence` at ``index`` without the task (what the run saw)."""
        evidence = self.evidence(index)
        evidence.instruction = ""
        return evidence.text()

    def cite(self, start: int, end: int | None = None) -> Citation:
        return Citation(episode_id=self.episode_id, start=start, end=start if end is None else end)


def runs_of(members: Iterable[MemberCase]) -> dict[str, Run]:
    """Every run the members offer (failed runs and their contrastive successes), by episode."""
    runs: dict[str, Run] = {}
    for member in members:
        case = member.case
        lexicon = lexicon_of(case.environment)
        runs[case.episode_id] = Run(
            case.episode_id,
            case.instruction,
            lexicon,
            _with_start(case.steps, member.initial_observation),
        )
        if case.contrast_id and case.contrast_steps:
            runs.setdefault(
                case.contrast_id,
                Run(
                    case.contrast_id,
                    case.contrast_instruction or case.instruction,
                    lexicon,
                    _with_start(case.contrast_steps, member.contrast_initial_observation),
                ),
            )
    return runs


def _with_start(steps: Sequence[CaseStep], initial: str) -> tuple[CaseStep, ...]:
    if any(s.index == 0 for s in steps):
        return tuple(steps)
    return (CaseStep(index=0, observation=initial), *steps)


# -- demands ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecEvidence:
    """A spec's runs and what they demand: what the closure controller decides against."""

    runs: dict[str, Run]
    demands: Demands

    @classmethod
    def of(
        cls, spec: InterventionSpec, members: Iterable[MemberCase], trusted: bool = True
    ) -> SpecEvidence:
        """The evidence of ``spec`` from the members it covers (``trusted``: its patterns
        are the engine's own and may be evaluated in this process)."""
        runs = runs_of(members)
        return cls(runs, read_demands(spec, runs, trusted))

    def resolves(self, citation: Citation) -> bool:
        """Whether ``citation`` names steps of the cluster's runs."""
        run = self.runs.get(citation.episode_id)
        return run is not None and {citation.start, citation.end} <= run.indices()


def read_demands(spec: InterventionSpec, runs: dict[str, Run], trusted: bool = True) -> Demands:
    """The four demands of ``spec``, read off ``runs``."""
    assert spec.activation and spec.scope and spec.execution
    corrections = _corrections(spec, runs)
    return Demands(
        observation=_observation(spec, runs, trusted),
        state=_state(spec, corrections),
        decision=_decision(spec, corrections),
        completion=_completion(spec, runs, corrections),
        approach=next((a for c in corrections if (a := approach_of(c)) is not None), None),
    )


# -- observation ------------------------------------------------------------------------------


def evidence_patterns(spec: InterventionSpec) -> tuple[str, str]:
    """The activation's required observations as one evidence pattern and one guard."""
    assert spec.activation
    observed = spec.activation.observations
    present = [o.value for o in observed if not o.absent and o.value]
    absent = [o.value for o in observed if o.absent and o.value]
    when = present[0] if len(present) == 1 else "".join(f"(?=[\\s\\S]*?{p})" for p in present)
    unless = "|".join(f"(?:{p})" for p in absent)
    return when, unless


def activation_form(spec: InterventionSpec) -> RuleForm:
    """The activation as a form the guidance code evaluates (trigger, evidence, guard)."""
    assert spec.activation
    when, unless = evidence_patterns(spec)
    return RuleForm(
        id="activation",
        when_action=spec.activation.trigger.value,
        when_evidence=when,
        unless_evidence=unless,
    )


def _points(spec: InterventionSpec, runs: dict[str, Run]) -> list[tuple[Run, CaseStep]]:
    """The causal decision points the trigger cites, in runs that have them."""
    assert spec.activation
    found = []
    for citation in spec.activation.trigger.citations:
        run = runs.get(citation.episode_id)
        step = run.step(citation.start) if run else None
        if run is not None and step is not None and step.action:
            found.append((run, step))
    return found


def _holds(spec: InterventionSpec, points: list[tuple[Run, CaseStep]], trusted: bool) -> list[bool]:
    """Whether the activation holds at each point, on what the parent saw there. Patterns a
    model wrote are evaluated in the sandbox (with time and memory limits)."""
    form = activation_form(spec)
    if trusted:
        return [
            match(form, step.action, run.evidence(step.index)) is not None for run, step in points
        ]
    from workbench.admit.sandbox import PATTERN_LIMITS, SandboxError, run_limited

    cases = [
        {
            "action": step.action,
            "instruction": run.instruction,
            "observation": (ev := run.evidence(step.index)).observation,
            "look": ev.look,
            "history": ev.history,
        }
        for run, step in points
    ]
    try:
        verdicts = run_limited(
            "screen", {"form": form.model_dump(), "cases": cases}, PATTERN_LIMITS
        )
    except SandboxError:
        return [False] * len(points)
    return [bool(v["fires"]) for v in verdicts]


def _observation(spec: InterventionSpec, runs: dict[str, Run], trusted: bool) -> Demand:
    assert spec.activation
    points = _points(spec, runs)
    held = _holds(spec, points, trusted) if points else []
    visible = [(run, step) for (run, step), ok in zip(points, held, strict=True) if ok]
    if visible:
        shown = _observed_at(spec, visible)
        labels = ", ".join(run.cite(step.index).label() for run, step in visible[:3])
        return Demand(
            "observation",
            "visible",
            f"the activation holds on what the parent sees at {labels}",
            tuple([run.cite(step.index) for run, step in visible] + shown),
        )
    cited = tuple(run.cite(step.index) for run, step in points)
    what = "; ".join(o.text for o in spec.activation.observations) or spec.activation.trigger.text
    where = ", ".join(c.label() for c in cited[:3]) or "no recorded decision point"
    return Demand(
        "observation",
        "hidden",
        f"at {where} what the parent sees does not show the activation ({what})",
        cited,
    )


def _observed_at(spec: InterventionSpec, visible: list[tuple[Run, CaseStep]]) -> list[Citation]:
    """The earlier steps the required observations cite in the visible runs (where what the
    guard reads was seen)."""
    assert spec.activation
    before = {run.episode_id: step.index for run, step in visible}
    return list(
        dict.fromkeys(
            c
            for o in spec.activation.observations
            if not o.absent
            for c in o.citations
            if c.episode_id in before and c.end < before[c.episode_id]
        )
    )


# -- the correction as the successes carry it out ----------------------------------------------


@dataclass(frozen=True)
class Correction:
    """How one run carries out a correction of several decisions: the step of each."""

    run: Run
    steps: tuple[CaseStep, ...]
    """The decisions' steps, in order."""
    completion: int | None
    """The step whose observation shows completion (cited by the spec), if any."""
    bound: frozenset[str]
    """What the run's task and trigger name (lower case): its declared inputs."""

    @property
    def start(self) -> int:
        return self.steps[0].index

    @property
    def end(self) -> int:
        return max(self.steps[-1].index, self.completion or 0)

    def span(self) -> Citation:
        return self.run.cite(self.start, self.end)


def _corrections(spec: InterventionSpec, runs: dict[str, Run]) -> list[Correction]:
    """Runs that carry out two decisions of the spec or more (each cited), with their steps."""
    assert spec.scope and spec.execution
    if len(spec.scope.decisions) < 2:
        return []
    found = []
    for run in runs.values():
        starts = [
            next((c.start for c in d.citations if c.episode_id == run.episode_id), None)
            for d in spec.scope.decisions
        ]
        steps = [run.step(i) for i in sorted({s for s in starts if s is not None})]
        steps = [s for s in steps if s is not None and s.action]
        if len(steps) < 2:
            continue
        done = [
            c.end for c in spec.execution.completion.citations if c.episode_id == run.episode_id
        ]
        found.append(
            Correction(run, tuple(steps), max(done) if done else None, _bound(spec, run, steps))
        )
    return found


def _bound(spec: InterventionSpec, run: Run, steps: Sequence[CaseStep]) -> frozenset[str]:
    """The task's named phrases and what the trigger captures on the run's actions."""
    assert spec.activation
    names = {p.lower() for p in entity_phrases(run.instruction).values()}
    try:
        trigger = re.compile(_entities_filled(spec.activation.trigger.value, run.instruction))
    except re.error:
        return frozenset(names)
    for step in steps:
        found = trigger.fullmatch(step.action)
        if found:
            names |= {g.lower() for g in found.groups() if g}
    return frozenset(names)


def _entities_filled(pattern: str, instruction: str) -> str:
    """``pattern`` with the task's named phrases in place of ``{E1}``… (escaped)."""
    phrases = entity_phrases(instruction)
    return re.sub(r"\{(E\d+)\}", lambda m: re.escape(phrases.get(m.group(1), "")), pattern)


def _named(target: str, bound: frozenset[str]) -> bool:
    return any(target == b or target in b or b in target for b in bound if b)


def _mentions(text: str, target: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(target)}(?![\w-])", text, re.IGNORECASE) is not None


_FILLER = frozenset({"the", "a", "an", "to", "in", "on", "of", "with", "from", "into", "and"})


def _known(target: str, text: str) -> bool:
    """Whether every word of ``target`` (its fillers aside) appears in ``text``."""
    words = {w for w in re.findall(r"[a-z0-9]+", target.lower()) if w not in _FILLER}
    return words <= set(re.findall(r"[a-z0-9]+", text.lower()))


def arrival(lexicon: Lexicon, step: CaseStep) -> str | None:
    """Where ``step`` leaves the agent, when it says: the place its room text shows, or
    where an accepted move went ("" when the move names a way, not a place)."""
    scene = lexicon.scene(step.observation) if step.observation else None
    if scene is not None:
        return scene.location
    role = lexicon.role(step.action) if step.action else None
    if role is None or role.role != "move" or lexicon.error(step.observation) is not None:
        return None
    return "" if role.target in DIRECTIONS else role.target


def _moved(correction: Correction, step: CaseStep) -> bool:
    """Whether ``step`` took the agent somewhere else (a move the world accepted)."""
    lexicon = correction.run.lexicon
    return lexicon.role(step.action).role == "move" and lexicon.error(step.observation) is None


def _place_of(correction: Correction, step: CaseStep) -> str:
    """Where a move arrived (empty when it does not say)."""
    return arrival(correction.run.lexicon, step) or ""


# -- decision ---------------------------------------------------------------------------------


def _decision(spec: InterventionSpec, corrections: list[Correction]) -> Demand:
    assert spec.scope
    decisions = spec.scope.decisions
    if len(decisions) < 2:
        cited = tuple(decisions[0].citations[:4]) if decisions else ()
        text = decisions[0].text if decisions else spec.scope.objective.text
        return Demand("decision", "one", f"one decision ({text})", cited)
    for find in (_unseen_target, _decided_elsewhere):
        for correction in corrections:
            found = find(correction)
            if found is not None:
                return found
    differ = _different_ways(corrections)
    if differ is not None:
        return differ
    spans = tuple(c.span() for c in corrections)
    steps = ", ".join(c.label() for c in spans[:3]) or "the spec's decisions"
    return Demand(
        "decision",
        "fixed",
        f"{len(decisions)} decisions, taken in the same order whatever the runs saw ({steps})",
        spans,
    )


def _unseen_target(correction: Correction) -> Demand | None:
    """A decision acting on something neither the task nor the trigger names and nothing
    visible at the correction's start showed."""
    run, start = correction.run, correction.start
    seen = run.seen(start)
    for step in correction.steps:
        target = run.lexicon.role(step.action).target
        if not target or _named(target, correction.bound) or _known(target, seen):
            continue
        return Demand(
            "decision",
            "discovered",
            f"'{step.action}' at {run.cite(step.index).label()} acts on '{target}', which "
            f"nothing visible at {run.cite(start).label()} showed: it is known only on the way",
            (run.cite(start), run.cite(step.index)),
        )
    return None


def _decided_elsewhere(correction: Correction) -> Demand | None:
    """A decision taken in a place the correction itself reached (chosen from what the agent
    found on arriving there)."""
    run = correction.run
    arrived: CaseStep | None = None
    for step in correction.steps:
        if arrived is not None:
            return Demand(
                "decision",
                "discovered",
                f"'{step.action}' at {run.cite(step.index).label()} is decided where the "
                f"move at {run.cite(arrived.index).label()} arrived: the way on depends on "
                "what that place shows",
                (run.cite(arrived.index), run.cite(step.index)),
            )
        if _moved(correction, step):
            arrived = step
    return None


def _different_ways(corrections: list[Correction]) -> Demand | None:
    """Two runs whose decisions differ beyond what their tasks and triggers name."""
    shapes: list[tuple[tuple[str, ...], Correction]] = []
    for correction in corrections:
        shape = tuple(_shape(s.action, correction.bound) for s in correction.steps)
        for other_shape, other in shapes:
            if other_shape != shape:
                return Demand(
                    "decision",
                    "discovered",
                    f"the runs take different ways: {other.span().label()} "
                    f"({'; '.join(s.action for s in other.steps)}) and {correction.span().label()}"
                    f" ({'; '.join(s.action for s in correction.steps)})",
                    (other.span(), correction.span()),
                )
        shapes.append((shape, correction))
    return None


def _shape(action: str, bound: frozenset[str]) -> str:
    """``action`` with what the run's task and trigger name abstracted away."""
    text = " ".join(action.lower().split())
    for name in sorted(bound, key=len, reverse=True):
        if name:
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "<input>", text)
    return text


# -- state ------------------------------------------------------------------------------------


def _state(spec: InterventionSpec, corrections: list[Correction]) -> Demand:
    assert spec.execution
    if not corrections:
        cited = tuple(spec.execution.state.citations[:4])
        return Demand(
            "state", "none", "nothing has to persist: one decision on what is visible", cited
        )
    for correction in corrections:
        back = _walks_back(correction)
        if back is not None:
            return back
    for correction in corrections:
        found = _depends(spec, correction)
        if found is None:
            continue
        if correction.end - correction.start + 1 <= HISTORY:
            return found
        return Demand(
            "state",
            "private",
            f"{found.text}, and the correction runs from "
            f"{correction.run.cite(correction.start).label()} to "
            f"{correction.run.cite(correction.end).label()}, longer than the parent's recent "
            "history",
            (*found.citations, correction.span()),
        )
    spans = tuple(c.span() for c in corrections)
    return Demand(
        "state",
        "none",
        "no decision of the correction depends on what an earlier one showed "
        f"({', '.join(c.label() for c in spans[:3])})",
        spans,
    )


def _walks_back(correction: Correction) -> Demand | None:
    """A move back into a place the correction left: the way back and the places already
    tried are state of the correction's own."""
    run = correction.run
    visited: dict[str, int] = {}
    start = run.place(correction.start)
    if start:
        visited[start] = correction.start
    for step in correction.steps:
        if not _moved(correction, step):
            continue
        place = _place_of(correction, step)
        if place and place in visited:
            return Demand(
                "state",
                "private",
                f"'{step.action}' at {run.cite(step.index).label()} walks back into the "
                f"{place}, left after {run.cite(visited[place]).label()}: the way back and the "
                "places already tried must be kept",
                (run.cite(visited[place]), run.cite(step.index)),
            )
        if place:
            visited[place] = step.index
    return None


def _depends(spec: InterventionSpec, correction: Correction) -> Demand | None:
    """A later decision that depends on what an earlier step of the correction showed: it
    acts on what that step's observation first named, is the decision the trigger governs
    taken after that step's result, or is taken where that step's move arrived."""
    assert spec.activation
    run = correction.run
    seen = run.seen(correction.start)
    try:
        trigger = re.compile(_entities_filled(spec.activation.trigger.value, run.instruction))
    except re.error:
        trigger = None
    for earlier, later in zip(correction.steps, correction.steps[1:], strict=False):
        target = run.lexicon.role(later.action).target
        named_by = (
            bool(target) and not _known(target, seen) and _mentions(earlier.observation, target)
        )
        decides = trigger is not None and trigger.fullmatch(later.action) is not None
        if named_by or decides or _moved(correction, earlier):
            why = (
                f"acts on '{target}', which the observation at "
                f"{run.cite(earlier.index).label()} named"
                if named_by
                else f"decides on the result of '{earlier.action}' "
                f"({run.cite(earlier.index).label()})"
                if decides
                else f"is taken where '{earlier.action}' ({run.cite(earlier.index).label()}) "
                "arrived"
            )
            return Demand(
                "state",
                "parent",
                f"'{later.action}' at {run.cite(later.index).label()} {why}: that must be "
                "kept from one step to the next",
                (run.cite(earlier.index), run.cite(later.index)),
            )
    return None


# -- completion -------------------------------------------------------------------------------


def _completion(
    spec: InterventionSpec, runs: dict[str, Run], corrections: list[Correction]
) -> Demand:
    assert spec.scope and spec.execution
    completion = spec.execution.completion
    cited = tuple(completion.citations[:4])
    if not corrections:
        decided = {
            (c.episode_id, i)
            for d in spec.scope.decisions
            for c in d.citations
            for i in range(c.start, c.end + 1)
        }
        later = [c for c in completion.citations if (c.episode_id, c.end) not in decided]
        if later and not _veto(spec):
            return Demand(
                "completion",
                "result",
                f"completion ({completion.text}) shows at {later[0].label()}, after the step "
                "that decides",
                tuple(later[:4]),
            )
        return Demand(
            "completion",
            "immediate",
            f"completion ({completion.text}) shows where the decision is taken",
            cited,
        )
    for correction in corrections:
        found = _covered(correction)
        if found is not None:
            return found
    ends = tuple(c.run.cite(c.completion) for c in corrections if c.completion is not None)
    return Demand(
        "completion",
        "result",
        f"completion ({completion.text}) is observed at the procedure's end "
        f"({', '.join(c.label() for c in (ends or cited)[:3])})",
        ends or cited,
    )


def _veto(spec: InterventionSpec) -> bool:
    assert spec.scope
    return all(d.value == "veto" for d in spec.scope.decisions)


def _covered(correction: Correction) -> Demand | None:
    """What the correction ends on was out of sight at its start and was reached only after
    moving through other places."""
    run = correction.run
    last = correction.steps[-1]
    target = run.lexicon.role(last.action).target
    if not target or _known(target, run.seen(correction.start)):
        return None
    through = [s for s in correction.steps[:-1] if _moved(correction, s)]
    if not through:
        return None
    places = [p for p in (_place_of(correction, s) for s in through) if p] or [
        s.action for s in through
    ]
    ended = run.cite(correction.completion if correction.completion is not None else last.index)
    return Demand(
        "completion",
        "coverage",
        f"'{target}' was out of sight at {run.cite(correction.start).label()} and was reached "
        f"at {ended.label()} only through {', '.join(places)} "
        f"({', '.join(run.cite(s.index).label() for s in through)}): that it is nowhere can be "
        "told only by covering every place",
        tuple(
            dict.fromkeys(
                [run.cite(correction.start), *(run.cite(s.index) for s in through), ended]
            )
        ),
    )


# -- approach ---------------------------------------------------------------------------------


def approach_of(correction: Correction) -> Approach | None:
    """The strategy a run's correction shows, from what its world offered: moving through
    exits its room texts show (opening containers on the way), an action repeated until a
    change, or one verb tried on several candidates."""
    run, steps = correction.run, correction.steps
    roles = [(s, run.lexicon.role(s.action)) for s in steps]
    span = (correction.span(),)
    containers = [
        s
        for s, r in roles
        if r.role == "open" and not run.lexicon.is_navigation(s.action) and r.target
    ]
    readable = any(run.lexicon.scene(s.observation) for s in run.steps if s.observation)
    moves = [s for s, r in roles if r.role == "move"] if readable else []  # no exits to walk
    if moves and containers:
        return Approach(
            "search-containers",
            ("move", "open"),
            f"the run moved through {len(moves)} places and opened "
            f"{', '.join(run.lexicon.role(s.action).target for s in containers)} on the way",
            span,
        )
    if moves:
        return Approach(
            "search-exits", ("move", "open"), f"the run moved through {len(moves)} places", span
        )
    return _repeated(correction, roles) or _candidates(correction, roles)


def _repeated(correction: Correction, roles: list) -> Approach | None:
    """An action the correction repeats (waiting or checking until a change shows)."""
    seen: dict[str, list[CaseStep]] = {}
    for step, role in roles:
        if role.role in ("wait", "check"):
            seen.setdefault(" ".join(step.action.lower().split()), []).append(step)
    action, steps = max(seen.items(), key=lambda kv: len(kv[1]), default=("", []))
    if len(steps) < 2:
        return None
    role = correction.run.lexicon.role(steps[0].action).role
    return Approach(
        "wait-for-change",
        tuple(sorted({role, "wait"})),
        f"the run repeated '{action}' {len(steps)} times until the change showed",
        tuple(correction.run.cite(s.index) for s in steps),
        action=steps[0].action,
    )


def _candidates(correction: Correction, roles: list) -> Approach | None:
    """One verb the correction applies to several objects in turn (testing candidates)."""
    by_verb: dict[str, list[tuple[CaseStep, str]]] = {}
    for step, role in roles:
        if role.target and role.role in ("check", "other", "take"):
            by_verb.setdefault(role.verb, []).append((step, role.target))
    verb, tried = max(by_verb.items(), key=lambda kv: len(kv[1]), default=("", []))
    if len({t for _, t in tried}) < 2:
        return None
    step, target = tried[0]
    at = step.action.lower().find(target)
    if at < 0:
        return None
    template = step.action[:at] + "{candidate}" + step.action[at + len(target) :]
    role = correction.run.lexicon.role(step.action).role
    return Approach(
        "test-candidates",
        (role,),
        f"the run tried '{verb}' on {len(tried)} candidates in turn",
        tuple(correction.run.cite(s.index) for s, _ in tried),
        action=template,
    )
