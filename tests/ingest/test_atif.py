"""ATIF trajectories: agent steps to actions, outcomes inline or joined, clear errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from store import EpisodeFilter
from tests.ingest.helpers import (
    ACTION,
    ASSISTANT,
    FIFTY_MB,
    SYSTEM,
    USER,
    assert_reimport_adds_nothing,
    assert_stored_whole,
    bad_reasons,
    import_error,
    kinds_and_roles,
    only_episode,
)
from workbench.ingest import SAMPLES, atif, formats, import_paths


@pytest.fixture
def atif_dir(data_dir: Path) -> Path:
    return data_dir / "atif"


def trajectory(steps: list, **fields) -> dict:
    return {
        "schema_version": "ATIF-v1.4",
        "session_id": "s-1",
        "agent": {"name": "a", "version": "1"},
        "steps": steps,
        **fields,
    }


def test_one_trajectory_maps_agent_steps_to_actions(store, atif_dir):
    report = import_paths(store, [atif_dir / "hello.atif.json"], format="atif")
    assert report.episodes == 1 and report.files[0].format == "atif"
    episode = only_episode(store)
    assert episode.task_id == "terminal-bench:hello-world" and episode.family == "file-ops"
    assert episode.agent == "terminus-2"
    assert episode.metadata["session_id"] == "7f3c2a10-5b1e-4d7a-9e0f-1a2b3c4d5e6f"
    assert episode.metadata["schema_version"] == "ATIF-v1.4"
    assert episode.metadata["agent_model_name"] == "gpt-5-mini"
    assert episode.outcome.success is None  # ATIF itself carries no verdict here
    usage = episode.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cost) == (2190, 143, 0.00074)
    assert episode.started_at == datetime(2025, 10, 16, 14, 30, 0, tzinfo=UTC)
    assert episode.ended_at == datetime(2025, 10, 16, 14, 30, 8, tzinfo=UTC)
    task = store.task(episode.task_id)
    assert task.environment == "terminal-bench"
    assert task.instruction == "Create a file called hello.txt in /app containing 'Hello, world!'."

    steps = store.steps(episode.id)
    assert kinds_and_roles(steps) == [SYSTEM, USER, ACTION, ACTION, ACTION, ASSISTANT]
    ls, write, cat = steps[2], steps[3], steps[4]
    assert ls.thought == "First see what is in /app, then write the file."
    assert ls.content == "I'll check the directory and write the file."
    assert ls.action == 'bash({"command": "ls -la /app"})'
    assert ls.observation.startswith("total 8\n") and ls.tool_call_id == "call_1"
    assert write.tool_call_id == "call_2" and write.observation == "" and write.thought == ""
    assert (cat.thought, cat.observation) == ("Let me verify the content.", "Hello, world!")
    assert steps[5].content.endswith("The task is complete.")
    assert steps[2].raw["step_id"] == 3 and steps[2].timestamp is not None


def test_outcome_joins_from_a_harbor_style_result_by_session_id(store, atif_dir):
    import_paths(
        store,
        [atif_dir / "hello.atif.json"],
        format="atif",
        results=atif_dir / "hello.result.json",
    )
    episode = only_episode(store)
    assert (episode.outcome.success, episode.outcome.score) == (True, 1.0)
    assert episode.metadata["result"]["trial_name"] == "hello-world__Xk2p9"


def test_jsonl_of_trajectories_with_inline_rewards(store, atif_dir):
    report = import_paths(store, [atif_dir / "runs.jsonl"], format="atif")
    assert report.episodes == 2
    failed, passed = store.episodes()
    assert passed.task_id == "shell-puzzles:count-lines-a" and passed.source.record == "line 1"
    assert (passed.outcome.success, passed.outcome.message) == (True, "submitted")
    assert (failed.outcome.success, failed.outcome.score) == (False, 0.0)
    assert failed.outcome.message == "wrong answer: expected 17, got 18"
    assert (failed.usage.prompt_tokens, failed.usage.completion_tokens) == (640, 25)
    assert failed.usage.cost is None
    action = store.step(failed.id, 1)
    assert action.kind == "action" and action.tool_name == "shell"
    assert (action.thought, action.content) == ("wc -l gives the count.", "")
    assert action.observation == "18 /data/count-lines-b.log"


def test_array_with_content_parts_subagents_and_loose_results(store, atif_dir):
    import_paths(store, [atif_dir / "multi.json"], format="atif")
    first, second = sorted(store.episodes(), key=lambda e: e.metadata["session_id"])
    assert first.task_id.startswith("atif:prompt-")  # no task named: keyed by the prompt
    assert store.task(first.task_id).instruction == "Summarise README.md.\n[image]"
    steps = store.steps(first.id)
    assert steps[1].observation == "[subagent m-1-reader sub/m-1-reader.json]"
    assert (steps[2].kind, steps[2].observation) == ("system", "dropped 3 old steps")
    assert steps[3].content == "README.md describes a CSV tool."
    steps = store.steps(second.id)
    assert [s.kind for s in steps] == ["message", "action", "action", "observation"]
    assert [s.observation for s in steps[1:]] == ["README.md", "", "(no call) note"]
    assert steps[3].role == "environment" and steps[2].action == "pwd({})"


def test_timestamps_without_zone_are_utc_and_bad_ones_are_ignored(tmp_path, store):
    steps = [
        {"step_id": 1, "source": "user", "message": "go", "timestamp": "2025-01-02T03:04:05"},
        {"step_id": 2, "source": "agent", "message": "ok", "timestamp": "yesterday"},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trajectory(steps)))
    import_paths(store, [path], format="atif")
    episode = only_episode(store)
    assert episode.started_at == episode.ended_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert store.step(episode.id, 1).timestamp is None
    assert store.step(episode.id, 1).raw["timestamp"] == "yesterday"


def test_importing_twice_adds_nothing(store, atif_dir):
    assert_reimport_adds_nothing(store, [atif_dir / "runs.jsonl"], "atif", episodes=2)


# -- bad input --------------------------------------------------------------------------------


def test_a_bad_trajectory_fails_the_whole_import(store, atif_dir):
    path = atif_dir / "bad_steps.jsonl"
    error = import_error(store, path, "atif")
    assert str(error) == f"{path}: line 2: field 'steps': missing"
    assert store.count_episodes() == 0  # line 1 was read, then rolled back


def test_skip_bad_keeps_good_trajectories_and_names_each_bad_one(store, atif_dir):
    path = atif_dir / "bad_steps.jsonl"
    report = import_paths(store, [path], format="atif", skip_bad=True)
    assert report.episodes == 3
    assert bad_reasons(report, path) == [
        "line 2: field 'steps': missing",
        "line 3: field 'steps.1.source': unknown source 'assistant' (expected system, user or agent)",
        "line 5: invalid JSON: unterminated string starting at column 74",
    ]
    tasks = sorted(e.task_id for e in store.episodes())
    assert tasks == [
        "shell-puzzles:count-lines-c",
        "shell-puzzles:count-lines-e",
        "shell-puzzles:count-lines-f",
    ]
    unnamed = store.episodes(EpisodeFilter(task="shell-puzzles:count-lines-e"))[0]
    calls = [s for s in store.steps(unnamed.id) if s.tool_name]
    assert [s.tool_name for s in calls] == ["unnamed"]  # (the call names no function)


def test_bad_steps_name_their_field(tmp_path, store):
    path = tmp_path / "bad.json"
    records = [
        trajectory(["not a step"]),
        trajectory([{"step_id": 1, "source": "agent", "message": "", "observation": "text"}]),
        trajectory([{"step_id": 1, "source": "agent", "message": "", "tool_calls": {"a": 1}}]),
        trajectory("no list"),
        "not a trajectory",
    ]
    path.write_text(json.dumps(records))
    report = import_paths(store, [path], format="atif", skip_bad=True)
    assert report.episodes == 0
    assert bad_reasons(report, path) == [
        "record 0: field 'steps.0': expected a step object",
        "record 1: field 'steps.0.observation': expected an object with 'results'",
        "record 2: field 'steps.0.tool_calls': expected a list of tool calls",
        "record 3: field 'steps': expected a list of steps",
        "record 4: expected an ATIF trajectory object",
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("truncated.json", "line 54 column 11: invalid JSON: Expecting property name"),
        ("binary.bin", "line 1 (byte 7): a NUL byte: binary data, not text of this format"),
    ],
)
def test_broken_files_fail_naming_the_file_and_place(store, atif_dir, name, message):
    error = import_error(store, atif_dir / name, "atif")
    assert str(error).startswith(f"{atif_dir / name}: {message}")
    assert store.count_episodes() == 0


def test_a_chat_file_forced_as_atif_names_the_missing_steps(store, data_dir):
    path = data_dir / "openai-chat" / "runs.json"
    error = import_error(store, path, "atif")
    assert str(error) == f"{path}: record 0: field 'steps': missing"


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "tests/data/atif/hello.atif.json",
        "tests/data/atif/runs.jsonl",
        "tests/data/atif/multi.json",
        "workbench/samples/terminal_task.atif.json",
    ],
)
def test_sniff_accepts_atif_files(path):
    file = Path(__file__).parents[2] / path
    assert atif.sniff(file, formats.head_of(file))


@pytest.mark.parametrize(
    "head",
    [
        '{"messages": [{"role": "user", "content": "hi"}], "task_id": "t"}\n',
        '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n',
        '{"format": "trajectory-workbench", "version": 1, "task": {}, "steps": []}\n',
        '{"messages": [{"role": "user", "content": "{\\"schema_version\\": \\"ATIF-v1.4\\"}"}]}',
        '{"schema_version": "2.1", "steps": []}',
        "\x7fELF\x02\x01\x01\x00",
    ],
)
def test_sniff_rejects_other_formats(head):
    assert not atif.sniff(Path("x.json"), head)


def test_the_sample_is_detected_and_is_a_failure_without_test_runs(store):
    report = import_paths(store, [SAMPLES / "terminal_task.atif.json"])
    assert report.files[0].format == "atif" and report.episodes == 1
    episode = only_episode(store)
    assert episode.outcome.success is False and "without running the tests" in (
        episode.outcome.message
    )
    actions = [s.action for s in store.steps(episode.id) if s.kind == "action"]
    assert actions and not any("pytest" in a for a in actions)


def test_a_50_mb_observation_is_stored_whole(tmp_path, store):
    huge = "y" * FIFTY_MB + "END"
    call = {"tool_call_id": "c", "function_name": "bash", "arguments": {"command": "cat log"}}
    steps = [
        {"step_id": 1, "source": "user", "message": "Show the log."},
        {
            "step_id": 2,
            "source": "agent",
            "message": "",
            "tool_calls": [call],
            "observation": {"results": [{"source_call_id": "c", "content": huge}]},
        },
    ]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(trajectory(steps)))
    import_paths(store, [path], format="atif")
    step = store.step(only_episode(store).id, 1)
    assert_stored_whole(step.observation, huge)
