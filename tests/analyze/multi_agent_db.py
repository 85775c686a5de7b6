"""A small database of group-chat failures (steps carrying their speaker) beside a
single-agent failure, with people's causal spans on some of the chats: what the Clusters
screen and ``workbench clusters`` group by agent, and what ``l`` / ``analyze --learn`` learn
from.

Each chat asks for a small computation: the planner splits the work, the coder writes a
program with a slip in it, the executor runs it, sometimes a critic waves it through, and the
planner states the wrong result as the answer. People mark the coder's message as the cause.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from store import Batch, Episode, Outcome, Span, Step, Store, Task

WHEN = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
CODER_STEP = 2
"""The step people mark in each chat: the coder's program."""

# (question, the program the coder writes, what it prints, whether a critic speaks)
CHATS = [
    ("What is 7 squared plus one?", "print(7 * 2 + 1)", "15", True),
    ("What is the sum of the integers from 1 to 10?", "print(sum(range(1, 10)))", "45", False),
    ("How many seconds are in 3 hours?", "print(3 * 60)", "180", True),
    ("What is 15% of 80?", "print(80 * 15)", "1200", False),
    ("What is the average of 4, 8 and 9?", "print((4 + 8 + 9) / 2)", "10.5", True),
    ("What is 2 to the power of 10?", "print(2 * 10)", "20", False),
]


def chat_steps(episode_id: str, question: str, code: str, printed: str, critic: bool) -> list[Step]:
    """One group chat, a message per step, each with its speaker."""
    turns = [
        ("user", "user_proxy", question),
        ("assistant", "Planner", "Plan: Coder writes a short Python program, Executor runs it."),
        ("assistant", "Coder", f"```python\n{code}\n```"),
        ("assistant", "Executor", f"exitcode: 0 (execution succeeded)\nCode output: {printed}"),
    ]
    if critic:
        turns.append(("assistant", "Critic", "The program ran without errors; the result stands."))
    turns.append(("assistant", "Planner", f"The answer is {printed}. TERMINATE"))
    return [
        Step(
            episode_id=episode_id,
            index=i,
            kind="message",
            role=role,
            agent=agent,
            content=content,
            timestamp=WHEN,
        )
        for i, (role, agent, content) in enumerate(turns)
    ]


def door_steps(episode_id: str) -> list[Step]:
    """A single agent walking into a closed door twice (no step names an agent)."""
    steps = [
        Step(
            episode_id=episode_id,
            index=0,
            kind="observation",
            observation="This room is called the hallway.",
            timestamp=WHEN,
        )
    ]
    for i in (1, 2):
        steps.append(
            Step(
                episode_id=episode_id,
                index=i,
                kind="action",
                action="go to kitchen",
                observation="The door is not open.",
                reward=0.0,
                timestamp=WHEN,
            )
        )
    return steps


def build_agents_db(path: Path, marked: int) -> None:
    """The chats of :data:`CHATS` (``chat-0``…) and a single-agent failure (``door``), with a
    person's causal span on the coder's step of the first ``marked`` chats."""
    with Store(path) as store:
        store.put_batch(Batch(id="chats", name="chats", kind="import", created_at=WHEN))
        for i, (question, code, printed, critic) in enumerate(CHATS):
            task_id = f"group-chat:math-{i}"
            store.put_task(
                Task(id=task_id, environment="group-chat", family="math", instruction=question)
            )
            episode_id = f"chat-{i}"
            store.add_episode(
                Episode(
                    id=episode_id,
                    task_id=task_id,
                    batch_id="chats",
                    outcome=Outcome(success=False, score=0.0),
                    started_at=WHEN,
                ),
                chat_steps(episode_id, question, code, printed, critic),
            )
        store.put_task(
            Task(
                id="sw:boil:1",
                environment="scienceworld",
                family="boil",
                instruction="Your task is to boil water. First, focus on the water.",
            )
        )
        store.add_episode(
            Episode(
                id="door",
                task_id="sw:boil:1",
                batch_id="chats",
                outcome=Outcome(success=False, score=0.0),
                started_at=WHEN,
            ),
            door_steps("door"),
        )
        for i in range(marked):
            store.add_span(
                Span(episode_id=f"chat-{i}", start=CODER_STEP, end=CODER_STEP, kind="causal")
            )
