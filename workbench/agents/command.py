"""Run the user's own agent as a subprocess, one process per episode, over JSON lines.

The workbench writes one JSON object per line to the agent's stdin:

- ``{"type": "reset", "instruction", "observation", "valid_actions", "guidance", "seed"}``
  when the episode starts (``guidance`` is the guidance as prompt text, often empty);
- ``{"type": "step", "observation", "reward", "score", "done", "valid_actions"}`` after
  each action;
- ``{"type": "end", "success", "score"}`` when the episode is over.

The agent answers each reset and step with one line ``{"action": "...", "thought": "..."}``;
``{"action": null}`` or ``"STOP"`` ends the episode. ``valid_actions`` carries at most
``max_valid_actions`` entries: when there are more, a sample in which every verb gets a turn
(:func:`workbench.agents.base.sample_actions`). Success is read from the environment, never from the agent.

A reply that does not come within the timeout, a line that is not such an object, or the
process exiting early raise :class:`AgentCrashed` with the tail of its stderr. The process
(and anything it started) is killed when the episode ends, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from workbench.agents.base import AgentSpec, Interaction, OutOfSteps
from workbench.agents.guidance import STOP, Guidance

ECHO_AGENT = Path(__file__).resolve().parent / "examples" / "echo_agent.py"
"""A tiny example agent script speaking the protocol."""

STDERR_TAIL = 2_000
"""Characters of the agent's stderr kept in an :class:`AgentCrashed` message."""


class AgentCrashed(RuntimeError):
    """The agent process timed out, crashed, exited early or wrote an unreadable reply.

    Attributes:
        stderr: the tail of the process's stderr.
        returncode: its exit status, if it had exited.
    """

    def __init__(self, message: str, stderr: str = "", returncode: int | None = None) -> None:
        full = f"{message}\n--- agent stderr (tail) ---\n{stderr}" if stderr.strip() else message
        super().__init__(full)
        self.stderr = stderr
        self.returncode = returncode


class CommandAgent:
    """An agent that is a command speaking JSON lines (picklable: plain data only).

    Args:
        cmd: the command and its arguments, e.g. ``["python", "my_agent.py"]``.
        timeout: seconds the agent may take for each reply.
        max_valid_actions: most valid actions sent per message.
        name: recorded as the episode's agent; default ``command:<program> <args>``.
        cwd: working directory of the process; ``None`` for the current one.
        grace: seconds the process may take to exit after the end message before it is
            killed.
    """

    def __init__(
        self,
        cmd: Sequence[str],
        timeout: float = 30.0,
        *,
        max_valid_actions: int = 200,
        name: str | None = None,
        cwd: str | None = None,
        grace: float = 2.0,
    ) -> None:
        if not cmd:
            raise ValueError("the agent command is empty")
        self.cmd = [str(part) for part in cmd]
        self.timeout = timeout
        self.max_valid_actions = max_valid_actions
        self.name = name or "command:" + " ".join([Path(self.cmd[0]).name, *self.cmd[1:]])
        self.cwd = cwd
        self.grace = grace

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        io = interaction
        with _Process(self.cmd, self.timeout, self.cwd, self.grace) as process:
            process.send(
                {
                    "type": "reset",
                    "instruction": io.instruction,
                    "observation": io.observation,
                    "valid_actions": self._valid(io),
                    "guidance": guidance.as_text(),
                    "seed": rng.randrange(2**31),
                }
            )
            replies, stopped = 0, "done"
            with contextlib.suppress(OutOfSteps):
                while not io.done:
                    action, thought = process.reply()
                    replies += 1
                    if action is None:
                        stopped = "agent"
                        break
                    result = io.act(action, thought)
                    if io.done:
                        break
                    process.send(
                        {
                            "type": "step",
                            "observation": result.observation,
                            "reward": result.reward,
                            "score": result.score,
                            "done": result.done,
                            "valid_actions": self._valid(io),
                        }
                    )
            process.send(
                {"type": "end", "success": io.env.success(), "score": io.score}, quiet=True
            )
        return {
            "command": self.cmd,
            "replies": replies,
            "stopped": stopped,
            "exit_code": process.returncode,
        }

    def _valid(self, io: Interaction) -> list[str]:
        valid = io.env.valid_actions()
        if len(valid) <= self.max_valid_actions:
            return valid
        return io.sample_valid(valid, self.max_valid_actions, chars=10**9)


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> CommandAgent:
    """The user's agent command from the spec (registered as ``command``)."""
    return CommandAgent(spec.cmd, timeout=spec.timeout)


class _Process:
    """One agent process: JSON lines in, replies out (read by a thread, so waits can time
    out), stderr to a temporary file for crash reports."""

    _EOF = object()

    def __init__(self, cmd: list[str], timeout: float, cwd: str | None, grace: float) -> None:
        self.timeout, self.grace = timeout, grace
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __exit__)
        try:
            self.popen = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                cwd=cwd,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                start_new_session=True,  # its own process group: killed with its children
            )
        except OSError as exc:
            self.stderr.close()
            raise AgentCrashed(f"could not start the agent {cmd!r}: {exc}") from None
        self.lines: queue.Queue[Any] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.returncode: int | None = None

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line)
        self.lines.put(self._EOF)

    def send(self, message: dict[str, Any], quiet: bool = False) -> None:
        assert self.popen.stdin is not None
        try:
            self.popen.stdin.write(json.dumps(message) + "\n")
            self.popen.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            if not quiet:
                raise self.crashed("the agent stopped reading its input", wait=True) from None

    def reply(self) -> tuple[str | None, str]:
        """The next reply's ``(action, thought)``; ``None`` as the action means stop."""
        while True:
            try:
                line = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                raise self.crashed(f"no reply within {self.timeout:g} s") from None
            if line is self._EOF:
                raise self.crashed("the agent exited without replying", wait=True)
            if line.strip():
                return _parse_reply(line, self)

    def crashed(self, message: str, wait: bool = False) -> AgentCrashed:
        """Stop the process (waiting ``grace`` seconds first if ``wait``) and describe it."""
        self.stop(kill=not wait)
        if wait and self.returncode is not None:
            message = f"{message} (exit status {self.returncode})"
        return AgentCrashed(message, self.stderr_tail(), self.returncode)

    def stderr_tail(self) -> str:
        size = self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, size - STDERR_TAIL))
        return self.stderr.read().decode("utf-8", "replace")

    def stop(self, kill: bool = False) -> None:
        """End the process: close its input and, unless ``kill``, give it ``grace`` seconds
        to exit; if it is still running, kill its process group. Safe to call twice."""
        if self.returncode is not None:
            return
        with contextlib.suppress(OSError, ValueError):
            self.popen.stdin.close()
        if not kill:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(self.grace)
        if self.popen.returncode is None:  # not reaped yet, so its group id is still ours
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
        self.returncode = self.popen.wait()
        self.reader.join(timeout=self.grace)

    def __enter__(self) -> _Process:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop(kill=exc[0] is not None)
        finally:
            with contextlib.suppress(OSError, ValueError):
                self.popen.stdout.close()
            self.stderr.close()


def _parse_reply(line: str, process: _Process) -> tuple[str | None, str]:
    try:
        reply = json.loads(line)
    except json.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict) or "action" not in reply:
        raise process.crashed(f'unreadable reply (want {{"action": ...}}): {line.strip()[:200]!r}')
    action, thought = reply["action"], reply.get("thought") or ""
    if action is not None and (not isinstance(action, str) or not action.strip()):
        raise process.crashed(f"the reply's action is not a non-empty string: {action!r}")
    if not isinstance(thought, str):
        thought = json.dumps(thought)
    if action is None or action.strip().upper() == STOP:
        return None, thought
    return action.strip(), thought
