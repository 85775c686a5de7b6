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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.analyze.analyst import FailureCase
from workbench.analyze.scoring import FEATURES, case_features
from workbench.llm.steps import CaseStep

MIN_LABELLED = 4
"""Failures with a person's span needed before a scorer is fitted (fewer say nothing)."""
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


def position_of(steps: Sequence[CaseStep], index: int) -> int:
    """The position in ``steps`` (agent steps) of stored step ``index``: the step itself, or
    the agent step it followed (a span may start on a tool's result or a user's message)."""
    before = [p for p, s in enumerate(steps) if s.index <= index]
    return before[-1] if before else 0


def labelled(
    case: FailureCase, start: int, benign: Callable[[CaseStep, str], bool]
) -> Labelled | None:
    """``case`` with its marked step ``start`` as a training example (``None`` when the
    case has no agent step)."""
    if not case.steps:
        return None
    return Labelled(case, case_features(case, benign), position_of(case.steps, start))


class StepScorer:
    """A logistic regression over step features, fitted on labelled failures."""

    def __init__(self, examples: Sequence[Labelled]) -> None:
        if len(examples) < MIN_LABELLED:
            raise NotEnoughLabels(
                f"{len(examples)} failure(s) with a person's causal span; a scorer needs at"
                f" least {MIN_LABELLED}"
            )
        from sklearn.linear_model import LogisticRegression

        x = [row for example in examples for row in example.rows]
        y = [
            int(position == example.target)
            for example in examples
            for position in range(len(example.rows))
        ]
        if len(set(y)) < 2:
            raise NotEnoughLabels(
                "every labelled failure has a single agent step: nothing to tell apart"
            )
        self.model = LogisticRegression(
            class_weight="balanced", C=1.0, max_iter=2000, random_state=SEED
        )
        self.model.fit(x, y)
        self.labelled = len(examples)

    def pick(self, rows: Sequence[Sequence[float]]) -> int:
        """The position of the step the scorer rates likeliest to be the cause (the earliest
        among equals)."""
        scores = self.model.decision_function([list(r) for r in rows])
        return max(range(len(rows)), key=lambda i: (round(float(scores[i]), 9), -i))

    def weights(self) -> dict[str, float]:
        """What each feature weighs (the regression's coefficients)."""
        return dict(zip(FEATURES, (float(c) for c in self.model.coef_[0]), strict=True))


def cross_validated(examples: Sequence[Labelled], folds: int) -> list[int]:
    """Each example's pick by a scorer fitted on the other folds only (in ``examples``'
    order). ``folds`` is capped at the number of examples."""
    from sklearn.model_selection import KFold

    if len(examples) < max(2, folds):
        raise NotEnoughLabels(
            f"{len(examples)} failure(s) with a person's causal span; {folds}-fold"
            f" cross-validation needs at least {max(2, folds)}"
        )
    picks = [0] * len(examples)
    splitter = KFold(n_splits=folds, shuffle=True, random_state=SEED)
    for train, test in splitter.split(list(range(len(examples)))):
        scorer = StepScorer([examples[i] for i in train])
        for i in test:
            picks[i] = scorer.pick(examples[i].rows)
    return picks
