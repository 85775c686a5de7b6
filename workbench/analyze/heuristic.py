"""The offline reasoner: analyses computed from the trajectories themselves, no model."""

from __future__ import annotations

import re

from store import ArtifactKind, InterventionSpec, ManualRule, Store
from workbench.analyze.causes import CausalFinding, benign_errors, error_signature, locate
from workbench.compare import VERBS, normalize_action
from workbench.compile import heuristic as compiler
from workbench.compile.proposals import AttemptProposal, MemberCase, SpecProposal
from workbench.llm.reasoner import FailureCase, Proposal
from workbench.manual import heuristic as formulator
from workbench.manual.formulate import RuleGroup

CONFIDENCE = {"divergence": 0.8, "error": 0.7, "end": 0.35}
"""How sure the heuristic is, by what located the cause (lower without a contrast)."""


def shape(action: str, instruction: str) -> str:
    """An action reduced to its verb and abstracted arguments, e.g. ``go to <X>``.

    Entities the instruction names keep their numbered placeholder (``focus on <E1>``), so a
    correction that must name the task's object stays distinct from one that must not.
    """
    normalized = normalize_action(action, instruction)
    verb = VERBS.match(normalized)
    if verb is None:
        return f"{normalized.split(' ', 1)[0]} <X>" if normalized else ""
    rest = normalized[verb.end() :].strip()
    if not rest:
        return verb.group(1)
    entities = " ".join(re.findall(r"<E\d+>", rest))
    return f"{verb.group(1)} {entities or '<X>'}"


def trigger_of(finding: CausalFinding, instruction: str) -> str:
    """The observable condition at the causal step: the action's shape and what came back."""
    if finding.evidence == "end":
        return "stopped | no error"
    signal = error_signature(finding.observation) or (
        "critical" if finding.evidence == "error" else "no error"
    )
    action = shape(finding.failed_action, instruction) if finding.failed_action else "stopped"
    return f"{action} | {signal}"


class HeuristicReasoner:
    """Deterministic analysis: error signals not seen in successes, and the first divergence
    from a success of the same task (see :mod:`workbench.analyze.causes`)."""

    name = "heuristic"

    def __init__(self, store: Store) -> None:
        self.store = store
        self._benign: dict[str, set[tuple[str, str]]] = {}

    def analyze_failure(self, case: FailureCase) -> Proposal:
        if case.family not in self._benign:
            self._benign[case.family] = benign_errors(self.store, case.family)
        finding = locate(case, self._benign[case.family])
        last = case.steps[-1].index if case.steps else 0
        step = min(finding.step, last)
        correction = shape(finding.change, case.instruction) if finding.change else ""
        return Proposal(
            failure=case.outcome,
            start=step,
            end=step,
            change=_change_text(finding, step != finding.step),
            trigger=trigger_of(finding, case.instruction),
            correction=correction,
            confidence=CONFIDENCE[finding.evidence]
            if finding.contrast_id
            else CONFIDENCE[finding.evidence] / 2,
            rationale=_rationale(finding),
            citations=sorted({step, last}),
            contrast_citations=[finding.change_step] if finding.change_step is not None else [],
        )

    def extract_specs(self, members: list[MemberCase]) -> list[SpecProposal]:
        """Specs read off the members' mechanisms (see :mod:`workbench.compile.heuristic`)."""
        return compiler.extract_specs(members)

    def propose_contract(
        self, spec: InterventionSpec, kind: ArtifactKind, carried: list[str]
    ) -> AttemptProposal:
        """The contract ``kind`` takes for ``spec``, with a closure report read off the spec's
        execution obligation (the carried witnesses are re-checked by that same reading)."""
        return compiler.propose(spec, kind)

    def group_rules(self, rules: list[ManualRule]) -> list[RuleGroup]:
        """Groups by the scenario each rule's scope names, with template introductions (see
        :mod:`workbench.manual.heuristic`)."""
        return formulator.group_rules(rules)


def _change_text(finding: CausalFinding, never_taken: bool) -> str:
    if never_taken:
        return (
            f"do not stop here; continue with '{finding.change}'"
            if finding.change
            else "do not stop before the task is complete"
        )
    if finding.change:
        return f"instead of '{finding.failed_action}', do '{finding.change}'"
    return f"do not '{finding.failed_action}' here"


def _rationale(finding: CausalFinding) -> str:
    contrast = (
        f" A successful run of the {'same task' if finding.same_task else 'same family'} ({finding.contrast_id}) does '{finding.change}' there."
        if finding.contrast_id and finding.change
        else " No successful run of this regime shows what to do instead."
        if not finding.contrast_id
        else ""
    )
    located = {
        "error": f"Step {finding.step}: '{finding.failed_action}' met '{finding.observation[:120]}', an error no successful run of this family recovered from.",
        "divergence": f"Step {finding.step} is where this run first parts from a successful run of the same task.",
        "end": "No error signal and no same-task divergence: the run ended without completing the task.",
    }[finding.evidence]
    return located + contrast
