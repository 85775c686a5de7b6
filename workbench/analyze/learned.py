"""A step scorer learned from the causal spans people mark.

From a batch's failures that carry a person's causal span, every agent step becomes one
example: its feature vector (:func:`~workbench.analyze.scoring.case_features`) and whether it
is the step the person marked. A logistic regression (scikit-learn, balanced classes, a fixed
seed) learns how much each kind of evidence weighs *for these logs*; in a failure nobody
marked, the step it scores highest is the cause. :func:`cross_validated` says how well that
transfers before anyone trusts it: each fold's failures are scored by a scorer fitted on the
others only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.analyze.analyst import FailureCase
from workbench.analyze.scoring import (
    FEATURES,
    HEURISTIC_WEIGHTS,
    best_step,
    case_features,
    position_of,
    strength,
)
from workbench.llm.steps import CaseStep

LEARNED_FEATURES = (
    *FEATURES,
    "heuristic_pick",
    "heuristic_strength",
    "reply_numbers",
    "reply_after_read",
    "first_reply",
    "first_confirm",
    "first_change",
)
"""What the scorer weighs: the evidence of every step, and what the hand-set weights make of
it (so that with few labels it starts from the heuristic and learns where to part from it)."""
MIN_LABELLED = 4
"""Failures with a person's span needed before a scorer is fitted (fewer say nothing)."""
PENALTIES = (0.3, 1.0, 3.0, 10.0)
"""How strongly the weights may be held to the prior (squared distance); which one, is chosen
by cross-validation within the labels (:func:`_chosen_penalty`)."""
INNER_FOLDS = 3
"""Folds of that choice."""
DEFAULT_PENALTY = 1.0
"""The pull with too few labels to choose one (fewer than two folds of :data:`MIN_LABELLED`)."""
PRIOR_PICK = 3.0
"""The prior weight of the heuristic's pick (enough for it to win where nothing is learned)."""
SEED = 0
"""Seed of the regression's solver and of the folds' shuffle (recorded, so reruns agree)."""


class NotEnoughLabels(ValueError):
    """Too few labelled failures to fit a scorer."""


@dataclass(frozen=True)
class Labelled:
    """One failure with the step a person marked."""

    case: FailureCase
    rows: list[list[float]]
    target: int
    """Position in ``case.steps`` of the marked step."""


def learned_rows(case: FailureCase, benign: Callable[[CaseStep, str], bool]) -> list[list[float]]:
    """The scorer's rows of a case: each step's features, whether the heuristic picks it, and
    the heuristic's strength of evidence there (its weightiest feature, over 10)."""
    rows = case_features(case, benign)
    if not rows:
        return rows
    pick = best_step(rows, HEURISTIC_WEIGHTS)
    return [
        [*row, float(position == pick), strength(row, HEURISTIC_WEIGHTS) / 10, *extra]
        for position, (row, extra) in enumerate(zip(rows, _shapes(case, rows), strict=True))
    ]


_DIGITS = re.compile(r"\d")


def _shapes(case: FailureCase, rows: list[list[float]]) -> list[list[float]]:
    """Where each step stands among its kind: a reply with figures in it, a reply right after
    a read (presenting what was looked up), the run's first reply, first confirmation request
    and first state change."""
    at = {
        name: FEATURES.index(name) for name in ("reply", "effect_read", "confirm", "effect_change")
    }
    firsts = {
        name: next((p for p, row in enumerate(rows) if row[at[name]]), None)
        for name in ("reply", "confirm", "effect_change")
    }
    shapes = []
    for position, (step, row) in enumerate(zip(case.steps, rows, strict=True)):
        reply = bool(row[at["reply"]])
        shapes.append(
            [
                float(reply and bool(_DIGITS.search(step.action))),
                float(reply and position > 0 and bool(rows[position - 1][at["effect_read"]])),
                float(position == firsts["reply"]),
                float(position == firsts["confirm"]),
                float(position == firsts["effect_change"]),
            ]
        )
    return shapes


def labelled(
    case: FailureCase, start: int, benign: Callable[[CaseStep, str], bool]
) -> Labelled | None:
    """``case`` with its marked step ``start`` as a training example (``None`` when the
    case has no agent step)."""
    if not case.steps:
        return None
    return Labelled(case, learned_rows(case, benign), position_of(case.steps, start))


class StepScorer:
    """A conditional logit over each failure's steps, fitted on labelled failures.

    Within a failure the steps compete: the probability that step *i* is the cause is the
    softmax of ``w · x_i`` over the failure's steps, and ``w`` maximises the likelihood of the
    marked steps. The weights are pulled towards the heuristic (``PRIOR_PICK`` on its pick,
    nothing else) rather than towards zero, so with few labels the scorer picks what the
    heuristic picks and parts from it only where the labels keep disagreeing. How hard they
    are pulled is chosen among :data:`PENALTIES` by cross-validation within the labels it is
    given (the strongest pull among equals): it moves away from the heuristic only as far as
    its own held-out labels say that helps."""

    def __init__(self, examples: Sequence[Labelled], penalty: float | None = None) -> None:
        if len(examples) < MIN_LABELLED:
            raise NotEnoughLabels(
                f"{len(examples)} failure(s) with a person's causal span; a scorer needs at"
                f" least {MIN_LABELLED}"
            )
        if all(len(example.rows) < 2 for example in examples):
            raise NotEnoughLabels(
                "every labelled failure has a single agent step: nothing to tell apart"
            )
        self.penalty = _chosen_penalty(examples) if penalty is None else penalty
        self.w = _fitted(examples, self.penalty)
        self.labelled = len(examples)

    def pick(self, rows: Sequence[Sequence[float]]) -> int:
        """The position of the step the scorer rates likeliest to be the cause (the earliest
        among equals)."""
        scores = [sum(w * v for w, v in zip(self.w, row, strict=True)) for row in rows]
        return max(range(len(rows)), key=lambda i: (round(float(scores[i]), 9), -i))

    def weights(self) -> dict[str, float]:
        """What each feature weighs."""
        return dict(zip(LEARNED_FEATURES, (float(c) for c in self.w), strict=True))


def _fitted(examples: Sequence[Labelled], penalty: float) -> Any:
    """The weights of the conditional logit on ``examples`` held to the prior by ``penalty``."""
    import numpy as np
    from scipy.optimize import minimize

    runs = [(np.asarray(e.rows, dtype=float), e.target) for e in examples if len(e.rows) > 1]
    prior = np.zeros(len(LEARNED_FEATURES))
    prior[LEARNED_FEATURES.index("heuristic_pick")] = PRIOR_PICK

    def loss(w: Any) -> tuple[float, Any]:
        total = penalty * float((w - prior) @ (w - prior))
        grad = 2 * penalty * (w - prior)
        for x, target in runs:
            scores = x @ w
            scores = scores - scores.max()
            p = np.exp(scores)
            p /= p.sum()
            total -= float(np.log(p[target] + 1e-300))
            grad += x.T @ p - x[target]
        return total, grad

    return minimize(loss, prior, jac=True, method="L-BFGS-B").x


def _chosen_penalty(examples: Sequence[Labelled]) -> float:
    """The penalty of :data:`PENALTIES` whose scorers, fitted on all but one of
    :data:`INNER_FOLDS` folds of ``examples``, mark the held-out fold's steps best (the
    strongest among equals; :data:`DEFAULT_PENALTY` when there are too few labels to split)."""
    strongest = max(PENALTIES)
    folds = min(INNER_FOLDS, len(examples) // MIN_LABELLED)
    if folds < 2:
        return DEFAULT_PENALTY
    from sklearn.model_selection import KFold

    splits = list(KFold(n_splits=folds, shuffle=True, random_state=SEED).split(examples))
    best, best_hits = strongest, -1
    for penalty in sorted(PENALTIES, reverse=True):
        hits = 0
        for train, test in splits:
            scorer = StepScorer([examples[i] for i in train], penalty=penalty)
            hits += sum(scorer.pick(examples[i].rows) == examples[i].target for i in test)
        if hits > best_hits:
            best, best_hits = penalty, hits
    return best


def cross_validated(examples: Sequence[Labelled], folds: int) -> list[int]:
    """Each example's pick by a scorer fitted on the other folds only (in ``examples``'
    order). Raises :class:`NotEnoughLabels` when a fold's scorer would learn from fewer than
    :data:`MIN_LABELLED` failures."""
    from sklearn.model_selection import KFold

    needed = max(folds, minimum_for(folds))
    if len(examples) < needed:
        raise NotEnoughLabels(
            f"{len(examples)} failure(s) with a person's causal span; {folds}-fold"
            f" cross-validation needs at least {needed} (each fold's scorer learns from the"
            f" other folds' failures, at least {MIN_LABELLED})"
        )
    picks = [0] * len(examples)
    splitter = KFold(n_splits=folds, shuffle=True, random_state=SEED)
    for train, test in splitter.split(list(range(len(examples)))):
        scorer = StepScorer([examples[i] for i in train])
        for i in test:
            picks[i] = scorer.pick(examples[i].rows)
    return picks


def minimum_for(folds: int) -> int:
    """The fewest labelled failures with which every one of ``folds`` folds leaves at least
    :data:`MIN_LABELLED` to learn from (the largest fold holds ``ceil(n / folds)``)."""
    n = MIN_LABELLED
    while n - -(-n // folds) < MIN_LABELLED:
        n += 1
    return n
