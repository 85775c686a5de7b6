"""A ReAct agent backed by a chat model: one structured model call per decision.

Each turn the model sees the formulated manual (if any, in the system prompt), the task, the
guidance (rules as text, skills as procedures, subagents it may call with
``delegate <id> name=value``), a window of recent steps, the current observation and a sample
of valid actions, and answers ``{"thought": ..., "action": ...}``.

A subagent the model compiler wrote (its form has a ``prompt``) runs as a model too
(:class:`ModelSubagent`): a fresh prompt of its own — its instructions, its declared inputs,
its own steps and observations, the valid actions among its tools — never the parent's history;
one structured call per decision (purpose ``agent.subagent``), in the subagent's scope (its
tools, its step budget, success read from what the world shows). Other subagents run their
offline strategy (:mod:`workbench.agents.subagents`).

With ``examples`` set, each turn also retrieves synthesized examples for the current situation
(:meth:`~workbench.synth.retrieval.ExampleIndex.agentic`: observation-based, then model-based
with the query the model writes through the same client, purpose ``synth.query``) and shows
them in a budgeted section of the prompt; which examples each step saw is recorded in the
episode's metadata (``examples``).

The agent then **grounds** the action: an action the environment lists is taken as is; one
that differs only in case, punctuation or articles becomes the listed action; one made only of
words the environment has used (in its listed actions, the task or recent observations) is
passed through (its parser accepts forms its list does not enumerate, e.g. an object's full
name, or opening a door that is already open); anything else is mapped to the closest listed
action (:mod:`difflib`), and both are recorded. An action with no word in it at all (``""``,
``"..."``) is not grounded: the model is told and asked again, and a second such answer in a
row ends the episode (``stopped: no-action``; both recorded under ``empty``). Rules from the
guidance
review the grounded action as they do for the scripted agent: a veto skips it (the model is
told why and asked again), a replacement is taken instead.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from pydantic import BaseModel, Field

from store import Store
from store.records import LLMCall
from workbench.agents.base import (
    ARTICLES,
    FIRST_ACTION_STEP,
    AgentSpec,
    Interaction,
    OutOfSteps,
    sample_actions,
    words_of,
)
from workbench.agents.guidance import STOP, DelegateForm, Guidance, bind_inputs, match, review
from workbench.agents.subagents import Scope, SubagentResult, delegation_record, run_subagent
from workbench.llm import ChatClient
from workbench.synth.openai_queries import OpenAIQueryWriter
from workbench.synth.queries import QueryWriter
from workbench.synth.retrieval import ExampleIndex, Hit, split_examples

PURPOSE = "agent.act"
"""Purpose of the agent's model calls in the call log."""

NO_ACTION = (
    "Your last answer's action ({proposed!r}) names no action. Answer with one of the valid "
    "actions, written as listed."
)
"""The note after an answer whose action has no word in it (SmolLM2-135M answers "...")."""

DELEGATE = "delegate"
"""The action word that calls a subagent: ``delegate <id> name=value …`` (or ``delegate <id>
<value>`` for a subagent of one input)."""
SUBAGENT_PURPOSE = "agent.subagent"
"""Purpose of a model subagent's calls in the call log."""


class Act(BaseModel):
    """One ReAct decision."""

    thought: str = Field(description="Brief reasoning about what to do next.")
    action: str = Field(
        description="Exactly one command for the environment, 'delegate <id>' or 'STOP'."
    )


@dataclass(frozen=True)
class PromptBudget:
    """How much of each kind of context the prompt may carry (characters unless noted)."""

    prompt_chars: int = 12_000
    """The whole prompt (system + user message); history is cut first to fit."""
    history_steps: int = 10
    """Most recent steps shown; older ones are summarized by their count."""
    history_observation_chars: int = 600
    """Each observation in the history is cut to this length."""
    observation_chars: int = 4_000
    """The current observation is cut to this length."""
    valid_actions: int = 80
    """Most valid actions shown (count)."""
    valid_chars: int = 3_000
    """Most characters of valid actions shown."""
    manual_chars: int = 4_000
    """Most characters of the manual shown (never more than a third of ``prompt_chars``)."""
    examples_chars: int = 3_000
    """Most characters of retrieved examples shown (never more than a quarter of
    ``prompt_chars``)."""
    example_observation_chars: int = 200
    """Each observation of a retrieved example is cut to this length."""


SYSTEM = (
    "You are an agent acting in a text-based environment to complete a task. Each turn you see "
    "the task, guidance, the recent history, the current observation and some of the actions "
    "the environment accepts now. Think briefly, then choose exactly one action. Reply with a "
    'JSON object: {"thought": "...", "action": "..."}. Prefer the listed actions, written '
    "exactly as listed. Answer STOP as the action when the task is complete or cannot be "
    "completed."
)
MANUAL_OPEN = "=== Manual ==="
MANUAL_CLOSE = "=== End of manual ==="
SYSTEM_MANUAL = (
    "\n\nThe manual below was written from earlier episodes in this environment. Its rules "
    "describe what the environment does and which mistakes to avoid; use them when they fit "
    "the situation.\n"
)
EXAMPLES_HEAD = (
    "Examples retrieved from synthesized interactions with this environment, for the "
    "current situation (their objects and places may differ from yours: adapt, do not copy):"
)
SYSTEM_DELEGATE = (
    " To hand an objective to a subagent from the guidance, answer `delegate <id>` followed by "
    "its inputs as name=value pairs separated by `;` (e.g. `delegate <id> target=kitchen`); "
    "it sees only those inputs, and you will see what it returns."
)


class LLMAgent:
    """ReAct agent over a :class:`~workbench.llm.ChatClient` (named ``openai:<model>``).

    Args:
        client: the chat client; every call is logged to its store (purpose ``agent.act``).
        temperature: sampling temperature. Above 0 a per-episode seed from the episode's
            random generator is sent too, so seeds give different (and separately cached)
            trajectories.
        max_tokens: most tokens per reply; ``None`` for the endpoint's default.
        budget: how much context goes into each prompt.
        strict_grounding: map every action the environment does not list to the closest
            listed one (no pass-through of unlisted actions made of known words).
        max_calls: most model calls per episode (vetoed and delegating turns take no step);
            default twice the step limit plus 10.
        manual: the formulated manual (Markdown) put in the system prompt; empty for none.
        examples: synthesized examples retrieved per turn and shown in the prompt (0: none),
            split between observation-based and model-based retrieval.
        example_kind: only examples of this kind (``backward`` or ``whole``; ``None``: both).
        query_writer: writes the model-based retrieval query (default: the model, through
            this agent's client).
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = 512,
        budget: PromptBudget | None = None,
        strict_grounding: bool = False,
        max_calls: int | None = None,
        manual: str = "",
        examples: int = 0,
        example_kind: str | None = None,
        query_writer: QueryWriter | None = None,
    ) -> None:
        self.client = client
        self.name = f"openai:{client.model}"
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.budget = budget or PromptBudget()
        self.strict_grounding = strict_grounding
        self.max_calls = max_calls
        self.manual = manual
        self.examples = examples
        self.example_kind = example_kind
        self.query_writer = query_writer or OpenAIQueryWriter(client)
        self._indexes: dict[str, ExampleIndex] = {}

    def example_index(self, env: str) -> ExampleIndex:
        """The index of the kept examples of world ``env`` in the client's database (opened
        once per agent)."""
        if env not in self._indexes:
            self._indexes[env] = ExampleIndex.open(self.client.store, env, self.example_kind)
        return self._indexes[env]

    @classmethod
    def from_options(cls, store: Store, options: dict[str, Any]) -> LLMAgent:
        """Build from plain options (e.g. in a worker process, with its own store).

        Keys: ``model`` and ``base_url`` (override ``WORKBENCH_MODEL`` / ``OPENAI_BASE_URL``),
        ``timeout``, ``parse_retries``, ``transport_retries``, ``backoff``, ``cache`` (for
        the client); ``temperature``, ``max_tokens``, ``strict_grounding``, ``max_calls``,
        ``manual``, ``examples``, ``example_kind``;
        and any :class:`PromptBudget` field. The API key always comes from
        ``OPENAI_API_KEY`` so it never travels in options.
        """
        options = dict(options)
        client_keys = ("model", "base_url", "timeout", "parse_retries", "transport_retries")
        client_options = {
            k: options.pop(k) for k in (*client_keys, "backoff", "cache") if k in options
        }
        budget_keys = set(PromptBudget.__dataclass_fields__)
        budget = PromptBudget(**{k: options.pop(k) for k in list(options) if k in budget_keys})
        client = ChatClient.from_env(store, **client_options)
        return cls(client, budget=budget, **options)

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        seed = rng.randrange(2**31) if self.temperature > 0 else None
        episode = _Episode(self, interaction, guidance, seed)
        with contextlib.suppress(OutOfSteps):
            episode.play()
        return episode.metadata()


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> LLMAgent:
    """The LLM agent on the configured endpoint, logging its calls to the run's database and
    reading ``manual`` in its prompt (registered as ``openai``)."""
    if db_path is None:
        raise ValueError("the LLM agent needs the database to log and cache its calls")
    options: dict[str, Any] = {"manual": manual} if manual else {}
    if spec.model:
        options["model"] = spec.model
    if spec.examples:
        options |= {"examples": spec.examples, "example_kind": spec.example_kind}
    return LLMAgent.from_options(Store(db_path), options)


class _Episode:
    """One episode of the LLM agent: its turns, notes and what was recorded."""

    def __init__(
        self, agent: LLMAgent, interaction: Interaction, guidance: Guidance, seed: int | None
    ) -> None:
        self.agent, self.io, self.guidance, self.seed = agent, interaction, guidance, seed
        self.calls: list[LLMCall] = []
        self.turns = 0
        self.note = ""
        self.grounded: list[dict[str, Any]] = []
        self.vetoed: list[dict[str, Any]] = []
        self.empty: list[dict[str, Any]] = []
        """Answers whose action has no word (the model is told and asked again)."""
        self.delegations: list[dict[str, Any]] = []
        self.retrieved: list[dict[str, Any]] = []
        self.stopped = "done"

    def play(self) -> None:
        limit = self.agent.max_calls or 2 * self.io.step_limit + 10
        while not self.io.done:
            if self.turns >= limit:
                self.stopped = "max-calls"
                return
            valid = self.io.env.valid_actions()
            reply = self._ask(valid)
            proposed = reply.action.strip()
            if not words_of(proposed):  # e.g. "" or "...": no action to ground
                self.empty.append({"step": self.io.next_step, "proposed": proposed})
                if len(self.empty) > 1 and self.empty[-2]["step"] == self.io.next_step:
                    self.stopped = "no-action"  # told once, and still no action
                    return
                self.note = NO_ACTION.format(proposed=proposed)
                continue
            if proposed.split(" ", 1)[0].lower() == DELEGATE and self.guidance.delegates:
                self._delegate(proposed)
                continue
            if proposed.upper() == STOP:
                if not self._take(STOP, reply.thought):
                    self.stopped = "agent"
                    return
                continue
            action, how = ground(
                proposed, valid, seen=self._seen(), strict=self.agent.strict_grounding
            )
            if how:
                self.grounded.append(
                    {"step": self.io.next_step, "proposed": proposed, "action": action, "how": how}
                )
            self._take(action, reply.thought)

    def _seen(self) -> str:
        """What the environment has shown within the prompt's history window."""
        recent = self.io.taken[-self.agent.budget.history_steps :]
        return "\n".join(
            [self.io.instruction, self.io.reset.observation, *(t.observation for t in recent)]
        )

    # -- one model call ---------------------------------------------------------------------

    def _ask(self, valid: Sequence[str]) -> Act:
        messages = build_prompt(
            self.io,
            self.guidance,
            valid,
            self.note,
            self.agent.budget,
            self.agent.manual,
            self._examples(),
        )
        self.note = ""
        self.turns += 1
        return self.agent.client.parse(
            messages,
            Act,
            purpose=PURPOSE,
            temperature=self.agent.temperature,
            max_tokens=self.agent.max_tokens,
            seed=self.seed,
            calls=self.calls,
        )

    def _examples(self) -> list[Hit]:
        """This turn's retrieved examples (none unless the agent retrieves any)."""
        if not self.agent.examples:
            return []
        io = self.io
        index = self.agent.example_index(io.env.name)
        m1, m2 = split_examples(self.agent.examples)
        history = [(t.action, t.observation) for t in io.taken]
        found = index.agentic(
            io.instruction, history, io.observation, self.agent.query_writer, m1, m2
        )
        self.retrieved.append(
            {
                "step": io.next_step,
                "query": found.query,
                "examples": [h.example.id for h in found.hits],
                "retrievers": [h.retriever for h in found.hits],
            }
        )
        return found.hits

    # -- acting under the guidance's rules ------------------------------------------------

    def _take(self, action: str, thought: str) -> bool:
        """Act, unless a rule vetoes (then note it); returns whether a step was taken or
        the turn otherwise goes on (False only for an unopposed STOP)."""
        verdict = review(self.guidance, action, self.io.evidence()) if self.guidance.rules else None
        if verdict is None:
            if action == STOP:
                return False
            self.io.act(action, thought)
            return True
        rule = verdict.rule
        self.io.record_use(rule.id, "rule")
        if verdict.response == "veto":
            self.vetoed.append({"step": self.io.next_step, "action": action, "rule": rule.id})
            self.note = f"Rule {rule.id} vetoed your action '{action}': {rule.description}"
            return True
        self.io.act(verdict.action, thought, f"rule:{rule.id}")
        return True

    def _delegate(self, proposed: str) -> None:
        parts = proposed.split(maxsplit=2)
        ident = parts[1] if len(parts) > 1 else ""
        rest = parts[2] if len(parts) > 2 else ""
        form = next((d for d in self.guidance.delegates if d.id == ident), None)
        if form is None:
            known = ", ".join(d.id for d in self.guidance.delegates)
            self.note = f"There is no subagent {ident!r}; the subagents are: {known}."
            return
        inputs = call_inputs(form, rest, self.io.evidence())
        missing = [i.name for i in form.inputs if not inputs.get(i.name)]
        if missing:
            self.note = f"Subagent {form.id} needs its inputs: {', '.join(missing)}."
            return
        self.io.record_use(form.id, "subagent")
        step = self.io.next_step
        policy = ModelSubagent(self.agent.client) if form.prompt else None
        world = self.io.world(f"subagent:{form.id}")
        result = run_subagent(form, inputs, world, self.io.lexicon, policy)
        self.io.delegations.append(delegation_record(form, inputs, result, step))
        self.delegations.append(
            {"step": step, "subagent": form.id, "inputs": inputs, **result.returned()}
        )
        outcome = "succeeded" if result.success else "failed"
        found = f" Found: {result.found}." if result.found else ""
        self.note = (
            f"Subagent {form.id} {outcome} after {result.steps} steps: {result.reason}.{found}"
        )

    def _done(self) -> bool:
        return self.io.done

    def metadata(self) -> dict[str, Any]:
        sent = [c for c in self.calls if not c.cached]
        return {
            "model": self.agent.client.model,
            "calls": len(self.calls),
            "cached_calls": len(self.calls) - len(sent),
            "call_ids": [c.id for c in self.calls],
            "usage": {
                "prompt_tokens": sum(c.prompt_tokens or 0 for c in sent),
                "completion_tokens": sum(c.completion_tokens or 0 for c in sent),
            },
            "grounded": self.grounded,
            "vetoed": self.vetoed,
            "empty": self.empty,
            "delegations": self.delegations,
            **({"examples": self.retrieved} if self.agent.examples else {}),
            "stopped": self.stopped,
        }


def call_inputs(form: DelegateForm, rest: str, evidence) -> dict[str, str]:
    """The inputs of a ``delegate`` call: ``name=value`` pairs (``;`` between them, only
    declared names kept), else what the subagent's own trigger binds on ``rest``, else
    ``rest`` itself for a subagent of one input."""
    declared = {i.name for i in form.inputs}
    if "=" in rest:
        pairs = (part.split("=", 1) for part in rest.split(";") if "=" in part)
        return {k.strip(): v.strip() for k, v in pairs if k.strip() in declared}
    groups = match(form, rest, evidence) if rest else None
    if groups is not None and bind_inputs(form, groups):
        return bind_inputs(form, groups)
    if len(form.inputs) == 1 and rest.strip():
        return {form.inputs[0].name: rest.strip()}
    return {}


# -- a model subagent -----------------------------------------------------------------------


class SubagentTurn(BaseModel):
    """One decision of a model subagent."""

    thought: str = Field(description="Brief reasoning about what to do next.")
    action: str = Field(description="One command for the environment; empty when you return.")
    status: Literal["continue", "success", "failure"] = Field(
        description="continue: take the action; success or failure: return now."
    )
    found: str = Field(description="When you return: what you found, or why it cannot be found.")


SUBAGENT_SYSTEM = (
    "You are a subagent. Another agent handed you one objective and the inputs listed below; "
    "you see nothing of its history, only your own steps. Act in the text environment with "
    "your tools (other actions are refused and count against your budget). Each turn reply "
    'with a JSON object {"thought", "action", "status", "found"}: status "continue" with one '
    'action, or "success" or "failure" with what you found once the objective is reached or '
    "cannot be reached."
)


class ModelSubagent:
    """A subagent run by a chat model on a prompt of its own (a :data:`Policy`).

    Args:
        client: the chat client; every call is logged (purpose ``agent.subagent``).
        budget: how much context goes into each prompt.
        temperature: sampling temperature.
        max_tokens: most tokens per reply.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        budget: PromptBudget | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = 256,
    ) -> None:
        self.client, self.budget = client, budget or PromptBudget()
        self.temperature, self.max_tokens = temperature, max_tokens

    def __call__(self, scope: Scope) -> SubagentResult:
        observation, note = scope.look(), ""
        while not scope.exhausted:
            messages = subagent_prompt(scope, observation, note, self.budget)
            scope.context.setdefault("prompt", messages[-1]["content"])
            note = ""
            turn = self.client.parse(
                messages,
                SubagentTurn,
                purpose=SUBAGENT_PURPOSE,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
            )
            if turn.status == "failure":
                return scope.result(False, turn.found.strip() or "the subagent gave up")
            if turn.status == "success":
                found = scope.reached(observation) or scope.reached(scope.look())
                if found is not None or scope.goal is None:
                    return scope.result(True, "objective reached", found or turn.found)
                scope.turns += 1
                note = "Your success condition is not observed yet: go on, or return failure."
                continue
            observation, note, found = self._step(scope, turn.action.strip(), observation)
            if found is not None:
                return scope.result(True, "objective reached", found)
        return scope.result(False, "step budget spent")

    def _step(self, scope: Scope, proposed: str, observation: str) -> tuple[str, str, str | None]:
        """Take the proposed action (grounded on what the world lists); the new observation,
        a note for the next turn, and the line that shows success if it does."""
        if not proposed:
            scope.turns += 1
            return observation, "You gave no action: give one, or return.", None
        action, _ = ground(proposed, scope.world.valid(), seen=observation)
        taken = scope.act(action)
        if taken is None:
            tools = ", ".join(scope.form.tools)
            return (
                observation,
                f"'{action}' was refused: it is not one of your tools ({tools}).",
                None,
            )
        room = scope.look()
        return taken, "", scope.reached(taken) or scope.reached(room)


def subagent_prompt(
    scope: Scope, observation: str, note: str, budget: PromptBudget
) -> list[dict[str, str]]:
    """The messages of one subagent decision: its own instructions, its inputs, its tools,
    its own steps and what it sees — nothing of the parent's."""
    form = scope.form
    system = SUBAGENT_SYSTEM + (f"\n\n{form.prompt.strip()}" if form.prompt.strip() else "")
    inputs = "\n".join(f"- {name}: {value}" for name, value in scope.inputs.items()) or "- none"
    own = [
        f"{k}. > {a}\n{_cut(o, budget.history_observation_chars)}"
        for k, (a, o) in enumerate(scope.history[-budget.history_steps :], start=1)
    ]
    options = scope.options()
    shown = sample_actions(
        options, f"{scope.objective}\n{observation}", budget.valid_actions, budget.valid_chars
    )
    parts = [
        f"Objective: {scope.objective or form.description}",
        f"Inputs (all you are given):\n{inputs}",
        f"Tools: {', '.join(form.tools)}; steps left: {form.max_steps - scope.steps}",
        "Your steps so far:\n" + ("\n".join(own) if own else "(none yet)"),
        *([f"Note: {note}"] if note else []),
        f"Current observation:\n{_cut(observation, budget.observation_chars)}",
        f"Valid actions among your tools ({len(shown)} of {len(options)}):\n" + "\n".join(shown),
        "Reply with your thought, action, status and found.",
    ]
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


# -- the prompt -----------------------------------------------------------------------------


def build_prompt(
    interaction: Interaction,
    guidance: Guidance,
    valid: Sequence[str],
    note: str = "",
    budget: PromptBudget | None = None,
    manual: str = "",
    examples: Sequence[Hit] = (),
) -> list[dict[str, str]]:
    """The messages for one decision, fitted to ``budget`` (history is cut first; the
    manual and the retrieved examples, when given, are cut to their own shares of the
    budget)."""
    budget = budget or PromptBudget()
    system = (
        SYSTEM + (SYSTEM_DELEGATE if guidance.delegates else "") + manual_section(manual, budget)
    )
    head = [f"Task: {interaction.instruction}"]
    if guidance.forms:
        head.append(
            "Guidance (rules you must follow; skills and subagents you may use):\n"
            + guidance.as_text()
        )
    shown = examples_section(examples, budget)
    if shown:
        head.append(shown)
    io = interaction
    current = (
        f"Current observation (step {io.next_step - 1}, {io.steps_left} steps left, "
        f"score {io.score:g}):\n{_cut(io.observation, budget.observation_chars)}"
    )
    tail = [f"Note: {note}"] if note else []
    tail += [current, sample_text(valid, io, budget), "Reply with your thought and next action."]
    room = budget.prompt_chars - len(system) - sum(len(p) + 2 for p in [*head, *tail])
    history = history_text(io, budget, room)
    user = "\n\n".join([*head, *([history] if history else []), *tail])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def manual_section(manual: str, budget: PromptBudget) -> str:
    """The manual as a delimited system-prompt section within its budget ("" for none)."""
    text = manual.strip()
    if not text:
        return ""
    limit = min(budget.manual_chars, budget.prompt_chars // 3)
    room = limit - len(SYSTEM_MANUAL) - len(MANUAL_OPEN) - len(MANUAL_CLOSE) - 2
    return f"{SYSTEM_MANUAL}{MANUAL_OPEN}\n{_cut(text, max(room, 12))}\n{MANUAL_CLOSE}"


def examples_section(examples: Sequence[Hit], budget: PromptBudget) -> str:
    """Retrieved examples as a prompt section within their budget ("" for none): each
    example's instruction, then its steps (from just before the point that matched the
    current observation, when one did), each observation cut short."""
    if not examples:
        return ""
    limit = min(budget.examples_chars, budget.prompt_chars // 4) - len(EXAMPLES_HEAD)
    share = max(limit // len(examples), 120)
    parts = [EXAMPLES_HEAD]
    used = 0
    for number, hit in enumerate(examples, start=1):
        text = _example_text(number, hit, share, budget.example_observation_chars)
        if used + len(text) > limit:
            break
        parts.append(text)
        used += len(text) + 1
    return "\n".join(parts) if len(parts) > 1 else ""


def _example_text(number: int, hit: Hit, share: int, observation_chars: int) -> str:
    example = hit.example
    lines = [f"Example {number} (found by {hit.retriever}) task: {_cut(example.instruction, 200)}"]
    first = max(0, hit.point - 2) if hit.point is not None else 0
    used = len(lines[0])
    steps = list(zip(example.actions, example.observations, strict=False))
    for action, observation in steps[first:]:
        line = f"> {action}\n{_cut(' '.join(observation.split()), observation_chars)}"
        if used + len(line) > share:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def history_text(interaction: Interaction, budget: PromptBudget, room: int) -> str:
    """The last steps (at most ``history_steps``, within ``room`` characters), newest kept,
    numbered by their stored step index."""
    taken = interaction.taken
    lines: list[str] = []
    used = 0
    for index in range(len(taken) - 1, max(-1, len(taken) - 1 - budget.history_steps), -1):
        step = taken[index]
        by = "" if step.source == "agent" else f" [{step.source}]"
        observation = _cut(step.observation, budget.history_observation_chars)
        entry = f"{index + FIRST_ACTION_STEP}. > {step.action}{by}\n{observation}"
        if used + len(entry) + 1 > room - 80:  # keep room for the header line
            break
        lines.append(entry)
        used += len(entry) + 1
    if not taken:
        return ""
    hidden = len(taken) - len(lines)
    header = f"History ({hidden} earlier steps not shown):" if hidden else "History:"
    return "\n".join([header, *reversed(lines)])


def sample_text(valid: Sequence[str], interaction: Interaction, budget: PromptBudget) -> str:
    """Some of the valid actions, chosen by :func:`~workbench.agents.base.sample_actions`, as prompt text."""
    chosen = interaction.sample_valid(valid, budget.valid_actions, budget.valid_chars)
    shown = f"{len(chosen)} of {len(valid)}" if len(chosen) < len(valid) else f"{len(valid)}"
    return f"Valid actions ({shown}):\n" + "\n".join(chosen)


# -- grounding ------------------------------------------------------------------------------


def ground(
    action: str, valid: Sequence[str], *, seen: str = "", strict: bool = False
) -> tuple[str, str]:
    """The action to take for a proposed one, and how it was grounded.

    Returns ``(action, "")`` when taken as proposed, ``(listed, "normalized")`` when only
    case, punctuation, quotes or articles differed, and ``(closest, "closest")`` otherwise.
    Unless ``strict``, an unlisted action made only of words the environment has used — in
    the listed actions or in ``seen`` (the task and recent observations) — is taken as
    proposed (normalized: lower case, no articles or final punctuation): the simulator's
    parser accepts more than it lists, e.g. an object's full name or opening an open door.
    """
    if not valid or action in valid:
        return action, ""
    wanted = _normal(action)
    for candidate in valid:
        if _normal(candidate) == wanted:
            return candidate, "normalized"
    vocabulary = {word for candidate in valid for word in words_of(candidate)}
    vocabulary.update(words_of(seen))
    if not strict and wanted and set(wanted.split()) <= vocabulary:
        return wanted, "" if wanted == action else "normalized"
    return closest(wanted or action, valid), "closest"


def closest(action: str, valid: Sequence[str]) -> str:
    """The listed action most like ``action``: same verb if any has it, then most words in
    common order (word-level :class:`difflib.SequenceMatcher`), then most characters."""
    words = action.split()
    pool = [v for v in valid if words and v.split(" ", 1)[0] == words[0]] or list(valid)
    scored = [(SequenceMatcher(None, words, v.split(), autojunk=False).ratio(), v) for v in pool]
    best = max(score for score, _ in scored)
    ties = [v for score, v in scored if score == best]
    return max(ties, key=lambda v: SequenceMatcher(None, action, v, autojunk=False).ratio())


def _normal(action: str) -> str:
    text = action.strip().strip("`'\"").strip().lower()
    text = re.sub(r"[.!?;,]+$", "", text)
    return " ".join(w for w in text.split() if w not in ARTICLES)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 12] + " [... cut]"
