"""Codex CLI session rollouts: one episode per rollout, calls under their outputs, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ingest.helpers import (
    assert_cli_names_bad_line,
    assert_reimport_adds_nothing,
    bad_reasons,
    import_error,
    only_episode,
    write_jsonl,
)
from workbench.ingest import SAMPLES, codex, formats, import_paths

ROLLOUT = "rollout-2025-10-14T16-10-00-0199a3c2-7e41-7d20-b5a9-3f1e2d4c6b80.jsonl"
LEGACY = "rollout-2025-05-07T09-00-00-legacy.jsonl"


@pytest.fixture
def codex_dir(data_dir: Path) -> Path:
    return data_dir / "codex"


def test_a_rollout_is_one_episode_of_calls_and_outputs(store, codex_dir):
    report = import_paths(store, [codex_dir / ROLLOUT])
    assert report.files[0].format == "codex" and report.episodes == 1
    episode = only_episode(store)
    assert episode.agent == "gpt-5-codex" and episode.outcome.success is None
    assert episode.metadata["session_id"] == "0199a3c2-7e41-7d20-b5a9-3f1e2d4c6b80"
    assert episode.metadata["git"]["branch"] == "main" and episode.metadata["effort"] == "medium"
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (16400, 905)
    task = store.task(episode.task_id)
    assert task.environment == "codex"
    assert task.instruction == "Add a --version flag to the CLI in src/app.py and test it."
    steps = store.steps(episode.id)
    assert [s.kind for s in steps] == [
        "system",
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "message",
    ]  # fmt: skip — event_msg lines repeat the conversation and add no step
    assert steps[0].content.startswith("<environment_context>")
    first = steps[2]
    assert first.action.startswith('shell({\n  "command": [\n    "bash",')
    assert first.thought == "**Inspecting the CLI entry point**"  # the reasoning summary
    assert (first.tool_name, first.tool_call_id) == ("shell", "call_k1")
    assert steps[3].observation.startswith("import argparse")  # unwrapped, exit code 0
    patch = steps[4]
    assert patch.action.startswith("apply_patch(\n*** Begin Patch")
    assert patch.thought == "I'll add the flag with a patch."  # assistant text before a call
    assert steps[5].tool_name == "apply_patch"
    assert steps[7].observation.startswith("Error: exit code 2\nE   ModuleNotFoundError")
    assert steps[10].role == "assistant" and steps[10].content.startswith("Added `--version`")
    assert steps[10].timestamp is not None


def test_a_legacy_rollout_without_payload_wrappers_is_read(store, codex_dir):
    report = import_paths(store, [codex_dir / LEGACY])
    assert report.files[0].format == "codex"
    episode = only_episode(store)
    assert episode.metadata["session_id"].startswith("6a1f0c9e")
    steps = store.steps(episode.id)
    assert [s.kind for s in steps] == ["message", "tool_call", "tool_result", "message"]
    assert steps[2].observation == "README.md\nsrc\n"


def test_failed_outputs_and_thoughts_without_calls(tmp_path, store):
    def line(payload):
        return {"timestamp": "2025-10-14T16:10:00Z", "type": "response_item", "payload": payload}

    path = write_jsonl(
        tmp_path / "r.jsonl",
        [
            line({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go"}]}),
            line({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Hmm"}]}),
            line({"type": "function_call", "name": "mcp__db__query", "arguments": "{}", "call_id": "c"}),
            line({"type": "function_call_output", "call_id": "c", "output": {"content": "denied", "success": False}}),
            line({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Give up"}]}),
        ],
    )  # fmt: skip
    import_paths(store, [path])
    steps = store.steps(only_episode(store).id)
    assert steps[1].action == "mcp__db__query()" and steps[1].thought == "Hmm"
    assert steps[2].observation == "Error: denied"
    assert (steps[3].kind, steps[3].thought) == ("thought", "Give up")


def test_prompts_only_in_user_message_events_are_the_users_steps(tmp_path, store):
    """A rollout whose prompts are only ``event_msg`` ``user_message`` lines (as the Codex
    Desktop file in ``tests/data/real/codex/`` has them) keeps them: each a user step where
    it was typed, the first the task's instruction."""

    def item(payload):
        return {"timestamp": "2026-05-11T10:29:40Z", "type": "response_item", "payload": payload}

    def typed(text):
        payload = {"type": "user_message", "message": text, "images": []}
        return {"timestamp": "2026-05-11T10:29:40Z", "type": "event_msg", "payload": payload}

    def said(text):
        return item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        )

    path = write_jsonl(
        tmp_path / "rollout-desktop.jsonl",
        [
            {"timestamp": "t", "type": "session_meta", "payload": {"id": "d", "originator": "Codex Desktop"}},
            typed("Summarise the notes."),
            item({"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "cat notes"}', "call_id": "c"}),
            item({"type": "function_call_output", "call_id": "c", "output": "a, b"}),
            said("Two notes: a and b."),
            typed("Only a, please."),
            said("a."),
        ],
    )  # fmt: skip
    import_paths(store, [path])
    episode = only_episode(store)
    assert store.task(episode.task_id).instruction == "Summarise the notes."
    steps = store.steps(episode.id)
    assert [(s.kind, s.role) for s in steps] == [
        ("message", "user"),
        ("tool_call", "assistant"),
        ("tool_result", "tool"),
        ("message", "assistant"),
        ("message", "user"),
        ("message", "assistant"),
    ]
    assert (steps[0].content, steps[4].content) == ("Summarise the notes.", "Only a, please.")
    assert steps[4].raw["type"] == "user_message"


def test_importing_twice_adds_nothing(store, codex_dir):
    paths = [codex_dir / ROLLOUT, codex_dir / LEGACY]
    assert_reimport_adds_nothing(store, paths, "codex", episodes=2)


# -- bad input --------------------------------------------------------------------------------


def test_a_bad_line_fails_the_import_naming_it(store, codex_dir):
    path = codex_dir / "bad_lines.jsonl"
    error = import_error(store, path, "codex")
    assert str(error).startswith(f"{path}: line 3: invalid JSON")
    assert store.count_episodes() == 0 and store.batches() == []


def test_skip_bad_names_each_bad_line_and_field(store, codex_dir):
    path = codex_dir / "bad_lines.jsonl"
    report = import_paths(store, [path], skip_bad=True)
    reasons = bad_reasons(report, path)
    assert reasons[0].startswith("line 3: invalid JSON")
    assert reasons[1:] == [
        "line 4: field 'payload': expected an object",
        "line 5: field 'payload.name': missing",
        "line 6: field 'payload.content': expected a list of content parts",
    ]
    steps = store.steps(only_episode(store).id)
    assert [s.content for s in steps] == ["Say hello.", "Hello."]


def test_a_rollout_with_no_conversation_fails_clearly(tmp_path, store):
    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}
    path = write_jsonl(tmp_path / "rollout-x.jsonl", [meta])
    error = import_error(store, path, "codex")
    assert str(error) == f"{path}: no conversation items (not a Codex session rollout)"


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [ROLLOUT, LEGACY, "bad_lines.jsonl"])
def test_rollouts_are_detected(codex_dir, name):
    assert formats.detect(codex_dir / name) is codex


@pytest.mark.parametrize(
    "head",
    [
        '{"type": "message", "role": "user", "content": []}\n',  # a bare item, no rollout name
        '{"messages": [{"role": "user", "content": "hi"}]}\n',
        '{"type": "user", "sessionId": "s", "parentUuid": null, "message": {}}\n',
    ],
)
def test_other_files_are_not_rollouts(head):
    assert not codex.sniff(Path("x.jsonl"), head)


def test_the_sample_is_detected(store):
    report = import_paths(store, [SAMPLES / "codex_rollout.jsonl"])
    assert report.files[0].format == "codex" and report.episodes == 1
    assert json.dumps(only_episode(store).metadata)


def test_a_50_mb_output_is_stored_whole(tmp_path, store):
    from tests.ingest.helpers import FIFTY_MB, assert_stored_whole

    huge = "x" * FIFTY_MB + "END"

    def line(payload):
        return {"timestamp": "2025-10-14T16:10:00Z", "type": "response_item", "payload": payload}

    path = write_jsonl(
        tmp_path / "rollout-big.jsonl",
        [
            line({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"}),
            line({"type": "function_call_output", "call_id": "c", "output": huge}),
        ],
    )
    import_paths(store, [path])
    assert_stored_whole(store.step(only_episode(store).id, 1).observation, huge)


def test_the_cli_names_the_bad_line_in_one_message_and_skip_bad_keeps_the_rest(db_path, data_dir):
    path = data_dir / "codex" / "bad_lines.jsonl"
    assert_cli_names_bad_line(db_path, path, f"{path}: line 3: invalid JSON", "line 3")
