"""What any tool-using agent's log says about each of its steps, whatever its world or format.

The analyzer reads an imported log (no world to consult) step by step, with evidence every
such log offers:

- a step's **effect**: a read (a lookup, a search, a listing) or a state change (a booking,
  an edit, a submission), judged from the words of the tool's or command's name and from
  what came back — never from a list of one benchmark's tools;
- the agent's **text decisions**: refusing, promising or claiming a done change, asking for
  confirmation, transferring the user, answering (a reply that ends the task is a decision
  like a call);
- the user's or environment's **push-back** after a step, and **errors** in what came back;
- **who acted**: a step that only relays or executes another agent's output (a code runner
  printing its exit code, a proxy echoing a message) is not where a mistake is made.

Every pattern here matches whole words of ordinary English or of the log formats agents
write (``exitcode``, JSON ``error`` keys); none names a world's or a benchmark's vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from workbench.analyze.signals import generic_error, refusal
from workbench.compare import call_name, is_reply, reply_text, tool_call
from workbench.llm.steps import CaseStep

Effect = Literal["read", "change", "run", "reply", "other"]
Decision = Literal["refusal", "transfer", "claim", "confirm", "question", "answer", "none"]


def _words(text: str) -> frozenset[str]:
    """A set of words written as text (a vocabulary reads better as prose than as a list)."""
    return frozenset(text.split())


_READ_VERBS = _words(
    """
    get list find search lookup look read view show fetch query check calculate compute
    count describe inspect browse open_page visit scroll page retrieve load cat head tail
    less more grep rg ls dir tree pwd which whoami echo print think plan reflect summarize
    wc diff stat locate explore navigate click hover type_text screenshot select_option
    find_in_page status log env printenv help man info verify validate estimate quote
    preview
    """
)
"""Name words of steps that only read (look something up, show it, think about it)."""
_CHANGE_VERBS = _words(
    """
    book cancel update modify change create add insert delete remove drop set put post send
    write edit replace apply patch commit push merge submit exchange return refund pay
    charge transfer upgrade downgrade reserve order purchase buy sell assign move rename
    copy install uninstall mkdir rm mv cp touch chmod sed tee save store upload register
    grant revoke approve reject close reopen publish deploy git kill restart str_replace
    create_file insert_line
    """
)
"""Name words of steps that change state (a record, a file, the world)."""
_RUN_VERBS = _words(
    """
    execute run exec python python3 pytest node bash sh make npm npx pip tox cargo java
    """
)
"""Name words of steps that run code (their errors are often the code's, written earlier)."""
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

_CHANGE_RESULT = re.compile(
    r"\b(?:successfully|succeeded|has been (?:updated|cancel+ed|created|booked|modified|changed"
    r"|deleted|removed|sent|submitted|processed|refunded|applied)|(?:updated|cancel+ed|created"
    r"|deleted|written|saved|edited|modified) (?:successfully|file))\b",
    re.I,
)
"""What a tool answers when it changed something."""

_DECISIONS: tuple[tuple[Decision, re.Pattern[str]], ...] = (
    (
        "transfer",
        re.compile(
            r"\b(?:transfer(?:ring|red)? you|connect(?:ing)? you (?:with|to)|escalat(?:e|ing)"
            r"|hand(?:ing)? (?:you |this )?(?:off|over) to|a human (?:agent|representative))\b",
            re.I,
        ),
    ),
    (
        "claim",
        re.compile(
            r"\b(?:I(?:'ve| have)|has been|have been|is now|are now|was successfully)\s+"
            r"(?:\w+\s+){0,2}(?:cancel+ed|updated|booked|changed|modified|processed|refunded"
            r"|submitted|completed|fixed|resolved|created|sent|applied|placed|exchanged"
            r"|returned|implemented)\b",
            re.I,
        ),
    ),
    (
        "confirm",
        re.compile(
            r"\b(?:(?:would|do) you (?:like|want) (?:me )?to|shall I|should I|please confirm"
            r"|can you confirm|(?:do you )?confirm (?:that|if|whether)|is that correct"
            r"|yes to (?:proceed|confirm))\b",
            re.I,
        ),
    ),
    (
        "answer",
        re.compile(
            r"\b(?:final answer|the answer is|answer:|in conclusion|therefore,? the"
            r"|TERMINATE)\b|\\boxed\{",
            re.I,
        ),
    ),
)
"""How a reply's decision reads, tried after a refusal and in order."""

_REFUSING = re.compile(
    r"\b(?:unfortunately|I(?:'m| am) (?:sorry|afraid)|not (?:able|allowed|permitted|eligible)"
    r"|cannot be|can't be|unable to|is not possible|are not possible|I (?:need|require) (?:the|your)"
    r" \w+ (?:to|in order to|before))\b",
    re.I,
)
"""Softer ways a reply declines than :func:`~workbench.analyze.signals.refusal` reads."""

_PUSHBACK = re.compile(
    r"(?:^|[.!?]\s+)(?:no|nope|wait|actually|hmm)\b(?![,.!]?\s*(?:problem|worries|thanks|thank"
    r"|that['’]?s (?:all|it|everything)|need|more|other|further))[,.!]?"
    r"|\b(?:that(?:'s| is) (?:not|wrong|incorrect)|(?:is|was|are) (?:wrong|incorrect|not correct)"
    r"|I (?:didn't|did not|never) (?:ask|want|say|mean)|not what I|you (?:misunderstood|made a"
    r" mistake)|still (?:not|doesn't|does not|fails?|failing)|(?:does|did)n't work"
    r"|(?:does|did) not work|try again|please (?:re-?check|double-check)"
    r"|(?:error|mistake|incorrect|wrong)\b)",
    re.I | re.M,
)
"""What a user, a critic or an environment says back when a step was wrong."""

_NEGATIVE = re.compile(
    r"\b(?:no|not|nothing|none|never|cannot|can't|can not|unable|unknown|invalid|failed"
    r"|fails|denied|forbidden|impossible|unrecogni[sz]ed)\b",
    re.I,
)
NEGATIVE_CHARS = 160
"""A tool's or environment's answer this short that says no is a refusal of the step."""


def negative_result(text: str) -> str | None:
    """``refused`` when a short answer to a step says no (``No known action matches``,
    ``The door is not open``): whole words of any English answer, read only in what came
    back, never in an agent's own text."""
    text = text.strip()
    if not text or len(text) > NEGATIVE_CHARS:
        return None
    return "refused" if _NEGATIVE.search(text) else None


_AGREES = re.compile(
    r"^\W*(?:yes|yeah|yep|sure|ok(?:ay)?|correct|right|confirm(?:ed)?|go ahead|please (?:do|go"
    r" ahead|proceed)|proceed|that(?:['’]s| is) (?:right|correct|fine)|sounds good|do it)\b",
    re.I,
)
"""How a user's answer opens when it agrees to what was proposed."""


def agrees(answer: str) -> bool:
    """Whether a user's answer agrees to what the reply before it proposed."""
    return bool(_AGREES.search(answer.strip()))


_QUESTION = re.compile(r"\?\s*$")
_RESTART = re.compile(
    r"\b(?:I (?:apologi[sz]e|made (?:a|an) (?:mistake|error)|misunderstood|misinterpreted"
    r"|was wrong)|my (?:mistake|apologies|error)|(?:upon|on) (?:reviewing|reflection|second thought)"
    r"|I (?:now )?reali[sz]ed?|let me (?:correct|fix|reconsider|re-?do)|let's (?:correct|reconsider)"
    r"|that (?:was|is) (?:incorrect|wrong))\b",
    re.I,
)
"""How an agent says it got something wrong and starts again."""
_RELAY = re.compile(
    r"^\s*(?:exit ?code|exitcode|return ?code|output|stdout|stderr|result|observation)\s*[:=]"
    r"|^\s*(?:Traceback \(most recent call last\)|\$ )",
    re.I,
)
"""How an executor's or proxy's message opens: the printout of running something."""
_CODE = re.compile(r"```|^\s*(?:def |class |import |from \w+ import )", re.M)


@dataclass(frozen=True)
class StepReading:
    """One agent step as the generic reading sees it."""

    index: int
    agent: str
    effect: Effect
    decision: Decision
    error: str | None
    """The error class of what came back (see :func:`~workbench.analyze.signals.generic_error`)."""
    pushback: bool
    """Whether what came back (a user's or another agent's answer) pushes back."""
    relay: bool
    """Whether the step only relays or executes another agent's output."""
    code: bool
    """Whether the step writes code (a code block, an edit of a source file)."""
    restart: bool = False
    """Whether the step (a reply) owns up to a mistake and starts again."""


def name_words(name: str) -> list[str]:
    """A tool's or command's name as lower-case words: ``getUserDetails`` and
    ``get_user_details`` both give ``['get', 'user', 'details']``."""
    return [w.lower() for w in _NAME_WORD.findall(name)]


def effect_of(action: str, observation: str = "") -> Effect:
    """Whether a step reads, changes state or runs code (``reply`` for a text reply,
    ``other`` when neither its name nor its result says).

    A tool call is read by the words of its name (the first word that is a known read or
    change verb decides; a shell command by its programs); where the name says nothing, a
    result that reports a done change makes it one."""
    if is_reply(action):
        return "reply"
    call = tool_call(action)
    words: list[str] = []
    runs = _RUN_VERBS
    if call is not None:
        name, arguments = call
        words = name_words(name)
        command = arguments.get("command") or arguments.get("cmd") or arguments.get("code")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        if isinstance(command, str) and set(words) & (_RUN_VERBS | {"shell", "terminal"}):
            words = _command_words(command) or words
            runs = _RUN_VERBS | {"go"}  # in a shell, `go` is the Go toolchain, not a move
        elif isinstance(command, str) and command in _READ_VERBS | _CHANGE_VERBS:
            words = [command, *words]  # an editor tool's sub-command (view, create, ...)
    elif (named := call_name(action)) is not None:
        words = name_words(named)  # a call whose arguments are not JSON
    else:
        words = _command_words(action)
    for word in words:
        if word in _READ_VERBS:
            return "read"
        if word in _CHANGE_VERBS:
            return "change"
        if word in runs:
            return "run"
    return "change" if _CHANGE_RESULT.search(observation[:2000]) else "other"


def _command_words(command: str) -> list[str]:
    """The programs a shell command line runs, in order (``cd`` and pipes' plumbing left out);
    a redirection into a file counts as a write."""
    words: list[str] = []
    for part in re.split(r"&&|\|\||[;|\n]", command):
        tokens = part.split()
        while tokens and ("=" in tokens[0] or tokens[0] in {"cd", "sudo", "time", "env"}):
            tokens = tokens[2:] if tokens[0] == "cd" else tokens[1:]
        if tokens:
            words.append(tokens[0].rsplit("/", 1)[-1].lower())
            if tokens[0] == "sed":  # a stream editor edits only in place
                words[-1] = "edit" if any(t.startswith("-i") for t in tokens) else "view"
        if re.search(r"(?<![<>&\d])>(?!&)", part):
            words.append("write")
    if words and words[0] in _READ_VERBS and "write" in words:
        words.insert(0, "write")
    return words


def decision_of(text: str) -> Decision:
    """What a text reply decides: ``refusal``, ``transfer``, ``claim`` (a change stated as
    done), ``confirm`` (asks the user to confirm an action), ``answer`` (a final answer),
    ``question`` (asks something else), else ``none``."""
    if refusal(text) or _REFUSING.search(text):
        return "refusal"
    found = next((name for name, pattern in _DECISIONS if pattern.search(text)), None)
    if found is not None:
        return found
    return "question" if _QUESTION.search(text.strip()) else "none"


def pushes_back(text: str) -> bool:
    """Whether a user's, critic's or environment's answer says the step before was wrong."""
    return bool(_PUSHBACK.search(text[:2000]))


def is_relay(text: str) -> bool:
    """Whether a message is the printout of running something (an executor's or a proxy's),
    not a decision of its own."""
    return bool(_RELAY.search(text[:400]))


def read_steps(steps: Sequence[CaseStep]) -> list[StepReading]:
    """Every agent step of a case read with the generic evidence (in the same order)."""
    readings: list[StepReading] = []
    said: list[tuple[str, set[str]]] = []  # (agent, words) of each earlier reply
    for step in steps:
        text = reply_text(step.action)
        answers_code = bool(readings) and readings[-1].agent != step.agent and readings[-1].code
        printout = answers_code and _is_printout(text)
        words = set(_PROSE_WORD.findall(text.lower()))
        printout = printout or _forwards(step.agent, words, said)
        if text:
            said.append((step.agent, words))
        effect = effect_of(step.action, step.observation)
        readings.append(
            StepReading(
                index=step.index,
                agent=step.agent,
                effect=effect,
                decision=decision_of(text) if effect == "reply" else "none",
                error=_error_of(effect, step.observation),
                pushback=effect == "reply" and pushes_back(step.observation),
                relay=effect == "reply" and (is_relay(text) or printout),
                code=bool(_CODE.search(text)) if text else _writes_code(step.action),
                restart=bool(text) and bool(_RESTART.search(text[:600])),
            )
        )
    return readings


_PROSE_WORD = re.compile(r"\b[A-Za-z]{3,}\b")
FORWARDED = 0.8
"""Share of a message's words found in one earlier message of another agent for it to be a
forward of that message (an orchestrator or proxy passing it on)."""
FORWARD_WORDS = 8
"""Fewest words a forwarded message has (a short acknowledgement forwards nothing)."""
FORWARD_REACH = 8
"""How many earlier replies a forward may repeat (a relay passes on what was just said)."""


def _forwards(agent: str, words: set[str], said: list[tuple[str, set[str]]]) -> bool:
    """Whether a message of ``agent`` repeats an earlier message of another agent (nearly
    every word of it found there): a relay of what that agent said."""
    if not agent or len(words) < FORWARD_WORDS:
        return False
    return any(
        other != agent and other and len(words & earlier) >= FORWARDED * len(words)
        for other, earlier in said[-FORWARD_REACH:]
    )


def _is_printout(text: str) -> bool:
    """Whether a message answering another agent's code reads as its output (numbers,
    symbols, a few words) rather than prose of its own."""
    if _CODE.search(text):
        return False
    words = _PROSE_WORD.findall(text[:2000])
    return len(words) < 12 or len(" ".join(words)) < 0.4 * len(text[:2000])


def error_of(action: str, observation: str) -> str | None:
    """The error an imported log's step met (see :func:`read_steps`)."""
    return _error_of(effect_of(action, observation), observation)


def _error_of(effect: Effect, observation: str) -> str | None:
    """The error what came back reports: any log's error signals; for a step that is not a
    read, also a short answer that says no (a lookup that finds nothing is no mistake)."""
    if effect == "reply":
        return None
    found = generic_error(observation)
    if found is None and effect != "read":
        found = negative_result(observation)
    return found


def _writes_code(action: str) -> bool:
    call = tool_call(action)
    if call is None:
        return False
    arguments = call[1]
    return any(
        isinstance(arguments.get(key), str) and "\n" in arguments[key]
        for key in ("new_str", "file_text", "content", "code", "patch", "diff")
    )
