"""The query writer by any OpenAI-compatible model (:class:`OpenAIQueryWriter`).

One structured call per step (purpose ``synth.query``, temperature 0, cached by prompt hash)
shows the model the task, the latest steps of the history and the current observation, and
asks for one search query describing the examples that would help to choose the next action
(the paper's query-writing prompt, Table 35, in this project's words). The answer is checked
mechanically — a non-empty query of at most :data:`~workbench.synth.queries.QUERY_CHARS`
characters — with one correction turn, else :class:`~workbench.llm.client.ModelError`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from workbench.llm.answers import checked_answer
from workbench.llm.client import ChatClient
from workbench.synth.queries import QUERY_CHARS, cut

PURPOSE = "synth.query"
HISTORY_STEPS = 6
"""Most recent steps shown to the model."""
OBSERVATION_CHARS = 1_500
"""Characters of the current observation shown (each history observation gets a quarter)."""

SYSTEM_PROMPT = """\
You help an agent that acts in a text environment. A library holds examples of earlier \
interactions with the same environment: each has an instruction and the actions taken with \
what the environment answered. Before the agent picks its next action, you write one search \
query that finds the examples most useful now: ones that faced a similar situation or did \
the step the agent has to do next. Name the objects, places and actions that matter; leave \
out politeness and anything about the agent itself.

Answer with a JSON object {"query": "..."} holding one query of at most QUERY_CHARS \
characters.""".replace("QUERY_CHARS", str(QUERY_CHARS))

CASE_TEMPLATE = """\
The goal: {instruction}

What has been done so far:
{history}

What the agent observes now:
{observation}

Write the query that finds the examples that help to choose the next action."""

CORRECTION_TEMPLATE = """\
That query cannot be used: {problems}. Answer again with {{"query": "..."}}: one non-empty \
query of at most QUERY_CHARS characters.""".replace("QUERY_CHARS", str(QUERY_CHARS))


class QueryAnswer(BaseModel):
    """The model's retrieval query."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="One search query for useful examples.")


class OpenAIQueryWriter:
    """The :class:`~workbench.synth.queries.QueryWriter` over a chat model."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.name = f"openai:{client.model}"

    def write(self, instruction: str, history: Sequence[tuple[str, str]], observation: str) -> str:
        """The model's query (purpose ``synth.query``), checked to be usable.

        Raises:
            ModelError: the call failed, or the query is still unusable after a correction.
        """
        answer = checked_answer(
            self.client,
            query_messages(instruction, history, observation),
            QueryAnswer,
            purpose=PURPOSE,
            check=check_query,
            correction=lambda problems: CORRECTION_TEMPLATE.format(problems="; ".join(problems)),
        )
        return cut(answer.query)


def query_messages(
    instruction: str, history: Sequence[tuple[str, str]], observation: str
) -> list[dict[str, str]]:
    """The conversation that asks for one step's query."""
    recent = list(history)[-HISTORY_STEPS:]
    hidden = len(history) - len(recent)
    lines = [f"({hidden} earlier steps not shown)"] if hidden else []
    lines += [f"> {action}\n{cut(seen, OBSERVATION_CHARS // 4)}" for action, seen in recent]
    case = CASE_TEMPLATE.format(
        instruction=instruction.strip(),
        history="\n".join(lines) or "(nothing yet)",
        observation=cut(observation, OBSERVATION_CHARS),
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": case}]


def check_query(answer: QueryAnswer) -> list[str]:
    """What is wrong with a query (empty when nothing is)."""
    text = answer.query.strip()
    if not text:
        return ["the query is empty"]
    if len(text) > QUERY_CHARS:
        return [f"the query has {len(text)} characters (at most {QUERY_CHARS})"]
    return []
