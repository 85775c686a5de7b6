"""Compilation's judgments by any OpenAI-compatible model (:class:`OpenAICompiler`).

**Spec extraction** makes one structured-output call per cluster (purpose ``compile.spec``,
temperature 0). The prompt shows every member's instruction and named phrases, the
evaluator's verdict, the analyzer's reading (causal step, change, trigger, correction,
contrast step) and both runs with their stored step indices (step 0 is the run's start). The
model answers whether the members support one intervention and, if so, its activation,
behavioural scope and execution obligation, every field with ``{episode_id, start, end}``
citations. The answer is checked before it is returned: every citation must name steps of
the members' runs, and the spec must pass the engine's own traceability check
(:func:`workbench.compile.specs.traceability`: patterns compile, templates read only what the
trigger declares). A failing answer gets one correction message listing the problems; a
second failure, or a :class:`~workbench.llm.client.ModelError`, defers the cluster (an
unsupported :class:`SpecProposal` with the reason) — deferral, not a best-effort repair.

**Contract proposals** make one call per attempted schema (purpose
``compile.contract.<kind>``). The prompt shows the spec (each field's text, value and cited
spans), what the cluster's runs demand of each obligation (read off its steps by
:mod:`workbench.compile.obligations`, with the steps that show it) and the witnesses earlier
schemas left open; the model fills the schema's contract slots, including the executable form,
and a four-entry closure report. The answer is converted to the contract dict shapes of
:mod:`workbench.compile.heuristic` and is *not* judged here:
:func:`workbench.compile.closure.decide` decides closure mechanically against those demands,
the same way for every reasoner, whatever the model claims.

The response models below have only fixed fields (strict structured outputs reject free-form
objects): name/value pairs stand in for mappings and the conversion builds the dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from store import (
    OBLIGATIONS,
    SCHEMA_ORDER,
    Activation,
    ArtifactKind,
    Citation,
    Claim,
    Execution,
    InterventionSpec,
    Observed,
    Scope,
)
from store.artifacts import StateOwner
from workbench.compare import entity_phrases
from workbench.compile.contracts import CONTRACT_TYPES, RETURN_SCHEMA, input_schema, slug
from workbench.compile.proposals import (
    AttemptProposal,
    Demands,
    KindChoice,
    MemberCase,
    ObligationReport,
    SpecProposal,
)
from workbench.compile.specs import claims_of, traceability
from workbench.llm.answers import CheckFailed, checked_answer
from workbench.llm.client import ChatClient, ModelError
from workbench.llm.steps import (
    CONTRAST_SHARE,
    MIN_STEPS_CHARS,
    CaseStep,
    render_steps,
    step_ranges,
)

SPEC_PURPOSE = "compile.spec"
CONTRACT_PURPOSE = "compile.contract.{kind}"
SELECT_PURPOSE = "compile.select"

SELECT_PROMPT = """\
You turn an intervention specification, derived from an agent's failed runs, into one piece \
of agent knowledge. Choose its type:

- rule: a guard the agent checks at one decision (when this action is about to happen and \
this is seen, do that instead);
- skill: an ordered procedure the agent runs inside its own loop until an expected result \
is seen;
- subagent: a bounded sub-policy the agent delegates an objective to; it keeps its own \
state, runs its own loop and returns success or failure.

Answer with the type and one sentence saying why."""

FAILED_CHECKS = "model answer failed checks: "
"""How the reason of a cluster deferred for a twice-failed answer begins."""
NO_ANSWER = "the model gave no usable contract: "
"""How the witness of an attempt whose contract call failed begins."""
UNRECOGNISED = "unrecognised"
"""Mechanism of a deferred cluster whose answer named none."""
START_ACTION = "(start of the run)"
"""How step 0 (what a run started from) is shown in a listing."""

# -- prompts --------------------------------------------------------------------------------

EVIDENCE_TEXT = """\
At every decision point the agent proposes an action and can see an evidence text laid out \
like this (the history holds its last six actions, each on a `> ` line followed by the \
observation it got; the `here:` and `exit:` lines are the room description read the same \
way in every world, one `exit:` line per way out, and are absent when the world's room \
descriptions cannot be read):

    instruction: <the task>
    observation: <the latest observation>
    look: <the latest room description>
    here: <the place that description is of>
    exit: <a way out, as the move action names it> (<open, closed or locked>)
    inventory: <what the agent carries>
    score: <the current score>
    history:
    > <action>
    <its observation>

Patterns are Python regular expressions. An action pattern must match the whole proposed \
action, and its capture groups are available to the other fields as `{1}`, `{2}`, ... \
(inserted escaped into patterns, as they are into templates). `{E1}`, `{E2}`, ... stand for \
the phrases the task instruction names, numbered as listed with each run. A template is an \
action with such placeholders in the run's own action grammar, e.g. `open {1}`. Nothing \
else may be read: a field that needs something the trigger does not capture and the \
instruction does not name depends on state the agent never declared."""

SPEC_INTRO = """\
You write one intervention specification for a cluster of analysed failures of an agent \
acting in a text environment, or explain why the cluster does not support one. The \
specification says when the intervention applies, what it changes and what carrying it out \
requires. It does not choose an artifact type: whether a rule, a skill or a subagent \
implements it is decided later, from what you write here.

For each member of the cluster you receive the task instruction and the phrases it names, \
the evaluator's verdict, the analyst's reading (the causal step, the required change, an \
abstract trigger and correction), the failed run and, when one exists, a successful run of \
the same regime: behaviour the intervention must preserve. Runs are listed as `[index] \
action -> observation (reward)`; step 0 is what the run started from. Some steps may be \
omitted to save space.

"""

SPEC_FIELDS = """

Answer with one JSON object:

- supported: true only when one correction applies to every member's causal step under the \
same observable conditions; false when the members need different corrections, when the \
trigger cannot be seen before the decision, or when the runs do not show what completes the \
correction.
- reason: when not supported, why, naming the members concerned; empty otherwise.
- mechanism: the failure mechanism in two to four lowercase words joined by dashes, e.g. \
`blocked-precondition`.
- activation.trigger: the decision point. value: the action pattern, with a capture group \
for each part the other fields refer to; text: the same in words.
- activation.observations: what must be visible (absent: false) or must not be visible \
(absent: true, a guard) in the evidence text at that point. value: a pattern searched in the \
evidence text; text: what the pattern finds, in words, stated the same way whatever absent \
says (absent alone gives the polarity).
- activation.boundary: decision points where the trigger matches but behaviour must not \
change (typically in the successful runs); null when the runs show none.
- scope.objective: the corrective objective. value: its machine form (the decisions' \
templates joined by `; `, or `veto`).
- scope.decisions: the dependent decisions, in order. value: a template, `veto` (block the \
proposed action) or `parent` (a decision the agent keeps making itself).
- execution.state: what must persist while the intervention runs (value: a pattern when it \
is observable, else empty). owner: `none` when nothing has to persist, `parent` when the \
agent's visible context holds it, `private` when it needs a ledger the agent does not keep. \
lifetime: `step` (one decision), `procedure` (several steps inside the agent's own loop) or \
`delegation` (a loop of its own that ends on its own terms).
- execution.completion: how completion is observed. value: a pattern on the latest \
observation; empty when the runs do not show it.
- execution.failure: how a failure to complete is observed; null when the intervention has \
no way of failing on its own terms.
- execution.inputs: the placeholders the templates and patterns read, without braces (`1`, \
`E2`).

Every claim carries citations: the spans of steps it was read from, each an episode_id with \
a start and an end step index (end inclusive). Cite only episodes and indices shown, and \
cite every field; only the boundary may be null. When the cluster is not supported, set \
activation, scope and execution to null. Prefer general patterns, built from groups and \
named phrases, over words copied from one run."""

SPEC_SYSTEM_PROMPT = SPEC_INTRO + EVIDENCE_TEXT + SPEC_FIELDS

CLUSTER_TEMPLATE = "Cluster {cluster} holds {count} analysed failure(s)."

MEMBER_TEMPLATE = """\
<member analysis="{analysis}" episode="{episode}" family="{family}">
<instruction>
{instruction}
</instruction>
Named phrases: {entities}{regime}

<outcome>
{outcome}
</outcome>

<analysis>
causal step: {start}
required change: {change}
trigger: {trigger}
correction: {correction}
successful run's step showing the change: {contrast_step}
</analysis>

<failed_run episode="{episode}" steps="{failed_count}">
{failed_steps}
</failed_run>

{contrast}
</member>"""

REGIME_LINE = "\nEvery instruction of this family opens with: {regime}"

CONTRAST_TEMPLATE = """\
<successful_run episode="{episode}" task="{task}" steps="{count}">
{instruction}{steps}
</successful_run>"""

CONTRAST_INSTRUCTION = "Its instruction: {instruction} (named phrases: {entities})\n"

NO_CONTRAST = "No successful run of this regime is available for contrast."

SPEC_CORRECTION = """\
Your answer does not pass the checks: {problems}. The steps you may cite are {valid}. Answer \
again with the whole JSON object."""

CONTRACT_INTRO = """\
You compile an intervention specification into the contract of one artifact schema and \
report, obligation by obligation, whether that schema can own the intervention. Schemas are \
attempted in the order rule, skill, subagent, from the narrowest owner to the widest, and the \
first whose four obligations all close is kept. Do not stretch a schema over what it cannot \
own: an open obligation with an honest witness hands the intervention to the next schema, \
which must then close that witness as well.

The specification lists each field with its text, its machine value and the spans it cites, \
labelled `episode@start` or `episode@start-end`. The evidence section says what the cluster's \
runs demand of each obligation, and which steps show it: observation (visible or hidden to the \
agent when it decides), state (none, parent: kept from one step to the next within the agent's \
recent history, private: longer or a way back to keep), decision (one, fixed: several in the \
same order every time, discovered: their order depends on what is found) and completion \
(immediate, result: at the end of the procedure, coverage: only after covering every place). \
A rule owns up to visible, none, one and immediate; a skill up to parent, fixed and result; a \
subagent everything but a hidden observation. A demand above the schema's is an open \
obligation whatever you claim; an obligation you leave open must cite the steps that show why.

"""

RULE_SECTION = """\
The schema is a RULE. A rule acts at one decision point, on evidence the agent can see, and \
keeps nothing between decisions. It fires when the proposed action matches \
`form.when_action` in full, `form.when_evidence` is found in the evidence text (empty: no \
condition) and `form.unless_evidence` is not (empty: no guard). It then vetoes the action \
(`form.response` `veto`: the agent falls back to what it would otherwise do) or replaces it \
(`replace`) with `form.replacement`, a template.

Contract fields: name (a few lowercase words joined by dashes), description (one or two \
sentences), activation (the decision point and what must be visible there, in words), guard \
(what must hold, or must not, for the rule to fire), response (what it does there), positive \
(spans of the decision points where it must fire: steps where the failing action was \
proposed), negative (spans of decision points where it must stay silent: the negative \
boundary), form."""

SKILL_SECTION = """\
The schema is a SKILL. A skill is an ordered procedure the agent runs inside its own loop when \
the proposed action matches `form.when_action` in full, `form.when_evidence` is found in the \
evidence text and `form.unless_evidence` is not. It takes `form.steps` once, in order, then \
repeats `form.loop` (at most `form.max_rounds` times) until `form.until` is found in the \
latest observation. Steps are templates. The agent keeps the task and decides when the task \
is complete.

Contract fields: name (a few lowercase words joined by dashes), description (one or two \
sentences), applicability (when the agent should run it, in words), inputs (the placeholders \
its templates read, without braces), procedure (the steps in words, in order), recovery (what \
happens when a step is rejected), expected_result (the observable result that ends it), probes \
(recorded decision points the skill is executed from, each an episode_id and the step index of \
the decision), form."""

SUBAGENT_SECTION = """\
The schema is a SUBAGENT: a sub-policy the agent hands a closed objective to, when the \
proposed action matches `form.when_action` in full, `form.when_evidence` is found in the \
evidence text and `form.unless_evidence` is not. It starts in a fresh context: only its \
declared inputs, never the agent's history. Each input has a name (lowercase letters, digits \
and underscores; never a number), a description, and a bind: how the agent fills it from what \
it matched (a template of the trigger's groups and the task's named phrases, e.g. `{1}`). The \
subagent's own templates (`form.objective`, `form.success`, `form.action`) use only its inputs, \
by name (`{target}`). It runs its own loop within `form.max_steps` steps and may use only its \
tools (action roles read through the world's grammar: `move`, `open`, `check`, `take`, \
`decide`, `wait`, `other`; or action prefixes): anything else it proposes is refused and \
recorded. Without a model it follows `form.strategy`, chosen from what the world offers in \
the runs (the evidence's approach line): `search-exits` (depth first through the exits the \
room descriptions show, opening closed ones, coming back the way it went), \
`search-containers` (the same walk, opening every closed container on the way), \
`test-candidates` (`form.action` with `{candidate}` on each candidate the valid actions \
offer) or `wait-for-change` (`form.action` again and again). With a model it follows \
`form.prompt`, its own instructions. It ends with success when what it observes (its latest \
observation, or the room description and its `here:`/`exit:` lines) matches `form.success`, \
and with failure when its steps are spent or nothing is left to try; it returns its status, \
steps, what it found and where, the places or candidates it went through, the actions it was \
refused and a reason (the runtime fixes that return schema).

Contract fields: name (a few lowercase words joined by dashes), description (one or two \
sentences), invocation (when the agent delegates, and when it must not), inputs (name, \
description, bind; they make the input schema), owned_state (the private state it keeps), \
tools, success and failure (when it ends each way, in words), probes (recorded decision \
points it is invoked from: an episode_id, the step index, expect (`success` or `failure`) and \
inputs, name and value pairs by input name that replace the bound values, e.g. an unreachable \
target for a failure probe, or empty to bind them from the recorded action), form \
(objective, success — e.g. `\\nhere: {target}(?:\\n|$)` to arrive in a place, or the \
target's name to see it —, strategy, action, prompt, max_steps)."""

SECTIONS: dict[str, str] = {
    "rule": RULE_SECTION,
    "skill": SKILL_SECTION,
    "subagent": SUBAGENT_SECTION,
}

REPORT_SECTION = """

Answer with one JSON object: contract (the fields above, or null when this schema cannot own \
the intervention at all) and closure, one entry per obligation:

- observation: the owner can see every input the activation needs when it has to act.
- state: the owner can keep what must persist for as long as it must live.
- decision: every dependent decision of the scope lies within the owner's control.
- completion: the owner can tell, and report, when the intervention is complete.

Each entry has status (true when this schema closes the obligation), slot (the contract slot \
that owns it, one of: {slots}), citations (the evidence, as episode_id, start and end; each \
must lie inside a span the specification cites for one of its fields, the boundary's spans \
excluded) and witness (when status is false, why this schema cannot close the obligation; \
empty otherwise). Fill the closure report even when the contract is null. A closed \
obligation is accepted only with a slot of this schema that the contract fills and with \
citations inside the specification's spans."""

CONTRACT_TEMPLATE = """\
Attempt the {kind} schema (position {position} of rule, skill, subagent).

<specification>
{spec}
</specification>

<evidence>
{evidence}
</evidence>

{carried}"""

CARRIED_TEMPLATE = """\
<open_witnesses>
Earlier schemas left these obligations open; this schema closes only if it closes them too:
{witnesses}
</open_witnesses>"""

NO_CARRIED = "No earlier schema left an obligation open."


def contract_prompt(kind: ArtifactKind) -> str:
    """The system prompt of a contract proposal for ``kind``."""
    slots = ", ".join(CONTRACT_TYPES[kind].REQUIRED)
    return (
        CONTRACT_INTRO
        + EVIDENCE_TEXT
        + "\n\n"
        + SECTIONS[kind]
        + REPORT_SECTION.format(slots=slots)
    )


# -- response models: spec extraction ------------------------------------------------------


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CitationAnswer(_Answer):
    """A span of steps the model cites."""

    episode_id: str
    start: int
    end: int
    """Last step index (inclusive)."""

    def label(self) -> str:
        """``episode@start`` or ``episode@start-end``, as the prompts write spans."""
        steps = str(self.start) if self.start == self.end else f"{self.start}-{self.end}"
        return f"{self.episode_id}@{steps}"


class ClaimAnswer(_Answer):
    """A field of the spec: words, a machine value (pattern or template) and evidence."""

    text: str
    value: str
    citations: list[CitationAnswer]


class ObservedAnswer(ClaimAnswer):
    """A required observation."""

    absent: bool
    """``True``: the pattern must not be visible (a guard)."""


class BoundaryAnswer(_Answer):
    """Decision points where the trigger matches but behaviour must not change."""

    text: str
    citations: list[CitationAnswer]


class ActivationAnswer(_Answer):
    """When the intervention applies."""

    trigger: ClaimAnswer
    observations: list[ObservedAnswer]
    boundary: BoundaryAnswer | None


class ScopeAnswer(_Answer):
    """What the intervention changes."""

    objective: ClaimAnswer
    decisions: list[ClaimAnswer]


class ExecutionAnswer(_Answer):
    """What carrying the intervention out obliges its owner to keep and observe."""

    state: ClaimAnswer
    owner: StateOwner
    lifetime: Literal["step", "procedure", "delegation"]
    completion: ClaimAnswer
    failure: ClaimAnswer | None
    inputs: list[str]
    """Placeholder names without braces (``1``, ``E2``)."""


class SpecAnswer(_Answer):
    """The model's intervention spec for one cluster (or why there is none)."""

    supported: bool
    reason: str
    """Why the members do not support one intervention (when not supported)."""
    mechanism: str
    activation: ActivationAnswer | None
    scope: ScopeAnswer | None
    execution: ExecutionAnswer | None


# -- response models: contracts --------------------------------------------------------------


class ObligationAnswer(_Answer):
    """The model's claim about one obligation."""

    status: bool
    slot: str
    citations: list[CitationAnswer]
    witness: str


class ClosureAnswer(_Answer):
    """The four-entry closure report (one field per obligation, so none can be missing)."""

    observation: ObligationAnswer
    state: ObligationAnswer
    decision: ObligationAnswer
    completion: ObligationAnswer


class _FormAnswer(_Answer):
    when_action: str
    when_evidence: str
    unless_evidence: str


class RuleFormAnswer(_FormAnswer):
    """The executable rule (:class:`~workbench.agents.guidance.RuleForm`)."""

    response: Literal["veto", "replace"]
    replacement: str


class RuleSlots(_Answer):
    """A :class:`~workbench.compile.contracts.RuleContract`'s fields."""

    name: str
    description: str
    activation: str
    guard: str
    response: str
    positive: list[CitationAnswer]
    negative: list[CitationAnswer]
    form: RuleFormAnswer


class RuleAnswer(_Answer):
    """A rule contract (null when a rule cannot own the intervention) and its report."""

    contract: RuleSlots | None
    closure: ClosureAnswer


class ProbeAnswer(_Answer):
    """A recorded decision point a skill is executed from."""

    episode_id: str
    step: int


class ProcedureFormAnswer(_FormAnswer):
    """The executable procedure (:class:`~workbench.agents.guidance.ProcedureForm`)."""

    steps: list[str]
    loop: list[str]
    until: str
    max_rounds: int


class SkillSlots(_Answer):
    """A :class:`~workbench.compile.contracts.SkillContract`'s fields."""

    name: str
    description: str
    applicability: str
    inputs: list[str]
    procedure: list[str]
    recovery: str
    expected_result: str
    probes: list[ProbeAnswer]
    form: ProcedureFormAnswer


class SkillAnswer(_Answer):
    """A skill contract (null when a skill cannot own the intervention) and its report."""

    contract: SkillSlots | None
    closure: ClosureAnswer


class InputValue(_Answer):
    """One input value of a probe (a mapping entry)."""

    name: str
    value: str


class InputAnswer(_Answer):
    """One declared input of a subagent."""

    name: str
    description: str
    bind: str
    """How the agent fills it from its match (``{1}``, ``{E2}``)."""


class DelegateProbeAnswer(ProbeAnswer):
    """A recorded decision point a subagent is invoked from."""

    expect: Literal["success", "failure"]
    inputs: list[InputValue]


class DelegateFormAnswer(_FormAnswer):
    """The executable sub-policy (:class:`~workbench.agents.guidance.DelegateForm`)."""

    objective: str
    success: str
    strategy: Literal["search-exits", "search-containers", "test-candidates", "wait-for-change"]
    action: str
    prompt: str
    max_steps: int


class SubagentSlots(_Answer):
    """A :class:`~workbench.compile.contracts.SubagentContract`'s fields (the return schema
    is the runtime's and is filled in by the conversion)."""

    name: str
    description: str
    invocation: str
    inputs: list[InputAnswer]
    owned_state: str
    tools: list[str]
    success: str
    failure: str
    probes: list[DelegateProbeAnswer]
    form: DelegateFormAnswer


class SubagentAnswer(_Answer):
    """A subagent contract (null when a subagent cannot own the intervention) and its report."""

    contract: SubagentSlots | None
    closure: ClosureAnswer


ContractAnswer = RuleAnswer | SkillAnswer | SubagentAnswer
ANSWERS: dict[str, type[ContractAnswer]] = {
    "rule": RuleAnswer,
    "skill": SkillAnswer,
    "subagent": SubagentAnswer,
}


# -- the compiler ----------------------------------------------------------------------------


class OpenAICompiler:
    """The :class:`~workbench.compile.proposals.Compiler` over a chat model.

    Args:
        client: the logged, cached model client.
        max_steps_chars: characters the step listings of one cluster's prompt may take.
    """

    def __init__(self, client: ChatClient, *, max_steps_chars: int = 12000) -> None:
        if max_steps_chars < MIN_STEPS_CHARS:
            raise ValueError(f"max_steps_chars must be at least {MIN_STEPS_CHARS}")
        self.client = client
        self.max_steps_chars = max_steps_chars
        self.name = f"openai:{client.model}"

    def extract_specs(self, members: list[MemberCase]) -> list[SpecProposal]:
        """One spec proposal per cluster of ``members``, checked against their runs and the
        engine's traceability check; a cluster whose answer still fails after one
        correction, or whose call fails, is deferred with the reason (never raised)."""
        return extract_specs(self.client, members, self.max_steps_chars)

    def propose_contract(
        self, spec: InterventionSpec, kind: ArtifactKind, carried: list[str], demands: Demands
    ) -> AttemptProposal:
        """The model's ``kind`` contract for ``spec`` and its four-entry closure report, for
        the closure controller to decide on against ``demands``. A failed call (after the
        client's retries) is an attempt without a contract whose every obligation stays open
        with the error as its witness: the next schema is tried, and a spec no schema closes is
        deferred."""
        try:
            return propose_contract(self.client, spec, kind, carried, demands)
        except ModelError as error:
            return unanswered(kind, error)

    def select_kind(self, spec: InterventionSpec) -> KindChoice:
        """The model picks the type directly (the ``no-closure`` ablation).

        Raises:
            ModelError: the call failed (after the client's retries).
        """
        return select_kind(self.client, spec)


class KindAnswer(_Answer):
    kind: Literal["rule", "skill", "subagent"]
    why: str


def select_kind(client: ChatClient, spec: InterventionSpec) -> KindChoice:
    """The model's direct type choice for ``spec`` (the ``no-closure`` ablation).

    Raises:
        ModelError: the call failed (after the client's retries).
    """
    messages = [
        {"role": "system", "content": SELECT_PROMPT},
        {"role": "user", "content": f"<specification>\n{render_spec(spec)}\n</specification>"},
    ]
    episode = spec.sources[0] if len(spec.sources) == 1 else None
    answer = client.parse(
        messages, KindAnswer, purpose=SELECT_PURPOSE, temperature=0.0, episode_id=episode
    )
    return KindChoice(kind=answer.kind, why=answer.why)


# -- spec extraction -------------------------------------------------------------------------


def extract_specs(
    client: ChatClient, members: Sequence[MemberCase], max_steps_chars: int = 12000
) -> list[SpecProposal]:
    """One checked spec proposal per cluster of ``members`` (in cluster id order); the step
    listings of one cluster's prompt take about ``max_steps_chars`` characters."""
    clusters: dict[int, list[MemberCase]] = {}
    for member in members:
        clusters.setdefault(member.cluster_id, []).append(member)
    return [
        cluster_spec(client, cluster_id, clusters[cluster_id], max_steps_chars)
        for cluster_id in sorted(clusters)
    ]


def cluster_spec(
    client: ChatClient, cluster_id: int, members: Sequence[MemberCase], max_steps_chars: int
) -> SpecProposal:
    """The model's spec for one cluster: checked, corrected once, else deferred."""
    ids = [m.analysis_id for m in members]
    messages = [
        {"role": "system", "content": SPEC_SYSTEM_PROMPT},
        {"role": "user", "content": render_cluster(cluster_id, members, max_steps_chars)},
    ]
    episode = members[0].case.episode_id if len(members) == 1 else None
    try:
        answer = checked_answer(
            client,
            messages,
            SpecAnswer,
            purpose=SPEC_PURPOSE,
            check=lambda answer: check_spec(answer, members),
            correction=lambda problems: spec_correction(problems, members),
            episode_id=episode,
        )
    except CheckFailed as failed:
        return deferred(ids, FAILED_CHECKS + "; ".join(failed.problems))
    except ModelError as error:
        return deferred(ids, str(error))
    return to_proposal(answer, ids)


def deferred(ids: list[int], reason: str) -> SpecProposal:
    """An unsupported proposal over ``ids`` with ``reason``."""
    return SpecProposal(members=ids, mechanism=UNRECOGNISED, supported=False, reason=reason)


def check_spec(answer: SpecAnswer, members: Sequence[MemberCase]) -> list[str]:
    """What keeps ``answer`` from being a spec of ``members`` (empty when nothing does): a
    missing part, a citation of a step the runs do not have, then whatever the engine's
    traceability check finds."""
    if not answer.supported:
        return []
    problems = [
        f"{part} is null although supported is true"
        for part in ("activation", "scope", "execution")
        if getattr(answer, part) is None
    ]
    if not answer.mechanism.strip():
        problems.append("mechanism is empty")
    if problems:
        return problems
    steps = citable_steps(members)
    problems = [
        f"{field} cites {c.label()}, which is not a step of the runs shown"
        for field, citations in _cited(answer)
        for c in citations
        if not _exists(c, steps)
    ]
    if problems:
        return problems
    assert answer.activation is not None
    if not answer.activation.trigger.value.strip():
        problems.append("activation.trigger has no action pattern (value is empty)")
    spec = InterventionSpec(run_id=0, reasoner="check", **_parts(answer))
    return problems + traceability(spec, {m.case.episode_id: m for m in members})


def citable_steps(members: Iterable[MemberCase]) -> dict[str, set[int]]:
    """Step indices each run of the members offers to citations (step 0 is its start)."""
    steps: dict[str, set[int]] = {}
    for member in members:
        case = member.case
        steps[case.episode_id] = {0, *(s.index for s in case.steps)}
        if case.contrast_id:
            steps[case.contrast_id] = {0, *(s.index for s in case.contrast_steps)}
    return steps


def _exists(citation: CitationAnswer, steps: dict[str, set[int]]) -> bool:
    known = steps.get(citation.episode_id, set())
    return citation.start <= citation.end and {citation.start, citation.end} <= known


def _cited(answer: SpecAnswer) -> list[tuple[str, list[CitationAnswer]]]:
    """Every field's citations, named as :func:`workbench.compile.specs.claims_of` names them
    (plus the boundary, which traceability does not look at)."""
    found: list[tuple[str, list[CitationAnswer]]] = []
    if answer.activation:
        activation = answer.activation
        found.append(("activation.trigger", activation.trigger.citations))
        found += [
            (f"activation.observations[{i}]", o.citations)
            for i, o in enumerate(activation.observations)
        ]
        if activation.boundary:
            found.append(("activation.boundary", activation.boundary.citations))
    if answer.scope:
        found.append(("scope.objective", answer.scope.objective.citations))
        found += [
            (f"scope.decisions[{i}]", d.citations) for i, d in enumerate(answer.scope.decisions)
        ]
    if answer.execution:
        execution = answer.execution
        found += [("execution.state", execution.state.citations)]
        found += [("execution.completion", execution.completion.citations)]
        if execution.failure:
            found.append(("execution.failure", execution.failure.citations))
    return found


def spec_correction(problems: Sequence[str], members: Sequence[MemberCase]) -> str:
    """The one correction message: the problems and the steps each run offers."""
    valid = "; ".join(
        f"{episode} {step_ranges(indices)}" for episode, indices in citable_steps(members).items()
    )
    return SPEC_CORRECTION.format(problems="; ".join(problems), valid=valid)


# -- spec answer → records -------------------------------------------------------------------


def to_proposal(answer: SpecAnswer, ids: list[int]) -> SpecProposal:
    """A checked answer as a :class:`SpecProposal` over the cluster's analyses."""
    mechanism = slug(answer.mechanism) if answer.mechanism.strip() else UNRECOGNISED
    if not answer.supported:
        reason = answer.reason.strip() or "the model gave no reason"
        return SpecProposal(members=ids, mechanism=mechanism, supported=False, reason=reason)
    return SpecProposal(members=ids, mechanism=mechanism, **_parts(answer))


def _parts(answer: SpecAnswer) -> dict:
    assert answer.activation and answer.scope and answer.execution
    return {
        "activation": _activation(answer.activation),
        "scope": Scope(
            objective=_claim(answer.scope.objective),
            decisions=[_claim(d) for d in answer.scope.decisions],
        ),
        "execution": _execution(answer.execution),
    }


def _citations(answers: Iterable[CitationAnswer]) -> list[Citation]:
    return [Citation(episode_id=c.episode_id, start=c.start, end=c.end) for c in answers]


def _claim(answer: ClaimAnswer) -> Claim:
    return Claim(text=answer.text, value=answer.value, citations=_citations(answer.citations))


def _activation(answer: ActivationAnswer) -> Activation:
    boundary = answer.boundary
    return Activation(
        trigger=_claim(answer.trigger),
        observations=[
            Observed(text=o.text, value=o.value, absent=o.absent, citations=_citations(o.citations))
            for o in answer.observations
        ],
        boundary=Claim(text=boundary.text, citations=_citations(boundary.citations))
        if boundary
        else None,
    )


def _execution(answer: ExecutionAnswer) -> Execution:
    return Execution(
        state=_claim(answer.state),
        owner=answer.owner,
        lifetime=answer.lifetime,
        completion=_claim(answer.completion),
        failure=_claim(answer.failure) if answer.failure else None,
        inputs=_names(answer.inputs),
    )


def _names(inputs: Iterable[str]) -> list[str]:
    """Placeholder names without braces or blanks, in order, each once."""
    return list(dict.fromkeys(n.strip().strip("{}") for n in inputs if n.strip().strip("{}")))


# -- rendering the cluster -------------------------------------------------------------------


def render_cluster(cluster_id: int, members: Sequence[MemberCase], max_steps_chars: int) -> str:
    """The user message of a spec call: every member with its runs; each member's listings
    take an equal share of ``max_steps_chars`` (at least the smallest useful budget)."""
    share = max(MIN_STEPS_CHARS, max_steps_chars // max(1, len(members)))
    head = CLUSTER_TEMPLATE.format(cluster=cluster_id, count=len(members))
    return "\n\n".join([head, *(render_member(m, share) for m in members)])


def render_member(member: MemberCase, budget: int) -> str:
    """One member: instruction, verdict, the analyzer's reading and both runs."""
    case = member.case
    failed = _with_start(case.steps, member.initial_observation)
    contrast = _with_start(case.contrast_steps, member.contrast_initial_observation)
    failed_text, contrast_text = _listings(
        failed, contrast, budget, member.start, member.contrast_step
    )
    return MEMBER_TEMPLATE.format(
        analysis=member.analysis_id,
        episode=case.episode_id,
        family=case.family or "unknown",
        instruction=case.instruction.strip(),
        entities=_entities(case.instruction),
        regime=REGIME_LINE.format(regime=member.regime) if member.regime else "",
        outcome=case.outcome.strip() or "(no message)",
        start=member.start,
        change=member.change or "(none given)",
        trigger=member.trigger or "(none given)",
        correction=member.correction or "(none given)",
        contrast_step="none" if member.contrast_step is None else member.contrast_step,
        failed_count=len(failed),
        failed_steps=failed_text,
        contrast=_contrast(member, contrast, contrast_text),
    )


def _contrast(member: MemberCase, steps: Sequence[CaseStep], text: str) -> str:
    case = member.case
    if not case.contrast_id or not case.contrast_steps:
        return NO_CONTRAST
    instruction = ""
    if not case.contrast_same_task and case.contrast_instruction:
        instruction = CONTRAST_INSTRUCTION.format(
            instruction=case.contrast_instruction.strip(),
            entities=_entities(case.contrast_instruction),
        )
    return CONTRAST_TEMPLATE.format(
        episode=case.contrast_id,
        task="same task" if case.contrast_same_task else "different task, same family",
        count=len(steps),
        instruction=instruction,
        steps=text,
    )


def _entities(instruction: str) -> str:
    """``E1 = boil water; E2 = kitchen``: the placeholders of the instruction's phrases."""
    found = entity_phrases(instruction)
    ordered = sorted(found.items(), key=lambda item: int(item[0][1:]))
    return "; ".join(f"{name} = {phrase}" for name, phrase in ordered) or "none"


def _with_start(steps: Sequence[CaseStep], initial: str) -> list[CaseStep]:
    """``steps`` with step 0 (what the run started from) in front, when it is known."""
    if not initial.strip() or any(s.index == 0 for s in steps):
        return list(steps)
    return [CaseStep(index=0, action=START_ACTION, observation=initial), *steps]


def _listings(
    failed: Sequence[CaseStep],
    contrast: Sequence[CaseStep],
    budget: int,
    focus: int,
    contrast_focus: int | None,
) -> tuple[str, str]:
    """Both listings within ``budget``, each trimmed around its own decision step; when they
    do not both fit, the successful run gets at most a third."""
    at = _position(failed, focus)
    contrast_at = _position(contrast, contrast_focus)
    failed_full = render_steps(failed, budget, at)
    contrast_full = render_steps(contrast, budget, contrast_at) if contrast else ""
    if len(failed_full) + len(contrast_full) <= budget:
        return failed_full, contrast_full
    share = min(len(contrast_full), budget // CONTRAST_SHARE)
    failed_text = render_steps(failed, budget - share, at)
    return failed_text, render_steps(contrast, budget - len(failed_text), contrast_at)


def _position(steps: Sequence[CaseStep], index: int | None) -> int | None:
    if index is None:
        return None
    return next((p for p, s in enumerate(steps) if s.index >= index), None)


# -- contract proposals ----------------------------------------------------------------------


def propose_contract(
    client: ChatClient,
    spec: InterventionSpec,
    kind: ArtifactKind,
    carried: Sequence[str],
    demands: Demands,
) -> AttemptProposal:
    """The model's ``kind`` contract for ``spec`` and its closure report (unjudged: the
    closure controller decides against ``demands``).

    Raises:
        ModelError: the call failed (after the client's retries).
    """
    messages = [
        {"role": "system", "content": contract_prompt(kind)},
        {"role": "user", "content": render_attempt(spec, kind, carried, demands)},
    ]
    episode = spec.sources[0] if len(spec.sources) == 1 else None
    answer = client.parse(
        messages,
        ANSWERS[kind],
        purpose=CONTRACT_PURPOSE.format(kind=kind),
        temperature=0.0,
        episode_id=episode,
    )
    return to_attempt(answer, kind, spec)


def unanswered(kind: ArtifactKind, error: ModelError) -> AttemptProposal:
    """The attempt a failed contract call leaves: no contract, every obligation open with
    the error as its witness."""
    witness = f"{NO_ANSWER}{error}"
    return AttemptProposal(
        kind=kind,
        report=[ObligationReport(obligation=o, status=False, witness=witness) for o in OBLIGATIONS],
    )


def render_attempt(
    spec: InterventionSpec, kind: ArtifactKind, carried: Sequence[str], demands: Demands
) -> str:
    """The user message of a contract call: the spec, what its runs demand, and the witnesses
    carried to ``kind`` (but not those of a schema whose call failed: they say nothing about
    the intervention)."""
    carried = [w for w in carried if NO_ANSWER not in w]
    witnesses = "\n".join(f"- {w}" for w in carried)
    return CONTRACT_TEMPLATE.format(
        kind=kind,
        position=SCHEMA_ORDER.index(kind) + 1,
        spec=render_spec(spec),
        evidence="\n".join(demands.lines()),
        carried=CARRIED_TEMPLATE.format(witnesses=witnesses) if carried else NO_CARRIED,
    )


def render_spec(spec: InterventionSpec) -> str:
    """The spec as the contract prompt shows it: each field with its value and cited spans."""
    lines = [
        f"mechanism: {spec.mechanism or 'unnamed'}",
        f"families: {', '.join(spec.families) or 'unknown'}",
        f"failed episodes: {', '.join(spec.sources) or 'none'}",
        f"successful episodes: {', '.join(spec.contrasts) or 'none'}",
    ]
    fields: list[tuple[str, Claim]] = claims_of(spec)
    if spec.activation and spec.activation.boundary:  # after the activation's other fields
        at = 1 + len(spec.activation.observations)
        fields.insert(at, ("activation.boundary (negative cases only)", spec.activation.boundary))
    for name, claim in fields:
        lines += _field_lines(name, claim)
    if spec.execution:
        execution = spec.execution
        inputs = ", ".join(execution.inputs) or "none"
        lines.append(
            f"execution: state owner {execution.owner}, lifetime {execution.lifetime}, "
            f"declared inputs {inputs}"
        )
    return "\n".join(lines)


def _field_lines(name: str, claim: Claim) -> list[str]:
    head = f"{name}: {claim.text or '(no text)'}"
    if isinstance(claim, Observed):
        head += " (must NOT be visible)" if claim.absent else " (must be visible)"
    lines = [head]
    if claim.value:
        lines.append(f"  value: {claim.value}")
    cited = ", ".join(c.label() for c in claim.citations) or "nothing"
    lines.append(f"  cites: {cited}")
    return lines


# -- contract answer → proposal --------------------------------------------------------------


def to_attempt(
    answer: ContractAnswer, kind: ArtifactKind, spec: InterventionSpec
) -> AttemptProposal:
    """The answer as an :class:`AttemptProposal`: the contract dict in the heuristic's shapes
    (``None`` when the model says the schema cannot own the intervention) and the report."""
    contract = None
    if answer.contract is not None:
        name = slug(answer.contract.name or spec.mechanism)
        contract = _BUILDERS[kind](answer.contract, name)
    return AttemptProposal(kind=kind, contract=contract, report=to_report(answer.closure))


def to_report(closure: ClosureAnswer) -> list[ObligationReport]:
    """The four obligation reports. A claim citing a span that is not a span at all (an
    empty episode id, a negative index) cannot be checked, so it is reported open."""
    reports = []
    for obligation in OBLIGATIONS:
        entry: ObligationAnswer = getattr(closure, obligation)
        citations, malformed = _checked_citations(entry.citations)
        status, witness = entry.status, entry.witness
        if malformed and status:
            status = False
            witness = f"the proposal cites malformed spans ({', '.join(malformed)})"
        reports.append(
            ObligationReport(
                obligation=obligation,
                status=status,
                slot=entry.slot.strip(),
                citations=citations,
                witness=witness,
            )
        )
    return reports


def _checked_citations(answers: Iterable[CitationAnswer]) -> tuple[list[Citation], list[str]]:
    """The citations that form spans, and the labels of those that do not."""
    good, bad = [], []
    for answer in answers:
        try:
            good.append(Citation(episode_id=answer.episode_id, start=answer.start, end=answer.end))
        except ValidationError:
            bad.append(answer.label())
    return good, bad


def _cases(citations: Iterable[CitationAnswer]) -> list[dict]:
    """Trigger cases given by their citation only (the engine reads the rest from the store);
    kept as sent, so a malformed one fails the contract's validation."""
    return [{"citation": c.model_dump()} for c in citations]


def _form(kind: ArtifactKind, name: str, form: _FormAnswer) -> dict:
    return {"kind": kind, "id": name, **form.model_dump()}


def _rule(slots: RuleSlots, name: str) -> dict:
    return {
        "kind": "rule",
        "name": name,
        "description": slots.description,
        "activation": slots.activation,
        "guard": slots.guard,
        "response": slots.response,
        "positive": _cases(slots.positive),
        "negative": _cases(slots.negative),
        "form": _form("rule", name, slots.form),
    }


def _skill(slots: SkillSlots, name: str) -> dict:
    return {
        "kind": "skill",
        "name": name,
        "description": slots.description,
        "applicability": slots.applicability,
        "inputs": _names(slots.inputs),
        "procedure": slots.procedure,
        "recovery": slots.recovery,
        "expected_result": slots.expected_result,
        "probes": [
            {"episode_id": p.episode_id, "step": p.step, "action": ""} for p in slots.probes
        ],
        "form": _form("skill", name, slots.form),
    }


def _subagent(slots: SubagentSlots, name: str) -> dict:
    form = _form("subagent", name, slots.form)
    inputs = [
        {"name": i.name.strip().strip("{}"), "description": i.description, "bind": i.bind.strip()}
        for i in slots.inputs
        if i.name.strip().strip("{}")
    ]
    form["inputs"] = inputs
    if slots.tools:
        form["tools"] = slots.tools  # the form runs with the scope the contract declares
    return {
        "kind": "subagent",
        "name": name,
        "description": slots.description,
        "invocation": slots.invocation,
        "input_schema": input_schema(inputs),
        "owned_state": slots.owned_state,
        "tools": slots.tools,
        "success": slots.success,
        "failure": slots.failure,
        "return_schema": RETURN_SCHEMA,
        "probes": [
            {
                "episode_id": p.episode_id,
                "step": p.step,
                "action": "",
                "expect": p.expect,
                "inputs": {i.name.strip().strip("{}"): i.value for i in p.inputs},
            }
            for p in slots.probes
        ],
        "form": form,
    }


_BUILDERS = {"rule": _rule, "skill": _skill, "subagent": _subagent}
