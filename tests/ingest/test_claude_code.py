"""Claude Code session logs: one episode per session, tool calls and results, sub-agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Store
from tests.ingest.helpers import (
    assert_cli_names_bad_line,
    assert_reimport_adds_nothing,
    bad_reasons,
    import_error,
    write_jsonl,
)
from workbench.ingest import SAMPLES, claude_code, formats, import_paths


@pytest.fixture
def cc_dir(data_dir: Path) -> Path:
    return data_dir / "claude-code"


def sessions(store: Store) -> tuple[object, list[object]]:
    """The main episode and the sidechain episodes in ``store``."""
    episodes = store.episodes()
    main = [e for e in episodes if not e.metadata["sidechain"]]
    assert len(main) == 1
    return main[0], [e for e in episodes if e.metadata["sidechain"]]


def test_a_session_is_one_episode_with_tool_calls_and_their_results(store, cc_dir):
    report = import_paths(store, [cc_dir / "session.jsonl"])
    assert report.files[0].format == "claude-code" and report.episodes == 2
    main, _ = sessions(store)
    assert main.agent == "claude-sonnet-4-20250514" and main.outcome.success is None
    assert main.metadata["summary"] == "Fix cart rounding"
    assert main.metadata["cwd"] == "/home/dev/shop" and main.metadata["git_branch"] == "main"
    assert main.source.record == "line 2"
    task = store.task(main.task_id)
    assert task.environment == "claude-code"
    assert task.instruction.startswith("The checkout test fails")  # not the /clear command
    steps = store.steps(main.id)
    assert [s.kind for s in steps] == [
        "message", "message", "tool_call", "tool_result", "tool_call", "tool_result",
        "tool_call", "tool_result", "tool_call", "tool_result", "message",
    ]  # fmt: skip
    call, result = steps[2], steps[3]
    assert call.action == (
        'Bash({\n  "command": "pytest tests/test_cart.py -q",\n'
        '  "description": "Run the cart tests"\n})'
    )
    assert call.thought == "I should run the test to see the failure."  # from the line before
    assert (call.tool_name, call.tool_call_id) == ("Bash", "toolu_01")
    assert (result.tool_name, result.tool_call_id) == ("Bash", "toolu_01")
    assert result.observation.startswith("Error: F\nAssertionError: 19.99 != 20.0")
    assert result.raw["block"]["is_error"] is True
    assert steps[9].observation == "..\n2 passed in 0.10s"  # is_error false: unchanged
    assert steps[4].thought.startswith("Let me ask a sub-agent")  # text before a call
    assert (steps[10].role, steps[10].content) == (
        "assistant",
        "Fixed: totals now round to cents; the cart tests pass.",
    )
    assert steps[2].timestamp is not None and main.started_at < main.ended_at


def test_usage_counts_each_api_message_once_with_cache_tokens(store, cc_dir):
    import_paths(store, [cc_dir / "session.jsonl"])
    main, _ = sessions(store)
    # msg_01 is split over two lines: 900 + 100 cached, counted once
    assert main.usage.prompt_tokens == 1000 + 1200 + 1500 + 1600 + 1700
    assert main.usage.completion_tokens == 30 + 60 + 80 + 20 + 18


def test_a_sidechain_is_its_own_episode_linked_to_its_task_call(store, cc_dir):
    import_paths(store, [cc_dir / "session.jsonl"])
    main, (sub,) = sessions(store)
    assert main.metadata["sidechains"] == [sub.id]
    assert sub.metadata["parent_episode"] == main.id
    assert sub.metadata["parent_tool_call_id"] == "toolu_02"
    assert store.task(sub.task_id).instruction.startswith("Find where cart totals are rounded")
    steps = store.steps(sub.id)
    assert [s.tool_name for s in steps if s.kind == "tool_call"] == ["Grep"]
    assert all(s.tool_name != "Grep" for s in store.steps(main.id))  # kept apart
    assert sub.usage.prompt_tokens == 850
    assert {s.agent for s in steps if s.role != "user"} == {"sub-agent"}  # (no type named)
    assert {s.agent for s in steps if s.role == "user"} == {""}  # (the parent's prompt)
    assert {s.agent for s in store.steps(main.id)} == {""}


def test_a_sidechains_steps_name_the_sub_agent_its_parent_asked_for(store, cc_dir, tmp_path):
    text = (cc_dir / "session.jsonl").read_text()
    typed = text.replace(
        '"input": {"description": "Find rounding",',
        '"input": {"subagent_type": "code-searcher", "description": "Find rounding",',
    )
    assert typed != text
    path = tmp_path / "session.jsonl"
    path.write_text(typed)
    import_paths(store, [path])
    _, (sub,) = sessions(store)
    assert {s.agent for s in store.steps(sub.id) if s.role != "user"} == {"code-searcher"}


def test_a_sub_agent_file_gives_a_sidechain_episode(store, cc_dir):
    import_paths(store, [cc_dir / "agent-a91b.jsonl"])
    (episode,) = store.episodes()
    assert episode.metadata["sidechain"] is True and episode.metadata["agent_id"] == "a91b"
    assert {s.agent for s in store.steps(episode.id) if s.role != "user"} == {"a91b"}
    assert episode.metadata["session_id"].startswith("7f3c2a10")
    assert store.steps(episode.id)[2].observation == "Error: File does not exist."


def test_thinking_alone_is_a_thought_step(tmp_path, store):
    base = {"sessionId": "s", "isSidechain": False, "parentUuid": None}
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {**base, "type": "user", "uuid": "1", "message": {"role": "user", "content": "Hi"}},
            {
                **base,
                "type": "assistant",
                "uuid": "2",
                "message": {"id": "m", "content": [{"type": "thinking", "thinking": "Hmm."}]},
            },
        ],
    )
    import_paths(store, [path])
    (episode,) = store.episodes()
    step = store.steps(episode.id)[1]
    assert (step.kind, step.role, step.thought) == ("thought", "assistant", "Hmm.")


def test_importing_twice_adds_nothing(store, cc_dir):
    paths = [cc_dir / "session.jsonl", cc_dir / "agent-a91b.jsonl"]
    assert_reimport_adds_nothing(store, paths, "claude-code", episodes=3)


# -- bad input --------------------------------------------------------------------------------


def test_a_bad_line_fails_the_import_naming_line_and_nothing_is_written(store, cc_dir):
    path = cc_dir / "bad_lines.jsonl"
    error = import_error(store, path, "claude-code")
    assert str(error).startswith(f"{path}: line 2: invalid JSON")
    assert store.count_episodes() == 0 and store.batches() == []


def test_skip_bad_names_each_bad_line_and_keeps_the_rest_of_the_session(store, cc_dir):
    path = cc_dir / "bad_lines.jsonl"
    report = import_paths(store, [path], skip_bad=True)
    assert report.episodes == 1
    assert [r.split(": ", 2)[1:] for r in bad_reasons(report, path)] == [
        ["invalid JSON", "Expecting value (column 1)"],
        ["field 'message'", "expected a message object"],
        [
            "field 'message.content.0.type'",
            "unknown block type 'video' (expected text, thinking, redacted_thinking, "
            "tool_use, tool_result, image, document)",
        ],
        ["field 'message.content.0.name'", "missing tool name"],
    ]
    assert [r.split(": ")[0] for r in bad_reasons(report, path)] == [
        "line 2", "line 3", "line 4", "line 5",
    ]  # fmt: skip
    (episode,) = store.episodes()
    assert [s.content for s in store.steps(episode.id)] == ["Rename the module.", "Done."]


def test_a_file_with_no_conversation_line_fails_clearly(tmp_path, store):
    path = write_jsonl(tmp_path / "s.jsonl", [{"type": "summary", "summary": "x", "leafUuid": "a"}])
    error = import_error(store, path, "claude-code")
    assert str(error) == f"{path}: no user or assistant lines (not a Claude Code session log)"


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["session.jsonl", "agent-a91b.jsonl", "bad_lines.jsonl"])
def test_sessions_are_detected(cc_dir, name):
    assert formats.detect(cc_dir / name) is claude_code


@pytest.mark.parametrize(
    "head",
    [
        '{"role": "user", "content": "hi"}\n',
        '{"messages": [{"role": "user", "content": "hi"}], "sessionId": "s"}\n',
        "Thought: look\nAction: look\n",
    ],
)
def test_other_files_are_not_sessions(head):
    assert not claude_code.sniff(Path("x.jsonl"), head)


def test_the_sample_is_detected(store):
    report = import_paths(store, [SAMPLES / "claude_code_session.jsonl"])
    assert report.files[0].format == "claude-code" and report.episodes == 2
    assert json.dumps(store.episodes()[0].metadata)  # metadata stays plain JSON


def test_a_50_mb_tool_result_is_stored_whole(tmp_path, store):
    from tests.ingest.helpers import FIFTY_MB, assert_stored_whole

    huge = "x" * FIFTY_MB + "END"
    base = {"sessionId": "s", "isSidechain": False, "parentUuid": None}
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat big.log"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": huge}
    path = write_jsonl(
        tmp_path / "big.jsonl",
        [
            {**base, "type": "user", "message": {"role": "user", "content": "Dump the log."}},
            {**base, "type": "assistant", "message": {"id": "m", "content": [call]}},
            {**base, "type": "user", "message": {"role": "user", "content": [result]}},
        ],
    )
    import_paths(store, [path])
    (episode,) = store.episodes()
    assert_stored_whole(store.step(episode.id, 2).observation, huge)


def test_the_cli_names_the_bad_line_in_one_message_and_skip_bad_keeps_the_rest(db_path, data_dir):
    path = data_dir / "claude-code" / "bad_lines.jsonl"
    assert_cli_names_bad_line(db_path, path, f"{path}: line 2: invalid JSON", "line 2")
