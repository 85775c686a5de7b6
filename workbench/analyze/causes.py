"""Where a failed episode went wrong: the earliest causal step, found without a model.

The offline analyzer combines two kinds of evidence:

- **error signals** in the failed run's observations — an action the environment did not
  understand, a closed door, a sharp negative reward. An error that successful runs of the
  same family also meet with the same (normalised) action is *benign*: those runs recovered
  from it, so it cannot be what made success unreachable;
- the **first divergence** from a successful run of the same task (see
  :mod:`workbench.compare`), when there is one: the success's action there is the change the
  failed run needed.

Without a success of the same task, the task's reference (its expected actions, stored by
importers as ``Task.metadata["reference_actions"]``) stands in for one: the first deviation
from it is the divergence. The earliest of the two is the causal step; with neither, the run's
last step (it stopped or ran out of steps while nothing visibly went wrong).

Every step the agent took may be causal: an action, a tool call (read with the result that
answered it), or a text reply (an assistant message without a tool call, e.g. a refusal or a
wrong confirmation). Errors are read world-agnostically (:mod:`workbench.analyze.signals`)
and by the episode world's lexicon. This module never reads the scripted
agent's ``ground_truth`` metadata: that is what its accuracy is measured against.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from store import Episode, EpisodeFilter, Step, Store, Task
from workbench.analyze.analyst import FailureCase
from workbench.analyze.families import episodes_of, family_of
from workbench.analyze.reading import error_of, read_steps
from workbench.analyze.scoring import (
    HEURISTIC_WEIGHTS,
    best_step,
    case_features,
    check_script,
    top_feature,
)
from workbench.analyze.signals import CRITICAL_REWARD, TOOL_ERROR, generic_error, refusal
from workbench.compare import (
    REPLY,
    Alignment,
    align,
    contrast_of_family,
    contrast_of_task,
    is_reply,
    normalize_action,
    reply_action,
    reply_text,
    shape,
    tool_call,
)
from workbench.envs.lexicon import PHRASE_FREE, PLAIN, Lexicon
from workbench.envs.registry import world_lexicon
from workbench.llm.steps import CaseStep

Evidence = Literal["error", "divergence", "decision", "end"]
REFERENCE_KEY = "reference_actions"
"""Key of a task's metadata holding its expected actions (a list of action strings, shaped
like stored step actions), when its log gave them."""


def error_signature(observation: str, lexicon: Lexicon | None = None) -> str | None:
    """The error an observation reports, normalised (``None`` when it reports none), as the
    episode's world reads it (``lexicon``; the plain text-adventure reading without one),
    else as any tool log reports one (:func:`~workbench.analyze.signals.generic_error`)."""
    return (lexicon or PLAIN).error(observation) or generic_error(observation)


def step_signal(action: str, observation: str, lexicon: Lexicon | None = None) -> str | None:
    """The error signal of one agent step: what came back reports an error, or the step is
    a text reply that refuses or gives up."""
    if is_reply(action):
        return refusal(reply_text(action))
    if lexicon is PHRASE_FREE:  # an imported log: what any log's answer says
        return error_of(action, observation)
    return error_signature(observation, lexicon)


def error_key(action: str, instruction: str) -> str:
    """How an erring action is compared across a family's episodes: a tool call by its
    structure (its literal values differ from task to task), any other action normalised."""
    return (
        shape(action, instruction) if tool_call(action) else normalize_action(action, instruction)
    )


def benign_errors(store: Store, family: str) -> set[tuple[str, str]]:
    """``(normalised action, error)`` pairs that successful runs of ``family`` met and survived
    (each error read by its own episode's world)."""
    tasks: dict[str, Task | None] = {}
    seen: set[tuple[str, str]] = set()
    for episode in episodes_of(store, family, EpisodeFilter(outcome="passed")):
        task = _task_of(store, episode, tasks)
        instruction = task.instruction if task else ""
        lexicon = world_lexicon(task.environment if task else "")
        for step in agent_steps(store.steps(episode.id), instruction):
            signature = step_signal(step.action, step.observation, lexicon)
            if signature is not None:
                seen.add((error_key(step.action, instruction), signature))
    return seen


_MODE = re.compile(r"\s*\([^()]*\)\s*$")


def speaker(agent: str) -> str:
    """The agent a step's speaker names, without the mode a log appends to it
    (Magentic-One's ``Orchestrator (thought)``, ``Orchestrator (-> Coder)``): who took the
    step is the orchestrator in each."""
    return _MODE.sub("", agent) or agent


def agent_steps(steps: list[Step], instruction: str = "") -> list[Step]:
    """The steps where an agent acted, each as one decision: actions; tool calls, each
    with the observation of the result that answered it (flagged when its log marks it an
    error); and text replies (as :func:`~workbench.compare.reply_action`) — an assistant's
    message, or in a log of several agents any named agent's message but the one that
    only states the task. A reply's observation is what the user (or the log's unnamed
    parties) said next, before the next agent step."""
    results = {s.tool_call_id: s for s in steps if s.kind == "tool_result" and s.tool_call_id}
    task = set(_WORDS.findall(instruction.lower()))
    decided: list[Step] = []
    stated = not task  # whether the message that states the task has been passed
    for position, step in enumerate(steps):
        if not stated and step.kind == "message" and step.role != "system" and step.content.strip():
            stated = True
            if _states(step.content, task):
                continue  # the task as posed (a proxy's or an admin's opening message)
        if step.kind == "tool_call" and step.action:
            result = results.get(step.tool_call_id) or _next_result(steps, position)
            observation = _result_text(result) if result else step.observation
            decided.append(step.model_copy(update={"observation": observation}))
        elif step.action.strip():
            decided.append(step)
        elif _is_agent_message(step):
            answer = step.observation or _answer_to(steps, position)
            decided.append(
                step.model_copy(
                    update={"action": reply_action(step.content), "observation": answer}
                )
            )
    return decided


_WORDS = re.compile(r"[a-z0-9]+")
STATES_TASK = 0.5
"""Share of the instruction's words a run's first message must hold to be the task as
posed (a proxy wraps it in its own words; a log may reformat its figures)."""


def _states(text: str, task: set[str]) -> bool:
    """Whether a message states the task: it holds most of the instruction's words."""
    return len(task & set(_WORDS.findall(text.lower()))) >= STATES_TASK * len(task)


def _is_agent_message(step: Step) -> bool:
    if step.kind != "message" or not step.content.strip():
        return False
    if step.role == "assistant":
        return True
    return bool(step.agent) and step.role != "system"


def _answer_to(steps: list[Step], position: int) -> str:
    """What unnamed parties (the user, the environment) said after the agent's message at
    ``position``, up to the next agent step."""
    said = []
    for step in steps[position + 1 :]:
        if step.kind != "message" or step.role == "assistant" or step.agent:
            break
        if step.role != "system" and step.content.strip():
            said.append(step.content)
    return "\n".join(said)


def _next_result(steps: list[Step], position: int) -> Step | None:
    """The first tool result after ``position`` before the agent's next call or message."""
    for step in steps[position + 1 :]:
        if step.kind == "tool_result":
            return step
        if step.role == "assistant":
            return None
    return None


def _result_text(result: Step) -> str:
    raw = result.raw if isinstance(result.raw, dict) else {}
    flagged = raw.get("is_error") is True or raw.get("isError") is True
    return (TOOL_ERROR if flagged else "") + result.observation


def _task_of(store: Store, episode: Episode, cache: dict[str, Task | None]) -> Task | None:
    """The episode's task, read once per task id (episodes of one task share it)."""
    if episode.task_id not in cache:
        cache[episode.task_id] = store.task(episode.task_id)
    return cache[episode.task_id]


def lexicon_for(case: FailureCase) -> Lexicon:
    """How the world of a failure case reads its actions and observations (an imported log:
    with no world's phrases, see :func:`~workbench.envs.registry.world_lexicon`)."""
    return world_lexicon(case.environment)


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
    reference: bool = False
    """Whether the contrast is the task's reference (its expected actions), not an episode."""
    agent: str = ""
    """The agent that took the causal step, in a log of several agents."""
    signal: str = ""
    """For an imported log: the evidence that weighed most at the step (a feature of
    :mod:`workbench.analyze.scoring`, e.g. ``refusal`` or ``blamed_for_error``)."""


def trigger_of(finding: CausalFinding, instruction: str, lexicon: Lexicon | None = None) -> str:
    """The observable condition at the causal step: the action's shape and what came back
    (both read through the episode world's ``lexicon``)."""
    if finding.evidence == "end" and not finding.failed_action:
        return "stopped | no error"
    if finding.signal:
        action = (
            REPLY
            if is_reply(finding.failed_action)
            else shape(finding.failed_action, instruction, lexicon) or "stopped"
        )
        said = step_signal(finding.failed_action, finding.observation, lexicon)
        if finding.signal != "own_error" or said is None:
            said = TRIGGER_WORDS.get(finding.signal, finding.signal.replace("_", " "))
        return f"{action} | {said}"
    if finding.evidence == "end":
        return "stopped | no error"
    signal = step_signal(finding.failed_action, finding.observation, lexicon) or (
        "critical" if finding.evidence == "error" else "no error"
    )
    action = (
        shape(finding.failed_action, instruction, lexicon) if finding.failed_action else "stopped"
    )
    return f"{action} | {signal}"


def build_case(store: Store, episode: Episode) -> FailureCase:
    """Everything an analyst may look at about one failed episode (read once, here)."""
    task = store.task(episode.task_id)
    instruction = task.instruction if task else ""
    base = FailureCase(
        episode_id=episode.id,
        environment=task.environment if task else "",
        family=family_of(store, episode),
        instruction=instruction,
        outcome=f"{episode.outcome.message} (score {episode.outcome.score})".strip(),
        score=episode.outcome.score,
        steps=_with_fatal_end(_case_steps(store, episode, instruction), episode.outcome.score),
        expected_outputs=expected_outputs(task),
    )
    contrast = contrast_of_task(store, episode)
    reference = reference_actions(task)
    if contrast is None and reference:
        return base.model_copy(
            update={
                "contrast_reference": True,
                "contrast_same_task": True,
                "contrast_instruction": instruction,
                "contrast_steps": [CaseStep(index=k, action=a) for k, a in enumerate(reference)],
            }
        )
    contrast = contrast or contrast_of_family(store, episode)
    if contrast is None:
        return base
    other = _instruction_of(store, contrast)
    return base.model_copy(
        update={
            "contrast_id": contrast.id,
            "contrast_same_task": contrast.task_id == episode.task_id,
            "contrast_instruction": other,
            "contrast_steps": _case_steps(store, contrast, other),
        }
    )


def _instruction_of(store: Store, episode: Episode) -> str:
    task = store.task(episode.task_id)
    return task.instruction if task else ""


OUTPUTS_KEY = "expected_outputs"
"""Key of a task's metadata holding what the agent's replies had to say, when its log gave it."""


def expected_outputs(task: Task | None) -> list[str]:
    """What a task's replies had to say (empty when its log gave nothing)."""
    found = task.metadata.get(OUTPUTS_KEY) if task else None
    return [str(o) for o in found if str(o).strip()] if isinstance(found, list) else []


def reference_actions(task: Task | None) -> list[str]:
    """The expected actions a task carries (empty when its log gave none)."""
    found = task.metadata.get(REFERENCE_KEY) if task else None
    if not isinstance(found, list):
        return []
    return [a if isinstance(a, str) else str(a) for a in found if a]


def _case_steps(store: Store, episode: Episode, instruction: str) -> list[CaseStep]:
    return [
        CaseStep(
            index=s.index,
            action=s.action,
            observation=s.observation,
            reward=s.reward,
            agent=speaker(s.agent),
        )
        for s in agent_steps(store.steps(episode.id), instruction)
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
    benign = benign_errors(store, family_of(store, episode)) if benign is None else benign
    return locate(build_case(store, episode), benign)


def locate(case: FailureCase, benign: set[tuple[str, str]]) -> CausalFinding:
    """Locate the earliest causal step from a failure case alone (no further reads): in an
    episode of an installed world by its errors and its divergence from a success; in an
    imported log by the evidence any log offers (:func:`locate_in_log`)."""
    lexicon = lexicon_for(case)
    if lexicon is PHRASE_FREE:
        return locate_in_log(case, benign)
    steps = case.steps
    last = steps[-1].index if steps else 0
    steps = _with_fatal_end(steps, case.score)
    error = next((s.index for s in steps if _harmful(s, case.instruction, benign, lexicon)), None)
    success_actions, alignment = _aligned(case, steps)
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
        reference=case.contrast_reference,
    )


_EVIDENCE: dict[str, Evidence] = {
    "critical": "error",
    "own_error": "error",
    "blamed_for_error": "error",
    "change_deviation": "divergence",
    "later_deviation": "divergence",
    "missing_change_here": "divergence",
}
"""What kind of evidence each feature of an imported log's step is (any other: a decision)."""


def locate_in_log(
    case: FailureCase,
    benign: set[tuple[str, str]],
    weights: dict[str, float] | None = None,
    at: int | None = None,
) -> CausalFinding:
    """The causal step of an imported log: the agent step the evidence any log offers
    weighs most (:mod:`workbench.analyze.scoring`, hand-set ``weights`` by default), or the
    step at position ``at`` of ``case.steps`` (a person's or a learned scorer's choice),
    explained by the same evidence."""
    if not case.steps:
        return CausalFinding(0, "end", "", "", "", None, case.contrast_id, False)
    weights = weights or HEURISTIC_WEIGHTS
    rows = case_features(case, benign_check(case, benign))
    position = best_step(rows, weights) if at is None else at
    step = case.steps[position]
    signal = top_feature(rows[position], HEURISTIC_WEIGHTS)
    script = check_script(case, read_steps(case.steps)) if signal in _DIVERGING else None
    change, change_step = (script.expected if script else ""), None
    if not change and not case.contrast_reference and not is_reply(step.action):
        # what a success of the task or family did there (the correction clusters group by)
        success_actions, alignment = _aligned(case, case.steps)
        if alignment is not None:
            change_step = _counterpart(alignment, success_actions, step.index)
            change = dict(success_actions).get(change_step, "") if change_step is not None else ""
    evidence: Evidence = _EVIDENCE.get(signal, "decision") if signal else "end"
    if at is not None and not signal:
        evidence = "decision"  # chosen by a person or a scorer: a decision, not the run's end
    return CausalFinding(
        step=step.index,
        evidence=evidence,
        failed_action=step.action,
        observation=step.observation,
        change=change,
        change_step=change_step,
        contrast_id=case.contrast_id,
        same_task=case.contrast_same_task,
        reference=case.contrast_reference,
        agent=step.agent,
        signal=signal,
    )


TRIGGER_WORDS = {
    "blamed_for_error": "caused a later error",
    "change_deviation": "unexpected change",
    "later_deviation": "unexpected change",
    "missing_change_here": "change never made",
    "pushback_after": "pushed back",
    "unbacked_claim": "claim without a change",
    "answer_source": "answer stated",
}
"""How a trigger names the evidence at an imported log's causal step (others: the
feature's name in words)."""

_DIVERGING = frozenset(k for k, v in _EVIDENCE.items() if v == "divergence")


def benign_check(
    case: FailureCase, benign: set[tuple[str, str]]
) -> Callable[[CaseStep, str], bool]:
    """Whether an error a step of ``case`` met is one successes of its family survive."""
    return lambda step, error: (error_key(step.action, case.instruction), error) in benign


def _aligned(
    case: FailureCase, steps: list[CaseStep]
) -> tuple[list[tuple[int, str]], Alignment | None]:
    """The contrast's actions (text replies left out) and the failed run's alignment with
    them (``None`` without a contrast)."""
    success_actions = [(s.index, s.action) for s in case.contrast_steps if not is_reply(s.action)]
    if case.contrast_id is None and not case.contrast_reference:
        return success_actions, None
    alignment = align(
        [(s.index, s.action) for s in steps if not is_reply(s.action)],
        success_actions,
        normalize=(
            lambda action: normalize_action(action, case.instruction),
            lambda action: normalize_action(action, case.contrast_instruction),
        ),
    )
    return success_actions, alignment


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


def _with_fatal_end(steps: list[CaseStep], score: float | None) -> list[CaseStep]:
    """``steps`` with the run's critical final score on its last step, when its log records
    no step rewards (a run that ended at a fatal score ended on a fatal step)."""
    if not steps or score is None or score > CRITICAL_REWARD:
        return steps
    if any(s.reward is not None for s in steps):
        return steps
    return [*steps[:-1], steps[-1].model_copy(update={"reward": score})]


def is_critical(step: CaseStep) -> bool:
    """Whether a step's reward marks a critical failure (an irreversible wrong commitment)."""
    return step.reward is not None and step.reward <= CRITICAL_REWARD


def _harmful(
    step: CaseStep, instruction: str, benign: set[tuple[str, str]], lexicon: Lexicon
) -> bool:
    if is_critical(step):
        return True
    signature = step_signal(step.action, step.observation, lexicon)
    return signature is not None and (error_key(step.action, instruction), signature) not in benign
