"""Intervention specs: the evidence a cluster offers, and the traceability check every
proposed spec must pass before it is stored as supported."""

from __future__ import annotations

import re
from collections.abc import Iterable

from store import Claim, Cluster, Episode, InterventionSpec, Store
from workbench.agents.guidance import neutral, placeholders
from workbench.analyze.causes import build_case
from workbench.compile.proposals import MemberCase, SpecProposal

LEARNING_SPLITS = ("train", "dev", "other")
"""Partitions evidence may come from: held-out (test) episodes never produce artifacts."""

MIN_REGIME_WORDS = 5


def regime_of(store: Store, family: str) -> str:
    """The words every stored instruction of ``family`` opens with (empty when fewer than
    :data:`MIN_REGIME_WORDS`): what tells this regime's tasks apart from others."""
    rows = store._rows(
        "SELECT DISTINCT instruction FROM tasks WHERE family = ? LIMIT 200", (family,)
    )
    texts = [r[0].split() for r in rows if r[0]]
    if not texts:
        return ""
    common = []
    for words in zip(*texts, strict=False):
        if len(set(words)) != 1:
            break
        common.append(words[0])
    # a shared opening ends at a word boundary that leaves the variable part out
    return " ".join(common) if len(common) >= MIN_REGIME_WORDS else ""


def gather(store: Store, clusters: Iterable[Cluster]) -> tuple[list[MemberCase], dict[int, str]]:
    """Member cases of the clusters (learning partition only), and why a cluster has none."""
    members: list[MemberCase] = []
    empty: dict[int, str] = {}
    regimes: dict[str, str] = {}
    for cluster in clusters:
        assert cluster.id is not None
        found = 0
        for analysis_id in cluster.members:
            analysis = store.analysis(analysis_id)
            episode = store.episode(analysis.episode_id) if analysis else None
            if analysis is None or episode is None or episode.split not in LEARNING_SPLITS:
                continue
            if episode.family not in regimes:
                regimes[episode.family] = regime_of(store, episode.family)
            members.append(_member(store, cluster.id, analysis_id, episode, regimes))
            found += 1
        if not found:
            empty[cluster.id] = (
                "no member is in the learning partition (held-out episodes never produce "
                "artifacts): analyse failures of the train or dev split (imported logs count as "
                "learning evidence unless marked test)"
            )
    return members, empty


def _member(
    store: Store, cluster_id: int, analysis_id: int, episode: Episode, regimes: dict[str, str]
) -> MemberCase:
    analysis = store.analysis(analysis_id)
    assert analysis is not None
    case = build_case(store, episode)
    if analysis.contrast_id and analysis.contrast_id != case.contrast_id:
        contrast = store.episode(analysis.contrast_id)
        if contrast is not None:  # the contrast the analyzer used
            other = build_case(store, contrast)
            case = case.model_copy(
                update={
                    "contrast_id": contrast.id,
                    "contrast_instruction": other.instruction,
                    "contrast_steps": other.steps,
                    "contrast_same_task": contrast.task_id == episode.task_id,
                }
            )
    return MemberCase(
        analysis_id=analysis_id,
        cluster_id=cluster_id,
        case=case,
        initial_observation=first_observation(store, episode.id),
        contrast_initial_observation=first_observation(store, case.contrast_id)
        if case.contrast_id
        else "",
        start=analysis.start,
        change=analysis.change,
        trigger=analysis.trigger,
        correction=analysis.correction,
        contrast_step=analysis.contrast_citations[0] if analysis.contrast_citations else None,
        regime=regimes.get(episode.family, ""),
        recorded=_recorded(store, episode),
    )


def is_recorded(store: Store, episode_id: str) -> bool:
    """Whether the stored episode ``episode_id`` is only a recording (see :func:`_recorded`)."""
    episode = store.episode(episode_id)
    return episode is not None and _recorded(store, episode)


def _recorded(store: Store, episode: Episode) -> bool:
    """Whether only its recording is there: no run configuration to replay it from."""
    from workbench.admit.evidence import origin_of

    return origin_of(store, episode) is None


def first_observation(store: Store, episode_id: str) -> str:
    """Stored step 0 of an episode: the observation it started from."""
    step = store.step(episode_id, 0)
    return step.observation if step else ""


def claims_of(spec: InterventionSpec) -> list[tuple[str, Claim]]:
    """Every field of a spec as ``(field name, claim)``."""
    found: list[tuple[str, Claim]] = []
    if spec.activation:
        found.append(("activation.trigger", spec.activation.trigger))
        found += [
            (f"activation.observations[{i}]", o) for i, o in enumerate(spec.activation.observations)
        ]
        if spec.activation.boundary is not None:
            found.append(("activation.boundary", spec.activation.boundary))
    if spec.scope:
        found.append(("scope.objective", spec.scope.objective))
        found += [(f"scope.decisions[{i}]", d) for i, d in enumerate(spec.scope.decisions)]
    if spec.execution:
        found.append(("execution.state", spec.execution.state))
        found.append(("execution.completion", spec.execution.completion))
        if spec.execution.failure:
            found.append(("execution.failure", spec.execution.failure))
    return found


def traceability(spec: InterventionSpec, members: dict[str, MemberCase]) -> list[str]:
    """Problems that keep a proposed spec from being supported: a field without evidence, a
    citation that does not resolve to the members' or their contrasts' steps, a pattern that
    does not compile, a template that reads state the trigger does not declare."""
    if spec.activation is None or spec.scope is None or spec.execution is None:
        return ["activation, scope and execution obligation are all required"]
    steps: dict[str, set[int]] = {}
    for member in members.values():
        steps[member.case.episode_id] = {0, *(s.index for s in member.case.steps)}
        if member.case.contrast_id:
            steps[member.case.contrast_id] = {0, *(s.index for s in member.case.contrast_steps)}
    problems = []
    try:
        groups = re.compile(neutral(spec.activation.trigger.value)).groups
    except re.error as error:
        return [f"activation.trigger: pattern does not compile ({error})"]
    declared = {str(i) for i in range(1, groups + 1)}
    for name, claim in claims_of(spec):
        if not claim.citations and name != "activation.boundary":  # a boundary may be unseen
            problems.append(f"{name}: no evidence cited")
        for citation in claim.citations:
            known = steps.get(citation.episode_id)
            if (
                known is None
                or citation.start > citation.end
                or not ({citation.start, citation.end} <= known)
            ):
                problems.append(
                    f"{name}: citation {citation.label()} is not a step of the evidence"
                )
        used = {p for p in placeholders(claim.value) if not p.startswith("E")}
        if used - declared and not name.startswith("activation.trigger"):
            problems.append(
                f"{name}: uses {', '.join('{' + p + '}' for p in sorted(used - declared))}, "
                "which the trigger does not declare (undeclared parent state)"
            )
        if name.startswith(("activation.observations", "execution.completion")) and claim.value:
            try:
                re.compile(neutral(claim.value))
            except re.error as error:
                problems.append(f"{name}: pattern does not compile ({error})")
    return problems


def to_spec(
    proposal: SpecProposal, run_id: int, reasoner: str, members: dict[int, MemberCase]
) -> InterventionSpec:
    """A stored spec from a proposal: deferred with the reasons when it fails traceability."""
    covered = [members[i] for i in proposal.members if i in members]
    families = sorted({m.case.family for m in covered})
    contrasts = sorted({m.case.contrast_id for m in covered if m.case.contrast_id})
    spec = InterventionSpec(
        run_id=run_id,
        clusters=sorted({m.cluster_id for m in covered}),
        reasoner=reasoner,
        mechanism=proposal.mechanism,
        families=families,
        status="supported" if proposal.supported else "deferred",
        reason=proposal.reason,
        activation=proposal.activation,
        scope=proposal.scope,
        execution=proposal.execution,
        sources=sorted({m.case.episode_id for m in covered}),
        contrasts=contrasts,
    )
    if not covered:
        return spec.model_copy(update={"status": "deferred", "reason": "it covers no member"})
    if spec.status == "supported":
        problems = traceability(spec, {m.case.episode_id: m for m in covered})
        if problems:
            return spec.model_copy(
                update={"status": "deferred", "reason": "traceability: " + "; ".join(problems)}
            )
    return spec
