"""Kept examples written out: fine-tuning data and in-context example files.

- ``chat-jsonl`` — one JSON line per example in the OpenAI chat fine-tuning format, the
  paper's action-prediction setting (its Table 32: objective, interaction history, current
  observation → next action) as a conversation: a system message saying how to act, a user
  message with the instruction and the observation the span starts from, then per step the
  assistant's action and a user message with what the environment answered (the history is the
  conversation itself). The last environment answer is left out: nothing is predicted after
  it. A ``metadata`` object carries the provenance (fine-tuning endpoints ignore unknown keys;
  strip it if yours does not).
- ``examples-md`` — one Markdown file per example, ``<env>/<kind>-<id>.md``, with front matter
  holding the provenance (example, episode, span, kind, verdict, relabeler, effects, states);
  every value is one JSON scalar or list, which YAML reads as it is, and
  :func:`read_front_matter` reads back.

Text from trajectories cannot break the structure: front-matter values are JSON-quoted on one
line, the instruction heading is one line with Markdown's special characters escaped, and
observations and actions sit in fenced blocks whose fence is longer than any run of backticks
inside them (see :mod:`workbench.markdown`); no file holds a raw control character (shown as
``\x1b`` in Markdown, written ``\u001b`` in JSON) or live HTML. Every file is written to a
temporary file beside it and renamed into place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from store import Store, SynthExample
from workbench.escapes import json_dumps
from workbench.markdown import fenced, front_matter, literal, write_atomically

ExportFormat = Literal["chat-jsonl", "examples-md"]
FORMATS: tuple[str, ...] = ("chat-jsonl", "examples-md")

SYSTEM = (
    "You are an agent acting in a text environment. Each turn you are shown what the "
    "environment answered; reply with the single next action that moves the task forward, "
    "and nothing else."
)
"""The system message of every exported conversation."""

FRONT_KEYS = (
    "example",
    "episode",
    "start",
    "end",
    "kind",
    "env",
    "verdict",
    "relabeler",
    "instruction",
    "effects",
    "start_state",
    "end_state",
)
"""The front matter's keys, in order."""


@dataclass
class ExportReport:
    """What an export wrote."""

    examples: int
    files: list[Path]


def selected(
    store: Store, *, verdict: str | None = "kept", kind: str | None = None, env: str | None = None
) -> list[SynthExample]:
    """The examples an export covers (``None``: any verdict, kind or world)."""
    return store.synth_examples(env=env, verdict=verdict, kind=kind)


def start_observation(store: Store, example: SynthExample) -> str:
    """The observation the example's span starts from (the step before it)."""
    earlier = store.steps(example.episode_id, 0, example.start)
    return earlier[-1].observation if earlier else ""


# -- chat-jsonl -------------------------------------------------------------------------------


def conversation(example: SynthExample, before: str) -> dict[str, Any]:
    """One example as a chat fine-tuning record."""
    messages: list[dict[str, str]] = [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Task: {example.instruction}\n\nObservation:\n{before}".rstrip(),
        },
    ]
    for position, action in enumerate(example.actions):
        if position:
            messages.append({"role": "user", "content": example.observations[position - 1]})
        messages.append({"role": "assistant", "content": action})
    return {"messages": messages, "metadata": provenance(example)}


def provenance(example: SynthExample) -> dict[str, Any]:
    """Where an example came from and what the filters made of it."""
    return {
        "example": example.id,
        "episode": example.episode_id,
        "start": example.start,
        "end": example.end,
        "kind": example.kind,
        "env": example.env,
        "verdict": example.verdict,
        "relabeler": example.relabeler,
        "instruction": example.instruction,
        "effects": list(example.effects),
        "start_state": example.start_state,
        "end_state": example.end_state,
    }


def chat_lines(store: Store, examples: Iterable[SynthExample]) -> Iterator[str]:
    """The JSON lines of ``examples`` (examples without actions are left out)."""
    for example in examples:
        if example.actions:
            record = conversation(example, start_observation(store, example))
            yield json_dumps(record)


# -- examples-md ------------------------------------------------------------------------------


def example_markdown(example: SynthExample, before: str) -> str:
    """One example as an in-context example file."""
    parts = [front_matter(provenance(example)), f"# {literal(example.instruction)}", ""]
    parts += ["Observation:", "", fenced(before or "(nothing recorded)"), ""]
    for number, (action, observation) in enumerate(
        zip(example.actions, example.observations, strict=False), start=1
    ):
        parts += [f"Action {number}:", "", fenced(action), ""]
        parts += [f"Observation {number}:", "", fenced(observation), ""]
    return "\n".join(parts)


def markdown_name(example: SynthExample) -> str:
    """The file an example is written to, relative to the output folder."""
    world = re.sub(r"[^A-Za-z0-9_.-]+", "-", example.env).strip("-.") or "world"
    return f"{world}/{example.kind}-{example.id}.md"


# -- writing ----------------------------------------------------------------------------------


def export_examples(
    store: Store,
    out: Path,
    fmt: ExportFormat,
    *,
    verdict: str | None = "kept",
    kind: str | None = None,
    env: str | None = None,
) -> ExportReport:
    """Write the selected examples: ``chat-jsonl`` to the file ``out``, ``examples-md`` into
    the folder ``out`` (one file per example).

    Raises:
        ValueError: an unknown format, or ``out`` is of the wrong sort (a folder for
            ``chat-jsonl``, a file for ``examples-md``).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose {' or '.join(FORMATS)}")
    examples = selected(store, verdict=verdict, kind=kind, env=env)
    if fmt == "chat-jsonl":
        if out.is_dir():
            raise ValueError(f"{out} is a folder; chat-jsonl writes one file")
        lines = list(chat_lines(store, examples))
        write_atomically(out, "".join(line + "\n" for line in lines))
        return ExportReport(len(lines), [out])
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file; examples-md writes a folder of files")
    files = []
    for example in examples:
        path = out / markdown_name(example)
        write_atomically(path, example_markdown(example, start_observation(store, example)))
        files.append(path)
    return ExportReport(len(files), files)
