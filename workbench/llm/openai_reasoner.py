"""A :class:`~workbench.llm.reasoner.Reasoner` backed by any OpenAI-compatible model.

One structured-output call per failure (purpose ``analyze.failure``, temperature 0) asks the
model for a :class:`~workbench.llm.reasoner.Proposal`: the evaluator-visible failure, the
earliest decision span that made success unreachable, the behavioural change required there,
an abstract trigger and correction, and the steps that back each claim. The case is rendered
as step listings trimmed to a character budget (first and last steps and the region where the
failed and successful runs first differ are kept; omissions are counted in the prompt).

The answer is then checked mechanically: the span must be ordered and every index must name a
step of the run it cites. A violating answer gets one correction message naming exactly what
was wrong; a second violation raises :class:`~workbench.llm.client.ModelError`.

Compilation's judgments (intervention specs per cluster, contract proposals per schema) are
made the same way, by :mod:`workbench.llm.openai_compile`, and the Formulator's grouping of
the manual's rules by :mod:`workbench.llm.openai_manual`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from store.records import LLMCall
from workbench.compare import normalize_action
from workbench.llm.client import ChatClient, ModelError
from workbench.llm.reasoner import CaseStep, FailureCase, Proposal

if TYPE_CHECKING:
    from store import ArtifactKind, InterventionSpec, ManualRule
    from workbench.compile.proposals import AttemptProposal, MemberCase, SpecProposal
    from workbench.llm.openai_builder import OpenAIBuilder
    from workbench.manual.formulate import RuleGroup

PURPOSE = "analyze.failure"

SYSTEM_PROMPT = """\
You analyse one failed episode of an agent acting in a text environment, to find what the \
agent must do differently next time. You receive the task instruction, the evaluator's \
verdict, the failed run step by step and, when one exists, a successful run from the same \
regime as contrastive evidence. Each step is listed as `[index] action -> observation \
(reward)`.

Answer with one JSON object with these fields:

- failure: the evaluator-visible failure in one sentence: what the evaluator saw go wrong, \
not your explanation of why.
- start, end: the span of the failed run (step indices, inclusive) holding the EARLIEST \
decision that made success unreachable. This is where the agent went wrong, not where the \
failure became visible: a run that ends by giving up, looping or running out of steps \
usually went wrong much earlier. Keep the span as short as the evidence allows (often one \
step).
- change: the behavioural change required at that decision point to avoid the failure, as \
an instruction to the agent.
- trigger: the observable condition at that decision point, so the same situation can be \
recognised in other tasks, written as `<action pattern> | <observation signal>`: the kind of \
action taken (or about to be taken) and what the observation showed. Replace task-specific \
names with placeholders: <X> for the object acted on, <E1>, <E2>, ... for other entities. \
Example: `go to <X> | the door to <X> is closed`.
- correction: the corrective action as an abstract action pattern with the same \
placeholders, e.g. `open door to <X>`; an empty string when the evidence does not show it.
- confidence: from 0 to 1, how strongly the listed steps support the span and the change. \
Stay low when the cause is a guess.
- rationale: two or three sentences linking the cited steps to the failure.
- citations: indices of the failed run's steps that back your claims: the causal span, the \
steps showing its consequences and the step where the failure became visible.
- contrast_citations: indices of the successful run's steps that show the right behaviour \
at the corresponding point; empty when there is no successful run or it shows nothing \
relevant.

Rules:
- Cite only indices shown in the listings. The two runs are numbered separately: never put \
an index of one run in the other's field.
- Some steps may be omitted to save space. Claim only what the shown steps support.
- The successful run shows behaviour to preserve: the change must not break what it did \
right. When it solved a different task, compare the decisions, not the object names.
"""

CASE_TEMPLATE = """\
Environment family: {family}

<instruction>
{instruction}
</instruction>

<outcome>
{outcome}
</outcome>

<failed_run steps="{failed_count}">
{failed_steps}
</failed_run>

{contrast}"""

CONTRAST_TEMPLATE = """\
<successful_run task="{task}" steps="{count}">
{steps}
</successful_run>"""

NO_CONTRAST = "No successful run of this regime is available for contrast."

CORRECTION_TEMPLATE = """\
Your answer does not fit the listings: {problems}. {valid} Answer again with the whole JSON \
object, citing only steps that exist."""

OMITTED_GAP = "[... {count} steps omitted ...]"
OMITTED_TOTAL = "({omitted} of {total} steps omitted to fit the prompt)"

MIN_STEPS_CHARS = 1000
"""The smallest ``max_steps_chars`` accepted: room for the first and last steps at least."""
LINE_SHARE = 4
"""One step's line may take at most this fraction (1/n) of its run's budget."""
MIN_LINE_CHARS = 160
FOCUS_RADIUS = 4
"""Steps kept on each side of the first difference between the runs (budget permitting)."""
CONTRAST_SHARE = 3
"""When both runs do not fit, the successful run gets at most 1/n of the budget."""


class OpenAIReasoner:
    """Judges failures with a chat model through a :class:`ChatClient`.

    Args:
        client: the logged, cached model client.
        max_steps_chars: characters the step listings (both runs together) may take in the
            prompt; longer runs are trimmed.
    """

    def __init__(self, client: ChatClient, *, max_steps_chars: int = 12000) -> None:
        if max_steps_chars < MIN_STEPS_CHARS:
            raise ValueError(f"max_steps_chars must be at least {MIN_STEPS_CHARS}")
        self.client = client
        self.max_steps_chars = max_steps_chars
        self.name = f"openai:{client.model}"

    def analyze_failure(self, case: FailureCase) -> Proposal:
        """The model's proposal for ``case``, checked against the case's step indices.

        Raises:
            ValueError: the failed run has no steps (nothing could be cited).
            ModelError: the call failed, or the answer still cites steps that do not exist
                after one correction.
        """
        if not case.steps:
            raise ValueError(f"episode {case.episode_id}: the failed run has no steps")
        messages: list[dict[str, str]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": render_case(case, self.max_steps_chars)},
        ]
        for attempt in range(2):
            calls: list[LLMCall] = []
            proposal = self.client.parse(
                messages,
                Proposal,
                purpose=PURPOSE,
                temperature=0.0,
                episode_id=case.episode_id,
                calls=calls,
            )
            problems = check_proposal(proposal, case)
            if not problems:
                return proposal
            if attempt == 1:
                raise ModelError(
                    f"{PURPOSE}: episode {case.episode_id}: the model's answer still does not "
                    f"fit the case after a correction: {'; '.join(problems)}",
                    purpose=PURPOSE,
                    call=calls[-1] if calls else None,
                )
            answer = (calls[-1].response or {}).get("content") if calls else None
            messages = [
                *messages,
                {"role": "assistant", "content": answer or proposal.model_dump_json()},
                {"role": "user", "content": _correction(problems, case)},
            ]
        raise AssertionError("unreachable")  # pragma: no cover

    def extract_specs(self, members: list[MemberCase]) -> list[SpecProposal]:
        """One spec proposal per cluster of ``members``, checked against their runs and the
        engine's traceability check; a cluster whose answer still fails after one
        correction, or whose call fails, is deferred with the reason (never raised)."""
        from workbench.llm import openai_compile  # it renders with this module's helpers

        return openai_compile.extract_specs(self.client, members, self.max_steps_chars)

    def propose_contract(
        self, spec: InterventionSpec, kind: ArtifactKind, carried: list[str]
    ) -> AttemptProposal:
        """The model's ``kind`` contract for ``spec`` and its four-entry closure report, for
        the closure controller to decide on.

        Raises:
            ModelError: the call failed (after the client's retries).
        """
        from workbench.llm import openai_compile

        return openai_compile.propose_contract(self.client, spec, kind, carried)

    def group_rules(self, rules: list[ManualRule]) -> list[RuleGroup]:
        """The model's grouping of ``rules`` (purpose ``manual.formulate``), checked to place
        every rule exactly once.

        Raises:
            ModelError: the call failed, or the grouping still fails the check after one
                correction (the message names each rule concerned).
        """
        from workbench.llm import openai_manual

        return openai_manual.group_rules(self.client, rules)

    def builder(self) -> OpenAIBuilder:
        """The building stage's Builder and Consolidator on the same client."""
        from workbench.llm.openai_builder import OpenAIBuilder

        return OpenAIBuilder(self.client)


def check_proposal(proposal: Proposal, case: FailureCase) -> list[str]:
    """What is wrong with ``proposal``'s step indices for ``case`` (empty when nothing is)."""
    failed = {step.index for step in case.steps}
    contrast = {step.index for step in case.contrast_steps}
    problems = []
    if proposal.start > proposal.end:
        problems.append(f"start ({proposal.start}) is after end ({proposal.end})")
    for field in ("start", "end"):
        value = getattr(proposal, field)
        if value not in failed:
            problems.append(f"{field} ({value}) is not a step of the failed run")
    missing = _missing(proposal.citations, failed)
    if missing:
        problems.append(f"citations {missing} are not steps of the failed run")
    if proposal.contrast_citations and not case.contrast_steps:
        problems.append("contrast_citations must be empty: there is no successful run")
    else:
        missing = _missing(proposal.contrast_citations, contrast)
        if missing:
            problems.append(f"contrast_citations {missing} are not steps of the successful run")
    return problems


def render_case(case: FailureCase, max_steps_chars: int = 12000) -> str:
    """The user message describing ``case``; the step listings take at most ``max_steps_chars``."""
    focus = _first_difference(case)
    if case.contrast_steps:
        failed_text, contrast_text = _render_runs(case, max_steps_chars, focus)
        contrast = CONTRAST_TEMPLATE.format(
            task="same task" if case.contrast_same_task else "different task, same family",
            count=len(case.contrast_steps),
            steps=contrast_text,
        )
    else:
        failed_text = render_steps(case.steps, max_steps_chars, focus)
        contrast = NO_CONTRAST
    return CASE_TEMPLATE.format(
        family=case.family or "unknown",
        instruction=case.instruction.strip(),
        outcome=case.outcome.strip() or "(no message)",
        failed_count=len(case.steps),
        failed_steps=failed_text,
        contrast=contrast,
    )


def render_steps(steps: Sequence[CaseStep], budget: int, focus: int | None = None) -> str:
    """``steps`` as `[index] action -> observation (reward)` lines, at most ``budget`` chars.

    When they do not all fit, the first and last steps are kept, then the steps around
    position ``focus`` (where the runs first differ), then steps from both ends inwards;
    each gap is marked with its size and a last line says how many steps were omitted.
    """
    cap = max(MIN_LINE_CHARS, budget // LINE_SHARE)
    lines = [_step_line(step, cap) for step in steps]
    if _joined_length(lines) <= budget:
        return "\n".join(lines)
    total = len(lines)
    gap = len(OMITTED_GAP.format(count=total)) + 1
    used = len(OMITTED_TOTAL.format(omitted=total, total=total)) + gap
    kept: set[int] = set()
    for position in _priority(total, focus):
        cost = len(lines[position]) + 1 + gap  # the line and, at worst, one more gap marker
        if used + cost <= budget:
            kept.add(position)
            used += cost
    return _assemble(lines, kept)


# -- rendering ----------------------------------------------------------------------------


def _render_runs(case: FailureCase, budget: int, focus: int | None) -> tuple[str, str]:
    """Both listings within ``budget``: the failed run first, the success gets the rest."""
    failed_full = render_steps(case.steps, budget, focus)
    contrast_full = render_steps(case.contrast_steps, budget, focus)
    if len(failed_full) + len(contrast_full) <= budget:
        return failed_full, contrast_full
    contrast_share = min(len(contrast_full), budget // CONTRAST_SHARE)
    failed = render_steps(case.steps, budget - contrast_share, focus)
    contrast = render_steps(case.contrast_steps, budget - len(failed), focus)
    return failed, contrast


def _step_line(step: CaseStep, cap: int) -> str:
    action = _one_line(step.action) or "(no action)"
    reward = "" if step.reward is None else f" (reward {step.reward:g})"
    head = f"[{step.index}] {action} -> "
    room = max(40, cap - len(head) - len(reward))
    observation = _clip(_one_line(step.observation) or "(no observation)", room)
    return _clip(head + observation + reward, cap)


def _one_line(text: str) -> str:
    return " / ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _joined_length(lines: Sequence[str]) -> int:
    return sum(len(line) for line in lines) + max(0, len(lines) - 1)


def _priority(total: int, focus: int | None) -> list[int]:
    """Positions in the order they are worth keeping (each once)."""
    order = [0, total - 1]
    if focus is not None:
        focus = min(max(focus, 0), total - 1)
        order.append(focus)
        for offset in range(1, FOCUS_RADIUS + 1):
            order += [focus - offset, focus + offset]
    for offset in range(1, total):
        order += [offset, total - 1 - offset]
    return list(dict.fromkeys(p for p in order if 0 <= p < total))


def _assemble(lines: Sequence[str], kept: set[int]) -> str:
    out: list[str] = []
    skipped = 0
    for position, line in enumerate(lines):
        if position in kept:
            if skipped:
                out.append(OMITTED_GAP.format(count=skipped))
                skipped = 0
            out.append(line)
        else:
            skipped += 1
    if skipped:
        out.append(OMITTED_GAP.format(count=skipped))
    out.append(OMITTED_TOTAL.format(omitted=len(lines) - len(kept), total=len(lines)))
    return "\n".join(out)


def _first_difference(case: FailureCase) -> int | None:
    """Position of the first step whose action differs between the runs (``None``: no contrast)."""
    if not case.contrast_steps:
        return None
    pairs = zip(case.steps, case.contrast_steps, strict=False)
    for position, (failed, success) in enumerate(pairs):
        if normalize_action(failed.action, case.instruction) != normalize_action(
            success.action, case.instruction
        ):
            return position
    return min(len(case.steps), len(case.contrast_steps))


# -- checking -----------------------------------------------------------------------------


def _missing(cited: Sequence[int], valid: set[int]) -> str:
    return ", ".join(str(i) for i in sorted(set(cited) - valid))


def _correction(problems: Sequence[str], case: FailureCase) -> str:
    valid = f"The failed run's steps are {step_ranges(step.index for step in case.steps)}"
    if case.contrast_steps:
        valid += (
            f"; the successful run's steps are {step_ranges(s.index for s in case.contrast_steps)}"
        )
    else:
        valid += "; there is no successful run"
    return CORRECTION_TEMPLATE.format(problems="; ".join(problems), valid=valid + ".")


def step_ranges(indices: Iterable[int]) -> str:
    """``0–12, 15, 17–20``: sorted indices as compact ranges (for correction messages)."""
    ordered = sorted(set(indices))
    parts: list[str] = []
    start = previous = ordered[0]
    for index in [*ordered[1:], None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        parts.append(str(start) if start == previous else f"{start}–{previous}")
        if index is not None:
            start = previous = index
    return ", ".join(parts)
