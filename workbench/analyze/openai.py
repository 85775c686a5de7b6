"""The analysis stage's judgment by any OpenAI-compatible model.

The analyst asks for a :class:`~workbench.analyze.analyst.Proposal` (purpose
``analyze.failure``, temperature 0): the evaluator-visible failure, the earliest decision span
that made success unreachable, the behavioural change required there, an abstract trigger and
correction, the responsible agent and the steps that back each claim. How it gets there is its
strategy (:mod:`~workbench.analyze.strategies`): ``all-at-once`` asks for the proposal with the
whole run in one call; ``step-by-step`` first asks of each step in turn, the run shown up to
it, whether it is the decisive error (``analyze.step``), and ``binary-search`` which half of a
range holds it (``analyze.half``); both then ask for the proposal of the step they found.

The case is rendered as step listings trimmed to a character budget (first and last steps and
the region in question are kept; omissions are marked): the model's context, when known
(``context_tokens``), less the rest of the prompt and the reply. Whatever was cut — steps,
long steps, a long instruction — the prompt says.

Every answer goes through the one checked-answer loop: the proposal's span must be ordered,
start at the step a search found, and every index must name a step of the run it cites; a
verdict must give its reason. A violating answer gets one correction message naming exactly
what was wrong; a second violation raises :class:`~workbench.llm.client.ModelError`. Every
call is logged with its tokens and counted into the analyst's :class:`Budget` (a limit for a
whole run; once it is spent, a failure is refused with :class:`BudgetSpent`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from workbench.analyze.analyst import FailureCase, Proposal
from workbench.analyze.strategies import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    Budget,
    BudgetSpent,
    Finding,
    HalfVerdict,
    MeteredClient,
    StepVerdict,
    Strategy,
    bisect,
    first_decisive,
    verdict_problems,
)
from workbench.compare import normalize_action
from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient
from workbench.llm.steps import (
    CONTRAST_SHARE,
    MIN_STEPS_CHARS,
    CaseStep,
    render_steps,
    step_ranges,
)

PURPOSE = "analyze.failure"
STEP_PURPOSE = "analyze.step"
HALF_PURPOSE = "analyze.half"

STEPS_CHARS = 12000
"""Characters the step listings take when the model's context is not known."""
CHARS_PER_TOKEN = 3
"""Characters a token is reckoned to hold when a prompt is fitted to a context (few enough
for code and JSON, which tokenize denser than prose)."""
REPLY_TOKENS = 1024
"""Tokens kept for the reply when the client sets no limit of its own."""
FRAME_CHARS = 600
"""Characters the templates around the listings take, at most."""
TEXT_SHARE = 4
"""With a known context, the instruction and the verdict may each take at most 1/n of the
room the prompt has; beyond it they are cut."""
MIN_TEXT_CHARS = 500

SYSTEM_PROMPT = """\
You analyse one failed episode of an agent acting in a text environment, to find what the \
agent must do differently next time. You receive the task instruction, the evaluator's \
verdict, the failed run step by step and, when one exists, a successful run from the same \
regime as contrastive evidence. Each step is listed as `[index] action -> observation \
(reward)`; in a log of several agents the acting agent's name comes before the action.

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
- agent: in a log of several agents, the agent responsible for the span: the one that took \
the decision, not one that only relayed or ran its output; an empty string for one agent's run.

Rules:
- Cite only indices shown in the listings. The two runs are numbered separately: never put \
an index of one run in the other's field.
- Some steps may be omitted to save space. Claim only what the shown steps support.
- The successful run shows behaviour to preserve: the change must not break what it did \
right. When it solved a different task, compare the decisions, not the object names.
"""

STEP_SYSTEM_PROMPT = """\
You read one failed episode of an agent a step at a time, to find its decisive error: the \
earliest step after which the task could no longer succeed. You receive the task \
instruction, the evaluator's verdict, the failed run up to and including the step under \
judgment and, when one exists, a successful run from the same regime as contrastive \
evidence. Each step is listed as `[index] action -> observation (reward)`; in a log of \
several agents the acting agent's name comes before the action.

Answer with one JSON object with these fields:

- decisive: true when the step under judgment is the decisive error, false otherwise. The \
steps before it were judged not decisive. A step that only shows or repeats a mistake made \
earlier is not decisive, nor is a step that relays or runs another agent's output for what \
that output did wrong.
- reason: one or two sentences citing what the step did and what it showed.
"""

HALF_SYSTEM_PROMPT = """\
You locate the decisive error of one failed episode of an agent by halving: the earliest \
step after which the task could no longer succeed. You receive the task instruction, the \
evaluator's verdict, the failed run and, when one exists, a successful run from the same \
regime as contrastive evidence, then a range of steps that holds the decisive error, split \
in two. Each step is listed as `[index] action -> observation (reward)`; in a log of several \
agents the acting agent's name comes before the action.

Answer with one JSON object with these fields:

- half: `upper` when the decisive error is in the first, earlier half of the range; `lower` \
when it is in the second, later half. When both halves hold mistakes, choose the half of \
the earliest one that made success unreachable.
- reason: one or two sentences citing the steps that decide it.
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

{contrast}{cut}"""

CONTRAST_TEMPLATE = """\
<successful_run task="{task}" steps="{count}">
{steps}
</successful_run>"""

REFERENCE_TEMPLATE = """\
<expected_actions steps="{count}" note="the task's reference: a partial script of the state changes it needs; reads it does not list are allowed">
{steps}
</expected_actions>"""

NO_CONTRAST = "No successful run of this regime is available for contrast."

CUT_TEMPLATE = """

<cut>
Cut to fit the model's context: {parts}.
</cut>"""

TEXT_CUT = "[… {count:,} more characters cut …]"

STEP_QUESTION = """\
The failed run is shown up to step [{index}], the step under judgment; it went on to \
{total} steps in all. Is step [{index}] the decisive error?"""

HALF_QUESTION = """\
The decisive error lies in steps [{low}] to [{high}]. Is it in the upper half, steps \
[{low}] to [{middle}], or in the lower half, steps [{next}] to [{high}]?"""

FINDING_TEMPLATE = """\
<finding>
A {strategy} search of the failed run put the decisive error at step [{index}]: {reason}
</finding>

Answer with the proposal for that error: its span starts at step {index}."""

NO_FINDING = """\
<finding>
A step-by-step reading of the failed run judged no single step decisive: judge the whole run.
</finding>"""

CORRECTION_TEMPLATE = """\
Your answer does not fit the listings: {problems}. {valid} Answer again with the whole JSON \
object, citing only steps that exist."""

VERDICT_CORRECTION = """\
Your answer is incomplete: {problems}. Answer again with the whole JSON object."""

VerdictT = TypeVar("VerdictT", StepVerdict, HalfVerdict)


class OpenAIAnalyst:
    """Judges failures with a chat model through a :class:`ChatClient`.

    Args:
        client: the logged, cached model client.
        strategy: how the model looks for the decisive step
            (:data:`~workbench.analyze.strategies.STRATEGIES`).
        max_calls: most model calls the analyst may send in all (a whole analysis run's
            budget); ``None`` for no limit.
        max_steps_chars: most characters the step listings (both runs together) may take in a
            prompt; ``None`` for whatever the context leaves, or :data:`STEPS_CHARS` when the
            context is not known.
        context_tokens: the model's context window in tokens, if known: every prompt is cut
            to fit it beside the reply.

    Raises:
        ValueError: an unknown strategy, a budget below one call, a step budget below
            :data:`~workbench.llm.steps.MIN_STEPS_CHARS`, or a context with no room for a
            prompt.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        strategy: Strategy = DEFAULT_STRATEGY,
        max_calls: int | None = None,
        max_steps_chars: int | None = None,
        context_tokens: int | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}: choose {', '.join(STRATEGIES)}")
        if max_steps_chars is not None and max_steps_chars < MIN_STEPS_CHARS:
            raise ValueError(f"max_steps_chars must be at least {MIN_STEPS_CHARS}")
        if max_calls is not None and max_calls < 1:
            raise ValueError("max_calls must be at least 1")
        self.client = client
        self.strategy: Strategy = strategy
        self.max_steps_chars = max_steps_chars
        self.context_tokens = context_tokens
        if context_tokens is not None and self._room(len(SYSTEM_PROMPT)) < MIN_STEPS_CHARS:
            raise ValueError(
                f"a context of {context_tokens} tokens leaves no room for a prompt beside a "
                f"reply of {self._reply_tokens()} tokens"
            )
        self.budget = Budget(max_calls)
        """What the analyst's calls have spent (and may spend)."""
        self._metered = MeteredClient(client, self.budget)
        suffix = "" if strategy == DEFAULT_STRATEGY else f":{strategy}"
        self.name = f"openai:{client.model}{suffix}"

    def analyze_failure(self, case: FailureCase) -> Proposal:
        """The model's proposal for ``case``, checked against the case's step indices.

        Raises:
            ValueError: the failed run has no steps (nothing could be cited).
            BudgetSpent: the budget ran out before the analysis was done.
            ModelError: a call failed, or an answer still failed its check after one
                correction.
        """
        if not case.steps:
            raise ValueError(f"episode {case.episode_id}: the failed run has no steps")
        try:
            if self.strategy == "all-at-once":
                return self._propose(case, None)
            return self._propose(case, self._search(case))
        except BudgetSpent:
            self.budget.refused.append(case.episode_id)
            raise

    # -- the strategies -------------------------------------------------------------------

    def _search(self, case: FailureCase) -> Finding | None:
        """Where the strategy puts the decisive error (``None``: step by step, no step)."""
        if self.strategy == "step-by-step":
            return first_decisive(len(case.steps), lambda at: self._ask_step(case, at))
        return bisect(len(case.steps), lambda *bounds: self._ask_half(case, *bounds))

    def _ask_step(self, case: FailureCase, position: int) -> StepVerdict:
        question = STEP_QUESTION.format(index=case.steps[position].index, total=len(case.steps))
        so_far = case.model_copy(update={"steps": case.steps[: position + 1]})
        prompt = self._prompt(so_far, STEP_SYSTEM_PROMPT, question, position)
        return self._verdict(case, STEP_SYSTEM_PROMPT, prompt, StepVerdict, STEP_PURPOSE)

    def _ask_half(self, case: FailureCase, low: int, middle: int, high: int) -> HalfVerdict:
        index = [step.index for step in case.steps]
        question = HALF_QUESTION.format(
            low=index[low], middle=index[middle], next=index[middle + 1], high=index[high]
        )
        prompt = self._prompt(case, HALF_SYSTEM_PROMPT, question, middle)
        return self._verdict(case, HALF_SYSTEM_PROMPT, prompt, HalfVerdict, HALF_PURPOSE)

    def _verdict(
        self,
        case: FailureCase,
        system: str,
        prompt: str,
        schema: type[VerdictT],
        purpose: str,
    ) -> VerdictT:
        return checked_answer(
            self._metered,  # the client, its calls counted into the budget
            [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            schema,
            purpose=purpose,
            check=verdict_problems,
            correction=lambda problems: VERDICT_CORRECTION.format(problems="; ".join(problems)),
            failure=f"episode {case.episode_id}: the model's verdict is still incomplete after "
            "a correction",
            episode_id=case.episode_id,
        )

    def _propose(self, case: FailureCase, finding: Finding | None) -> Proposal:
        """The proposal, asked with the whole run (and what a search found, if it ran)."""
        found = case.steps[finding.position] if finding is not None else None
        if self.strategy == "all-at-once":
            extra = ""
        elif found is None:
            extra = NO_FINDING
        else:
            extra = FINDING_TEMPLATE.format(
                strategy=self.strategy, index=found.index, reason=finding.reason.strip()
            )
        focus = finding.position if finding is not None else None
        prompt = self._prompt(case, SYSTEM_PROMPT, extra, focus)
        start = found.index if found is not None else None
        proposal = checked_answer(
            self._metered,  # the client, its calls counted into the budget
            [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            Proposal,
            purpose=PURPOSE,
            check=lambda proposal: check_proposal(proposal, case, start),
            correction=lambda problems: _correction(problems, case),
            failure=f"episode {case.episode_id}: the model's answer still does not fit the "
            "case after a correction",
            episode_id=case.episode_id,
        )
        if found is not None and found.agent and not proposal.agent:
            proposal = proposal.model_copy(update={"agent": found.agent})
        return proposal

    # -- fitting prompts to the context -----------------------------------------------------

    def _prompt(self, case: FailureCase, system: str, extra: str, focus: int | None) -> str:
        """The user message: the case fitted beside ``system`` and ``extra``, then ``extra``."""
        fixed = len(system) + len(extra)
        text_chars = self._text_chars(fixed)
        texts = sum(min(len(t), text_chars or len(t)) for t in (case.instruction, case.outcome))
        budget = self.max_steps_chars or STEPS_CHARS
        if self.context_tokens is not None:
            room = max(MIN_STEPS_CHARS, self._room(fixed + texts))
            budget = min(budget, room) if self.max_steps_chars else room
        text = render_case(case, budget, focus, text_chars=text_chars)
        return f"{text}\n\n{extra}" if extra else text

    def _reply_tokens(self) -> int:
        return self.client.max_tokens or REPLY_TOKENS

    def _room(self, fixed: int) -> int:
        """Characters left in the context beside ``fixed`` characters of prompt and the
        reply (only with a known context)."""
        assert self.context_tokens is not None
        tokens = self.context_tokens - self._reply_tokens()
        return tokens * CHARS_PER_TOKEN - fixed - FRAME_CHARS

    def _text_chars(self, fixed: int) -> int | None:
        """Most characters of the instruction and of the verdict (``None``: uncut)."""
        if self.context_tokens is None:
            return None
        return max(MIN_TEXT_CHARS, self._room(fixed) // TEXT_SHARE)


def check_proposal(proposal: Proposal, case: FailureCase, start: int | None = None) -> list[str]:
    """What is wrong with ``proposal``'s step indices for ``case`` (empty when nothing is);
    ``start``, when given, is the step its span must start at (where a search put the
    decisive error)."""
    failed = {step.index for step in case.steps}
    contrast = {step.index for step in case.contrast_steps}
    problems = []
    if start is not None and proposal.start != start:
        problems.append(f"start ({proposal.start}) must be {start}, the step the search found")
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


def render_case(
    case: FailureCase,
    max_steps_chars: int = STEPS_CHARS,
    focus: int | None = None,
    *,
    text_chars: int | None = None,
) -> str:
    """The user message describing ``case``: the step listings take at most
    ``max_steps_chars``, kept around position ``focus`` (default: where the runs first
    differ), the instruction and the verdict at most ``text_chars`` each (``None``: whole).
    What was cut is said after the listings."""
    if focus is None:
        focus = _first_difference(case)
    cuts: list[str] = []
    instruction = _clipped(case.instruction.strip(), text_chars, "the instruction", cuts)
    outcome = _clipped(case.outcome.strip(), text_chars, "the verdict", cuts)
    if case.contrast_steps:
        failed_text, contrast_text = _render_runs(case, max_steps_chars, focus)
        contrast = (
            REFERENCE_TEMPLATE.format(count=len(case.contrast_steps), steps=contrast_text)
            if case.contrast_reference
            else CONTRAST_TEMPLATE.format(
                task="same task" if case.contrast_same_task else "different task, same family",
                count=len(case.contrast_steps),
                steps=contrast_text,
            )
        )
    else:
        failed_text = render_steps(case.steps, max_steps_chars, focus)
        contrast = NO_CONTRAST
    cuts[:0] = _listing_cut("the failed run", case.steps, failed_text)
    if case.contrast_steps:
        cuts[1:1] = _listing_cut("the successful run", case.contrast_steps, contrast_text)
    return CASE_TEMPLATE.format(
        family=case.family or "unknown",
        instruction=instruction,
        outcome=outcome or "(no message)",
        failed_count=len(case.steps),
        failed_steps=failed_text,
        contrast=contrast,
        cut=CUT_TEMPLATE.format(parts="; ".join(cuts)) if cuts else "",
    )


# -- rendering ----------------------------------------------------------------------------

STEP_LINE = re.compile(r"\[\d+\] ")
"""How a listing's step line begins (a gap marker begins ``[...``)."""
WHOLE = 1 << 40
"""A step budget no listing reaches: every step on its whole line."""


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


def _listing_cut(name: str, steps: Sequence[CaseStep], listing: str) -> list[str]:
    """``["the failed run shows 40 of 200 steps (each gap marked), 3 of them shortened
    (ending in …)"]``, or nothing when the listing is whole."""
    whole = set(render_steps(steps, WHOLE).splitlines())
    shown = [line for line in listing.splitlines() if STEP_LINE.match(line)]
    shortened = sum(line not in whole for line in shown)
    if len(shown) == len(steps) and not shortened:
        return []
    said = f"{name} shows {len(shown)} of {len(steps)} steps"
    if len(shown) < len(steps):
        said += " (each gap marked)"
    if shortened:
        said += f", {shortened} of them shortened (ending in …)"
    return [said]


def _clipped(text: str, limit: int | None, name: str, cuts: list[str]) -> str:
    """``text`` cut to ``limit`` characters, the cut marked in it and said in ``cuts``."""
    if limit is None or len(text) <= limit:
        return text
    cuts.append(f"{name} is cut after {limit:,} of {len(text):,} characters")
    return f"{text[:limit]} {TEXT_CUT.format(count=len(text) - limit)}"


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
