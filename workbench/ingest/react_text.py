"""ReAct-style plain-text logs, as agent scripts print them, also inside notebook outputs.

Many agent scripts (ReAct runs on text games, household and science worlds, HotpotQA and
their descendants)
simply print their trajectories. This importer reads that text from a log file, or from the
outputs of a Jupyter notebook's code cells (``.ipynb``), liberally:

**Episodes** are separated by marker lines:

- a line of five or more ``=``, ``-`` or ``#`` with text (``===== Episode 3 =====``,
  ``----- task: boil water (var 12) -----``), or a line starting ``Episode N``, ``Task N``,
  ``Trial N`` or ``### Trial``: always starts a new episode;
- a bare bar (``----------``, no text): starts a new episode only when the next decisive line
  is a task or header line (``Your task is to ...``, ``Env: ...``); when it is a step or score
  line the bar merely separated steps (or a closing score) of the same episode.

A file without markers is one episode. Header lines before the first marker, in an unmarked
segment without steps (``Model: gpt-4o`` at the top of a run log), apply to every episode;
``Env:``, ``Agent:`` and ``Model:`` also carry over from one episode to the next until changed.

**Inside an episode**:

- the task: the first line ``Task: ...``, ``Task Description: ...``, ``Instruction: ...``,
  ``Question: ...``, ``Goal: ...`` (value; continues on the next lines until a recognised
  line) or ``Your task is to ...`` (the whole line). Without one, the first such line the
  environment shows in an observation after the agent acted (WebShop's first page comes
  after its ``reset``): its value, or the lines under it up to a blank or ``[button]`` line;
  without that either, the marker's text after ``task:`` (or ``Task N:``) is used;
- header fields ``Env:``/``Environment:``, ``Family:``/``Task type:``/``Task family:``,
  ``Variation:``, ``Agent:``, ``Model:``, ``Seed:`` (one line each);
- steps: ``Thought:``/``Think:``, ``Action:``/``Act:``, ``Observation:``/``Obs:`` (also
  numbered: ``Thought 1:``, ``Act 2:``, ``Obs 3:``; labels in any case), and the ALFWorld
  prompt style ``> go to shelf 1`` followed by the observation on the next lines
  (``> think: ...`` is a thought; its ``OK.`` echo is dropped when an action follows, but kept
  in the step's raw text). Values continue over the next unrecognised lines. A thought, the
  action after it and the observation after that make one step of kind ``action``; a thought
  with no action is a ``thought`` step; an observation before any action (and any unlabelled
  text before the first step, such as ALFWorld's room description) is an ``observation`` step
  of the environment;
- outcome lines: ``Score: 100``, ``Final score: 35``, ``Final reward: 1``, ``Reward: 1.0``,
  ``Success: True``, ``Game Won: False``, ``Done: True``, ``SUCCESS``/``FAIL``,
  ``Task completed``/``Episode failed``. Later lines override earlier ones; the outcome's
  message joins the last line of each kind (``Score: 100; SUCCESS``). A ``Reward:`` line after
  a step's action is that step's reward instead, and the last step reward is the episode's
  score when no score line gives one. A score alone succeeds at 1 when at most 1, else at 100
  or more (``outcome_from``); an explicit flag wins. ``Done: True`` alone says nothing about
  success (it is recorded in metadata).

**ReAct's published notebooks** (``ysymyth/ReAct``) print many tasks in one cell's output;
each task becomes an episode with its outcome:

- HotpotQA/FEVER: ``<idx> Question: ...`` (or ``<idx> Claim: ...``) opens a task of family
  ``hotpotqa`` (``fever``), variation ``<idx>``, with that question as instruction; the
  ``{'steps': 3, 'answer': ..., 'gt_answer': ..., 'em': True, 'f1': 1.0, ...}`` line decides
  the outcome (``em``, else ``reward``; score ``f1``, else ``reward``), its answers kept in
  metadata; ``ohh...`` retry lines are dropped;
- ALFWorld: a game name ``pick_and_place_simple-Mug-None-Desk-308/trial_T..._..._...`` opens a
  task (family: the game type before the first ``-``, variation: the name); the prompt-key
  line after it (``pick_and_place pick``) is dropped; ``Act N: think: ...`` is a thought;
  ``<n> r <reward> rs [...] cnts [...]`` gives the outcome (won when ``True`` or above 0);
- WebShop: a bar then a bare number ``i`` opens task ``i`` (family ``webshop``, instruction
  from the first page: ``Instruction: [SEP] ... [SEP]``, or as the published notebook prints
  it, a ``Webshop`` title line, ``Instruction:`` and the goal on the lines under it);
  ``think[...]`` is a thought; ``Your score (min 0.0, max 1.0): x`` is the score (success
  only at 1). A run that ended with no score line (its running total printed, or the next
  task begun: the loop returns 0 after its last step) failed with reward 0; one the output
  stops in keeps an unknown outcome.

ReAct's running totals (``1 1 1.0 4.26``) are dropped.

**Records**: the task id is ``{env}:{family}:{variation}`` when family and variation are
given, else ``{env}:{slug of the instruction}`` so repeated runs of one instruction share a
task; the environment is ``Env:`` or ``react-text``. Episode records are keyed by where they
start: ``line 12`` in a text file, ``cell 3 line 4`` in a notebook (cell = index in the
notebook's ``cells`` list, line = line of that cell's output text). ANSI colour codes are
removed. Each step's raw value keeps its original lines.

**Errors**: a binary (NUL bytes) or non-UTF-8 file is raised, naming the line and byte; so is
a file or notebook with no steps at all. An episode with a marker and content but no steps
is yielded as an error on field ``steps``.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from store import Episode, Task
from workbench.ingest.base import (
    IngestError,
    ParsedEpisode,
    ReadContext,
    load_json,
    outcome_from,
    yielded,
)
from workbench.ingest.steps import build_steps

name = "react-text"
description = "ReAct-style text logs (Thought/Action/Observation, ALFWorld '>'), also in .ipynb"
binary = True
"""A text log may quote a binary file's bytes."""

DEFAULT_ENV = "react-text"
NUL = b"\x00"
STICKY = ("env", "agent", "model")
"""Header fields that carry over to the following episodes until a line changes them."""
CODE_SUFFIXES = {".py", ".js", ".ts", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".csv", ".html"}

# -- line classification -----------------------------------------------------------------------

_NUMBER = r"([-+]?\d+(?:\.\d+)?)"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BAR = re.compile(r"^\s*(?:={5,}|-{5,}|#{5,})(.*)$")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s*)?(?:Episode|Task|Trial)\s*#?\s*\d+\b|^\s*#{1,6}\s*Trial\b")
_STEP = re.compile(
    r"^(Initial Observation|Thought|Think|Action|Act|Observation|Obs)(?:\s+\d+)?\s*:\s?(.*)$",
    re.IGNORECASE,
)
_PROMPT = re.compile(r"^>(?!>)\s?(\S.*)$")
_THINK = re.compile(r"^think\s*:\s?(.*)$", re.IGNORECASE | re.DOTALL)
_TASK_LABELS = r"(?:Task Description|Task|Instruction|Question|Goal)"
"""The labels of a task line (``Task: ...``), in :data:`_INSTRUCTION` and :data:`_SHOWN_TASK`."""
_INSTRUCTION = re.compile(rf"^{_TASK_LABELS}\s*:\s?(.*)$", re.IGNORECASE)
_YOUR_TASK = re.compile(r"^Your task is to\b", re.IGNORECASE)
_HEADER = re.compile(
    r"^(Env|Environment|Family|Task type|Task family|Variation|Agent|Model|Seed)\s*:\s*(.*?)\s*$",
    re.IGNORECASE,
)
_REWARD = re.compile(rf"^Reward\s*[:=]\s*{_NUMBER}", re.IGNORECASE)
_SCORE = re.compile(rf"^(?:Final score|Final reward|Total reward|Score)\s*[:=]\s*{_NUMBER}", re.I)
_FLAG = re.compile(
    r"^(?:Success|Succeeded|Solved|Correct|Won|Game Won)\s*[:=]\s*(true|false|yes|no)\W*$", re.I
)
_DONE = re.compile(r"^(?:Done|Game Over)\s*[:=]\s*(true|false)\W*$", re.IGNORECASE)
_VERDICT = re.compile(r"^\W*(SUCCESS|SUCCEEDED|FAIL|FAILED|FAILURE)\W*$", re.IGNORECASE)
_PHRASE = re.compile(
    r"^(?:Task|Episode)\s+(?:(completed?|solved|succeeded|successful)|(failed|unsuccessful))\b",
    re.IGNORECASE,
)
_REACT_QUESTION = re.compile(r"^(\d+) (Question|Claim):\s?(.*)$")
"""ReAct's HotpotQA/FEVER notebooks: ``print(idx, question)`` opens each task."""
_REACT_INFO = re.compile(r"^\{'steps': \d+,.*\}\s*$")
"""ReAct's HotpotQA/FEVER notebooks: the task's ``info`` dict (``em``, ``reward``, ``f1``)."""
_ALFWORLD_GAME = re.compile(r"^([a-z_]+)-[^\s/]+/trial_T\d+_\d+_\d+\s*$")
"""ReAct's ALFWorld notebook: the game's name opens each task (its type before the first -)."""
_ALFWORLD_PREFIX = re.compile(
    r"^(?:pick_and_place|pick_clean_then_place|pick_heat_then_place|pick_cool_then_place"
    r"|look_at_obj|pick_two_obj) \w+\s*$"
)
_ALFWORLD_TALLY = re.compile(r"^\d+ r (True|False|[-+]?\d+(?:\.\d+)?) rs \[")
"""ReAct's ALFWorld notebook: ``<n> r <this game's reward> rs [...] cnts [...] ...``."""
_TALLY = re.compile(r"^\d+(?: [-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?){2,3}\s*$")
"""ReAct's running totals (``1 1 1.0 4.26``): not part of any task."""
_THINK_ACT = re.compile(r"^think\s*:\s?(.*)$|^think\[(.*?)\]?\s*$", re.IGNORECASE | re.DOTALL)
"""A thought taken as an action: ALFWorld's ``Act 1: think: ...``, WebShop's ``think[...]`` (also
when the model's reply was cut before its closing ``]``)."""
_REACT_RETRY = re.compile(r"^ohh\.\.\.")
"""ReAct's HotpotQA/FEVER notebooks print ``ohh... <output>`` when a reply did not parse."""
_INDEX = re.compile(r"^\s*(\d+)\s*$")
_WEBSHOP_SCORE = re.compile(r"Your score \(min [-\d.]+, max [-\d.]+\): ([-+]?\d+(?:\.\d+)?)")
_WEBSHOP_GOAL = re.compile(r"^WebShop \[SEP\] Instruction: \[SEP\] (.+?) \[SEP\]")
_HEADER_KEYS = {
    "env": "env",
    "environment": "env",
    "family": "family",
    "task type": "family",
    "task family": "family",
    "variation": "variation",
    "agent": "agent",
    "model": "model",
    "seed": "seed",
}
_STEP_KINDS = {
    "thought": "thought",
    "think": "thought",
    "action": "action",
    "act": "action",
    "observation": "observation",
    "obs": "observation",
    "initial observation": "observation",
}


class _Line(NamedTuple):
    """One line of log text and where it came from (``line 12``, ``cell 3 line 4``).

    Tuples, not dataclasses: one is made for every line read, and a frozen dataclass costs
    several times as much to make.
    """

    where: str
    text: str


class _Kind(NamedTuple):
    """What a line is: ``kind`` names it, ``key`` and ``value`` carry what it says."""

    kind: str
    value: Any = None
    key: str = ""


_new_kind = tuple.__new__
"""``_new_kind(_Kind, (kind, value, key))`` makes a :class:`_Kind` without running the
named tuple's Python ``__new__`` (half the cost, for the kinds made for most lines)."""
_TEXT = _Kind("text")
_HEADINGS = ("Episode", "Task", "Trial")
"""How a line that starts with a capital must start to be a heading (see ``_HEADING``)."""
_REACT_FIRST = frozenset("{_abcdefghijklmnopqrstuvwxyz")
"""First characters of ReAct notebook lines, besides digits (see :func:`_classify_react`)."""


def _classify(text: str) -> _Kind:
    """Recognise one line of log text (see the module docstring for the accepted lines)."""
    label, colon, rest = text.partition(":")
    if colon and (kind := _STEP_LABELS.get(label)) is not None:
        # most lines: a step label as logs spell it (no heading starts so), read as _STEP
        # would read it, without scanning the line
        return _step_kind(kind, rest[1:] if rest[:1].isspace() else rest)
    if colon and label in _FIELD_LABELS:
        return _classify_field(text.strip())
    if text[:1].isupper():  # step lines: no bar and no ReAct notebook line starts so
        if text.startswith(_HEADINGS) and _HEADING.match(text):
            return _Kind("marker", text.strip().lstrip("#").strip())
        return _classify_step(text)
    if match := _BAR.match(text):
        title = match.group(1).strip().strip("=-#").strip()
        return _Kind("marker", title) if title else _Kind("bar")
    if _HEADING.match(text):
        return _Kind("marker", text.strip().lstrip("#").strip())
    if react := _classify_react(text):
        return react
    return _classify_step(text)


_STEP_LABELS = {label.title(): kind for label, kind in _STEP_KINDS.items()}
"""The step labels as logs usually spell them, each as all of a line before its colon."""
_FIELD_LABELS = frozenset(
    (
        *("Reward", "Score", "Final score", "Final reward", "Total reward", "Success", "Done"),
        *("Env", "Environment", "Family", "Variation", "Agent", "Model", "Seed"),
    )
)
"""Outcome and header labels as logs usually spell them, each as all of a line before its
colon: such a line is no heading, step or prompt, and only :func:`_classify_field` reads it."""


def _step_kind(kind: str, value: str) -> _Kind:
    """A step line's kind and the text after its label (an action that is a thought:
    ``think: ...`` / ``think[...]``, is one)."""
    if kind == "action" and value[:1] in ("t", "T") and (think := _THINK_ACT.match(value)):
        return _Kind("think", think.group(1) or think.group(2))
    return _new_kind(_Kind, (kind, value, ""))


def _classify_step(text: str) -> _Kind:
    """Step lines spelled otherwise (``ACTION 3:``), prompt, outcome, header and task lines
    (:func:`_classify` has read those labelled as logs usually spell them)."""
    if match := _STEP.match(text):
        return _step_kind(_STEP_KINDS[match.group(1).lower()], match.group(2))
    if match := _PROMPT.match(text):
        if think := _THINK.match(match.group(1)):
            return _Kind("think", think.group(1))
        return _Kind("prompt", match.group(1))
    return _classify_field(text.strip())


def _classify_react(text: str) -> _Kind | None:
    """Lines that ReAct's published notebooks print around each task; ``None`` for others."""
    first = text[:1]
    if not (first in _REACT_FIRST or first.isdecimal() or text.lstrip()[:1].isdecimal()):
        return None  # (each pattern below opens with one of these, or spaces then a digit)
    if match := _REACT_QUESTION.match(text):
        family = "hotpotqa" if match.group(2) == "Question" else "fever"
        return _Kind("task", (family, match.group(1), match.group(3)))
    if match := _ALFWORLD_GAME.match(text):
        return _Kind("task", (match.group(1), text.strip(), None))
    if _REACT_INFO.match(text):
        try:
            info = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        return _Kind("info", info) if isinstance(info, dict) else None
    if match := _ALFWORLD_TALLY.match(text):
        won = match.group(1)
        return _Kind("flag", won == "True" or (won != "False" and float(won) > 0))
    if _TALLY.match(text):
        return _Kind("tally")
    if _ALFWORLD_PREFIX.match(text) or _REACT_RETRY.match(text):
        return _Kind("skip")
    if match := _INDEX.match(text):
        return _Kind("index", match.group(1))
    return None


_FIELD_START = re.compile(
    r"^\W*(?:reward|final|total|score|succe|solved|correct|won|game|done|fail|task|episode|env"
    r"|family|variation|agent|model|seed|instruction|question|goal|your)",
    re.IGNORECASE,
)
"""How every line :func:`_classify_field` recognises starts (where any of its patterns
matches, this does): most text lines are none of them, and one match tells."""


def _classify_field(text: str) -> _Kind:
    """Recognise outcome, header and task lines."""
    if not _FIELD_START.match(text):
        return _TEXT
    if match := _REWARD.match(text):
        return _new_kind(_Kind, ("reward", float(match.group(1)), ""))
    if match := _SCORE.match(text):
        return _Kind("score", float(match.group(1)))
    if match := _FLAG.match(text):
        return _Kind("flag", match.group(1).lower() in ("true", "yes"))
    if match := _DONE.match(text):
        return _Kind("done", match.group(1).lower() == "true")
    if match := _VERDICT.match(text):
        return _Kind("flag", match.group(1).upper().startswith("SUCC"))
    if match := _PHRASE.match(text):
        return _Kind("flag", match.group(1) is not None)
    if match := _HEADER.match(text):
        return _Kind("header", match.group(2), _HEADER_KEYS[match.group(1).lower()])
    if match := _INSTRUCTION.match(text):
        return _Kind("instruction", match.group(1))
    if _YOUR_TASK.match(text):
        return _Kind("instruction", text)
    return _TEXT


# -- sniffing ----------------------------------------------------------------------------------

_HEAD_STEP = re.compile(r"^(?:Thought|Action|Act|Observation|Obs)(?: \d+)?:", re.MULTILINE)
_HEAD_PROMPT = re.compile(r"^> \S", re.MULTILINE)
_HEAD_TASK = re.compile(
    r"^(?:Your task is to|Task:|Task Description:|Instruction:|Question:|Goal:)", re.MULTILINE
)
_NB_STEP = re.compile(r'(?:"|\\n)(?:Thought|Action|Act|Observation|Obs)(?: \d+)?: ')
_NB_PROMPT = re.compile(r'(?:"|\\n)> \S')
_NB_TASK = re.compile(
    r'(?:"|\\n)(?:Your task is to|Task:|Task Description:|Instruction:|Question:|Goal:)'
)


def sniff(path: Path, head: str) -> bool:
    if "\x00" in head:
        return False
    suffix = path.suffix.lower()
    if suffix == ".ipynb":
        at = head.find('"outputs"')
        return at >= 0 and _looks_like_react(head[at:], _NB_STEP, _NB_PROMPT, _NB_TASK)
    if suffix in CODE_SUFFIXES or head.lstrip().startswith(("{", "[")):
        return False
    return _looks_like_react(head, _HEAD_STEP, _HEAD_PROMPT, _HEAD_TASK)


def _looks_like_react(
    text: str, steps: re.Pattern[str], prompts: re.Pattern[str], task: re.Pattern[str]
) -> bool:
    """Two step lines, or two ``>`` prompts next to a task line (not just a quote in Markdown)."""
    if _twice(steps, text):
        return True
    return _twice(prompts, text) and task.search(text) is not None


def _twice(pattern: re.Pattern[str], text: str) -> bool:
    return len(list(itertools.islice(pattern.finditer(text), 2))) == 2


# -- one episode being read --------------------------------------------------------------------


@dataclass(slots=True)
class _Draft:
    """A step being read: the lines of its thought, action and observation so far."""

    where: str
    thought: list[str] | None = None
    action: list[str] | None = None
    observation: list[str] | None = None
    reward: float | None = None
    echo: bool = False
    """Opened by ``> think:``, whose ``OK.`` observation is only the environment's echo."""
    raw: list[str] = field(default_factory=list)
    packing: list[str] | None = None
    """The field whose lines :func:`_pack` packs (the one being read when it last ran)."""
    packed: int = 1
    """Where the lines not yet packed start in that field."""

    def has_observation(self) -> bool:
        return self.observation is not None and any(map(str.strip, self.observation))


def _joined(lines: list[str] | None) -> str:
    """The text of a multi-line value, without leading and trailing blank lines."""
    if not lines:
        return ""
    if len(lines) == 1:  # the usual value, on its label's line
        return lines[0] if lines[0].strip() else ""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


_PACK = 1024
"""Lines of one field packed into one string at a time (see :func:`_pack`)."""


def _pack(draft: _Draft, target: list[str] | None) -> None:
    """Join the lines of the field being read, since its last pack, into one string, in the
    field and in the raw lines alike (the same object in both).

    A string per line costs about 50 bytes besides its text: a 50 MB observation of short
    lines would take 80 MB as lines. Joining them as they come keeps it near its text's
    size. The field's first line (its label's) stays as it is, and so do blank lines at either
    end of a pack, so that every reader of the lines (:func:`_joined` trimming blank ends,
    :func:`_label_line` finding the field's lines in the raw ones by identity, the offsets of
    :func:`_raw_and_observation`) gives the same text as with one string per line.
    """
    if target is None or not any(
        target is f for f in (draft.thought, draft.action, draft.observation)
    ):
        return
    if draft.packing is not target:  # (a thought's, then the observation's)
        draft.packing, draft.packed = target, 1
    start, stop = draft.packed, len(target)
    if stop - start < _PACK or len(draft.raw) < stop - start:
        return
    raw, tail = draft.raw, len(draft.raw) - stop
    if any(raw[tail + i] is not target[i] for i in range(start, stop)):
        return  # the field's lines are not the raw lines' last ones: leave both as they are
    if not target[start - 1].strip():  # blank lines here may be the field's leading ones
        while start < stop and not target[start].strip():
            start += 1
    end = stop  # blank lines at the end may be the field's trailing ones: never packed
    while end > start and not target[end - 1].strip():
        end -= 1
    if end - start < 2:
        draft.packed = end
        return
    target[start:end] = raw[tail + start : tail + end] = ["\n".join(target[start:end])]
    draft.packed = start + 1


class _Episode:
    """The lines of one episode, folded into steps, header fields and an outcome as they come.

    Args:
        where: where the episode starts (its marker, or the file's first line).
        marker: the marker's text (empty for a bare bar); ``None`` before any marker.
        defaults: header fields that apply to every episode of the file.
    """

    def __init__(self, where: str, marker: str | None, defaults: dict[str, str]) -> None:
        self.where, self.marker = where, marker
        self.headers = dict(defaults)
        self.instruction: list[str] | None = None
        self.preamble: list[_Line] = []
        self.steps: list[_Draft] = []
        self.draft: _Draft | None = None
        self.target: list[str] | None = None
        self.score: float | None = None
        self.success: bool | None = None
        self.verdicts: dict[str, str] = {}
        """The last line of each kind of outcome line (score, flag, done), in order."""
        self.last_reward: tuple[float, str] | None = None
        self.done: bool | None = None
        self.extra: dict[str, Any] = {}
        """What a ReAct notebook's ``info`` adds: the answer given and the expected one."""
        self.content = False
        self.observed: list[str] | None = None
        """The observation whose text showed a task line after the agent acted (WebShop's
        first page, shown after its ``reset``): the task when no line of its own gives one."""
        self.ended = False
        """Whether the episode is known to have ended: a running total followed it, or
        another episode did (ReAct's WebShop loop prints both only once a run returned)."""

    def feed(self, line: _Line, kind: _Kind) -> None:
        """Fold one classified line into the episode."""
        if not self.content and line.text.strip():
            self.content = True
        before = self.draft
        handler = _HANDLERS.get(kind.kind, _Episode._on_text)
        handler(self, line, kind)
        if before is not None and self.draft is before:
            before.raw.append(line.text)
            if not len(before.raw) % _PACK:
                _pack(before, self.target)

    # step lines

    def _on_thought(self, line: _Line, kind: _Kind) -> None:
        draft = self._new_draft(line)
        draft.thought = [kind.value]
        self.target = draft.thought

    def _on_think(self, line: _Line, kind: _Kind) -> None:
        self._on_thought(line, kind)
        assert self.draft is not None
        self.draft.echo, self.draft.observation = True, []
        self.target = self.draft.observation

    def _on_action(self, line: _Line, kind: _Kind) -> None:
        draft = self.draft
        if (
            draft is not None
            and draft.echo
            and _joined(draft.observation).rstrip(".") in ("", "OK")
        ):
            draft.observation, draft.echo = None, False
        if draft is None or draft.action is not None or draft.observation is not None:
            draft = self._new_draft(line)
        draft.action = [kind.value]
        self.target = draft.action

    def _on_prompt(self, line: _Line, kind: _Kind) -> None:
        self._on_action(line, kind)
        assert self.draft is not None
        self.draft.observation = []
        self.target = self.draft.observation

    def _on_observation(self, line: _Line, kind: _Kind) -> None:
        draft = self.draft
        echoed = draft is not None and draft.echo and not draft.has_observation()
        if draft is None or draft.has_observation() or (draft.echo and not echoed):
            draft = self._new_draft(line)
        draft.observation = [kind.value]
        self.target = draft.observation
        self._webshop(kind.value)

    def _webshop(self, observation: str) -> None:
        """WebShop's pages: the first names the goal, the last gives the score."""
        if self.instruction is None and (goal := _WEBSHOP_GOAL.match(observation)):
            self.instruction = [goal.group(1)]
            self.headers.setdefault("family", "webshop")
        if "Your score (min " in observation and (score := _WEBSHOP_SCORE.search(observation)):
            self.score = float(score.group(1))
            self._verdict("score", _Line("", score.group(0)))

    def _new_draft(self, line: _Line) -> _Draft:
        """Close the step being read (and the preamble, before the first) and open another."""
        if self.draft is not None:
            self.steps.append(self.draft)
        elif self.preamble and not self.steps:
            self._preamble_step()
        self.draft = _Draft(where=line.where, raw=[line.text])
        return self.draft

    def _preamble_step(self) -> None:
        """Unlabelled text before the first step: the environment's first observation."""
        lines = [item.text for item in self.preamble]
        if _joined(lines):
            self.steps.append(_Draft(self.preamble[0].where, observation=lines, raw=lines))
        self.preamble = []

    # field lines

    def _on_text(self, line: _Line, kind: _Kind) -> None:
        if self.target is not None:
            self.target.append(line.text)
        elif self.draft is None:
            self.preamble.append(line)

    def _on_instruction(self, line: _Line, kind: _Kind) -> None:
        if self.instruction is not None:
            self._on_text(line, kind)
        elif self._acted():
            self._observe_task()
            self._on_text(line, kind)
        elif self.draft is not None:
            # Part of the first observation (ALFWorld's): the task, and still observed text.
            self.instruction = [kind.value]
            self._on_text(line, kind)
        else:
            self.instruction = [kind.value]
            self.target = self.instruction

    def _observe_task(self) -> None:
        """A task line in what the environment showed after the agent acted: remember the
        first such observation (a WebShop page, titled so, names the family too)."""
        draft, target = self.draft, self.target
        if self.observed is not None or draft is None or target is None:
            return
        if target is not draft.observation:
            return
        self.observed = target
        title = next((text for text in reversed(target) if text.strip()), "")
        if title.strip().lower() == "webshop":
            self.headers.setdefault("family", "webshop")

    def _acted(self) -> bool:
        """Whether the agent took a step already (so task lines are just observed text)."""
        drafts = [*self.steps, self.draft] if self.draft is not None else self.steps
        return any(d.action is not None or d.thought is not None for d in drafts)

    def _on_header(self, line: _Line, kind: _Kind) -> None:
        self.headers[kind.key] = kind.value
        if self.draft is None:
            self.target = None

    # outcome lines

    def _on_reward(self, line: _Line, kind: _Kind) -> None:
        if self.draft is not None and self.draft.action is not None:
            self.draft.reward = kind.value
            self.last_reward = (kind.value, line.text.strip())
        else:
            self._on_score(line, kind)

    def _on_score(self, line: _Line, kind: _Kind) -> None:
        self.score = kind.value
        self._verdict("score", line)

    def _on_flag(self, line: _Line, kind: _Kind) -> None:
        self.success = kind.value
        self._verdict("flag", line)
        self.target = None

    def _on_info(self, line: _Line, kind: _Kind) -> None:
        """ReAct's HotpotQA/FEVER ``info``: exact match decides, ``f1`` (or reward) scores."""
        info: dict[str, Any] = kind.value
        flag = next((info[k] for k in ("em", "reward") if isinstance(info.get(k), bool)), None)
        if flag is None and isinstance(info.get("em"), (int, float)):
            flag = info["em"] >= 1
        if flag is not None:
            self.success = flag
        number = next(
            (info[k] for k in ("f1", "reward") if isinstance(info.get(k), (int, float))), None
        )
        if number is not None:
            self.score = float(number)
        self.extra.update({k: info[k] for k in ("answer", "gt_answer") if k in info})
        self._verdict("info", line)
        self.target = None

    def _on_skip(self, line: _Line, kind: _Kind) -> None:
        self.target = None

    def _on_tally(self, line: _Line, kind: _Kind) -> None:
        """ReAct's running total (``1 0.0 0.0 0.0``), printed once a task's run returned."""
        self.ended = True
        self.target = None

    def _on_index(self, line: _Line, kind: _Kind) -> None:
        self._on_text(line, _TEXT)

    def _on_done(self, line: _Line, kind: _Kind) -> None:
        self.done = kind.value
        self._verdict("done", line)

    def _verdict(self, key: str, line: _Line) -> None:
        self.verdicts.pop(key, None)
        self.verdicts[key] = line.text.strip()

    # results

    def finish(self) -> list[_Draft]:
        """Close the last step; returns every step read (none when no step line came)."""
        if self.draft is not None:
            self.steps.append(self.draft)
            self.draft = None
        return self.steps

    def instruction_text(self) -> str:
        """The task given, else the task an observation showed, else the task named in the
        marker."""
        if self.instruction is not None:
            return _joined(self.instruction)
        if self.observed is not None and (shown := _shown_task(_joined(self.observed))):
            return shown
        marker = self.marker or ""
        match = re.search(r"\btask(?:\s*#?\s*\d+)?\s*:\s*(.+)$", marker, re.IGNORECASE)
        return match.group(1).strip() if match else ""

    def outcome_record(self) -> tuple[dict[str, Any], str]:
        """Inline outcome keys for ``outcome_from``, and the message."""
        record: dict[str, Any] = {"success": self.success, "score": self.score}
        lines = list(self.verdicts.values())
        if self._unscored_webshop():
            return {"success": False, "score": 0.0}, UNSCORED_WEBSHOP
        if self.score is None and self.last_reward is not None:
            record["score"], reward_line = self.last_reward
            lines.insert(0, reward_line)
        return record, "; ".join(lines)

    def _unscored_webshop(self) -> bool:
        """A WebShop run that ended without a score page: WebShop gives it reward 0 (the
        ReAct loop returns 0 after its last step, or the reward of a purchase page that
        printed no score)."""
        return (
            self.ended
            and self.headers.get("family") == "webshop"
            and self.score is None
            and self.success is None
            and self.last_reward is None
        )


UNSCORED_WEBSHOP = "ended without a score line (WebShop reward 0)"
"""The outcome message of a WebShop run that ended unscored."""

_SHOWN_TASK = re.compile(
    rf"^[ \t]*(?:{_TASK_LABELS}[ \t]*:[ \t]*(.*)|(Your task is to\b.*))$",
    re.IGNORECASE | re.MULTILINE,
)


def _shown_task(text: str) -> str:
    """The task an observation shows: the value of its first task line, or when that line has
    none (WebShop's page: ``Instruction:`` then the text, then ``[Search]``) the lines after it
    up to a blank line or a ``[button]``."""
    match = _SHOWN_TASK.search(text)
    if match is None:
        return ""
    value = (match.group(1) or match.group(2) or "").strip()
    if value:
        return value
    lines = []
    for line in text[match.end() :].lstrip("\n").split("\n"):
        if not line.strip() or line.lstrip().startswith("["):
            break
        lines.append(line.strip())
    return "\n".join(lines)


_HANDLERS = {
    name.removeprefix("_on_"): f for name, f in vars(_Episode).items() if name.startswith("_on_")
}
"""``_Episode``'s handler of each kind of line, by the kind's name."""


# -- building records --------------------------------------------------------------------------


def _slug(text: str, limit: int = 60) -> str:
    """A readable, stable id part for an instruction; long ones are cut and get a hash."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if not slug:
        return "untitled"
    if len(slug) <= limit:
        return slug
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    return f"{slug[:limit].rstrip('-')}-{digest}"


def _step(draft: _Draft) -> dict[str, Any]:
    """The fields of the stored step for a draft."""
    if draft.action is not None:
        kind, role = "action", "agent"
    elif draft.thought is not None:
        kind, role = "thought", "agent"
    else:
        kind, role = "observation", "environment"
    text, observation = _raw_and_observation(draft)
    return {
        "kind": kind,
        "role": role,
        "thought": _joined(draft.thought),
        "action": _joined(draft.action),
        "observation": observation,
        "reward": draft.reward,
        "raw": {"where": draft.where, "text": text},
    }


_MANY = 256
"""Lines from which an observation is cut out of the raw text (fewer: joined on its own)."""


def _raw_and_observation(draft: _Draft) -> tuple[str, str]:
    """The step's raw text (its lines) and its observation.

    An observation of many lines is a run of the raw lines (its first one the end of its
    label's line), so it is cut out of the raw text once the lines are let go: a big
    observation is then held twice at most (the text and the cut), never as its lines and
    two joined copies at once. The draft's lines are emptied.
    """
    lines, raw = draft.observation, draft.raw
    label = _label_line(raw, lines) if lines is not None and len(lines) >= _MANY else None
    if lines is None or label is None:
        return "\n".join(raw), _joined(lines)
    start, end = 0, len(lines)  # the lines _joined keeps
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if start == end:
        return "\n".join(raw), ""
    offset = sum(map(len, raw[:label])) + label + len(raw[label]) - len(lines[0])
    begin = offset + sum(map(len, lines[:start])) + start
    stop = begin + sum(map(len, lines[start:end])) + (end - start - 1)
    text = "\n".join(raw)
    raw.clear()
    lines.clear()
    return text, text[begin:stop]


def _label_line(raw: list[str], lines: list[str] | None) -> int | None:
    """Where in ``raw`` the observation ``lines`` start (their label's line), when they are
    a run of raw lines; None for a one-line observation, or lines not found as such."""
    if lines is None or len(lines) < 2:
        return None
    second = lines[1]
    for at, line in enumerate(raw):
        if line is second:
            label = at - 1
            break
    else:
        return None
    if label < 0 or not raw[label].endswith(lines[0]) or len(raw) - label < len(lines):
        return None
    if any(raw[label + i] is not line for i, line in enumerate(lines[1:], start=1)):
        return None
    return label


def _seed(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def _parsed(ctx: ReadContext, state: _Episode, drafts: list[_Draft]) -> ParsedEpisode:
    """The task, episode and steps of one episode read."""
    headers = state.headers
    env = headers.get("env") or DEFAULT_ENV
    family, variation = headers.get("family", ""), headers.get("variation", "")
    instruction = state.instruction_text()
    if family and variation:
        task_id = f"{env}:{family}:{variation}"
    else:
        task_id = f"{env}:{_slug(instruction)}"
    task = Task(
        id=task_id,
        environment=env,
        family=family,
        instruction=instruction,
        metadata={"variation": variation} if variation else {},
    )
    key = state.where.replace(" ", "-")
    episode_id = ctx.episode_id(key)
    record, message = state.outcome_record()
    metadata: dict[str, Any] = {
        "marker": state.marker,
        "model": headers.get("model"),
        "variation": variation or None,
        "done": state.done,
        **state.extra,
    }
    seed = _seed(headers.get("seed", ""))
    if seed is None and headers.get("seed"):
        metadata["seed"] = headers["seed"]
    episode = Episode(
        id=episode_id,
        task_id=task_id,
        agent=headers.get("agent") or headers.get("model") or "",
        batch_id=ctx.batch_id,
        seed=seed,
        outcome=outcome_from(record, message),
        source=ctx.source(state.where),
        metadata={k: v for k, v in metadata.items() if v not in (None, "")},
    )
    steps = build_steps(ctx, state.where, episode_id, map(_step, drafts))
    return ParsedEpisode(task=task, episode=episode, steps=steps)


# -- splitting text into episodes --------------------------------------------------------------


_SPLITTING = frozenset(("bar", "marker", "task", "index"))
"""Kinds of line that may open a new episode whatever came before."""


class _Splitter:
    """Cuts classified lines into episodes, yielding each as soon as it ends.

    A bare bar is undecided until the next decisive line: lines in between wait in
    ``pending`` and go to whichever episode the decision picks.
    """

    def __init__(self, ctx: ReadContext, first: str) -> None:
        self.ctx = ctx
        self.defaults: dict[str, str] = {}
        self.current = _Episode(first, None, self.defaults)
        self.bar: _Line | None = None
        self.pending: list[tuple[_Line, _Kind]] = []
        self.found = False

    def split(self, line: _Line, kind: _Kind) -> Iterator[ParsedEpisode | IngestError]:
        """Take a line that may start or end an episode (yielding the episodes it ends), or
        any line while a bare bar is undecided; :func:`_episodes` gives every other line to
        the episode being read."""
        if kind.kind == "bar":
            self._settle()
            if self.current.content:
                self.bar = line
            else:
                self.current = _Episode(line.where, "", self.defaults)
        elif kind.kind == "marker":
            self._settle()
            yield from self._close()
            self.current = _Episode(line.where, kind.value, self.defaults)
        elif kind.kind == "task":
            yield from self._task(line, kind)
        elif kind.kind == "index" and (self.bar is not None or self._fresh()):
            yield from self._numbered(line, kind)
        elif self.bar is not None and kind.kind in ("instruction", "header"):
            bar, pending = self.bar, self.pending
            self.bar, self.pending = None, []
            yield from self._close()
            self.current = _Episode(bar.where, "", self.defaults)
            for item in pending:
                self.current.feed(*item)
            self.current.feed(line, kind)
        elif self.bar is not None and kind.kind == "text":
            self.pending.append((line, kind))
        else:
            self._settle()
            self.current.feed(line, kind)

    def _fresh(self) -> bool:
        """Whether the current episode was just opened by a bar and has nothing yet."""
        return self.current.marker == "" and not self.current.content

    def _task(self, line: _Line, kind: _Kind) -> Iterator[ParsedEpisode | IngestError]:
        """A ReAct notebook's task line: a new episode of that family and variation."""
        self._settle()
        yield from self._close()
        family, variation, instruction = kind.value
        self.current = _Episode(line.where, line.text.strip(), self.defaults)
        self.current.headers.update(family=family, variation=variation)
        self.current.content = True
        if instruction is not None:
            self.current.instruction = [instruction]
            self.current.target = self.current.instruction

    def _numbered(self, line: _Line, kind: _Kind) -> Iterator[ParsedEpisode | IngestError]:
        """A bar then a bare number (ReAct's WebShop notebook): episode number ``n``."""
        if self.bar is not None:
            bar = self.bar
            self._settle()
            yield from self._close()
            self.current = _Episode(bar.where, "", self.defaults)
        self.current.headers["variation"] = kind.value
        self.current.content = True

    def _settle(self) -> None:
        """A bare bar that did not start an episode: its lines stay in the current one."""
        if self.bar is None and not self.pending:
            return
        for item in self.pending:
            self.current.feed(*item)
        self.bar, self.pending = None, []

    def end(self) -> Iterator[ParsedEpisode | IngestError]:
        """The input ended: the last episode ends too (whether its run did, only what it
        printed says)."""
        self._settle()
        yield from self._close(followed=False)

    def _close(self, followed: bool = True) -> Iterator[ParsedEpisode | IngestError]:
        """Yield the episode being read; ``followed``: another episode comes after it."""
        state = self.current
        state.ended = state.ended or followed
        drafts = state.finish()
        if drafts:
            self.found = True
            box = [_parsed(self.ctx, state, drafts)]
            drafts.clear()  # their lines are not held while the episode is stored
            state.target = None
            yield from yielded(box)
        elif state.marker is None:
            self.defaults.update(state.headers)
        elif state.content:
            self.found = True
            yield self.ctx.error(
                state.where, "steps", "episode has no Thought/Action/Observation steps"
            )
        self.defaults.update({k: v for k, v in state.headers.items() if k in STICKY})


def _episodes(ctx: ReadContext, lines: Iterable[_Line]) -> Iterator[ParsedEpisode | IngestError]:
    """Episodes of a stream of log lines; raises when there is not a single step."""
    splitter: _Splitter | None = None
    for line in lines:
        if splitter is None:
            splitter = _Splitter(ctx, line.where)
        kind = _classify(line.text)
        if splitter.bar is None and kind.kind not in _SPLITTING:  # (and so nothing is pending)
            splitter.current.feed(line, kind)
        else:
            yield from splitter.split(line, kind)
    if splitter is not None:
        yield from splitter.end()
    if splitter is None or not splitter.found:
        raise ctx.error("", "", "no ReAct steps found")


# -- reading files -----------------------------------------------------------------------------


def _clean(text: str) -> str:
    """A line without its line ending and ANSI colour codes."""
    text = text.rstrip("\r\n")
    return _ANSI.sub("", text) if "\x1b" in text else text


def _text_lines(ctx: ReadContext) -> Iterator[_Line]:
    """Lines of a text file, streamed; binary or non-UTF-8 content is raised."""
    with ctx.open() as handle:
        head = handle.peek(1 << 16)[: 1 << 16]
        if NUL in head:
            at = head.index(NUL)
            line = head.count(b"\n", 0, at) + 1
            raise ctx.error(f"line {line} byte {at}", "", "binary data (NUL byte), not a text log")
        number, offset, rest = 0, 0, []
        while chunk := handle.read(TEXT_CHUNK):
            cut = chunk.rfind(b"\n") + 1
            if not cut:  # no whole line yet
                rest.append(chunk)
                continue
            block = b"".join([*rest, chunk[:cut]])
            rest = [chunk[cut:]]
            yield from _block_lines(ctx, block, number, offset)
            number, offset = number + block.count(b"\n"), offset + len(block)
        if any(rest):
            yield from _block_lines(ctx, b"".join(rest), number, offset)


TEXT_CHUNK = 1 << 16
"""Bytes read at a time: the whole lines among them are decoded and split together."""


def _block_lines(ctx: ReadContext, block: bytes, number: int, offset: int) -> Iterator[_Line]:
    """The lines of ``block`` (whole lines, the first of them line ``number + 1`` of the file,
    at byte ``offset``), as reading the file line by line gives them: NUL bytes and text that
    is not UTF-8 are raised at their line, after the lines before it."""
    text = None
    if NUL not in block:
        with contextlib.suppress(UnicodeDecodeError):
            text = block.decode("utf-8-sig" if number == 0 else "utf-8")
    if text is None:  # line by line, to name the line at fault
        yield from _checked_lines(ctx, block, number, offset)
        return
    lines = text.split("\n")
    if not lines[-1]:  # the block ends with a line break, not with a line
        lines.pop()
    if "\r" in text or "\x1b" in text:  # (what _clean removes; most logs hold neither)
        lines = [_clean(line) for line in lines]
    wheres = map("line {}".format, range(number + 1, number + 1 + len(lines)))
    # _Line(where, text) for each, made without running Python code per line
    yield from map(tuple.__new__, itertools.repeat(_Line), zip(wheres, lines, strict=True))


def _checked_lines(ctx: ReadContext, block: bytes, number: int, offset: int) -> Iterator[_Line]:
    """:func:`_block_lines` one line at a time, each checked."""
    parts = block.split(b"\n")
    raws = [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    for raw in raws:
        number += 1
        if NUL in raw:
            where = f"line {number} byte {offset + raw.index(NUL)}"
            raise ctx.error(where, "", "binary data (NUL byte), not a text log")
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as error:
            where = f"line {number} byte {offset + error.start}"
            raise ctx.error(where, "", "not UTF-8 text") from None
        offset += len(raw)
        yield _Line(f"line {number}", _clean(text))


def _output_text(output: Any) -> str:
    """Text of one code-cell output: a stream's text or an execution's ``text/plain``."""
    if not isinstance(output, dict):
        return ""
    if output.get("output_type") == "stream":
        value = output.get("text")
    else:
        data = output.get("data")
        value = data.get("text/plain") if isinstance(data, dict) else None
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _notebook_lines(ctx: ReadContext) -> Iterator[_Line]:
    """Lines of the outputs of a notebook's code cells, in order."""
    notebook = load_json(ctx)
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise ctx.error("", "cells", "not a Jupyter notebook: expected an object with a list")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        outputs = cell.get("outputs")
        if not isinstance(outputs, list):
            continue
        texts = [text for text in map(_output_text, outputs) if text]
        text = "".join(t if t.endswith("\n") else t + "\n" for t in texts)
        for number, line in enumerate(text.split("\n")[:-1], start=1):
            yield _Line(f"cell {index} line {number}", _clean(line))


def read(ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
    if ctx.path.suffix.lower() == ".ipynb":
        yield from _episodes(ctx, _notebook_lines(ctx))
    else:
        yield from _episodes(ctx, _text_lines(ctx))
