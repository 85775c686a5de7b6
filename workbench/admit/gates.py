"""The two admission gates.

**Contract gate** — does the object implement the boundary its type claims? Every type: the
contract validates with every required slot filled, its patterns compile and its templates
read only declared inputs (malformed artifacts stop here, before any replay). Then by type:
a Rule fires on each positive trigger and stays silent on each negative one; a Skill is
executed on the real environment from its applicability condition, with only its declared
inputs, and must reach its observable result; a Subagent is invoked in a fresh context (its
own history empty, its declared inputs only — they must conform to its input schema), by its
offline strategy or, when it has a prompt and a model is given, by that model; its return must
conform to its schema (actions outside its tools are refused and listed there), and both
success and failure termination must be reached.

**Replay gate** — does it help where it claims to and harm nothing it should preserve? Each
case of its correction and preservation sets is run twice through the runner on the real
environment, same task and seed, without and with the candidate (the rest of the active
repository in both), and the paired outcomes go to the ledger. It passes when corrections
improve (more fixed than broken, at least one fixed) and no preservation case regresses.
Exact McNemar p over the discordant pairs and Wilson intervals are reported with it.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import ValidationError

from store import ArtifactVersion, Gate, GateCheck, LedgerEntry, ReplayCase, Store
from workbench import patterns as matcher
from workbench.admit.evidence import origin_of
from workbench.admit.sandbox import PATTERN_LIMITS, SandboxError, run_limited
from workbench.admit.stats import mcnemar_exact, wilson_interval
from workbench.agents.guidance import Guidance, neutral
from workbench.compile.contracts import (
    CONTRACT,
    Probe,
    RuleContract,
    SkillContract,
    SubagentContract,
    form_of,
    missing_slots,
    undeclared,
)
from workbench.limits import ENVIRONMENT_LIMITS, Limits
from workbench.progress import NullProgress, Progress
from workbench.runner import Executor, PlannedEpisode, RunConfig, cache_dir_beside, run_batch

REPLAY_LIMITS = Limits(seconds=600.0)
"""Per replayed episode: every replay job carries these to the executor, which plays it under
them (candidate-following episodes must not hang or exhaust their process)."""

PROBES = 2
"""Skill and subagent success probes the contract gate executes (each costs an environment)."""


@dataclass(frozen=True)
class SubagentModel:
    """The endpoint a subagent written with a prompt runs on in the contract gate. Its key is
    never passed: the check process reads it from the environment variable named here."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"


# -- contract gate -----------------------------------------------------------------------------


def contract_gate(
    store: Store,
    version: ArtifactVersion,
    limits: Limits = ENVIRONMENT_LIMITS,
    model: SubagentModel | None = None,
) -> Gate:
    """Run the contract gate on a staged version (nothing is stored here); a subagent with a
    prompt is invoked on ``model`` when one is given (else by its offline strategy)."""
    checks: list[GateCheck] = []
    missing = missing_slots(version.contract)
    try:
        contract = CONTRACT.validate_python(version.contract)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:4]
        )
        return Gate(passed=False, checks=[GateCheck(name="schema", passed=False, detail=problems)])
    checks.append(
        GateCheck(
            name="schema",
            passed=not missing,
            detail=f"missing slots: {', '.join(missing)}"
            if missing
            else "every required slot filled",
        )
    )
    checks.append(_patterns_compile(contract))
    hidden = undeclared(contract)
    checks.append(
        GateCheck(
            name="declared inputs",
            passed=not hidden,
            detail=f"uses undeclared {', '.join('{' + h + '}' for h in hidden)}"
            if hidden
            else "templates read only what the trigger binds and the task names",
        )
    )
    if all(c.passed for c in checks):
        try:
            if isinstance(contract, RuleContract):
                checks += _rule_checks(contract)
            elif isinstance(contract, SkillContract):
                checks += _skill_checks(store, contract, limits)
            else:
                checks += _subagent_checks(store, contract, limits, model)
        except SandboxError as error:
            checks.append(GateCheck(name="sandbox", passed=False, detail=str(error)))
    return Gate(passed=all(c.passed for c in checks), checks=checks)


def _patterns_compile(contract: RuleContract | SkillContract | SubagentContract) -> GateCheck:
    form = contract.form
    patterns = [form.when_action, form.when_evidence, form.unless_evidence]
    patterns += [form.until] if isinstance(contract, SkillContract) else []
    patterns += [form.success] if isinstance(contract, SubagentContract) else []
    for pattern in patterns:
        if (problem := matcher.error(neutral(pattern))) is not None:
            return GateCheck(name="patterns", passed=False, detail=f"{pattern!r}: {problem}")
    return GateCheck(
        name="patterns", passed=True, detail=f"{len([p for p in patterns if p])} compile"
    )


def _rule_checks(contract: RuleContract) -> list[GateCheck]:
    cases = [*contract.positive, *contract.negative]
    verdicts = run_limited(
        "screen",
        {
            "form": form_of(contract).model_dump(),
            "cases": [c.model_dump(mode="json") for c in cases],
        },
        PATTERN_LIMITS,
    )
    positive, negative = verdicts[: len(contract.positive)], verdicts[len(contract.positive) :]
    silent = [
        c.citation.label() if c.citation else c.action
        for c, v in zip(contract.positive, positive, strict=True)
        if not v["fires"] or v["action"] == c.action
    ]
    loud = [
        c.citation.label() if c.citation else c.action
        for c, v in zip(contract.negative, negative, strict=True)
        if v["fires"]
    ]
    return [
        GateCheck(
            name="fires on positive triggers",
            passed=bool(contract.positive) and not silent,
            detail=f"silent at {', '.join(silent)}"
            if silent
            else f"fires on all {len(contract.positive)}",
        ),
        GateCheck(
            name="silent on negative triggers",
            passed=bool(contract.negative) and not loud,
            detail=f"fires at {', '.join(loud)}"
            if loud
            else f"silent on all {len(contract.negative)}",
        ),
    ]


def _probe(
    store: Store,
    contract: SkillContract | SubagentContract,
    probe: Probe,
    limits: Limits,
    model: SubagentModel | None = None,
) -> dict[str, Any]:
    episode = store.episode(probe.episode_id)
    origin = origin_of(store, episode) if episode else None
    if episode is None or origin is None:
        return {"error": f"{probe.episode_id} cannot be replayed (not recorded by a run)"}
    steps = [s for s in store.steps(episode.id, 1, probe.step + 1) if s.action]
    *before, at = steps if steps else [None]
    if at is None or at.index != probe.step:
        return {"error": f"{probe.episode_id} has no action at step {probe.step}"}
    payload = {
        "form": form_of(contract).model_dump(),
        "probe": probe.model_copy(update={"action": probe.action or at.action}).model_dump(),
        "task": {
            "env": origin.config.env,
            "family": episode.family,
            "variation": origin.variation,
            "split": episode.split,
            "seed": episode.seed,
            "step_limit": origin.config.step_limit,
            "simplifications": origin.config.simplifications,
            "cache_dir": cache_dir_beside(store.path),
        },
        "actions": [s.action for s in before],
        "model": asdict(model) if model is not None else None,
        "db": str(store.path),
    }
    return run_limited("probe", payload, limits)


def _skill_checks(store: Store, contract: SkillContract, limits: Limits) -> list[GateCheck]:
    checks = []
    for probe in contract.probes[:PROBES]:
        result = _probe(store, contract, probe, limits)
        name = f"runs from {probe.episode_id}@{probe.step}"
        if "error" in result and not result.get("applicable"):
            checks.append(GateCheck(name=name, passed=False, detail=result["error"]))
        elif not result.get("applicable"):
            checks.append(
                GateCheck(
                    name=name,
                    passed=False,
                    detail="its applicability condition does not hold there",
                )
            )
        else:
            reached = bool(result.get("result"))
            checks.append(
                GateCheck(
                    name=name,
                    passed=reached,
                    detail=f"took {result['actions']}; "
                    + ("reached " if reached else "did not reach ")
                    + f"the expected result (last observation: {result['observation'][:80]!r})",
                )
            )
    if not checks:
        checks.append(GateCheck(name="probes", passed=False, detail="no probe to execute"))
    return checks


def conforms(value: Any, schema: dict[str, Any], where: str = "return") -> list[str]:
    """Where ``value`` breaks a JSON schema (the subset return schemas use)."""
    kind = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "integer": int, "boolean": bool}
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} is not one of {schema['enum']}"]
    if kind in types and not isinstance(value, types[kind]):
        return [f"{where}: expected {kind}, got {type(value).__name__}"]
    problems = []
    if kind == "object":
        properties = schema.get("properties", {})
        problems += [f"{where}.{k}: missing" for k in schema.get("required", []) if k not in value]
        if schema.get("additionalProperties") is False:
            problems += [f"{where}.{k}: not declared" for k in value if k not in properties]
        for key, sub in properties.items():
            if key in value:
                problems += conforms(value[key], sub, f"{where}.{key}")
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            problems += conforms(item, schema["items"], f"{where}[{i}]")
    if kind == "integer" and "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{where}: below {schema['minimum']}")
    return problems


def _subagent_checks(
    store: Store, contract: SubagentContract, limits: Limits, model: SubagentModel | None
) -> list[GateCheck]:
    checks = []
    reached: set[str] = set()
    for probe in [p for p in contract.probes if p.expect == "success"][:PROBES] + [
        p for p in contract.probes if p.expect == "failure"
    ][:1]:
        result = _probe(store, contract, probe, limits, model)
        name = f"invoked from {probe.episode_id}@{probe.step} ({probe.expect} expected)"
        if "return" not in result:
            detail = result.get("error") or "its invocation condition does not hold there"
            checks.append(GateCheck(name=name, passed=False, detail=detail))
            continue
        returned = result["return"]
        problems = conforms(returned, contract.return_schema)
        problems += conforms(result["inputs"], contract.input_schema, "inputs")
        problems += _not_fresh(result)
        reached.add(returned["status"])
        checks.append(
            GateCheck(
                name=name,
                passed=not problems and returned["status"] == probe.expect,
                detail="; ".join(problems) or _returned(returned, result["policy"]),
            )
        )
    checks.append(
        GateCheck(
            name="both terminations reachable",
            passed=reached == {"success", "failure"},
            detail=f"reached {', '.join(sorted(reached)) or 'neither'}",
        )
    )
    return checks


def _not_fresh(result: dict[str, Any]) -> list[str]:
    """What the subagent started from beyond a fresh context: any history, or inputs other
    than the declared ones it was invoked with."""
    context = result.get("context") or {}
    problems = []
    if context.get("history"):
        problems.append("context: it started with a history (not a fresh context)")
    if context.get("inputs") != result["inputs"]:
        problems.append("context: it was given more than its declared inputs")
    return problems


def _returned(returned: dict[str, Any], policy: str) -> str:
    refused = returned.get("refused") or []
    return (
        f"{policy}: returned {returned['status']} after {returned['steps']} steps "
        f"({returned['reason']})"
        + (f", found {returned['found']!r}" if returned.get("found") else "")
        + (f"; refused {', '.join(map(repr, refused))}" if refused else "")
    )


# -- replay gate ---------------------------------------------------------------------------------


def guidance_for(store: Store, version: ArtifactVersion, with_candidate: bool) -> Guidance:
    """The active repository without the candidate's artifact, plus the candidate if asked."""
    forms = [
        form_of(v.contract)
        for v in store.versions(status="active")
        if v.artifact != version.artifact
    ]
    if with_candidate:
        forms.append(form_of(version.contract))
    return Guidance(forms=forms)


def _groups(store: Store, cases: list[ReplayCase]) -> dict[str, tuple[RunConfig, list[ReplayCase]]]:
    """Cases grouped by the run configuration that recorded them (and split)."""
    groups: dict[str, tuple[RunConfig, list[ReplayCase]]] = {}
    for case in cases:
        episode = store.episode(case.episode_id)
        origin = origin_of(store, episode) if episode else None
        if origin is None:
            continue
        config = origin.config.model_copy(update={"split": case.split, "guidance": Guidance()})
        key = hashlib.sha256(f"{config.model_dump_json()}".encode()).hexdigest()[:8]
        groups.setdefault(f"{case.split}-{key}", (config, []))[1].append(case)
    return groups


def replay_gate(
    store: Store,
    version: ArtifactVersion,
    *,
    executor: Executor,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    preservation: bool = True,
) -> Gate:
    """Replay the version's cases without and with it on ``executor`` (every episode under
    :data:`REPLAY_LIMITS`), fill its ledger, and judge. ``preservation=False`` (an ablation)
    replays and judges the correction set only."""
    progress = progress or NullProgress()
    assert version.id is not None
    cases = [c for c in version.cases if preservation or c.role == "correction"]
    groups = _groups(store, cases)
    total = sum(len(group) for _, group in groups.values())
    episodes: dict[tuple[str, str], str] = {}
    _write_ledger(store, version, episodes, preservation)  # every case, pending until replayed
    if not total:
        return Gate(
            passed=False,
            checks=[GateCheck(name="cases", passed=False, detail="no case can be replayed")],
        )
    sides = {
        "base": guidance_for(store, version, False),
        "cand": guidance_for(store, version, True),
    }
    progress.start(2 * total, "replaying")
    try:
        for key, (config, group) in groups.items():
            for side, guidance in sides.items():
                batch = f"replay-v{version.id}-{side}-{key}"
                plan = [
                    PlannedEpisode(
                        id=f"{batch}:{c.episode_id}",
                        family=c.family,
                        variation=c.variation,
                        split=c.split,
                        trial=0,
                        seed=c.seed,
                    )
                    for c in group
                ]
                side_config = config.model_copy(
                    update={
                        "guidance": guidance,
                        "families": sorted({c.family for c in group}),
                        "episodes": len(group),
                    }
                )
                run_batch(
                    store,
                    side_config,
                    batch=batch,
                    plan=plan,
                    kind="replay",
                    executor=executor,
                    limits=REPLAY_LIMITS,
                    progress=_Forward(progress),
                    cancel=cancel,
                )
                for case in group:
                    episodes[(case.episode_id, side)] = f"{batch}:{case.episode_id}"
            _write_ledger(store, version, episodes, preservation)  # this group's pairs are in
    finally:
        progress.finish()
    return judge(store.ledger(version.id), preservation)


class _Forward:
    """Passes a batch's episode progress to the whole replay's progress."""

    def __init__(self, outer: Progress) -> None:
        self.outer = outer

    def start(self, total: int, description: str = "") -> None:
        pass

    def advance(self, amount: int = 1, description: str = "") -> None:
        self.outer.advance(amount, "replaying")

    def finish(self) -> None:
        pass


class LedgerMismatch(RuntimeError):
    """The ledger of a version does not hold exactly the cases the version planned."""


def _write_ledger(
    store: Store,
    version: ArtifactVersion,
    episodes: dict[tuple[str, str], str],
    preservation: bool,
) -> list[LedgerEntry]:
    """One ledger entry per planned case, written in one transaction, then checked against the
    plan. A case not (yet) replayed — still to come, unreplayable, or in the preservation set
    under the ablation — is entered without episodes, so it stays visible as pending.

    Raises:
        LedgerMismatch: the stored ledger and the version's cases disagree (a bug, never a
            verdict: nothing is judged on a partial ledger).
    """
    with store.transaction():
        for case in version.cases:
            replayed = preservation or case.role == "correction"
            store.put_ledger(_entry(store, version, case, episodes if replayed else {}))
        ledger = store.ledger(version.id or 0)
    planned = sorted((c.episode_id, c.role) for c in version.cases)
    if sorted((e.case, e.role) for e in ledger) != planned:
        raise LedgerMismatch(
            f"the ledger of version {version.id} holds {len(ledger)} case(s) but the version "
            f"planned {len(planned)}; its replay is not judged"
        )
    return ledger


def _entry(
    store: Store, version: ArtifactVersion, case: ReplayCase, episodes: dict[tuple[str, str], str]
) -> LedgerEntry:
    base = store.episode(episodes.get((case.episode_id, "base"), ""))
    cand = store.episode(episodes.get((case.episode_id, "cand"), ""))
    uses = cand.metadata.get("guidance_uses", []) if cand else []
    return LedgerEntry(
        version_id=version.id or 0,
        case=case.episode_id,
        role=case.role,
        baseline_episode=base.id if base else None,
        candidate_episode=cand.id if cand else None,
        baseline_success=base.outcome.success if base else None,
        candidate_success=cand.outcome.success if cand else None,
        fired=any(u.get("artifact") == version.artifact for u in uses),
    )


def judge(ledger: list[LedgerEntry], preservation: bool = True) -> Gate:
    """The replay verdict from a paired ledger (without the preservation check when
    ``preservation`` is off)."""
    corrections = [e for e in ledger if e.role == "correction" and e.change != "pending"]
    preserved = [e for e in ledger if e.role == "preservation" and e.change != "pending"]
    fixed = sum(e.change == "fixed" for e in corrections)
    broken = sum(e.change == "regressed" for e in corrections)
    regressed = [e.case for e in preserved if e.change == "regressed"]
    all_fixed = sum(e.change == "fixed" for e in ledger)
    all_broken = sum(e.change == "regressed" for e in ledger)
    stats = {
        "corrections": len(corrections),
        "fixed": fixed,
        "broken": broken,
        "preservation": len(preserved),
        "regressed": len(regressed),
        "mcnemar_p": mcnemar_exact(all_fixed, all_broken),
        "correction_baseline": _rate([e.baseline_success for e in corrections]),
        "correction_candidate": _rate([e.candidate_success for e in corrections]),
        "preservation_baseline": _rate([e.baseline_success for e in preserved]),
        "preservation_candidate": _rate([e.candidate_success for e in preserved]),
        "pending": sum(e.change == "pending" for e in ledger),
    }
    if not preservation:
        kept, detail = True, "not checked (ablation)"
    elif regressed:
        kept, detail = False, f"regressed: {', '.join(regressed)}"
    elif preserved:
        kept, detail = True, f"all {len(preserved)} preserved"
    else:
        kept, detail = False, "no preservation case was replayed"
    unjudged = sum(e.role == "correction" and e.change == "pending" for e in ledger)
    checks = [
        GateCheck(
            name="corrections improve",
            passed=fixed >= 1 and fixed > broken,
            detail=f"{fixed} fixed, {broken} broken of {len(corrections)}"
            + (f" ({unjudged} not replayed)" if unjudged else ""),
        ),
        GateCheck(name="no preservation regression", passed=kept, detail=detail),
    ]
    return Gate(passed=all(c.passed for c in checks), checks=checks, stats=stats)


def _rate(outcomes: list[bool | None]) -> dict[str, Any]:
    known = [o for o in outcomes if o is not None]
    low, high = wilson_interval(sum(known), len(known)) if known else (0.0, 1.0)
    return {"successes": sum(known), "cases": len(known), "wilson95": [low, high]}
