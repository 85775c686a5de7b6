"""Where a failed episode went wrong: the earliest causal step, found without a model.

The offline analyzer combines two kinds of evidence:

- **error signals** in the failed run's observations — an action the environment did not
  understand, a closed door, a sharp negative reward. An error that successful runs of the
  same family also meet with the same (normalised) action is *benign*: those runs recovered
  from it, so it cannot be what made success unreachable;
- the **first divergence** from a successful run of the same task (see
  :mod:`workbench.compare`), when there is one: the success's action there is the change the
  failed run needed.

The earliest of the two is the causal step; with neither, the run's last step (it stopped or
ran out of steps while nothing visibly went wrong). This module never reads the scripted
agent's ``ground_truth`` metadata: that is what its accuracy is measured against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from store import Episode, EpisodeFilter, Store
from workbench.analyze.analyst import FailureCase
from workbench.compare import Alignment, align, contrast_for, normalize_action, shape
from workbench.envs.lexicon import PLAIN, Lexicon
from workbench.envs.registry import lexicon_of
from workbench.llm.steps import CaseStep

CRITICAL_REWARD = -50.0
"""A step reward at or below this is a critical failure (worlds that end a run on a fatal
action give −100)."""

Evidence = Literal["error", "divergence", "end"]


def error_signature(observation: str, lexicon: Lexicon | None = None) -> str | None:
    """The error an observation reports, normalised (``None`` when it reports none), as the
    episode's world reads it (``lexicon``; the plain text-adventure reading without one)."""
    return (lexicon or PLAIN).error(observation)


def benign_errors(
    store: Store, family: str, instructions: dict[str, str] | None = None
) -> set[tuple[str, str]]:
    """``(normalised action, error)`` pairs that successful runs of ``family`` met and survived
    (each error read by its own episode's world)."""
    instructions = {} if instructions is None else instructions
    seen: set[tuple[str, str]] = set()
    for episode in store.iter_episodes(EpisodeFilter(outcome="passed", family=family)):
        instruction = _instruction(store, episode, instructions)
        lexicon = lexicon_of(_environment(store, episode))
        for step in store.steps(episode.id):
            signature = error_signature(step.observation, lexicon) if step.action else None
            if signature is not None:
                seen.add((normalize_action(step.action, instruction), signature))
    return seen


def _instruction(store: Store, episode: Episode, cache: dict[str, str]) -> str:
    if episode.task_id not in cache:
        task = store.task(episode.task_id)
        cache[episode.task_id] = task.instruction if task else ""
    return cache[episode.task_id]


def _environment(store: Store, episode: Episode) -> str:
    """The environment an episode was played in (its task's; empty when unknown)."""
    task = store.task(episode.task_id)
    return task.environment if task else ""


def lexicon_for(case: FailureCase) -> Lexicon:
    """How the world of a failure case reads its actions and observations."""
    return lexicon_of(case.environment)


@dataclass(frozen=True)
class CausalFinding:
    """The earliest step that made an episode's success unreachable, and why we think so."""

    step: int
    """Stored index of the causal step (for a run that stopped early: the step it never took)."""
    evidence: Evidence
    """What located it: an error signal, the first divergence from a success, or the run's end."""
    failed_action: str
    """The failed run's action at the causal step (empty when it took none)."""
    observation: str
    """What the environment answered there (the error, if that is the evidence)."""
    change: str
    """The successful run's action at the divergence: what should have been done instead."""
    change_step: int | None
    """Stored index of that action in the successful run."""
    contrast_id: str | None
    """The successful episode compared with, if any."""
    same_task: bool
    """Whether that success is of the very same task (strong contrast) or only its family."""


def trigger_of(finding: CausalFinding, instruction: str, lexicon: Lexicon | None = None) -> str:
    """The observable condition at the causal step: the action's shape and what came back
    (both read through the episode world's ``lexicon``)."""
    if finding.evidence == "end":
        return "stopped | no error"
    signal = error_signature(finding.observation, lexicon) or (
        "critical" if finding.evidence == "error" else "no error"
    )
    action = (
        shape(finding.failed_action, instruction, lexicon) if finding.failed_action else "stopped"
    )
    return f"{action} | {signal}"


def build_case(store: Store, episode: Episode) -> FailureCase:
    """Everything an analyst may look at about one failed episode (read once, here)."""
    cache: dict[str, str] = {}
    contrast = contrast_for(store, episode)
    return FailureCase(
        episode_id=episode.id,
        environment=_environment(store, episode),
        family=episode.family,
        instruction=_instruction(store, episode, cache),
        outcome=f"{episode.outcome.message} (score {episode.outcome.score})".strip(),
        steps=_case_steps(store, episode),
        contrast_id=contrast.id if contrast else None,
        contrast_same_task=contrast is not None and contrast.task_id == episode.task_id,
        contrast_instruction=_instruction(store, contrast, cache) if contrast else "",
        contrast_steps=_case_steps(store, contrast) if contrast else [],
    )


def _case_steps(store: Store, episode: Episode) -> list[CaseStep]:
    return [
        CaseStep(index=s.index, action=s.action, observation=s.observation, reward=s.reward)
        for s in store.steps(episode.id)
        if s.action
    ]


def find_cause(
    store: Store, episode: Episode, benign: set[tuple[str, str]] | None = None
) -> CausalFinding:
    """Locate the earliest causal step of a failed episode stored in ``store``.

    Args:
        store: where the episode, its task and its contrasts are.
        episode: a failed episode.
        benign: errors successes of its family survive (computed when not given; pass it when
            analysing many episodes of one family).
    """
    benign = benign_errors(store, episode.family) if benign is None else benign
    return locate(build_case(store, episode), benign)


def locate(case: FailureCase, benign: set[tuple[str, str]]) -> CausalFinding:
    """Locate the earliest causal step from a failure case alone (no further reads)."""
    steps = case.steps
    last = steps[-1].index if steps else 0
    lexicon = lexicon_for(case)
    error = next((s.index for s in steps if _harmful(s, case.instruction, benign, lexicon)), None)
    success_actions = [(s.index, s.action) for s in case.contrast_steps]
    alignment = None
    if case.contrast_id is not None:
        alignment = align(
            [(s.index, s.action) for s in steps],
            success_actions,
            normalize=(
                lambda action: normalize_action(action, case.instruction),
                lambda action: normalize_action(action, case.contrast_instruction),
            ),
        )
    divergence = None
    if alignment is not None and case.contrast_same_task and (first := alignment.first_divergence):
        divergence = first.failed_step if first.failed_step is not None else last + 1
    if error is not None and (divergence is None or error <= divergence):
        step, evidence = error, "error"
    elif divergence is not None:
        step, evidence = divergence, "divergence"
    else:
        step, evidence = last, "end"
    at = next((s for s in steps if s.index == step), None)
    change_step = _counterpart(alignment, success_actions, step) if alignment is not None else None
    return CausalFinding(
        step=step,
        evidence=evidence,
        failed_action=at.action if at else "",
        observation=at.observation if at else "",
        change=dict(success_actions).get(change_step, "") if change_step is not None else "",
        change_step=change_step,
        contrast_id=case.contrast_id,
        same_task=case.contrast_same_task,
    )


def _counterpart(
    alignment: Alignment, success_actions: list[tuple[int, str]], step: int
) -> int | None:
    """The successful run's step that stands for what the failed run should have done at
    ``step``: the first success action it skipped just before, else the one aligned with it
    (for a step the failed run never took: the success's next step after their common part)."""
    skipped: list[int] = []
    after = None
    for pair in alignment.pairs:
        if pair.failed == step:
            return skipped[0] if skipped else pair.success
        if pair.op == "delete" and pair.success is not None:
            skipped.append(pair.success)
        else:
            skipped = []
        if pair.failed is not None and pair.failed < step and pair.success is not None:
            after = pair.success
    following = [index for index, _ in success_actions if after is None or index > after]
    return following[0] if following else None


def is_critical(step: CaseStep) -> bool:
    """Whether a step's reward marks a critical failure (an irreversible wrong commitment)."""
    return step.reward is not None and step.reward <= CRITICAL_REWARD


def _harmful(
    step: CaseStep, instruction: str, benign: set[tuple[str, str]], lexicon: Lexicon
) -> bool:
    if is_critical(step):
        return True
    signature = error_signature(step.observation, lexicon)
    return (
        signature is not None
        and (normalize_action(step.action, instruction), signature) not in benign
    )
