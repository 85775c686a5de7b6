"""The closure controller: decides mechanically whether an attempted schema closes a spec.

The same decision is made whichever reasoner proposed. The cluster's evidence says what each
obligation demands (:mod:`workbench.compile.obligations`): a demand above what the schema can
own is an insufficiency witness citing the steps that show it, whatever the proposer claims.
Otherwise a reasoner's proposal decides: an obligation closes only when the proposer claims it,
names a slot the schema requires, that slot is filled, and every citation lies inside a span
the spec itself cites; an obligation the proposer leaves open keeps its witness, which must
cite steps of the cluster's runs. A schema closes when all four obligations close, no required
slot is missing and the contract validates. A bare type assertion therefore cannot pass.
"""

from __future__ import annotations

from pydantic import ValidationError

from store import (
    OBLIGATIONS,
    ArtifactKind,
    Citation,
    CompileAttempt,
    InterventionSpec,
    ObligationCheck,
)
from workbench.compile.contracts import CONTRACT, CONTRACT_TYPES, missing_slots
from workbench.compile.obligations import SpecEvidence
from workbench.compile.proposals import AttemptProposal, ObligationReport
from workbench.compile.specs import claims_of


def spec_spans(spec: InterventionSpec) -> list[Citation]:
    """The spans the spec cites as evidence (what an attempt's citations must fall inside);
    the negative boundary's spans back negative cases, not closure."""
    return [
        c
        for name, claim in claims_of(spec)
        if name != "activation.boundary"
        for c in claim.citations
    ]


def resolves(citation: Citation, spans: list[Citation]) -> bool:
    """Whether ``citation`` lies inside one of ``spans``."""
    return any(
        c.episode_id == citation.episode_id and c.start <= citation.start and citation.end <= c.end
        for c in spans
    )


def decide(
    spec: InterventionSpec,
    proposal: AttemptProposal,
    position: int,
    carried: list[str],
    evidence: SpecEvidence,
) -> CompileAttempt:
    """The controller's verdict on one attempt: the evidence's demands first, then the
    proposal's claims (nothing here trusts the proposer's status without checking slot and
    citations)."""
    kind: ArtifactKind = proposal.kind
    required = set(CONTRACT_TYPES[kind].REQUIRED)
    contract = proposal.contract or {}
    spans = spec_spans(spec)
    reports = {r.obligation: r for r in proposal.report}
    checks = []
    for obligation in OBLIGATIONS:
        demand = evidence.demands[obligation]
        if demand.exceeds(kind):
            cited = [c for c in demand.citations if evidence.resolves(c)]
            checks.append(
                ObligationCheck(
                    obligation=obligation,
                    closed=False,
                    citations=cited,
                    witness=demand.witness(kind),
                )
            )
            continue
        report = reports.get(obligation)
        if report is None:
            checks.append(
                ObligationCheck(obligation=obligation, closed=False, witness="no closure report")
            )
            continue
        checks.append(_check(report, required, contract, spans, evidence))
    missing = missing_slots(contract) if contract else sorted(required | {"form"})
    if contract and not missing:
        try:
            CONTRACT.validate_python(contract)
        except ValidationError as error:
            missing = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:3]]
    return CompileAttempt(
        spec_id=spec.id or 0,
        kind=kind,
        position=position,
        closed=all(c.closed for c in checks) and not missing,
        checks=checks,
        carried=carried,
        missing=missing,
        contract=proposal.contract,
    )


def _check(
    report: ObligationReport,
    required: set[str],
    contract: dict,
    spans: list[Citation],
    evidence: SpecEvidence,
) -> ObligationCheck:
    """One obligation the evidence lets the schema own, as the proposal reports it."""
    if not report.status:
        cited = [c for c in report.citations if evidence.resolves(c)]
        witness = report.witness or "not closed (the proposer gave no witness)"
        if not cited:
            witness += " (the witness cites no step of the cluster's runs)"
        return ObligationCheck(
            obligation=report.obligation, closed=False, citations=cited, witness=witness
        )
    problem = _problem(report.slot, report.citations, required, contract, spans)
    return ObligationCheck(
        obligation=report.obligation,
        closed=problem is None,
        slot=report.slot if problem is None else "",
        citations=report.citations,
        witness=problem or "",
    )


def _problem(
    slot: str,
    citations: list[Citation],
    required: set[str],
    contract: dict,
    spans: list[Citation],
) -> str | None:
    if slot not in required:
        return f"claimed closed by {slot or 'no slot'!r}, which is not a slot of this schema"
    if not contract.get(slot):
        return f"claimed closed by slot {slot!r}, which the contract leaves empty"
    if not citations:
        return "claimed closed without citing evidence"
    unresolved = [c.label() for c in citations if not resolves(c, spans)]
    if unresolved:
        return f"cites {', '.join(unresolved)}, which the spec's evidence does not contain"
    return None


def witnesses(attempt: CompileAttempt) -> list[str]:
    """The attempt's open obligations as carried witnesses (``obligation: why``)."""
    return [f"{c.obligation}: {c.witness}" for c in attempt.checks if not c.closed]
