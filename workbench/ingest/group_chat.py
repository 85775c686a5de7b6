"""Multi-agent group chats: a list of messages each naming its speaker, with the question and
the outcome beside it, one run per record.

AutoGen/AG2 group chats and the files multi-agent benchmarks keep of them hold records like::

    {"question": "How many primes are below 20?", "is_correct": false, "ground_truth": "8",
     "history": [
        {"role": "user", "name": "Admin", "content": "How many primes are below 20?"},
        {"role": "user", "name": "Coder", "content": "I count 9: 2, 3, 5, 7, 11, 13, 17, 19, 21."},
        {"role": "user", "name": "Critic", "content": "Agreed, 9."}]}

Each message is one step whose agent is its speaker (``name``; or a ``role`` that is an
agent's name, as Magentic-One writes ``WebSurfer`` or ``Orchestrator (thought)``), read as
the OpenAI chat importer reads messages (:mod:`workbench.ingest.openai_chat`, which also
reads such lists when they carry tool calls). The task is the record's question
(``question``, ``problem``, ``query``, ``prompt``, ``instruction``), else the first
user message; the outcome comes from ``is_correct``, ``correct``, ``success``, ``score`` and
the like, inline or under ``info``, ``metadata`` or ``result``, or from ``--results``. The
container is a JSON object, an array of them, or JSON lines (:mod:`~workbench.ingest.record_files`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from workbench.ingest import openai_chat
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext
from workbench.ingest.record_files import Record, Results, read_records

name = "group-chat"
description = "multi-agent group chats (AutoGen/AG2, Magentic-One): {content, role, name} messages"

HISTORY_KEYS = ("history", "chat_history", "groupchat", "group_chat", "messages", "conversation")
"""Keys a record's message list may sit under, in the order they are tried."""
QUESTION_KEYS = ("question", "problem", "query", "prompt", "instruction")
"""Keys whose text is the record's task."""
TOOL_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call"})
"""Message keys of tool-calling chat logs, which the OpenAI chat importer reads."""


def sniff(path: Path, head: str) -> bool:
    """A JSON/JSONL file whose first record holds a list of messages that name their speaker
    (``name`` and ``content``, no tool calls)."""
    shape = openai_chat.head_shape(head)
    if shape is None or shape.strings.get("format") == "trajectory-workbench":
        return False
    return any(
        key in shape.lists
        and {"name", "content"} <= (keys := shape.children.get(key, set()))
        and not keys & TOOL_KEYS
        for key in HISTORY_KEYS
    )


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    """Yield one episode per record; unreadable records are yielded as errors."""
    results = Results.load(ctx, openai_chat.RESULT_ID_KEYS)
    yield from read_records(ctx, lambda record: _episode(ctx, record, results))


def _episode(ctx: ReadContext, record: Record, results: Results | None) -> ParsedEpisode:
    return openai_chat.episode(ctx, record, results, name, QUESTION_KEYS, HISTORY_KEYS)
