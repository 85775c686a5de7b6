"""The self-instruct judgment by any OpenAI-compatible model (:class:`OpenAIProposer`).

One structured-output call per passage (purpose ``synth.propose``, temperature 0), as the
paper samples three instructions per document: the model reads the passage, the numbered
world tasks the instructions may be played in (each with its documented goal, objects and
places) and the world's commands, and answers ``n`` tasks, each with its instruction, the
number of its world task and the objects and places it names. The answer is checked
mechanically (:func:`workbench.synth.proposer.check_proposals` plus the count and the task
numbers); a failing answer gets one correction naming the problems, a second failure raises
:class:`~workbench.llm.answers.CheckFailed`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient
from workbench.synth.proposer import Ground, Proposal, ProposalRequest, check_proposals

PURPOSE = "synth.propose"
SHOWN_ENTITIES = 30
"""Objects of a world task listed in the prompt (its most relevant ones)."""
SHOWN_EXAMPLES = 12
"""Example commands of a world task listed in the prompt."""

SYSTEM_PROMPT = """\
You write tasks for an agent that acts in a text-based environment by typing commands. You \
are given one passage of the environment's documentation (a task description, the help of a \
command, a kind of object, or the opening text of a game), the world tasks your tasks may be \
played in, and the commands the environment documents.

Based on the passage, exemplify the tasks a user of this environment frequently performs. \
Each task is one instruction to the agent: concrete, achievable in a few dozen commands \
inside the chosen world task, and about what the passage documents. Vary them: do not \
propose the same task twice in other words.

Answer with one JSON object with a field `tasks`, a list of exactly the number of tasks \
asked. Each task has:

- instruction: what the agent is asked to do, in one or two sentences.
- world_task: the number of the world task it is played in, from the list given.
- entities: the objects and places of that world task the instruction names, spelled as \
listed. Name no object or place the chosen world task does not list."""

REQUEST_TEMPLATE = """\
<passage id="{id}" kind="{kind}">
{text}
</passage>

World tasks the tasks may be played in:
{grounds}

Commands the environment documents: {commands}

Propose {n} task(s)."""

GROUND_TEMPLATE = """\
[{number}] {family}, variation {variation}
  goal: {goal}
  objects: {entities}
  places: {places}
  commands it accepts, e.g.: {examples}"""

CORRECTION_TEMPLATE = """\
Your tasks cannot be used: {problems}. Answer again with the whole JSON object: exactly {n} \
task(s), each played in a listed world task (1 to {count}) and naming only objects and places \
that world task lists."""


class ProposedTask(BaseModel):
    """One task the model proposes."""

    model_config = ConfigDict(extra="forbid")

    instruction: str
    world_task: int
    """The number of its world task in the prompt's list (from 1)."""
    entities: list[str] = Field(default_factory=list)


class ProposalAnswer(BaseModel):
    """The model's tasks for one passage."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[ProposedTask]


class OpenAIProposer:
    """The :class:`~workbench.synth.proposer.Proposer` over a chat model."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.name = f"openai:{client.model}"

    def propose(self, request: ProposalRequest) -> list[Proposal]:
        """The model's ``request.n`` tasks for the passage (purpose ``synth.propose``),
        checked; corrected once, else an error.

        Raises:
            ModelError: the call failed, or the tasks still fail the check after one
                correction (:class:`~workbench.llm.answers.CheckFailed`, naming each problem).
        """
        if not request.grounds:
            return []
        answer = checked_answer(
            self.client,
            [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": render_request(request)},
            ],
            ProposalAnswer,
            purpose=PURPOSE,
            check=lambda answer: check_answer(request, answer),
            correction=lambda problems: CORRECTION_TEMPLATE.format(
                problems="; ".join(problems), n=request.n, count=len(request.grounds)
            ),
            failure="the model's tasks still fail their check after a correction",
        )
        return proposals_of(request, answer)


def render_request(request: ProposalRequest) -> str:
    """The user message: the passage, the numbered world tasks and the commands."""
    passage = request.passage
    commands = ", ".join(f"`{a.template}`" for a in request.actions) or "(none documented)"
    return REQUEST_TEMPLATE.format(
        id=passage.id,
        kind=passage.kind,
        text=passage.text.strip(),
        grounds="\n".join(
            _render_ground(number, g) for number, g in enumerate(request.grounds, start=1)
        ),
        commands=commands,
        n=request.n,
    )


def _render_ground(number: int, ground: Ground) -> str:
    return GROUND_TEMPLATE.format(
        number=number,
        family=ground.family,
        variation=ground.variation,
        goal=ground.goal or "(not documented)",
        entities=", ".join(ground.entities[:SHOWN_ENTITIES]) or "(none listed)",
        places=", ".join(ground.places) or "(none listed)",
        examples="; ".join(ground.examples[:SHOWN_EXAMPLES]) or "(none listed)",
    )


def check_answer(request: ProposalRequest, answer: ProposalAnswer) -> list[str]:
    """What is wrong with the model's answer: not exactly ``n`` tasks, a world task number
    out of range, or anything :func:`check_proposals` finds."""
    problems = []
    if len(answer.tasks) != request.n:
        problems.append(f"{len(answer.tasks)} task(s) were given, {request.n} were asked")
    count = len(request.grounds)
    for number, task in enumerate(answer.tasks, start=1):
        if not 1 <= task.world_task <= count:
            problems.append(
                f"task {number} names world task {task.world_task}, not one of 1 to {count}"
            )
    if problems:
        return problems
    return check_proposals(request, proposals_of(request, answer))


def proposals_of(request: ProposalRequest, answer: ProposalAnswer) -> list[Proposal]:
    """The answer's tasks as proposals in their world tasks (numbers already checked)."""
    return [
        Proposal(
            instruction=task.instruction.strip(),
            ground=request.grounds[task.world_task - 1],
            entities=tuple(dict.fromkeys(e.strip() for e in task.entities if e.strip())),
        )
        for task in answer.tasks
    ]
