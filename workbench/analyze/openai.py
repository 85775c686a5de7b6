"""The analysis stage's judgment by any OpenAI-compatible model.

One structured-output call per failure (purpose ``analyze.failure``, temperature 0) asks the
model for a :class:`~workbench.analyze.analyst.Proposal`: the evaluator-visible failure, the
earliest decision span that made success unreachable, the behavioural change required there,
an abstract trigger and correction, and the steps that back each claim. The case is rendered
as step listings trimmed to a character budget (first and last steps and the region where the
failed and successful runs first differ are kept; omissions are counted in the prompt).

The answer is then checked mechanically: the span must be ordered and every index must name a
step of the run it cites. A violating answer gets one correction message naming exactly what
was wrong; a second violation raises :class:`~workbench.llm.client.ModelError`.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.analyze.analyst import FailureCase, Proposal
from workbench.compare import normalize_action
from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient
from workbench.llm.steps import CONTRAST_SHARE, MIN_STEPS_CHARS, render_steps, step_ranges

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
Examples: `go to <X> | the door to <X> is closed`, `take <X> | <X> is not here`.
- correction: the corrective action as an abstract action pattern with the same \
placeholders, written in the run's own action grammar (e.g. `open <X>`, or whatever the \
successful run did); an empty string when the evidence does not show it.
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


class OpenAIAnalyst:
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
        return checked_answer(
            self.client,
            [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": render_case(case, self.max_steps_chars)},
            ],
            Proposal,
            purpose=PURPOSE,
            check=lambda proposal: check_proposal(proposal, case),
            correction=lambda problems: _correction(problems, case),
            failure=f"episode {case.episode_id}: the model's answer still does not fit the "
            "case after a correction",
            episode_id=case.episode_id,
        )


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
