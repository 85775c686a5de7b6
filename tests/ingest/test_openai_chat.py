"""OpenAI chat message lists: one run per record, tool calls, joined results, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Store
from tests.ingest.helpers import (
    ASSISTANT,
    FIFTY_MB,
    SYSTEM,
    USER,
    assert_reimport_adds_nothing,
    assert_stored_whole,
    bad_reasons,
    import_error,
    kinds_and_roles,
    write_jsonl,
)
from workbench.ingest import SAMPLES, formats, import_paths, openai_chat


@pytest.fixture
def chat_dir(data_dir: Path) -> Path:
    return data_dir / "openai-chat"


def by_task(store: Store) -> dict[tuple[str, str | None], object]:
    """Stored episodes keyed by (task id, trial)."""
    return {(e.task_id, e.metadata.get("trial")): e for e in store.episodes()}


def test_array_file_gives_one_episode_per_record(store, chat_dir):
    report = import_paths(store, [chat_dir / "runs.json"], format="openai-chat")
    assert report.episodes == 2
    failed, passed = store.episodes()  # failures come first
    assert passed.task_id == "trivia:geo-001" and failed.task_id == "trivia:geo-002"
    assert passed.outcome.success is True and passed.outcome.score is None
    assert (failed.outcome.success, failed.outcome.score) == (False, 0.0)
    assert failed.outcome.message == "expected 'Ottawa', got 'Toronto'"
    assert passed.agent == "gpt-4o-mini" and passed.family == "geography"
    assert passed.source.format == "openai-chat" and passed.source.record == "record 0"
    assert passed.metadata["model"] == "gpt-4o-mini"
    task = store.task("trivia:geo-001")
    assert task.environment == "trivia" and task.instruction == "What is the capital of Australia?"
    steps = store.steps(passed.id)
    assert kinds_and_roles(steps) == [SYSTEM, USER, ASSISTANT]
    assert steps[2].content == "The capital of Australia is Canberra."
    assert steps[1].raw["content"][0]["type"] == "text"  # the original message, verbatim
    assert store.steps(failed.id)[0].kind == "system"  # a "developer" message


def test_jsonl_tool_calls_become_tool_call_and_tool_result_steps(store, chat_dir):
    import_paths(store, [chat_dir / "tools.jsonl"], format="openai-chat")
    runs = by_task(store)
    first = runs[("calc-tools:calc-017", "0")]
    assert first.agent == "tool-agent-v2" and first.seed == 7 and first.family == "arithmetic"
    assert (first.outcome.success, first.outcome.score) == (True, 1.0)
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (280, 37)
    steps = store.steps(first.id)
    assert [s.kind for s in steps] == ["system", "message", "tool_call", "tool_result", "message"]
    call, result = steps[2], steps[3]
    assert call.role == "assistant" and call.content == "I'll compute the product first."
    assert call.action == 'calculator({"expression": "17*23"})'
    assert (call.tool_name, call.tool_call_id) == ("calculator", "call_a1")
    assert (result.role, result.observation) == ("tool", "391")
    assert (result.tool_name, result.tool_call_id) == ("calculator", "call_a1")

    second = runs[("calc-tools:calc-017", "1")]
    assert second.id != first.id and second.outcome.success is False
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (300, 40)
    assert second.usage.cost == pytest.approx(0.0021)
    calls = [s for s in store.steps(second.id) if s.kind == "tool_call"]
    assert [c.tool_call_id for c in calls] == ["call_b1", "call_b2"]
    assert calls[1].action == 'calculator({"expression": "23+4"})' and calls[1].content == ""

    legacy = runs[("calc-tools:files-004", "0")]
    assert legacy.agent == "tool-agent-v1"
    assert (legacy.outcome.success, legacy.outcome.message) == (False, "wrong file content")
    steps = store.steps(legacy.id)
    assert steps[1].kind == "tool_call" and steps[1].tool_name == "write_file"
    assert steps[1].action == 'write_file({"path": "note.txt", "text": "done"})'
    assert (steps[2].kind, steps[2].tool_name) == ("tool_result", "write_file")
    assert steps[2].observation == "wrote 4 bytes to note.txt"


def test_outcomes_join_from_a_results_file_by_id_and_trial(store, chat_dir):
    import_paths(
        store,
        [chat_dir / "joined.jsonl"],
        format="openai-chat",
        results=chat_dir / "joined.results.jsonl",
    )
    runs = by_task(store)
    first, second = runs[("textfix:fmt-date-01", "1")], runs[("textfix:fmt-date-01", "2")]
    assert (first.outcome.success, first.outcome.message) == (True, "exact match")
    assert (second.outcome.success, second.outcome.message) == (False, "day and month swapped")
    assert second.metadata["result"]["attempt"] == 2
    assert runs[("textfix:fmt-date-02", "1")].outcome.success is None  # not in the results
    assert store.task("textfix:fmt-date-01").instruction.startswith("Reformat 03/04/2024")


def test_results_file_may_map_ids_to_results(tmp_path, store, chat_dir):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"fmt-date-01": True, "fmt-date-02": {"score": 0.5}}))
    import_paths(store, [chat_dir / "joined.jsonl"], format="openai-chat", results=results)
    runs = by_task(store)
    assert runs[("textfix:fmt-date-01", "2")].outcome.success is True  # no trial: every trial
    assert runs[("textfix:fmt-date-02", "1")].outcome.score == 0.5


def test_a_broken_results_file_is_named(tmp_path, store, chat_dir):
    results = tmp_path / "results.json"
    results.write_text('[{"instance_id": "fmt-date-01", "resolved": tru')
    error = import_error(store, chat_dir / "joined.jsonl", "openai-chat", results=results)
    assert str(results) in str(error) and "invalid JSON" in str(error)
    results.write_text('[{"resolved": true}]')
    error = import_error(store, chat_dir / "joined.jsonl", "openai-chat", results=results)
    assert "record 0" in str(error) and "no id" in str(error)
    assert store.count_episodes() == 0


def test_importing_twice_adds_nothing(store, chat_dir):
    assert_reimport_adds_nothing(store, [chat_dir / "tools.jsonl"], "openai-chat", episodes=3)


def test_the_same_prompt_without_ids_is_the_same_task(tmp_path, store):
    messages = [{"role": "user", "content": "Say hi."}, {"role": "assistant", "content": "hi"}]
    path = write_jsonl(tmp_path / "bare.jsonl", [messages, {"chat": messages, "success": False}])
    import_paths(store, [path], format="openai-chat")
    episodes = store.episodes()
    assert len(episodes) == 2 and len({e.id for e in episodes}) == 2
    assert len({e.task_id for e in episodes}) == 1
    assert episodes[0].task_id.startswith("openai-chat:")


# -- bad input --------------------------------------------------------------------------------


def test_truncated_array_fails_naming_the_record_and_rolls_back(store, chat_dir):
    path = chat_dir / "truncated.json"
    error = import_error(store, path, "openai-chat")
    assert str(error).startswith(f"{path}: record 1: invalid JSON")
    assert store.count_episodes() == 0  # record 0 was read, then rolled back


def test_truncated_array_with_skip_bad_keeps_the_records_before_the_break(store, chat_dir):
    report = import_paths(store, [chat_dir / "truncated.json"], format="openai-chat", skip_bad=True)
    assert report.files[0].status == "bad" and "record 1" in report.bad[0]
    assert [e.task_id for e in store.episodes()] == ["openai-chat:a"]


def test_bad_lines_fail_the_whole_import(store, chat_dir):
    path = chat_dir / "bad_lines.jsonl"
    error = import_error(store, path, "openai-chat")
    assert str(error).startswith(f"{path}: line 2: invalid JSON")
    assert store.count_episodes() == 0


def test_skip_bad_keeps_good_records_and_names_each_bad_one(store, chat_dir):
    path = chat_dir / "bad_lines.jsonl"
    report = import_paths(store, [path], format="openai-chat", skip_bad=True)
    assert report.episodes == 2
    assert sorted(e.task_id for e in store.episodes()) == ["openai-chat:ok-1", "openai-chat:ok-2"]
    assert len(report.bad) == 3
    assert report.bad[0].startswith(f"{path}: line 2: invalid JSON")
    assert report.bad[1].startswith(f"{path}: line 3: field 'messages': no message list")
    assert report.bad[2].startswith(f"{path}: line 4: field 'messages.1.role': missing")


def test_bad_messages_name_their_field(tmp_path, store):
    path = tmp_path / "runs.json"
    call = {"id": "c1", "type": "function", "function": {"arguments": "{}"}}
    records = [
        {"id": "fine", "messages": [{"role": "user", "content": "x"}]},
        {
            "id": "no-name",
            "messages": [
                {"role": "user", "content": "x"},
                {"role": "assistant", "tool_calls": [call]},
            ],
        },
        {"id": "bad-role", "messages": [{"role": 7, "content": "x"}]},
        {"id": "not-a-list", "messages": "hello"},
        ["not", "messages"],
    ]
    path.write_text(json.dumps(records))
    report = import_paths(store, [path], format="openai-chat", skip_bad=True)
    assert report.episodes == 1
    assert bad_reasons(report, path) == [
        "record 1: field 'messages.1.tool_calls.0.function.name': missing function name",
        "record 2: field 'messages.0.role': not a role: 7 (expected system, user, assistant, tool or an agent's name)",
        "record 3: field 'messages': no message list (one of messages, traj, trajectory, conversation, chat)",
        "record 4: field 'messages.0': expected a message object",
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "wrong_shape.json",
            "expected a JSON object, an array of records or JSON lines of records",
        ),
        ("binary.bin", "line 1 (byte 0): a NUL byte: binary data, not text of this format"),
    ],
)
def test_files_that_are_not_chat_records_fail_clearly(store, chat_dir, name, message):
    error = import_error(store, chat_dir / name, "openai-chat")
    assert str(error).startswith(f"{chat_dir / name}: {message}")
    assert store.count_episodes() == 0


def test_a_pretty_printed_object_with_a_syntax_error_names_line_and_column(tmp_path, store):
    path = tmp_path / "run.json"
    path.write_text('{\n  "messages": [\n    {"role": "user", "content": "hi"},\n  ]\n}\n')
    error = import_error(store, path, "openai-chat")
    assert str(error).startswith(f"{path}: line 4 column 3: invalid JSON")


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["runs.json", "tools.jsonl", "joined.jsonl"])
def test_sniff_accepts_chat_record_files(chat_dir, name):
    path = chat_dir / name
    assert openai_chat.sniff(path, formats.head_of(path))


def test_sniff_accepts_a_head_cut_off_inside_a_long_record():
    record = {"messages": [{"role": "user", "content": "x" * 100_000}], "task_id": "t"}
    assert openai_chat.sniff(Path("long.jsonl"), json.dumps(record)[: 1 << 16])


@pytest.mark.parametrize(
    "head",
    [
        '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n',
        '[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]',
        '{"format": "trajectory-workbench", "version": 1, "task": {}, "steps": []}\n',
        '{"info": {"exit_status": "Submitted", "submission": ""}, '
        '"messages": [{"role": "system", "content": "You are a helpful assistant"}], '
        '"trajectory_format": "mini-swe-agent-1"}',
        '{"trajectory": [{"action": "ls", "observation": "a.py", "thought": "look"}], '
        '"history": [{"role": "system", "content": "SETTING"}], "info": {"exit_status": "submitted"}}',
        '{"schema_version": "ATIF-v1.4", "session_id": "s", "steps": [{"step_id": 1}]}',
        "Thought: I should look.\nAction: look\nObservation: a room\n",
        "\x00\x01\x02PK",
    ],
)
def test_sniff_rejects_other_formats(head):
    assert not openai_chat.sniff(Path("x.jsonl"), head)


def test_the_sample_is_detected_and_mixes_passes_and_failures(store):
    report = import_paths(store, [SAMPLES / "chat_runs.jsonl"])
    assert report.files[0].format == "openai-chat" and report.episodes == 5
    outcomes = sorted(e.outcome.success for e in store.episodes())
    assert outcomes == [False, False, True, True, True]
    assert any(s.kind == "tool_call" for e in store.episodes() for s in store.steps(e.id))


@pytest.mark.parametrize("container", ["jsonl", "array"])
def test_a_50_mb_tool_result_is_stored_whole(tmp_path, store, container):
    huge = "x" * FIFTY_MB + "END"
    record = {
        "task_id": "big",
        "messages": [
            {"role": "user", "content": "Dump the log."},
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "cat"}}]},
            {"role": "tool", "tool_call_id": "c", "content": huge},
        ],
    }
    if container == "jsonl":
        path = write_jsonl(tmp_path / "big.jsonl", [record])
    else:
        path = tmp_path / "big.json"
        small = {"task_id": "small", "messages": [{"role": "user", "content": "hi"}]}
        path.write_text(json.dumps([record, small]))
    import_paths(store, [path], format="openai-chat")
    episode = next(e for e in store.episodes() if e.task_id == "openai-chat:big")
    assert_stored_whole(store.step(episode.id, 2).observation, huge)
    assert store.step(episode.id, 1).action == "cat()"


def test_a_group_chats_speakers_are_the_steps_agents(store, tmp_path):
    """AutoGen/AG2 group chats name each message's speaker; Magentic-One puts the agent in
    ``role``: both become the step's agent, the message's chat role kept (or assistant)."""
    record = {
        "id": "chat-1",
        "messages": [
            {"role": "user", "content": "How many primes are below 20?", "name": "Admin"},
            {"role": "user", "content": "Let me count.", "name": "Coder"},
            {"role": "Orchestrator (thought)", "content": "Ask the coder to verify."},
            {"role": "WebSurfer", "content": "I found a list of primes."},
            {"role": "assistant", "content": "8"},
        ],
    }
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(record) + "\n")
    import_paths(store, [path], format="openai-chat")
    (episode,) = store.episodes()
    steps = store.steps(episode.id)
    assert [(s.role, s.agent) for s in steps] == [
        ("user", "Admin"),
        ("user", "Coder"),
        ("assistant", "Orchestrator (thought)"),
        ("assistant", "WebSurfer"),
        ("assistant", ""),
    ]
