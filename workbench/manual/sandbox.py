"""The Planner's code, run in a child process against a narrow environment API.

A Planner (model-written or scripted) answers with Python code as its plan. That code is
never executed in this process: :func:`run_code` starts a child interpreter (isolated: ``-I``,
an empty environment, so no key or path of the parent leaks into it) under an address-space
limit, sends it the code, and relays each call the code makes over its pipe to the real
environment here. The child sees only this API:

- ``act(action) -> str``: take one action; returns the observation (or, when a rule of the
  manual vetoed or replaced it, the rule's note, which ``overruled(text)`` recognises);
- ``look() -> str``, ``inventory() -> str``, ``valid_actions() -> list[str]``;
- ``stop()``: end the episode here (a rule may veto that too);
- ``EpisodeOver``: raised by any call once the episode has ended.

The child may think between two calls for at most :attr:`~workbench.limits.Limits.seconds`
of its own CPU time (the environment's time is not counted, nor a busy machine's: a loaded
machine slows the child down without using up its allowance), and may wait without thinking
for at most :data:`IDLE_SECONDS`; it may make at most :data:`MAX_CALLS` calls. Past any of
these, or past its memory, it is killed and the run ends with a clear status. What the code
printed comes back with the result, clipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from workbench.limits import Limits

PLAN_LIMITS = Limits(seconds=5.0, memory_mb=256)
"""What one block of plan code may use: seconds of its own between two calls, and memory."""
STARTUP_SECONDS = 60.0
"""How long the child's interpreter may take to start (not counted against the code)."""
IDLE_SECONDS = 60.0
"""Wall-clock time the child may take between two calls whatever CPU it uses (code that
sleeps or blocks thinks without spending CPU)."""
POLL_SECONDS = 0.1
"""How often the child's CPU time is read while it thinks."""
MAX_CALLS = 2000
"""Most API calls one block of code may make."""
PRINTED_CHARS = 2000
"""Characters of what the code printed that come back."""
VETO_PREFIX = "RULE "
"""How ``act`` and ``stop`` answer an action a rule of the manual vetoed or replaced
(``overruled(text)`` tests it)."""

Status = Literal["completed", "error", "stopped", "episode over", "timeout", "memory", "died"]

CHILD = r"""
import io, json, os, sys, traceback
channel_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
channel_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0); os.dup2(null, 1)
printed = io.StringIO()
sys.stdout = sys.stderr = printed

class EpisodeOver(Exception):
    "The episode has ended: no more actions."

class _Stopped(BaseException):
    pass

def _call(name, *args):
    channel_out.write(json.dumps({"call": name, "args": list(args)}) + "\n")
    channel_out.flush()
    line = channel_in.readline()
    if not line:
        os._exit(3)
    reply = json.loads(line)
    if reply.get("over"):
        raise EpisodeOver(reply.get("note", "the episode is over"))
    if reply.get("stopped"):
        raise _Stopped()
    return reply["value"]

def act(action):
    "Take one action; returns the observation (or a rule's veto note)."
    return _call("act", str(action))

def look():
    return _call("look")

def inventory():
    return _call("inventory")

def valid_actions():
    return list(_call("valid_actions"))

def stop():
    "End the episode here (a rule may veto it: then its note comes back)."
    return _call("stop")

def overruled(text):
    "Whether an answer of act() or stop() is a rule's note (it vetoed or replaced the action)."
    return isinstance(text, str) and text.startswith(VETO_PREFIX)

def _finish(status, error=""):
    channel_out.write(json.dumps({"done": status, "error": error,
                                  "printed": printed.getvalue()[-PRINTED_CHARS:]}) + "\n")
    channel_out.flush()
    os._exit(0)

channel_out.write(json.dumps({"ready": True}) + "\n")
channel_out.flush()
source = json.loads(channel_in.readline())["code"]
names = {"__name__": "__plan__", "act": act, "look": look, "inventory": inventory,
         "valid_actions": valid_actions, "stop": stop, "overruled": overruled,
         "EpisodeOver": EpisodeOver}
try:
    exec(compile(source, "<plan>", "exec"), names)
except _Stopped:
    names.clear(); _finish("stopped")
except EpisodeOver:
    names.clear(); _finish("episode over")
except MemoryError:
    names.clear(); _finish("memory", "MemoryError: the code ran out of its memory")
except BaseException as error:
    names.clear()
    line = traceback.format_exception_only(type(error), error)[-1].strip()
    where = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "<plan>"]
    _finish("error", (f"line {where[-1].lineno}: " if where else "") + line)
names.clear()
_finish("completed")
"""


class EnvironmentAPI(Protocol):
    """What the child's calls reach: the real environment, behind the manual's rules."""

    def act(self, action: str) -> str:
        """Take ``action`` (or return a rule's note starting :data:`VETO_PREFIX`)."""
        ...

    def stop(self) -> str:
        """End the episode (returns a rule's note when a rule vetoes that)."""
        ...

    def look(self) -> str: ...

    def inventory(self) -> str: ...

    def valid_actions(self) -> list[str]: ...

    def over(self) -> bool:
        """Whether the episode has ended."""
        ...


@dataclass
class CodeRun:
    """How one block of plan code ended."""

    status: Status
    error: str = ""
    """What went wrong, in one line (empty when nothing did)."""
    printed: str = ""
    """What the code printed (clipped)."""
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    """``(call, argument, answer)`` for every API call, in order (answers clipped)."""

    @property
    def ok(self) -> bool:
        """The code ran to its end, or ended the episode as it meant to."""
        return self.status in ("completed", "stopped", "episode over")

    def feedback(self, chars: int = 4000) -> str:
        """The run as the Planner reads it before its next cycle."""
        lines = [
            f"> {argument}\n{answer}" if call == "act" else f"[{call}] {answer}"
            for call, argument, answer in self.calls
            if call in ("act", "stop")
        ]
        lines.append(f"Code ended: {self.status}" + (f" ({self.error})" if self.error else ""))
        if self.printed.strip():
            lines.append(f"Printed:\n{self.printed.strip()}")
        text = "\n".join(lines)
        return text if len(text) <= chars else "…" + text[-chars:]


def _limit(limits: Limits) -> Callable[[], None]:
    def apply() -> None:
        limits.apply()
        os.setsid()  # its own process group: killed whole

    return apply


def run_code(code: str, api: EnvironmentAPI, limits: Limits = PLAN_LIMITS) -> CodeRun:
    """Run ``code`` in a limited child process, relaying its calls to ``api``."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-I",
            "-c",
            f"VETO_PREFIX = {VETO_PREFIX!r}\nPRINTED_CHARS = {PRINTED_CHARS}\n{CHILD}",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={},
        preexec_fn=_limit(limits),
        text=True,
        bufsize=1,
    )
    run = CodeRun("completed")
    try:
        if _read(child, STARTUP_SECONDS) is None:
            run.status, run.error = "died", "the code's process did not start"
            return run
        _send(child, {"code": code})
        _relay(child, api, limits, run)
    except BrokenPipeError:
        _died(child, run)
    finally:
        _end(child)
    return run


def _send(child: subprocess.Popen, message: dict) -> None:
    assert child.stdin is not None
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()


def _read(child: subprocess.Popen, seconds: float) -> str | None:
    """The child's next line, or ``None`` when it says nothing within ``seconds``."""
    assert child.stdout is not None
    ready, _, _ = select.select([child.stdout], [], [], seconds)
    return child.stdout.readline() if ready else None


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process ``pid`` has used so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _next_line(child: subprocess.Popen, limits: Limits) -> str | None:
    """The child's next line, or ``None`` once it has thought :attr:`Limits.seconds` of CPU
    time (or waited :data:`IDLE_SECONDS`) since its last one."""
    start, waited = _cpu_seconds(child.pid), 0.0
    while waited < IDLE_SECONDS:
        line = _read(child, POLL_SECONDS)
        if line is not None:
            return line
        waited += POLL_SECONDS
        if _cpu_seconds(child.pid) - start > limits.seconds:
            return None
    return None


def _relay(child: subprocess.Popen, api: EnvironmentAPI, limits: Limits, run: CodeRun) -> None:
    for _ in range(MAX_CALLS + 1):
        line = _next_line(child, limits)
        if line is None:
            run.status = "timeout"
            run.error = f"the code ran {limits.seconds:g} s without calling the environment"
            return
        if not line:
            _died(child, run)
            return
        message = json.loads(line)
        if "done" in message:
            run.status, run.error = message["done"], message.get("error", "")
            run.printed = message.get("printed", "")
            return
        if len(run.calls) >= MAX_CALLS:
            break
        _send(child, _answer(api, message, run))
    run.status = "error"
    run.error = f"the code made more than {MAX_CALLS} calls"


def _answer(api: EnvironmentAPI, message: dict, run: CodeRun) -> dict:
    """Perform one call of the child's and say what came back."""
    name = message.get("call", "")
    args = message.get("args") or []
    argument = str(args[0]) if args else ""
    if api.over():
        return {"over": True, "note": "the episode is over"}
    if name == "act":
        value = api.act(argument)
    elif name == "stop":
        value = api.stop()
        if not value.startswith(VETO_PREFIX):
            run.calls.append((name, "", "stopped"))
            return {"stopped": True}
    elif name == "look":
        value = api.look()
    elif name == "inventory":
        value = api.inventory()
    elif name == "valid_actions":
        value = api.valid_actions()
    else:
        return {"over": True, "note": f"unknown call {name!r}"}
    run.calls.append((name, argument, str(value)[:600]))
    return {"value": value}


def _died(child: subprocess.Popen, run: CodeRun) -> None:
    try:
        code = child.wait(timeout=2)
    except subprocess.TimeoutExpired:
        code = None
    run.status = "died"
    run.error = f"the code's process ended (exit status {code}) before it finished"


def _end(child: subprocess.Popen) -> None:
    """Kill the child's process group if it is still there, and reap it."""
    if child.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, 9)
    child.wait()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
