"""The three artifact contracts (Rule, Skill, Subagent) and the slots each one requires.

A contract is what compilation produces and what the gates test: the type's required fields
in words (what a person or a model reads), its executable form (what the agents follow, see
:mod:`workbench.agents.guidance`) and the cases its contract gate runs. Which slots a type
requires is fixed here (AutoRefine, Table 5), so closure can check for them mechanically.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from store import Citation
from workbench.agents.guidance import (
    DelegateForm,
    ProcedureForm,
    RuleForm,
    input_names,
    old_input_name,
    placeholders,
    upgrade_delegate,
)
from workbench.agents.subagents import CANDIDATE, RETURN_SCHEMA, RETURN_SCHEMA_V1

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


def slug(text: str) -> str:
    """A safe artifact name: lowercase letters, digits and dashes, at most 63 characters."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:63].strip("-")
    return name or "artifact"


class TriggerCase(BaseModel):
    """A recorded decision point a rule must fire on (positive) or stay silent on (negative)."""

    model_config = ConfigDict(extra="forbid")

    action: str = ""
    """The action proposed there (empty in a proposal that only cites the step: the engine
    reads the rest from the store)."""
    instruction: str = ""
    observation: str = ""
    """The latest observation before the action."""
    look: str = ""
    """The latest room description before the action."""
    history: list[tuple[str, str]] = Field(default_factory=list)
    """Recent ``(action, observation)`` pairs before it."""
    citation: Citation | None = None
    """Where it was recorded."""


class Probe(BaseModel):
    """A recorded situation a skill or subagent is executed from: replay ``episode_id`` up
    to ``step`` on the real environment, then invoke the artifact on ``action``."""

    model_config = ConfigDict(extra="forbid")

    episode_id: str
    step: int
    """Stored index of the decision point (the actions before it are replayed)."""
    action: str
    """The proposal the artifact applies to (binds its declared inputs)."""
    expect: Literal["success", "failure"] = "success"
    """Which termination the probe must reach."""
    inputs: dict[str, str] = Field(default_factory=dict)
    """A subagent's input values by name, instead of the ones the action binds (e.g. an
    unreachable target, to reach failure termination); a number names the input bound to
    that group (probes of the first subagent format)."""


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")

    REQUIRED: ClassVar[tuple[str, ...]] = ()
    """The slots closure and the contract gate require filled."""

    name: str
    """Artifact name (lowercase, digits, dashes)."""
    description: str = Field(min_length=1)
    """What it does, in one or two sentences."""

    @field_validator("name")
    @classmethod
    def _safe_name(cls, name: str) -> str:
        if not NAME.match(name):
            raise ValueError(f"name {name!r} must be lowercase letters, digits and dashes")
        return name


class RuleContract(_Contract):
    """One local decision: a trigger and guard on parent-visible evidence, one response."""

    kind: Literal["rule"] = "rule"
    activation: str = ""
    """The decision point and what must be visible there."""
    guard: str = ""
    """What must hold (or must not) for the rule to fire."""
    response: str = ""
    """What it does at that one control point."""
    positive: list[TriggerCase] = Field(default_factory=list)
    """Decision points it must fire on."""
    negative: list[TriggerCase] = Field(default_factory=list)
    """Decision points it must stay silent on."""
    form: RuleForm
    """The executable rule."""

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "activation",
        "guard",
        "response",
        "positive",
        "negative",
    )


class SkillContract(_Contract):
    """An ordered procedure run inside the parent's loop."""

    kind: Literal["skill"] = "skill"
    applicability: str = ""
    """When the parent should run it."""
    inputs: list[str] = Field(default_factory=list)
    """Declared inputs (placeholders its templates use)."""
    procedure: list[str] = Field(default_factory=list)
    """The steps in words, in order."""
    recovery: str = ""
    """What to do when a step is rejected."""
    expected_result: str = ""
    """The observable result that ends it (the parent stays responsible for the task)."""
    probes: list[Probe] = Field(default_factory=list)
    """Recorded situations its contract gate executes it from."""
    form: ProcedureForm
    """The executable procedure."""

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "applicability",
        "inputs",
        "procedure",
        "recovery",
        "expected_result",
        "probes",
    )


class SubagentContract(_Contract):
    """A delegated objective: declared inputs, private state, scoped tools, both
    terminations, a structured return. A contract stored in the first subagent format (its
    inputs numbered, its return without what it found) is read as the current one."""

    kind: Literal["subagent"] = "subagent"
    invocation: str = ""
    """When the parent delegates (and when it must not)."""
    input_schema: dict[str, Any] = Field(default_factory=dict)
    """JSON schema of the declared inputs: one named property per input of the form."""
    owned_state: str = ""
    """The private state it keeps (never the parent's)."""
    tools: list[str] = Field(default_factory=list)
    """Action prefixes it may use."""
    success: str = ""
    """When it ends successfully."""
    failure: str = ""
    """When it ends in failure."""
    return_schema: dict[str, Any] = Field(default_factory=dict)
    """JSON schema of what it returns."""
    probes: list[Probe] = Field(default_factory=list)
    """Situations its contract gate invokes it from (success and failure termination)."""
    form: DelegateForm
    """The executable delegated loop."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: object) -> object:
        return upgrade_subagent(data) if isinstance(data, dict) else data

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "invocation",
        "input_schema",
        "owned_state",
        "tools",
        "success",
        "failure",
        "return_schema",
        "probes",
    )


Contract = Annotated[RuleContract | SkillContract | SubagentContract, Field(discriminator="kind")]
CONTRACT = TypeAdapter(Contract)
CONTRACT_TYPES: dict[str, type[_Contract]] = {
    "rule": RuleContract,
    "skill": SkillContract,
    "subagent": SubagentContract,
}


def input_schema(inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON schema of a subagent's declared inputs (``name``, ``description``): named
    string properties, all required, nothing else (empty when none is declared, so the slot
    stays unfilled)."""
    if not inputs:
        return {}
    return {
        "type": "object",
        "required": [i["name"] for i in inputs],
        "properties": {
            i["name"]: {"type": "string", "description": i.get("description", "")} for i in inputs
        },
        "additionalProperties": False,
    }


def upgrade_subagent(data: dict[str, Any]) -> dict[str, Any]:
    """A subagent contract of the first stored format as the current one: its form upgraded
    (:func:`~workbench.agents.guidance.upgrade_delegate`), its numbered input properties and
    probe inputs renamed as the form's inputs are, its return schema the current one."""
    form = data.get("form")
    if not isinstance(form, dict) or form.get("format", 1) != 1 or form.get("inputs"):
        return data
    data = {**data, "form": upgrade_delegate(form)}
    properties = (data.get("input_schema") or {}).get("properties") or {}
    numbered = sorted((k for k in properties if k.isdigit()), key=int)
    names = {k: old_input_name(k, len(numbered)) for k in numbered}
    if names:
        schema = dict(data["input_schema"])
        schema["properties"] = {names.get(k, k): v for k, v in properties.items()}
        schema["required"] = [names.get(k, k) for k in schema.get("required", [])]
        data["input_schema"] = schema
    data["probes"] = [
        {**p, "inputs": {names.get(k, k): v for k, v in (p.get("inputs") or {}).items()}}
        if isinstance(p, dict)
        else p
        for p in data.get("probes") or []
    ]
    if data.get("return_schema") == RETURN_SCHEMA_V1:
        data["return_schema"] = RETURN_SCHEMA
    return data


def missing_slots(contract: dict[str, Any]) -> list[str]:
    """Required slots of the contract's type that are absent or empty."""
    kind = contract.get("kind")
    model = CONTRACT_TYPES.get(kind or "")
    if model is None:
        return ["kind"]
    required = (*model.REQUIRED, "form")
    return [slot for slot in required if not contract.get(slot)]


def form_of(contract: RuleContract | SkillContract | SubagentContract | dict[str, Any]):
    """The executable form, named after the artifact; a stored contract (a dict) is parsed
    first (:data:`CONTRACT`: a ``ValidationError`` if it does not parse)."""
    if isinstance(contract, dict):
        contract = CONTRACT.validate_python(contract)
    return contract.form.model_copy(
        update={"id": contract.name, "description": contract.description}
    )


FORM_OWN = ("kind", "id", "description")
"""Keys of an executable form that are its artifact's own (its kind, name and description):
views show them with the contract, not among the form's fields."""


def executable_form(contract: dict[str, Any]) -> dict[str, Any]:
    """The executable form of a stored contract as the agent runs it (:func:`form_of`: named
    after the artifact and described by it, where the stored form holds the compiler's
    placeholders), as JSON; the stored form when the contract does not parse."""
    try:
        return form_of(contract).model_dump(mode="json")
    except ValidationError:
        form = contract.get("form")
        return dict(form) if isinstance(form, dict) else {}


def form_fields(contract: dict[str, Any]) -> list[tuple[str, Any]]:
    """The fields of a stored contract's :func:`executable_form` that a view lists, in order:
    those set, without the artifact's own (:data:`FORM_OWN`)."""
    return [
        (key, value)
        for key, value in executable_form(contract).items()
        if key not in FORM_OWN and value not in ("", [], {}, None)
    ]


def undeclared(contract: RuleContract | SkillContract | SubagentContract) -> list[str]:
    """Placeholders the executable form uses that it does not declare: a template of the
    parent's that reads a group its activation does not bind, or a subagent template that
    reads anything but its named inputs (the parent's groups and task included)."""
    form = contract.form
    bound = {str(i) for i in range(1, re.compile(form.when_action).groups + 1)}
    texts = [form.when_evidence, form.unless_evidence]
    if isinstance(form, RuleForm):
        texts.append(form.replacement)
    elif isinstance(form, ProcedureForm):
        texts += [*form.steps, *form.loop, form.until]
    else:
        texts += [i.bind for i in form.inputs]
    used = set().union(*(placeholders(t) for t in texts))
    hidden = sorted(p for p in used if not p.startswith("E") and p not in bound)
    if isinstance(form, DelegateForm):
        own = [form.objective, form.success, form.action]
        names = {i.name for i in form.inputs} | {CANDIDATE.strip("{}")}
        hidden += sorted(set().union(*(placeholders(t) for t in own)))
        hidden += sorted(set().union(*(input_names(t) for t in own)) - names)
    return hidden
