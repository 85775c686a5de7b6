"""The artifact repository: staged versions, admission through both gates, the active set
agents follow, and export to the conventions agent runtimes read.

Compilation and hand-written candidates only ever *stage* a version. :func:`admit` runs the
contract gate and then the replay gate; only a version that passes both becomes active (its
artifact's previously active version is then superseded). Every version, its gate results
and its ledger stay in the repository.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from store import (
    ArtifactVersion,
    CompileAttempt,
    Gate,
    GateCheck,
    InterventionSpec,
    Regime,
    Store,
)
from workbench.admit.cases import CaseLimits, replay_cases
from workbench.admit.evidence import (
    not_replayed,
    recorded_only,
    trigger_cases,
    without_replay_gate,
)
from workbench.admit.gates import SubagentModel, contract_gate, replay_gate
from workbench.agents.guidance import Guidance
from workbench.compile.contracts import (
    CONTRACT,
    NAME,
    Probe,
    RuleContract,
    SkillContract,
    SubagentContract,
    TriggerCase,
    form_of,
    slug,
)
from workbench.escapes import json_dumps
from workbench.markdown import fenced, front_matter, inline, write_atomically
from workbench.progress import Progress
from workbench.runner import Executor


class ContractError(ValueError):
    """A hand-written contract that cannot be staged, with where it is wrong."""


def _materialize(store: Store, contract: dict[str, Any]) -> dict[str, Any]:
    """Cited decision points turned into trigger cases (rules) and probes filled with the
    recorded action (skills and subagents)."""
    contract = dict(contract)
    for slot in ("positive", "negative"):
        cases = []
        for item in contract.get(slot) or []:
            case = TriggerCase.model_validate(item)
            if case.action or case.citation is None:
                cases.append(case)
            else:  # only cited: read the decision points from the store
                cases += trigger_cases(store, [case.citation])
        if slot in contract:
            contract[slot] = [c.model_dump(mode="json") for c in cases]
    probes = []
    for probe in contract.get("probes") or []:
        probe = Probe.model_validate(probe)
        if not probe.action:
            step = store.step(probe.episode_id, probe.step)
            probe = probe.model_copy(update={"action": step.action if step else ""})
        probes.append(probe.model_dump(mode="json"))
    if "probes" in contract:
        contract["probes"] = probes
    return contract


def _revision_of(store: Store, name: str) -> ArtifactVersion | None:
    active = store.versions(artifact=name, status="active")
    return active[-1] if active else None


def staged_version(
    store: Store, spec: InterventionSpec, attempt: CompileAttempt
) -> ArtifactVersion:
    """The version a closed attempt stages: its contract with evidence materialised, and its
    replay sets (a revision also keeps its predecessor's cases)."""
    assert attempt.contract is not None
    contract = _materialize(store, attempt.contract)
    return _version(store, contract, spec, attempt.id, "compiled")


def _version(
    store: Store,
    contract: dict[str, Any],
    spec: InterventionSpec | None,
    attempt_id: int | None,
    origin: str,
    limits: CaseLimits | None = None,
) -> ArtifactVersion:
    typed = CONTRACT.validate_python(contract)
    parent = _revision_of(store, typed.name)
    cases = replay_cases(store, spec, form_of(typed).model_dump(), limits)
    if parent is not None:
        have = {c.episode_id for c in cases}
        cases += [c for c in parent.cases if c.episode_id not in have]
    return ArtifactVersion(
        artifact=typed.name,
        version=1,
        kind=typed.kind,
        contract=typed.model_dump(mode="json"),
        spec_id=spec.id if spec else None,
        attempt_id=attempt_id,
        parent=parent.id if parent else None,
        origin="revision" if parent is not None else origin,  # type: ignore[arg-type]
        cases=cases,
    )


def stage_file(
    store: Store, path: Path, spec_id: int | None = None, limits: CaseLimits | None = None
) -> ArtifactVersion:
    """Stage a hand-written contract (JSON) as a candidate; it faces the same gates.

    Raises:
        ContractError: the file is not a valid contract (the message names file and field).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ContractError(f"{path}: {error}") from error
    if not isinstance(data, dict):
        raise ContractError(f"{path}: expected a JSON object with a contract")
    if isinstance(data.get("name"), str) and not NAME.match(data["name"]):
        raise ContractError(
            f"{path}: field 'name': use lowercase letters, digits and dashes, e.g. {slug(data['name'])!r}"
        )
    spec = store.spec(spec_id) if spec_id is not None else None
    if spec_id is not None and spec is None:
        raise ContractError(f"spec {spec_id} does not exist")
    try:
        contract = _materialize(store, data)
        CONTRACT.validate_python(contract)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise ContractError(f"{path}: field '{where}': {first['msg']}") from error
    return store.stage_version(_version(store, contract, spec, None, "hand", limits))


@dataclass
class Admission:
    """What admitting one version decided."""

    version: ArtifactVersion
    contract: Gate
    replay: Gate | None = None

    @property
    def status(self) -> str:
        return self.version.status


def admit(
    store: Store,
    version_id: int,
    *,
    executor: Executor,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    regime: Regime = "gated",
    without_replay: bool = False,
    model: SubagentModel | None = None,
) -> Admission:
    """Run both gates on a staged version and record the verdicts (active or rejected); the
    replay gate plays its episodes on ``executor``; the contract gate invokes a subagent
    written with a prompt on ``model`` when one is given.

    ``regime`` exists for ablations (``workbench evolve``): ``no-replay-gate`` admits on the
    contract gate alone, ``no-preservation`` replays the correction set only,
    ``no-contract-gate`` skips the contract gate (recorded as skipped) and replays; every
    other regime admits like ``gated``.

    A version whose evidence is only recordings (imported logs, see
    :func:`~workbench.admit.evidence.recorded_only`) cannot be replayed: it stays staged after
    its contract gate unless ``without_replay`` is given, which admits it on the contract gate
    and marks it "not replayed" (see :func:`~workbench.admit.evidence.not_replayed`).
    """
    version = store.version(version_id)
    if version is None:
        raise ValueError(f"artifact version {version_id} does not exist")
    if version.status != "staged":
        raise ValueError(
            f"version {version_id} ({version.artifact} v{version.version}) is {version.status}; "
            "only staged versions face the gates"
        )
    gate = version.contract_gate or (
        skipped_contract_gate()
        if regime == "no-contract-gate"
        else contract_gate(store, version, model=model)
    )
    if not gate.passed:
        store.record_gate(version_id, "contract", gate, "rejected")
        return Admission(store.version(version_id) or version, gate)
    if regime == "no-replay-gate":
        store.record_gate(version_id, "contract", gate, "active")
        return Admission(store.version(version_id) or version, gate)
    if without_replay or recorded_only(store, version):
        return _admit_recorded(store, version, gate, without_replay)
    if version.contract_gate is None:
        store.record_gate(version_id, "contract", gate)
    replay = replay_gate(
        store,
        version,
        executor=executor,
        progress=progress,
        cancel=cancel,
        preservation=regime != "no-preservation",
    )
    store.record_gate(version_id, "replay", replay, "active" if replay.passed else "rejected")
    return Admission(store.version(version_id) or version, gate, replay)


def _admit_recorded(
    store: Store, version: ArtifactVersion, gate: Gate, explicit: bool
) -> Admission:
    """The contract gate's verdict for a version no replay can judge: active and marked "not
    replayed" when asked explicitly, else left staged."""
    assert version.id is not None
    if not explicit:
        if version.contract_gate is None:
            store.record_gate(version.id, "contract", gate)
        return Admission(store.version(version.id) or version, gate)
    points = len(version.contract.get("positive", [])) + len(version.contract.get("negative", []))
    replay = without_replay_gate(points)
    with store.transaction():
        store.record_gate(version.id, "contract", gate)
        store.record_gate(version.id, "replay", replay, "active")
    return Admission(store.version(version.id) or version, gate, replay)


def admission_order(staged: list[ArtifactVersion]) -> list[ArtifactVersion]:
    """Staged versions in the order to judge them: the broadest claims (most correction
    cases) first, so that narrower ones are judged with them active."""
    return sorted(staged, key=lambda v: -sum(c.role == "correction" for c in v.cases))


def skipped_contract_gate() -> Gate:
    """What stands in for the contract gate in the ``no-contract-gate`` ablation."""
    detail = "not run (no-contract-gate ablation): the version goes to the replay gate unchecked"
    return Gate(passed=True, checks=[GateCheck(name="skipped", passed=True, detail=detail)])


def guidance_of(versions: list[ArtifactVersion]) -> Guidance:
    """What agents follow when these versions are their repository."""
    return Guidance(forms=[form_of(v.contract) for v in versions])


def active_guidance(store: Store) -> Guidance:
    """The active repository as the agents follow it."""
    return guidance_of(store.versions(status="active"))


# -- export ------------------------------------------------------------------------------------------


def _safe(folder: Path, *parts: str) -> Path:
    """``folder/parts`` after checking the result cannot leave ``folder``."""
    target = folder.joinpath(*parts).resolve()
    if folder.resolve() not in target.parents and target != folder.resolve():
        raise ValueError(f"refusing to write outside {folder}: {target}")
    return target


def _front_matter(name: str, description: str) -> str:
    return front_matter({"name": name, "description": " ".join(description.split())})


def _inputs(inputs: list[str]) -> list[str]:
    """A skill's inputs: one line of names, or one item per input when they are described."""
    if not any(":" in i for i in inputs):
        return [f"**Inputs.** {inline(', '.join(inputs))}", ""]
    return ["**Inputs.**", "", *(f"- {inline(i)}" for i in inputs), ""]


NOT_REPLAYED_NOTE = (
    "*Not replayed: admitted explicitly on its contract gate over recorded (imported) "
    "trajectories; its effect on a live agent was never measured.*"
)


def export(store: Store, folder: Path) -> list[Path]:
    """Write the active repository the way agent runtimes take it: ``RULES.md`` (prompt
    text), ``skills/<name>/SKILL.md`` and ``agents/<name>.md`` with the subagent's input and
    return schemas. Names are sanitised; nothing is written outside ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    contracts = [CONTRACT.validate_python(v.contract) for v in store.versions(status="active")]
    active = store.versions(status="active")
    unreplayed = {v.artifact for v in active if not_replayed(v)}
    rules = [c for c in contracts if isinstance(c, RuleContract)]
    lines = ["# Rules", "", "Follow these rules; each applies at one decision.", ""]
    for rule in rules:
        lines += [
            f"## {slug(rule.name)}",
            "",
            inline(rule.description),
            "",
            *([NOT_REPLAYED_NOTE, ""] if rule.name in unreplayed else []),
            f"- When: {inline(rule.activation)}",
            f"- Guard: {inline(rule.guard)}",
            f"- Then: {inline(rule.response)}",
            "",
        ]
    path = _safe(folder, "RULES.md")
    write_atomically(path, "\n".join(lines))
    written.append(path)
    for skill in [c for c in contracts if isinstance(c, SkillContract)]:
        name = slug(skill.name)
        path = _safe(folder, "skills", name, "SKILL.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        body = [
            _front_matter(name, skill.description),
            f"# {name}",
            "",
            f"**When to use.** {inline(skill.applicability)}",
            "",
            *_inputs(skill.inputs),
            "**Procedure.**",
            "",
            *[f"{i}. {inline(step)}" for i, step in enumerate(skill.procedure, start=1)],
            "",
            f"**If a step fails.** {inline(skill.recovery)}",
            "",
            f"**Expected result.** {inline(skill.expected_result)}",
            "",
        ]
        write_atomically(path, "\n".join(body))
        written.append(path)
    for agent in [c for c in contracts if isinstance(c, SubagentContract)]:
        name = slug(agent.name)
        path = _safe(folder, "agents", f"{name}.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        body = [
            _front_matter(name, agent.description),
            f"# {name}",
            "",
            f"**Invoke when.** {inline(agent.invocation)}",
            "",
            f"**Owns.** {inline(agent.owned_state)}",
            "",
            f"**Tools.** {inline(', '.join(agent.tools))} (anything else it proposes is refused)",
            "",
            f"**Policy.** {inline(agent.form.strategy)} offline, within {agent.form.max_steps} steps"
            + (
                f"; with a model, its own prompt:\n\n> {inline(agent.form.prompt)}"
                if agent.form.prompt
                else ""
            ),
            "",
            f"**Success.** {inline(agent.success)}",
            "",
            f"**Failure.** {inline(agent.failure)}",
            "",
            "**Input schema.**",
            "",
            fenced(json_dumps(agent.input_schema, indent=2), "json"),
            "",
            "**Return schema.**",
            "",
            fenced(json_dumps(agent.return_schema, indent=2), "json"),
            "",
        ]
        write_atomically(path, "\n".join(body))
        written.append(path)
    return written
