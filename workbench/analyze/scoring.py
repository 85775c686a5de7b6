"""Which step of an imported log is the cause: every agent step scored on evidence any log has.

Each agent step of a failure case gets a vector of features (:data:`FEATURES`), read by
:mod:`workbench.analyze.reading` and from the case's contrast:

- **the partial script**: the task's expected actions (or a success of the same task) are
  compared on every step that is not a read or a reply, arguments included; reads the
  reference does not list are allowed. The first extra or wrongly-argued change is a
  deviation (traced to the reply that proposed it when the user agreed to it); a change the
  reference has and the run never made is due at the first decision the run took instead (a
  refusal, a transfer, a claim, a final answer) or at its end;
- **errors**, those a later step of the same kind got past left out (recovered), and the
  blame **traced back**: a run's error is charged to the last edit of what the run had
  looked at, an executor's printout to the agent whose code it executed;
- the agent's **text decisions** (refusal, transfer, a change claimed with no call behind
  it, a final answer), the **push-back** that followed a step, and a reply that stated a
  figure in place of an **expected output** the task names and no reply said;
- the final answer **traced back** to the first step that stated it (the claim later steps
  relied on);
- where the run's **approach** was set (an agent's first turn, or its last restart) and its
  first edit of what it had read;
- position (first or last agent step) and whether the step only relays another agent's
  output (never preferred).

The offline analyst weighs them by hand (:data:`HEURISTIC_WEIGHTS`); the scorer learned from
people's spans (:mod:`workbench.analyze.learned`) fits weights to the same vectors. Each is
found in one pass or two over the run, so a long run costs no more than its length.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.analyze.analyst import FailureCase
from workbench.analyze.reading import StepReading, agrees, effect_of, name_words, read_steps
from workbench.analyze.signals import CRITICAL_REWARD, generic_error
from workbench.compare import is_reply, reply_text, tool_call
from workbench.llm.steps import CaseStep

FEATURES = (
    "critical",
    "change_deviation",
    "proposed_deviation",
    "later_deviation",
    "missing_change_here",
    "own_error",
    "recovered_error",
    "blamed_for_error",
    "pushback_after",
    "refusal",
    "transfer",
    "unbacked_claim",
    "claim",
    "confirm",
    "answer",
    "answer_source",
    "question",
    "effect_change",
    "effect_read",
    "effect_run",
    "reply",
    "code",
    "relay",
    "first",
    "last",
    "position",
    "agent_first_turn",
    "first_edit",
    "approach",
    "misstated_output",
)
"""What each step is scored on (all in [0, 1])."""

HEURISTIC_WEIGHTS: dict[str, float] = {
    "critical": 10.0,
    "proposed_deviation": 5.5,
    "change_deviation": 5.0,
    "missing_change_here": 4.0,
    "blamed_for_error": 4.0,
    "own_error": 3.0,
    "pushback_after": 2.0,
    "misstated_output": 3.5,
    "refusal": 2.0,
    "transfer": 2.0,
    "unbacked_claim": 2.0,
    "answer_source": 1.5,
    "later_deviation": 0.5,
    "claim": 0.5,
    "code": 0.25,
    "first_edit": 1.0,
    "first": 0.2,
    "approach": 1.6,
    "last": 0.3,
    "relay": -10.0,
}
"""How much each feature weighs for the offline analyst (the highest score wins; ties go to
the earlier step). Set by reading failures, not fitted to any labelled set."""


@dataclass(frozen=True)
class ScriptCheck:
    """What the partial script says about the run (empty when there is none)."""

    deviation: int | None = None
    """The first state change the reference does not have, or has with other arguments."""
    expected: str = ""
    """The reference's change at the deviation (or the missing one), if any."""
    later: frozenset[int] = frozenset()
    missing_at: int | None = None
    """Where a state change the reference has and the run never made was due."""


def case_features(case: FailureCase, benign: Callable[[CaseStep, str], bool]) -> list[list[float]]:
    """One feature vector (in :data:`FEATURES` order) per step of ``case.steps``.

    Args:
        case: the failure.
        benign: whether an error a step met is one successes of its family survive
            (``benign(step, error)``).
    """
    steps = case.steps
    readings = read_steps(steps)
    script = check_script(case, readings)
    recovered = _recovered(steps, readings)
    edits = sorted(_edits_of_seen(steps, readings))
    blamed = _blame_traced(steps, readings, benign, recovered, edits)
    proposed = _proposal_of(steps, readings, script.deviation)
    edit = edits[0] if edits else None
    approach = _approach(readings)
    first_actor = _first_actor(readings)
    first_change = next((p for p, r in enumerate(readings) if r.effect == "change"), None)
    misstated = _misstated_output(case, readings)
    source = _answer_source(steps, readings)
    seen_agents: set[str] = set()
    rows = []
    n = len(steps)
    for position, (step, reading) in enumerate(zip(steps, readings, strict=True)):
        first_turn = bool(reading.agent) and reading.agent not in seen_agents
        seen_agents.add(reading.agent)
        error = reading.error is not None and not benign(step, reading.error)
        values = {
            "critical": step.reward is not None and step.reward <= CRITICAL_REWARD,
            "change_deviation": script.deviation == step.index,
            "proposed_deviation": position == proposed,
            "later_deviation": step.index in script.later,
            "missing_change_here": script.missing_at == step.index,
            "own_error": error and position not in recovered and reading.effect != "run",
            "recovered_error": error and position in recovered,
            "blamed_for_error": position in blamed,
            "pushback_after": reading.pushback,
            "refusal": reading.decision == "refusal" and not reading.code,
            "transfer": reading.decision == "transfer" or _is_transfer_call(step.action),
            "unbacked_claim": reading.decision == "claim"
            and not (first_change is not None and first_change < position),
            "claim": reading.decision == "claim",
            "confirm": reading.decision == "confirm",
            "answer": reading.decision == "answer",
            "answer_source": position == source,
            "question": reading.decision == "question",
            "effect_change": reading.effect == "change",
            "effect_read": reading.effect == "read",
            "effect_run": reading.effect == "run",
            "reply": reading.effect == "reply",
            "code": reading.code,
            "relay": reading.relay,
            "first": position == first_actor,
            "last": position == n - 1,
            "position": position / max(1, n - 1),
            "agent_first_turn": first_turn,
            "first_edit": position == edit,
            "approach": position == approach,
            "misstated_output": position == misstated,
        }
        rows.append([float(values[name]) for name in FEATURES])
    return rows


def position_of(steps: Sequence[CaseStep], index: int) -> int:
    """The position in ``steps`` (agent steps) of stored step ``index``: the step itself, or
    the agent step it followed (a span may start on a tool's result or a user's message)."""
    before = [p for p, s in enumerate(steps) if s.index <= index]
    return before[-1] if before else 0


def agent_at(steps: Sequence[CaseStep], index: int) -> str:
    """The agent of the agent step at or before stored step ``index`` (:func:`position_of`)."""
    return steps[position_of(steps, index)].agent if steps else ""


def _weighed(row: Sequence[float], weights: dict[str, float]) -> list[float]:
    """Each feature of a row times its weight (in :data:`FEATURES` order)."""
    return [weights.get(n, 0.0) * v for n, v in zip(FEATURES, row, strict=False)]


def strength(row: Sequence[float], weights: dict[str, float]) -> float:
    """The weight of a row's weightiest feature (0 when none weighs anything)."""
    return max(_weighed(row, weights), default=0.0)


def best_step(rows: Sequence[Sequence[float]], weights: dict[str, float]) -> int:
    """The position of the row with the strongest evidence: a row with a negative feature (a
    relay) only when every row has one; then its weightiest feature decides, the sum of the
    others breaks ties, then the earlier step (several weak hints at a late step do not
    outweigh one strong sign earlier)."""

    def key(i: int) -> tuple[float, float, float, int]:
        weighed = _weighed(rows[i], weights)
        veto = min(0.0, *weighed)  # a step marked against (a relay) is never preferred
        return (veto, max(weighed, default=0.0), sum(weighed), -i)

    return max(range(len(rows)), key=key)


def top_feature(row: Sequence[float], weights: dict[str, float]) -> str:
    """The feature that weighs most in a row's score (``""`` when none weighs anything)."""
    scored = [(weights.get(n, 0.0) * v, n) for n, v in zip(FEATURES, row, strict=True) if v]
    best = max(scored, default=(0.0, ""))
    return best[1] if best[0] > 0 else ""


def check_script(case: FailureCase, readings: Sequence[StepReading]) -> ScriptCheck:
    """The run's state changes against its reference (or a same-task success), as a partial
    script: unlisted reads allowed, state changes and their arguments compared."""
    if not (case.contrast_reference or (case.contrast_id and case.contrast_same_task)):
        return ScriptCheck()
    expected = [s.action for s in case.contrast_steps if _scripted(effect_of(s.action))]
    if not expected:
        return ScriptCheck()
    left = [_call_key(a) for a in expected]
    deviation, at_deviation, later = None, "", set()
    matched_last = -1
    for position, (step, reading) in enumerate(zip(case.steps, readings, strict=True)):
        if not _scripted(reading.effect):
            continue
        key = _call_key(step.action)
        if key in left:
            left.remove(key)
            matched_last = position
            continue
        if deviation is None:
            deviation = step.index
            name = key.split("(", 1)[0]
            at_deviation = next(
                (
                    a
                    for a, k in zip(expected, map(_call_key, expected), strict=True)
                    if k.startswith(name + "(")
                ),
                "",
            )
        else:
            later.add(step.index)
    missing_at = None
    if left:
        missing_at = _due_at(case.steps, readings, matched_last)
    return ScriptCheck(
        deviation=deviation,
        expected=at_deviation
        or (next((a for a in expected if _call_key(a) in left), "") if left else ""),
        later=frozenset(later),
        missing_at=missing_at,
    )


def _scripted(effect: str) -> bool:
    """Whether a step of this effect is compared with the script: anything but a read or a
    text reply (a step whose name says neither read nor change may change state)."""
    return effect in ("change", "run", "other")


def _call_key(action: str) -> str:
    """A call compared by name and arguments (keys sorted, strings case-folded)."""
    call = tool_call(action)
    if call is None:
        return " ".join(action.lower().split())
    name, arguments = call
    return f"{name}({json.dumps(_folded(arguments), sort_keys=True)})"


def _folded(value: object) -> object:
    if isinstance(value, str):
        return " ".join(value.lower().split())
    if isinstance(value, dict):
        return {k: _folded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_folded(v) for v in value]
    return value


def _due_at(steps: Sequence[CaseStep], readings: Sequence[StepReading], after: int) -> int:
    """Where a missing state change was due: the first decision after position ``after``
    that took the run elsewhere (a refusal, a transfer, a claim, an answer), else the run's
    last agent step."""
    for position in range(after + 1, len(steps)):
        reading = readings[position]
        if reading.decision in {"refusal", "transfer", "claim", "answer"} or _is_transfer_call(
            steps[position].action
        ):
            return steps[position].index
    return steps[-1].index


def _is_transfer_call(action: str) -> bool:
    call = tool_call(action)
    if call is None or is_reply(action):
        return False
    return bool({"transfer", "escalate", "handoff"} & set(name_words(call[0])))


def _first_actor(readings: Sequence[StepReading]) -> int:
    return next((i for i, r in enumerate(readings) if not r.relay), 0)


def _approach(readings: Sequence[StepReading]) -> int | None:
    """In a conversation of several agents: where the approach the run ended with was set —
    the last reply that owned up to a mistake and started again, else the first step of an
    agent that does not only relay (``None`` in one agent's log)."""
    if len({r.agent for r in readings if r.agent}) < 2:
        return None
    restarts = [p for p, r in enumerate(readings) if r.restart and not r.relay]
    return restarts[-1] if restarts else _first_actor(readings)


def _misstated_output(case: FailureCase, readings: Sequence[StepReading]) -> int | None:
    """Where the agent said something in place of an expected output its replies never said:
    the first reply stating a value of that output's form (a count for a count, a 12-digit
    number for a tracking number, an amount for an amount), else ``None``."""
    texts = [
        _step_text(s.action) if r.effect == "reply" else ""
        for s, r in zip(case.steps, readings, strict=True)
    ]
    said = "\n".join(texts).lower()
    missing = [o for o in case.expected_outputs if not _says(said, o.lower())]
    forms = {_form(o) for o in missing if _form(o)}
    if not forms:
        return None
    return next(
        (
            p
            for p, text in enumerate(texts)
            if text and not readings[p].relay and forms & {_form(v) for v in _FIGURE.findall(text)}
        ),
        None,
    )


_FIGURE = re.compile(r"(?<![\w.#])\$?\d[\d,]*(?:\.\d+)?(?![\w])")


def _form(value: str) -> str:
    """The form of a figure: how many digits before the point (several when 4 or more, a
    count when fewer) and whether it has decimals; ``""`` for a value that is not one."""
    found = re.fullmatch(r"\$?(\d[\d,]*)(\.\d+)?", value.strip())
    if found is None:
        return ""
    digits = len(found.group(1).replace(",", ""))
    return f"{digits if digits >= 4 else 'few'}{'.' if found.group(2) else ''}"


def _says(text: str, value: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(value) + r"(?![\w])", text) is not None


def _recovered(steps: Sequence[CaseStep], readings: Sequence[StepReading]) -> set[int]:
    """Positions of errors a later step of the same kind got past (the same tool, or a run
    of the same program, answered without an error)."""
    kinds = [_kind(s.action) for s in steps]
    last_clean: dict[str, int] = {}  # each kind's last step answered without an error
    for position, reading in enumerate(readings):
        if reading.error is None:
            last_clean[kinds[position]] = position
    return {
        position
        for position, reading in enumerate(readings)
        if reading.error is not None and last_clean.get(kinds[position], -1) > position
    }


def _kind(action: str) -> str:
    call = tool_call(action)
    if call is None:
        return " ".join(action.split()[:2]).lower()
    name, arguments = call
    command = arguments.get("command") or arguments.get("cmd")
    if isinstance(command, str):
        return f"{name}:{' '.join(command.split()[:2])}"
    return name


def _blame_traced(
    steps: Sequence[CaseStep],
    readings: Sequence[StepReading],
    benign: Callable[[CaseStep, str], bool],
    recovered: set[int],
    edits: list[int],
) -> set[int]:
    """Positions of steps charged with a later error no later step got past: the code a run
    executed (the last step that wrote code or changed state before it), the message an
    executor's printout answers (the last step of another agent before it)."""
    blamed = set()
    for position, reading in enumerate(readings):
        if position in recovered:
            continue
        error = reading.error
        if reading.relay and reading.effect == "reply":
            error = error or _printed_error(steps[position])
        if error is None or benign(steps[position], error):
            continue
        if reading.relay:
            producer = next(
                (
                    p
                    for p in range(position - 1, -1, -1)
                    if readings[p].agent != reading.agent and not readings[p].relay
                ),
                None,
            )
        elif reading.effect == "run":
            producer = _last_edit(readings, edits, position)
        else:
            producer = None
        if producer is not None:
            blamed.add(producer)
    return blamed


_VALUE = re.compile(r"[A-Za-z0-9#_\-]*\d[A-Za-z0-9#_\-]*")
"""A token that identifies something (an id, a code, a number): what a proposal and the call
that carries it out share."""


def _proposal_of(
    steps: Sequence[CaseStep], readings: Sequence[StepReading], deviation: int | None
) -> int | None:
    """The agent's reply that proposed the deviating state change, asked the user to confirm
    it and was agreed to: the first such reply since the previous state change that names
    the call's identifying values (any, for a call with none). The user agreed to what it
    said; the mistake was made there, not when it was carried out. ``None`` when no reply
    asked, or the user did not agree (the change was made unconfirmed: the call is to
    blame)."""
    at = next((p for p, s in enumerate(steps) if s.index == deviation), None)
    if at is None or _is_transfer_call(steps[at].action):
        return None  # (a hand-off is decided when it is made)
    call = tool_call(steps[at].action)
    values = set(_VALUE.findall(json.dumps(call[1]) if call else "")) - {"0", "1"}
    asked = []
    for position in range(at - 1, -1, -1):
        reading = readings[position]
        if reading.effect == "change":
            break
        if reading.decision == "confirm" and agrees(steps[position].observation):
            asked.append(position)
    naming = [p for p in asked if values & set(_VALUE.findall(_step_text(steps[p].action)))]
    proposals = naming if values else asked  # a reply about other ids proposed something else
    return (proposals or [None])[-1]  # the earliest: where it was first proposed


_PATH = re.compile(r"[\w.\-]+(?:/[\w.\-]+)+\.\w+")


def _edits_of_seen(steps: Sequence[CaseStep], readings: Sequence[StepReading]) -> set[int]:
    """Positions of state changes that edit something the run had looked at before (a file
    path an earlier step named): the agent's fix, as opposed to scratch files it wrote."""
    seen: set[str] = set()
    edits = set()
    for position, (step, reading) in enumerate(zip(steps, readings, strict=True)):
        paths = set(_PATH.findall(step.action))
        if reading.effect == "change" and paths & seen:
            edits.add(position)
        seen |= paths | set(_PATH.findall(step.observation[:4000]))
    return edits


def _last_edit(readings: Sequence[StepReading], edits: list[int], before: int) -> int | None:
    """The step whose code a run at position ``before`` most likely executed: the last edit
    of something the run had looked at earlier (``edits``, sorted: its source, not a scratch
    file), else the last step that wrote code or changed state."""
    found = bisect_left(edits, before)
    if found:
        return edits[found - 1]
    return next(
        (
            p
            for p in range(before - 1, -1, -1)
            if readings[p].code or readings[p].effect == "change"
        ),
        None,
    )


def _printed_error(step: CaseStep) -> str | None:
    return generic_error(reply_text(step.action))


_ANSWER_VALUE = re.compile(
    r"\\boxed\{([^{}]{1,80})\}|(?:final answer(?: is)?|the answer is|answer:)\s*[:\-]?\s*([^\n]{1,80})",
    re.I,
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?![\w])")


def _answer_source(steps: Sequence[CaseStep], readings: Sequence[StepReading]) -> int | None:
    """The position of the first step that stated the run's final answer (the claim later
    steps relied on): the value the last answer states (after ``final answer``, in a
    ``\\boxed{}``, else its numbers), first found in an earlier step not relayed."""
    texts = [_step_text(s.action) for s in steps]
    answers = [i for i, r in enumerate(readings) if r.decision == "answer"]
    if not answers:
        return None
    last = texts[answers[-1]]
    found = _ANSWER_VALUE.search(last)
    value = next((g for g in found.groups() if g), "") if found else ""
    value = re.split(r"\.(?:\s|$)", value, maxsplit=1)[0].strip().strip(" *`'\"").lower()
    tokens = [value] if value else _NUMBER.findall(last)
    if not tokens:
        return answers[0]
    patterns = [re.compile(r"(?<![\w.])" + re.escape(t) + r"(?![\w])", re.I) for t in tokens]
    first = next(
        (i for i, text in enumerate(texts) if all(p.search(text) for p in patterns)),
        answers[-1],
    )
    if readings[first].relay:  # printed by an executor: the code it ran stated it
        return next(
            (
                p
                for p in range(first - 1, -1, -1)
                if readings[p].agent != readings[first].agent and not readings[p].relay
            ),
            first,
        )
    return first


def _step_text(action: str) -> str:
    """What a step says: a reply's words, a call's arguments, any other action itself."""
    if is_reply(action):
        return reply_text(action)
    call = tool_call(action)
    return action if call is None else json.dumps(call[1], ensure_ascii=False)
