"""The Builder and Consolidator of the building stage, backed by a chat model
(:class:`OpenAIBuilder`).

:meth:`OpenAIBuilder.build_rules` makes two structured-output calls per episode (temperature
0). The first (purpose ``manual.build.case``) shows the trajectory — its steps, outcome, the
rules that acted and the whole rule system — and asks which of two causes dominated what went
wrong: exactly ``Imperfect Rules`` or ``Imperfect Agent``. The second (purpose
``manual.build.rules``) is case-conditioned: the outcome (direct success, indirect success,
failure) and the label pick one of five instructions saying which rule types the episode may
teach. The model answers with rule-system function calls in fixed fields (``write_rule``,
``update_rule``, ``delete_rule``, ``stop_generating``) and optional library notes, converted
to the typed operations of :mod:`workbench.manual.operations`.

:meth:`OpenAIBuilder.consolidate` (purpose ``manual.consolidate``) shows every rule and asks
for ``update_rule`` / ``delete_rule`` calls that merge overlapping rules.

Every answer is checked mechanically (a label that is not one of the two, a rule id that is
not in the rule system, a write without type or content, a faulty step that is not a step of
the run). A failing answer gets one correction message naming the problems; a second failure
raises :class:`~workbench.llm.client.ModelError`. On a failed run, success-only rule types
(:data:`~workbench.manual.operations.SUCCESS_ONLY`) are dropped whatever the model says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from store import LibraryEntry, ManualRule, RuleType
from workbench.analyze.causes import error_signature
from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient
from workbench.llm.steps import render_steps
from workbench.manual.builder import BuildCase, BuilderAnswer, Cause
from workbench.manual.openai import render_rules
from workbench.manual.operations import (
    SUCCESS_ONLY,
    DeleteRule,
    StopGenerating,
    UpdateRule,
    WriteRule,
)

CASE_PURPOSE = "manual.build.case"
RULES_PURPOSE = "manual.build.rules"
CONSOLIDATE_PURPOSE = "manual.consolidate"

LABELS: dict[str, Cause] = {
    "Imperfect Rules": "imperfect rules",
    "Imperfect Agent": "imperfect agent",
}
"""The two answers the case analysis accepts, exactly as written, and the cause each means."""

STEPS_CHARS = 10_000
"""Characters the trajectory's step listing may take in a prompt."""
RULE_SYSTEM = """\
The rule system holds what an agent has learnt about a text environment. Every rule has four \
attributes: a type, content that opens with the scope of situations it applies to, an \
example taken from a trajectory (with the details that are easy to get wrong) and \
validation logs (the episode and rule ids that trace where it came from and how it changed). \
The six types are:

- Special Phenomenon: something the environment shows that an agent would not expect.
- Special Mechanism: how the environment reacts to an action.
- Useful Helper Method: a reusable way of doing a recurring subtask.
- Success Process: the procedure that solved a task type.
- Corrected Error: a mistake together with the fix that worked.
- Unsolved Error: a mistake for which no working fix has been seen yet."""

CASE_SYSTEM = f"""\
You are the Builder. An agent has finished one episode in a text environment while the rule \
system below was in force; before anyone changes a rule, you decide where the episode's \
trouble came from.

{RULE_SYSTEM}

Choose exactly one label:

- Imperfect Rules: a rule the agent relied on was wrong, too vague or missing, so even a \
careful agent following the rules would have gone astray here.
- Imperfect Agent: the rules covered the situation, but the agent ignored them, misread \
them or made a slip of its own.

When the episode succeeded without any trouble, answer Imperfect Rules if the rule system \
lacks what the run shows and Imperfect Agent if the rules already say it.

Answer with one JSON object with two fields: `analysis`, two to four sentences that cite \
the steps you base the decision on, and `label`, written exactly as `Imperfect Rules` or \
`Imperfect Agent` and nothing else."""

CASE_TEMPLATE = """\
Task type: {family}

<instruction>
{instruction}
</instruction>

<outcome>{outcome}</outcome>

<trajectory episode="{episode_id}" steps="{count}">
{steps}
</trajectory>

Rules that acted in this episode: {fired}

<rule_system count="{rule_count}">
{rules}
</rule_system>"""

NO_RULES = "(the rule system is empty)"

LABEL_CORRECTION = """\
Your label {label!r} is not one of the two allowed. Answer again with the whole JSON \
object, with `label` written exactly as `Imperfect Rules` or `Imperfect Agent`."""

CASE_PROMPTS: dict[tuple[str, Cause | None], str] = {
    ("direct success", None): """\
Case: direct success. The agent solved the task without any rejected action. Record how it \
did so: write a Success Process for this task type when the rule system has none, or update \
the existing one with anything the run adds (add the episode to its validation logs). Write \
a Useful Helper Method for any subtask the run did in a way worth reusing. Add a skill to \
the library: the run's procedure in a few numbered lines.""",
    ("indirect success", "imperfect rules"): """\
Case: indirect success caused by imperfect rules. The agent made mistakes but recovered, \
and the rules did not warn it. Update the Success Process for this task type (or write one) \
so the mistake cannot recur; write a Corrected Error for each mistake with the fix that \
worked, and a Special Phenomenon or Special Mechanism for what the environment revealed. \
Correct or delete any rule that misled the agent. Add a skill to the library: the working \
procedure in a few numbered lines.""",
    ("indirect success", "imperfect agent"): """\
Case: indirect success caused by an imperfect agent. The rules covered the situation but \
the agent slipped before recovering. Do not rewrite rules that were right. Update the rule \
the agent failed to apply so its content or example makes the easy mistake plainer, or \
write a Corrected Error when no rule names the mistake. Add the episode to the validation \
logs of the rules the run confirmed. Add a skill to the library: the working procedure in a \
few numbered lines.""",
    ("failure", "imperfect rules"): """\
Case: failure caused by imperfect rules. The task was not solved and the rules share the \
blame. A failed run proves no procedure: never write a Success Process or a Useful Helper \
Method. Update or delete the rule that misled the agent, recording the episode in its \
validation logs; write an Unsolved Error for the mistake that made success unreachable, \
saying what to try instead when the trajectory suggests it. Add a reflection to the library \
naming the faulty step.""",
    ("failure", "imperfect agent"): """\
Case: failure caused by an imperfect agent. The rules were adequate but the agent did not \
follow them. A failed run proves no procedure: never write a Success Process or a Useful \
Helper Method, and do not change rules that were right. Write an Unsolved Error only for a \
mistake no rule warns about; otherwise update the ignored rule's example so the point is \
hard to miss. Add a reflection to the library naming the faulty step.""",
}
"""The Builder's instruction for each case: outcome and, unless a direct success, cause."""

RULES_SYSTEM = f"""\
You are the Builder. You maintain the rule system from the agent's episodes, one episode at \
a time, through its functions.

{RULE_SYSTEM}

The functions:

- write_rule: a new rule. Give `type`, `content`, `example` and `validation_logs` (at least \
this episode's id); leave `rule_id` empty.
- update_rule: rewrite an existing rule named by `rule_id`. Give only the attributes that \
change; leave the others empty (an empty `type` or `content` keeps the current one, an \
empty `validation_logs` list keeps the current logs).
- delete_rule: remove the rule named by `rule_id` (only when it is wrong or redundant).
- stop_generating: nothing more can be learnt from this episode; calls after it are ignored.

Prefer updating an existing rule to writing a near copy of it; a rule may build on others \
and say so in its content or validation logs. Write only what the trajectory shows.

Answer with one JSON object with these fields:

- potential_rules: a few sentences on the rules this episode supports and how each relates \
to the existing ones.
- calls: the function calls, in order. Each has `function`, `rule_id`, `type`, `content`, \
`example` and `validation_logs`.
- library: at most one note for the task type's library: `kind` is `skill` after a success \
(the procedure) or `reflection` after a failure (what went wrong and what to do instead), \
`content` is the note and `faulty_step` the index of the step that went wrong (a \
reflection must give it; a skill leaves it null). An empty list when there is nothing to \
note."""

RULES_TEMPLATE = """\
{case}

{trajectory}

The cause of the trouble, as analysed: {label}."""

CONSOLIDATE_SYSTEM = f"""\
You are the Consolidator. The rule system has grown beyond {{n_max}} rules; merge the rules \
that overlap and delete the ones that are redundant, so that it holds at most {{n_max}} \
rules if possible.

{RULE_SYSTEM}

Two rules overlap when they describe the same situation or the same fix. Merge them with \
update_rule on the rule you keep: its content must cover what both said, its example must \
keep every example and detail of both, and its validation logs must keep every entry of \
both plus the id of the rule merged into it. Then delete_rule the other one. Delete a rule \
outright only when another rule already says everything it says. Never merge rules of \
different task types or different situations just to reach the limit. Never delete a rule \
whose validation logs show it acting in a run that then avoided the critical failure it warns \
of while a weaker rule remains; when merging is not enough, delete the rules with the least \
evidence first.

Answer with one JSON object with a field `calls`: the function calls, in order, each with \
`function` (`update_rule` or `delete_rule`), `rule_id` (a listed id), and for an update the \
attributes that change (`type`, `content`, `example`, `validation_logs`; empty to keep the \
current value)."""

CORRECTION_TEMPLATE = """\
Your answer cannot be used: {problems}. {valid} Answer again with the whole JSON object."""


THOUGHTS_CHARS = 3000
"""Characters of the Planner's thoughts shown to the Builder."""
TRAJECTORIES = 8
"""Trajectories the Consolidator is shown (those the rules' validation logs name first)."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CaseAnswer(_Answer):
    """The Builder's analysis of where the episode's trouble came from."""

    analysis: str
    """The reasoning, citing steps."""
    label: str
    """``Imperfect Rules`` or ``Imperfect Agent`` (checked after parsing, exactly)."""


class RuleCall(_Answer):
    """One call of a rule-system function, in fixed fields."""

    function: Literal["write_rule", "update_rule", "delete_rule", "stop_generating"]
    rule_id: str = ""
    """The rule updated or deleted; empty for a write."""
    type: RuleType | None = None
    content: str = ""
    example: str = ""
    validation_logs: list[str] = Field(default_factory=list)


class LibraryNote(_Answer):
    """A skill (after a success) or a reflection (after a failure) for the task type."""

    kind: Literal["skill", "reflection"]
    content: str
    faulty_step: int | None = None
    """The index of the step that went wrong (a reflection's)."""


class BuildAnswer(_Answer):
    """The Builder's function calls for one episode."""

    potential_rules: str
    calls: list[RuleCall]
    library: list[LibraryNote] = Field(default_factory=list)


class ConsolidateCall(_Answer):
    """One update or delete of the Consolidator."""

    function: Literal["update_rule", "delete_rule"]
    rule_id: str
    type: RuleType | None = None
    content: str = ""
    example: str = ""
    validation_logs: list[str] = Field(default_factory=list)


class ConsolidateAnswer(_Answer):
    """The Consolidator's function calls."""

    calls: list[ConsolidateCall]


Operation = WriteRule | UpdateRule | DeleteRule
AnswerT = TypeVar("AnswerT", bound=BaseModel)


class OpenAIBuilder:
    """The :class:`~workbench.manual.builder.Builder` and Consolidator over a chat model.

    Args:
        client: the logged, cached model client.
        max_steps_chars: characters the trajectory's step listing may take in a prompt.
    """

    def __init__(self, client: ChatClient, *, max_steps_chars: int = STEPS_CHARS) -> None:
        self.client = client
        self.max_steps_chars = max_steps_chars
        self.name = f"openai:{client.model}"

    def build_rules(self, case: BuildCase) -> BuilderAnswer:
        """The case analysis, then the case-conditioned rule operations and library notes.

        Raises:
            ModelError: a call failed, or an answer still fails its check after one
                correction.
        """
        cause = self.classify(case)
        answer = self._ask(
            [
                {"role": "system", "content": RULES_SYSTEM},
                {"role": "user", "content": render_build(case, cause, self.max_steps_chars)},
            ],
            BuildAnswer,
            RULES_PURPOSE,
            lambda a: check_build(a, case),
            _valid_ids(case.rules),
            case.episode_id,
        )
        operations = [op for op in to_operations(answer.calls) if not _refused(op, case.outcome)]
        return BuilderAnswer(cause, operations, library_entries(answer.library, case))

    def classify(self, case: BuildCase) -> Cause:
        """The model's label for ``case``: ``imperfect rules`` or ``imperfect agent``."""
        answer = self._ask(
            [
                {"role": "system", "content": CASE_SYSTEM},
                {"role": "user", "content": render_case(case, self.max_steps_chars)},
            ],
            CaseAnswer,
            CASE_PURPOSE,
            lambda a: [] if a.label.strip() in LABELS else [LABEL_CORRECTION.format(label=a.label)],
            "",
            case.episode_id,
            bare=True,
        )
        return LABELS[answer.label.strip()]

    def consolidate(self, rules: list[ManualRule], n_max: int) -> list[UpdateRule | DeleteRule]:
        """The model's merges and deletions, checked to name only listed rules.

        Raises:
            ModelError: the call failed, or the answer still names rules that are not
                listed after one correction.
        """
        if not rules:
            return []
        answer = self._ask(
            [
                {"role": "system", "content": CONSOLIDATE_SYSTEM.format(n_max=n_max)},
                {
                    "role": "user",
                    "content": render_rules(rules, logs=True) + self._trajectories(rules),
                },
            ],
            ConsolidateAnswer,
            CONSOLIDATE_PURPOSE,
            lambda a: check_ids([c.function for c in a.calls], [c.rule_id for c in a.calls], rules),
            _valid_ids(rules),
            None,
        )
        return [op for op in to_operations(answer.calls) if not isinstance(op, WriteRule)]  # type: ignore[misc]

    def _trajectories(self, rules: list[ManualRule]) -> str:
        """The trajectories the rules depend on (their validation-log episodes), looked up
        in the store and summarised: outcome and the steps that met an error."""
        store = self.client.store
        seen: list[str] = []
        for rule in rules:
            for entry in rule.validation_logs:
                episode_id = entry.split("@", 1)[0]
                if episode_id not in seen and store.episode(episode_id) is not None:
                    seen.append(episode_id)
        lines = []
        for episode_id in seen[:TRAJECTORIES]:
            episode = store.episode(episode_id)
            assert episode is not None
            troubled = [
                f"[{s.index}] {s.action} -> {s.observation.splitlines()[0] if s.observation else ''}"
                for s in store.steps(episode_id)
                if s.action and error_signature(s.observation)
            ][:4]
            lines.append(
                f'<trajectory episode="{episode_id}" outcome="{episode.outcome.message}">'
                + ("\n" + "\n".join(troubled) if troubled else " no step met an error")
                + "\n</trajectory>"
            )
        return ("\n\nTrajectories the rules depend on:\n" + "\n".join(lines)) if lines else ""

    def _ask(
        self,
        messages: list[dict[str, str]],
        model: type[AnswerT],
        purpose: str,
        check: Callable[[AnswerT], list[str]],
        valid: str,
        episode_id: str | None,
        *,
        bare: bool = False,
    ) -> AnswerT:
        """One checked structured call with at most one correction (``bare``: the
        correction is the check's first problem alone, else the problems and ``valid``)."""
        return checked_answer(
            self.client,
            messages,
            model,
            purpose=purpose,
            check=check,
            correction=lambda problems: (
                problems[0]
                if bare
                else CORRECTION_TEMPLATE.format(problems="; ".join(problems), valid=valid)
            ),
            episode_id=episode_id,
        )


# -- rendering ------------------------------------------------------------------------------


def case_prompt(outcome: str, cause: Cause) -> str:
    """The Builder's instruction for the case: one of the five in :data:`CASE_PROMPTS`."""
    return CASE_PROMPTS[(outcome, None if outcome == "direct success" else cause)]


def render_case(case: BuildCase, max_steps_chars: int = STEPS_CHARS) -> str:
    """The trajectory as the Builder sees it: steps, outcome, acting rules, rule system."""
    text = CASE_TEMPLATE.format(
        family=case.family,
        instruction=case.instruction.strip(),
        outcome=case.outcome,
        episode_id=case.episode_id,
        count=len(case.steps),
        steps=render_steps(case.steps, max_steps_chars) if case.steps else "(no steps)",
        fired=", ".join(case.fired) or "none",
        rule_count=len(case.rules),
        rules=render_rules(case.rules, logs=True) if case.rules else NO_RULES,
    )
    thoughts = "\n".join(f"[{i}] {t}" for i, t in sorted(case.thoughts.items()))
    if thoughts:
        text += f"\n\n<planner_thoughts>\n{thoughts[:THOUGHTS_CHARS]}\n</planner_thoughts>"
    return text + f"\n\n<planner_conclusion>\n{case.conclusion}\n</planner_conclusion>"


def render_build(case: BuildCase, cause: Cause, max_steps_chars: int = STEPS_CHARS) -> str:
    """The case-conditioned user message of the second call."""
    label = next(text for text, value in LABELS.items() if value == cause)
    return RULES_TEMPLATE.format(
        case=case_prompt(case.outcome, cause),
        trajectory=render_case(case, max_steps_chars),
        label=label,
    )


# -- checks and conversion ------------------------------------------------------------------


def check_ids(
    functions: Sequence[str], rule_ids: Sequence[str], rules: Sequence[ManualRule]
) -> list[str]:
    """Problems with the rule ids of update and delete calls (empty when there are none)."""
    known = {r.id for r in rules if not r.deleted}
    problems = []
    deleted: set[str] = set()
    for position, (function, rule_id) in enumerate(zip(functions, rule_ids, strict=True), 1):
        if function not in ("update_rule", "delete_rule"):
            continue
        if rule_id not in known:
            problems.append(f"call {position} ({function}): {rule_id!r} is not a rule id")
        elif rule_id in deleted:
            problems.append(f"call {position} ({function}): {rule_id} was deleted before")
        if function == "delete_rule":
            deleted.add(rule_id)
    return problems


def check_build(answer: BuildAnswer, case: BuildCase) -> list[str]:
    """Problems with the Builder's answer for ``case`` (empty when there are none)."""
    calls = _until_stop(answer.calls)
    problems = check_ids([c.function for c in calls], [c.rule_id for c in calls], case.rules)
    for position, call in enumerate(calls, 1):
        if call.function == "write_rule" and (call.type is None or not call.content.strip()):
            problems.append(f"call {position} (write_rule): a new rule needs a type and content")
    steps = {s.index for s in case.steps}
    expected = "reflection" if case.outcome == "failure" else "skill"
    for note in answer.library:
        if note.kind != expected:
            problems.append(f"a {note.kind} does not fit a run with outcome {case.outcome!r}")
        elif note.kind == "reflection" and note.faulty_step not in steps:
            problems.append(f"the reflection's faulty_step {note.faulty_step} is not a step")
        if not note.content.strip():
            problems.append(f"the {note.kind} has no content")
    return problems


def to_operations(calls: Sequence[RuleCall | ConsolidateCall]) -> list[Operation]:
    """The typed operations for checked calls, up to the first ``stop_generating``."""
    operations: list[Operation] = []
    for call in _until_stop(calls):
        if call.function == "delete_rule":
            operations.append(DeleteRule(rule_id=call.rule_id))
        elif call.function == "update_rule":
            operations.append(
                UpdateRule(
                    rule_id=call.rule_id,
                    type=call.type,
                    content=call.content.strip() or None,
                    example=call.example or None,
                    validation_logs=call.validation_logs or None,
                )
            )
        elif call.type is not None:
            operations.append(
                WriteRule(
                    type=call.type,
                    content=call.content.strip(),
                    example=call.example,
                    validation_logs=call.validation_logs,
                )
            )
    return operations


def library_entries(notes: Sequence[LibraryNote], case: BuildCase) -> list[LibraryEntry]:
    """The library entries for checked notes (a reflection names its faulty step)."""
    return [
        LibraryEntry(
            kind=note.kind,
            family=case.family,
            content=(
                f"Step {note.faulty_step}: {note.content.strip()}"
                if note.kind == "reflection"
                else note.content.strip()
            ),
            episode_id=case.episode_id,
        )
        for note in notes[:1]
    ]


def _until_stop(calls: Sequence[AnswerT]) -> list[AnswerT]:
    kept = []
    for call in calls:
        if call.function == "stop_generating":  # type: ignore[attr-defined]
            break
        kept.append(call)
    return kept


def _refused(operation: Operation | StopGenerating, outcome: str) -> bool:
    """A success-only rule type from a failed run (the guard, whatever the model said)."""
    return outcome == "failure" and getattr(operation, "type", None) in SUCCESS_ONLY


def _valid_ids(rules: Sequence[ManualRule]) -> str:
    ids = [r.id for r in rules if not r.deleted]
    return f"The rule ids are: {', '.join(ids)}." if ids else "The rule system has no rules."
