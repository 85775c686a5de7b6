"""How a model looks for a failed run's decisive error, and how many calls it may spend.

Three strategies, those of the failure-attribution literature:

- ``all-at-once``: the whole run in one question, whose answer is the proposal itself;
- ``step-by-step``: one question per step, the run shown up to that step ("is this step the
  decisive error?"), asked in order until the first yes; then the proposal for that step;
- ``binary-search``: one question per halving ("is the decisive error in the upper or the
  lower half of steps a..b?") until one step is left; then the proposal for that step.

The searches here walk positions in a run and leave the asking to their caller
(:class:`~workbench.analyze.openai.OpenAIAnalyst`), so the walk is the same whatever is asked.
A :class:`Budget` caps the model calls of a whole analysis run: the :class:`MeteredClient`
every question goes through checks it before the question and counts what the question sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from store.records import LLMCall
from workbench.llm.client import ChatClient, Message, ModelError, ModelT

Strategy = Literal["all-at-once", "step-by-step", "binary-search"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)
DEFAULT_STRATEGY: Strategy = "all-at-once"

BUDGET_SPENT = "not analysed: the run's budget of model calls is spent"
"""What a failure refused for the budget is reported with (a later run continues it)."""


# -- what the searches ask --------------------------------------------------------------------


class StepVerdict(BaseModel):  # the docstrings are part of the answer's schema (and cache key)
    """A judgment of one step of a failed run, read up to and including that step."""

    model_config = ConfigDict(extra="forbid")

    decisive: bool
    """Whether this step is the decisive error: the earliest step after which the task could
    no longer succeed."""
    reason: str
    """Why, in one or two sentences citing what the step did and what it showed."""


class HalfVerdict(BaseModel):
    """Which half of a range of a failed run's steps holds its decisive error."""

    model_config = ConfigDict(extra="forbid")

    half: Literal["upper", "lower"]
    """``upper``: the first, earlier half of the range; ``lower``: the second, later half."""
    reason: str
    """Why, in one or two sentences citing steps of that half."""


def verdict_problems(verdict: StepVerdict | HalfVerdict) -> list[str]:
    """What is wrong with a verdict (empty when nothing is): it must say why."""
    return [] if verdict.reason.strip() else ["reason is empty: say why in a sentence or two"]


# -- the searches -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """Where a search put the decisive error."""

    position: int
    """Its position in the case's steps (not the stored step index)."""
    reason: str
    """The model's reason at the question that settled it."""
    questions: int
    """Questions the search asked."""


def first_decisive(count: int, ask: Callable[[int], StepVerdict]) -> Finding | None:
    """Step by step: ``ask`` about each position of ``count`` in order, until the first
    decisive one; ``None`` when none is."""
    for position in range(count):
        verdict = ask(position)
        if verdict.decisive:
            return Finding(position, verdict.reason, position + 1)
    return None


def bisect(count: int, ask: Callable[[int, int, int], HalfVerdict]) -> Finding:
    """Binary search over positions ``0..count-1``: ``ask(low, middle, high)`` whether the
    error is in ``low..middle`` (upper) or ``middle+1..high`` (lower), until one is left.

    Raises:
        ValueError: ``count`` is not positive.
    """
    if count < 1:
        raise ValueError("a search needs at least one step")
    low, high, questions = 0, count - 1, 0
    reason = "the run has a single step"
    while low < high:
        middle = (low + high) // 2
        verdict = ask(low, middle, high)
        questions += 1
        reason = verdict.reason
        low, high = (low, middle) if verdict.half == "upper" else (middle + 1, high)
    return Finding(low, reason, questions)


# -- the whole run's budget -------------------------------------------------------------------


class BudgetSpent(ModelError):
    """The run's budget of model calls is spent before a question: the failure it was for is
    not analysed (nothing is stored, so a later run asks again, cached answers free)."""


@dataclass
class Budget:
    """Model calls an analysis run may send, and what its questions have sent so far.

    It is checked before every request the analyst makes, a first ask or a correction turn;
    the client's own retries of a request once made (after a malformed reply or a transport
    error) finish, so a run can go past the limit by those. Answers from the cache cost
    nothing.
    """

    limit: int | None = None
    """Most calls sent to the endpoint (``None``: no limit)."""
    sent: int = 0
    """Calls that reached the endpoint (failed ones too)."""
    cached: int = 0
    """Questions answered from the cache."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refused: list[str] = field(default_factory=list)
    """Episodes left unanalysed because the budget was spent."""

    @property
    def spent(self) -> bool:
        """Whether no call is left."""
        return self.limit is not None and self.sent >= self.limit

    def check(self, purpose: str) -> None:
        """Raise :class:`BudgetSpent` when no call is left for a question of ``purpose``."""
        if self.spent:
            raise BudgetSpent(
                f"{purpose}: {BUDGET_SPENT} ({self.limit} sent; run again to continue)",
                purpose=purpose,
            )

    def count(self, calls: Sequence[LLMCall]) -> None:
        """Add the logged calls of one question."""
        for call in calls:
            if call.cached:
                self.cached += 1
                continue
            self.sent += 1
            self.prompt_tokens += call.prompt_tokens or 0
            self.completion_tokens += call.completion_tokens or 0

    def describe(self) -> str:
        """``12 model call(s) sent (of at most 20), 3 answered from the cache; 10,234 prompt
        + 1,203 completion tokens``."""
        limit = f" (of at most {self.limit:,})" if self.limit is not None else ""
        return (
            f"{self.sent:,} model call(s) sent{limit}, {self.cached:,} answered from the cache; "
            f"{self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens"
        )


class MeteredClient:
    """A :class:`ChatClient` whose every question is checked against, and counted into, a
    :class:`Budget` (what :func:`~workbench.llm.answers.checked_answer` is given)."""

    def __init__(self, client: ChatClient, budget: Budget) -> None:
        self.client = client
        self.budget = budget

    def parse(
        self,
        messages: Sequence[Message],
        response_model: type[ModelT],
        *,
        purpose: str,
        calls: list[LLMCall] | None = None,
        **options: Any,
    ) -> ModelT:
        """:meth:`ChatClient.parse`, once the budget allows a question.

        Raises:
            BudgetSpent: no call is left.
        """
        self.budget.check(purpose)
        made: list[LLMCall] = []
        try:
            return self.client.parse(
                messages, response_model, purpose=purpose, calls=made, **options
            )
        finally:
            self.budget.count(made)
            if calls is not None:
                calls.extend(made)

    def give_up(self, error: ModelError, calls: list[LLMCall] | None = None) -> ModelError:
        """:meth:`ChatClient.give_up`."""
        return self.client.give_up(error, calls)
