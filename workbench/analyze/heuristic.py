"""The offline analyst: analyses computed from the trajectories themselves, no model."""

from __future__ import annotations

from store import EpisodeFilter, Store
from store.records import AnalysisOrigin
from workbench.analyze.analyst import FailureCase, Proposal
from workbench.analyze.causes import (
    CausalFinding,
    benign_check,
    benign_errors,
    lexicon_for,
    locate,
    locate_in_log,
    trigger_of,
)
from workbench.analyze.learned import StepScorer, labelled, learned_rows
from workbench.analyze.scoring import position_of
from workbench.compare import is_reply, reply_text, shape

CONFIDENCE = {"divergence": 0.8, "error": 0.7, "decision": 0.6, "end": 0.35}
"""How sure the heuristic is, by what located the cause (lower without a contrast)."""


class HeuristicAnalyst:
    """Deterministic analysis: error signals not seen in successes, and the first divergence
    from a success of the same task (see :mod:`workbench.analyze.causes`)."""

    name = "heuristic"

    def __init__(self, store: Store) -> None:
        self.store = store
        self._benign: dict[str, set[tuple[str, str]]] = {}

    def benign(self, family: str) -> set[tuple[str, str]]:
        """Errors successes of ``family`` survive (read once per family)."""
        if family not in self._benign:
            self._benign[family] = benign_errors(self.store, family)
        return self._benign[family]

    def analyze_failure(self, case: FailureCase) -> Proposal:
        """The causal step :func:`~workbench.analyze.causes.locate` finds, as a proposal;
        for a case a person marked, their span explained by the same evidence."""
        if case.marked:
            start, end = case.marked
            at = position_of(case.steps, start)
            finding = locate_in_log(case, self.benign(case.family), at=at)
            return self.proposal(case, finding).model_copy(update={"start": start, "end": end})
        return self.proposal(case, locate(case, self.benign(case.family)))

    def proposal(self, case: FailureCase, finding: CausalFinding) -> Proposal:
        """``finding`` about ``case`` as a proposal (its trigger, correction and rationale)."""
        last = case.steps[-1].index if case.steps else 0
        step = min(finding.step, last)
        lexicon = lexicon_for(case)
        correction = shape(finding.change, case.instruction, lexicon) if finding.change else ""
        return Proposal(
            failure=case.outcome,
            start=step,
            end=step,
            change=_change_text(finding, step != finding.step),
            trigger=trigger_of(finding, case.instruction, lexicon),
            correction=correction,
            confidence=CONFIDENCE[finding.evidence]
            if finding.contrast_id or finding.reference
            else CONFIDENCE[finding.evidence] / 2,
            rationale=_rationale(finding),
            citations=sorted({step, last}),
            contrast_citations=[finding.change_step] if finding.change_step is not None else [],
            agent=finding.agent,
        )


class LearnedAnalyst:
    """The offline analysis with the causal step chosen by a scorer learned from people's
    spans (:mod:`workbench.analyze.learned`), explained by the heuristic's evidence; a case a
    person marked keeps their span."""

    name = "heuristic+learned"

    def __init__(self, store: Store, scorer: StepScorer, families: set[str]) -> None:
        self.base = HeuristicAnalyst(store)
        self.scorer = scorer
        self.families = families
        """The families of the failures it learned from: only theirs are chosen by it."""

    def origin_of(self, case: FailureCase) -> AnalysisOrigin:
        """``learned`` for a failure of a family the scorer learned from, else ``analyzer``
        (the heuristic's own choice)."""
        return "learned" if self._learns(case) else "analyzer"

    def _learns(self, case: FailureCase) -> bool:
        return bool(case.steps) and not case.marked and case.family in self.families

    def analyze_failure(self, case: FailureCase) -> Proposal:
        if not self._learns(case):
            return self.base.analyze_failure(case)
        benign = self.base.benign(case.family)
        at = self.scorer.pick(learned_rows(case, benign_check(case, benign)))
        return self.base.proposal(case, locate_in_log(case, benign, at=at))


def learned_analyst(store: Store, where: EpisodeFilter) -> LearnedAnalyst:
    """A :class:`LearnedAnalyst` fitted on the failures ``where`` selects that carry a
    person's causal span, choosing for the failures of their families only (raises
    :class:`~workbench.analyze.learned.NotEnoughLabels`)."""
    from workbench.analyze.analyzer import failures_in_scope, human_span
    from workbench.analyze.causes import build_case

    base = HeuristicAnalyst(store)
    examples = []
    families: set[str] = set()
    for episode in store.iter_episodes(failures_in_scope(where)):
        human = human_span(store, episode.id)
        if human is None:
            continue
        case = build_case(store, episode)
        found = labelled(case, human.start, benign_check(case, base.benign(case.family)))
        if found is not None:
            examples.append(found)
            families.add(case.family)
    return LearnedAnalyst(store, StepScorer(examples), families)


def _change_text(finding: CausalFinding, never_taken: bool) -> str:
    if never_taken:
        return (
            f"do not stop here; continue with '{finding.change}'"
            if finding.change
            else "do not stop before the task is complete"
        )
    if finding.change:
        return f"instead of {_said(finding.failed_action, 'replying')}, do '{finding.change}'"
    return f"do not {_said(finding.failed_action, 'reply')} here"


REPLY_CHARS = 120
"""How much of a text reply a change text quotes."""


def _said(action: str, verb: str) -> str:
    """An action as a change text names it: a text reply as ``verb`` and the words it said
    (cut), not as the ``reply({...})`` call it is stored as for comparison."""
    if not is_reply(action):
        return f"'{action}'"
    text = " ".join(reply_text(action).split())
    cut = text if len(text) <= REPLY_CHARS else text[: REPLY_CHARS - 1] + "…"
    return f"{verb} '{cut}'"


def _rationale(finding: CausalFinding) -> str:
    if finding.reference:
        return _reference_rationale(finding)
    contrast = (
        f" A successful run of the {'same task' if finding.same_task else 'same family'} ({finding.contrast_id}) does '{finding.change}' there."
        if finding.contrast_id and finding.change
        else " No successful run of this regime shows what to do instead."
        if not finding.contrast_id
        else ""
    )
    if finding.signal:
        return _log_rationale(finding) + contrast
    located = {
        "error": f"Step {finding.step}: '{finding.failed_action}' met '{finding.observation[:120]}', an error no successful run of this family recovered from.",
        "divergence": f"Step {finding.step} is where this run first parts from a successful run of the same task.",
        "decision": f"Step {finding.step} is the agent's decision the failure follows from.",
        "end": "No error signal and no same-task divergence: the run ended without completing the task.",
    }[finding.evidence]
    return located + contrast


SIGNAL_WORDS = {
    "critical": "its reward marks a critical failure",
    "change_deviation": "it is the first state change the task's script does not have (or has with other arguments)",
    "missing_change_here": "a state change the task needs and the run never made was due here; the agent decided otherwise",
    "later_deviation": "it is a state change the task's script does not have",
    "own_error": "what came back reports an error that no later step got past",
    "blamed_for_error": "a later step's error traces back to it (it wrote or sent what failed)",
    "pushback_after": "the answer to it pushed back",
    "refusal": "the agent refused or gave up here",
    "transfer": "the agent handed the task off here",
    "unbacked_claim": "the agent claimed a change no call had made",
    "answer_source": "it first stated the answer the run ended with",
    "claim": "the agent claimed a change here",
    "code": "the agent wrote code here",
    "first": "it is the agent's first step",
    "last": "it is the run's last step",
}
"""Why an imported log's step was chosen, by the feature that weighed most."""


def _log_rationale(finding: CausalFinding) -> str:
    who = f" ({finding.agent})" if finding.agent else ""
    why = SIGNAL_WORDS.get(finding.signal, finding.signal.replace("_", " "))
    return f"Step {finding.step}{who}: {why}."


def _reference_rationale(finding: CausalFinding) -> str:
    if finding.signal:
        return _log_rationale(finding) + (
            f" The task's reference does '{finding.change}' there." if finding.change else ""
        )
    located = {
        "error": f"Step {finding.step}: '{finding.failed_action}' met '{finding.observation[:120]}', an error no successful run of this family recovered from.",
        "divergence": f"Step {finding.step} is where this run first parts from the task's expected actions.",
        "decision": f"Step {finding.step} is the agent's decision the failure follows from.",
        "end": "No error signal and no deviation from the task's expected actions: the run ended without completing the task.",
    }[finding.evidence]
    expected = f" The task's reference does '{finding.change}' there." if finding.change else ""
    return located + expected
