"""The command agent: the user's own agent as a subprocess, playing real ScienceWorld episodes."""

from __future__ import annotations

import json
import os
import pickle
import random
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.agents.base import Interaction
from workbench.agents.command import ECHO_AGENT, AgentCrashed, CommandAgent
from workbench.agents.guidance import Guidance, RuleForm
from workbench.envs.base import EnvTask
from workbench.envs.scienceworld import ScienceWorld

TASK = EnvTask("find-living-thing", 0, "train")
STEP_LIMIT = 8


@pytest.fixture(scope="module")
def env() -> Iterator[ScienceWorld]:
    world = ScienceWorld(step_limit=STEP_LIMIT)
    yield world
    world.close()


def start(env: ScienceWorld, step_limit: int = STEP_LIMIT) -> Interaction:
    return Interaction(env, env.reset(TASK, 0), step_limit)


def script(tmp_path: Path, body: str) -> list[str]:
    """A command running a small Python agent written for the test."""
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_example_agent_plays_an_episode(env):
    agent = CommandAgent([sys.executable, str(ECHO_AGENT)], timeout=300)
    io = start(env)
    metadata = agent.play(io, random.Random(0), Guidance())
    assert len(io.taken) == STEP_LIMIT and io.done
    assert {t.action for t in io.taken} == {"look around"}
    assert io.taken[0].thought == "Looking shows what is here."
    assert "This room is called the hallway" in io.taken[0].observation
    assert metadata == {
        "command": agent.cmd,
        "replies": STEP_LIMIT,
        "stopped": "done",
        "exit_code": 0,
    }
    assert agent.name == f"command:{Path(sys.executable).name} {ECHO_AGENT}"


def test_the_agent_receives_the_protocol_messages(env, tmp_path):
    log = tmp_path / "received.jsonl"
    cmd = script(
        tmp_path,
        f"""
        import json, sys
        actions = iter(["open door to kitchen", "go to kitchen"])
        with open({str(log)!r}, "w") as log:
            for line in sys.stdin:
                log.write(line)
                log.flush()
                if json.loads(line)["type"] == "end":
                    break
                print(json.dumps({{"action": next(actions, "STOP"), "thought": "plan"}}), flush=True)
        """,
    )
    rule = RuleForm(id="r1", description="Open doors first.", when_action="never")
    io = start(env)
    metadata = CommandAgent(cmd, timeout=300, max_valid_actions=5).play(
        io, random.Random(0), Guidance(forms=[rule])
    )
    assert [t.action for t in io.taken] == ["open door to kitchen", "go to kitchen"]
    assert metadata["stopped"] == "agent" and metadata["replies"] == 3
    reset, first, second, end = (json.loads(line) for line in log.read_text().splitlines())
    assert reset["type"] == "reset"
    assert reset["instruction"] == io.instruction
    assert reset["observation"] == io.reset.observation
    assert len(reset["valid_actions"]) == 5
    assert reset["guidance"] == "- Rule r1: Open doors first."
    assert isinstance(reset["seed"], int)
    assert first == {
        "type": "step",
        "observation": "The door is now open.",
        "reward": io.taken[0].reward,
        "score": io.taken[0].score,
        "done": False,
        "valid_actions": first["valid_actions"],
    }
    assert len(first["valid_actions"]) == 5
    assert second["observation"] == "You move to the kitchen."
    assert end == {"type": "end", "success": False, "score": io.score}


def test_a_slow_agent_times_out_and_is_killed(env, tmp_path):
    pid_file = tmp_path / "pid"
    cmd = script(
        tmp_path,
        f"""
        import os, sys, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        sys.stdin.readline()
        print("thinking very hard", file=sys.stderr, flush=True)
        time.sleep(60)
        """,
    )
    with pytest.raises(AgentCrashed, match=r"no reply within 0.5 s") as raised:
        CommandAgent(cmd, timeout=0.5).play(start(env), random.Random(0), Guidance())
    assert "thinking very hard" in str(raised.value)
    assert gone(int(pid_file.read_text()))


def test_an_agent_that_exits_with_an_error_reports_its_stderr(env, tmp_path):
    cmd = script(
        tmp_path,
        """
        import sys
        sys.stdin.readline()
        print("Traceback: boom, bad configuration", file=sys.stderr)
        sys.exit(1)
        """,
    )
    with pytest.raises(AgentCrashed, match=r"exited without replying \(exit status 1\)") as raised:
        CommandAgent(cmd, timeout=300).play(start(env), random.Random(0), Guidance())
    assert raised.value.returncode == 1
    assert "boom, bad configuration" in raised.value.stderr
    assert "boom, bad configuration" in str(raised.value)


def test_an_agent_that_dies_mid_episode_is_a_crash(env, tmp_path):
    cmd = script(
        tmp_path,
        """
        import json, sys
        sys.stdin.readline()
        print(json.dumps({"action": "look around"}), flush=True)
        sys.stdin.readline()
        raise SystemExit(3)
        """,
    )
    io = start(env)
    with pytest.raises(AgentCrashed, match="exit status 3"):
        CommandAgent(cmd, timeout=300).play(io, random.Random(0), Guidance())
    assert [t.action for t in io.taken] == ["look around"]  # what happened is kept


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I think I will look around", "unreadable reply"),
        ('{"thought": "no action"}', "unreadable reply"),
        ('{"action": 42}', "not a non-empty string"),
    ],
)
def test_a_garbage_reply_is_a_crash(env, tmp_path, reply, message):
    cmd = script(
        tmp_path,
        f"""
        import sys
        sys.stdin.readline()
        print({reply!r}, flush=True)
        sys.stdin.read()
        """,
    )
    with pytest.raises(AgentCrashed, match=message):
        CommandAgent(cmd, timeout=300).play(start(env), random.Random(0), Guidance())


def test_a_missing_program_is_a_crash(env, tmp_path):
    agent = CommandAgent([str(tmp_path / "no-such-agent")], timeout=5)
    with pytest.raises(AgentCrashed, match="could not start the agent"):
        agent.play(start(env), random.Random(0), Guidance())


def test_the_agent_is_plain_data_for_worker_processes():
    agent = CommandAgent(["python", "agent.py", "--fast"], timeout=3, name="mine")
    copy = pickle.loads(pickle.dumps(agent))
    assert (copy.cmd, copy.timeout, copy.name) == (["python", "agent.py", "--fast"], 3, "mine")
    with pytest.raises(ValueError, match="empty"):
        CommandAgent([], timeout=1)
