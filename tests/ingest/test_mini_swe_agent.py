"""The mini-swe-agent importer, through the real import engine and an on-disk store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from store import Store
from tests.ingest.helpers import (
    ACTION,
    ASSISTANT,
    FIFTY_MB,
    SYSTEM,
    USER,
    assert_cut_json_names_line,
    assert_not_json,
    assert_record_error,
    assert_reimport_adds_nothing,
    assert_rolled_back,
    assert_skip_bad_keeps_good,
    assert_stored_whole,
    import_error,
    kinds_and_roles,
    only_episode,
    write_json,
    write_junk,
)
from workbench.ingest import formats, import_paths, mini_swe_agent, swe_agent

DJANGO = "django__django-11099"
SYMPY = "sympy__sympy-20590"


@pytest.fixture
def mini_dir(data_dir: Path) -> Path:
    return data_dir / "mini-swe-agent"


def _traj(mini_dir: Path, instance_id: str) -> Path:
    return mini_dir / instance_id / f"{instance_id}.traj.json"


def _minimal(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "info": {"exit_status": "Submitted", "submission": "diff", "model_stats": {}},
        "messages": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": "Fix the bug."},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"},
            {
                "role": "user",
                "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>",
            },
        ],
        "trajectory_format": "mini-swe-agent-1",
    }
    data.update(overrides)
    return data


# -- reading -----------------------------------------------------------------------------------


def test_v1_run_pairs_commands_with_their_output(store: Store, mini_dir: Path) -> None:
    report = import_paths(store, [_traj(mini_dir, DJANGO)], format="mini-swe-agent")
    assert report.episodes == 1

    episode = only_episode(store)
    assert episode.task_id == f"swe-bench:{DJANGO}"
    assert episode.family == "django"
    assert episode.agent == "mini-swe-agent/anthropic/claude-sonnet-4-20250514"
    assert episode.outcome.message == "Submitted"
    assert episode.outcome.success is None  # no evaluation report given
    assert episode.usage.cost == pytest.approx(0.0412)
    assert episode.usage.prompt_tokens is None
    assert episode.metadata["api_calls"] == 4
    assert episode.metadata["mini_version"] == "1.14.2"
    assert episode.metadata["trajectory_format"] == "mini-swe-agent-1"
    assert episode.metadata["step_limit"] == 250
    assert episode.metadata["submission"].startswith("diff --git a/django/contrib/auth")

    steps = store.steps(episode.id)
    assert kinds_and_roles(steps) == [SYSTEM, USER, ACTION, ACTION, ACTION, ACTION]
    assert steps[1].content.startswith("<pr_description>")
    look = steps[2]
    assert look.thought == (
        "The issue points at the username validators in django.contrib.auth. "
        "Let me look at the file."
    )
    assert look.action == "cat django/contrib/auth/validators.py"
    assert look.observation.startswith("<returncode>0</returncode>\n<output>\nimport re")
    assert [m["role"] for m in look.raw] == ["assistant", "user"]
    assert steps[3].action.startswith("python - <<'EOF'\n")
    assert steps[3].action.endswith("grep -n regex django/contrib/auth/validators.py")
    assert "```" not in steps[3].thought
    # the final command's remaining output (the patch) is its observation
    assert steps[5].action.startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert steps[5].observation.startswith("diff --git")


def test_task_instruction_is_the_issue_text(store: Store, mini_dir: Path) -> None:
    import_paths(store, [_traj(mini_dir, DJANGO)], format="mini-swe-agent")
    task = store.task(f"swe-bench:{DJANGO}")
    assert task is not None
    assert task.environment == "swe-bench"
    assert task.family == "django"
    assert task.metadata == {"instance_id": DJANGO, "repo": "django/django"}
    assert task.instruction.startswith("UsernameValidator allows trailing newline in usernames")
    assert "<instructions>" not in task.instruction
    assert "Consider the following PR description" not in task.instruction


def test_v2_run_with_format_error_and_exit_message(store: Store, mini_dir: Path) -> None:
    import_paths(store, [_traj(mini_dir, SYMPY)], format="mini-swe-agent")
    episode = only_episode(store)
    assert episode.outcome.message == "LimitsExceeded"
    assert episode.agent == "mini-swe-agent/openai/gpt-4.1-mini"
    assert episode.usage.prompt_tokens == 2130 + 2390 + 2710
    assert episode.usage.completion_tokens == 88 + 61 + 45
    assert episode.started_at is not None and episode.ended_at is not None
    assert (episode.ended_at - episode.started_at).total_seconds() == pytest.approx(41)

    steps = store.steps(episode.id)
    assert kinds_and_roles(steps) == [
        SYSTEM,
        USER,
        ACTION,
        ACTION,
        ASSISTANT,  # two command blocks: not an action
        USER,  # the format error
        ACTION,
        ("message", "environment"),  # the exit message
    ]
    assert steps[2].action.startswith('python -c "import sympy;')
    assert steps[2].observation == (
        "<returncode>0</returncode>\n<output>\n['Printable', 'object']\n</output>"
    )
    assert steps[2].timestamp is not None
    assert "EXACTLY ONE action" in steps[5].content
    assert steps[7].content == "LimitsExceeded"


def test_outcome_statuses_differ_without_report(store: Store, mini_dir: Path) -> None:
    report = import_paths(store, [mini_dir])
    assert report.episodes == 2
    assert {f.format for f in report.files if f.status == "imported"} == {"mini-swe-agent"}
    outcomes = {e.task_id: e.outcome for e in store.episodes()}
    assert outcomes[f"swe-bench:{DJANGO}"].message == "Submitted"
    assert outcomes[f"swe-bench:{SYMPY}"].message == "LimitsExceeded"
    assert {o.success for o in outcomes.values()} == {None}


def test_id_from_file_name_and_non_swe_bench_environment(store: Store, tmp_path: Path) -> None:
    path = write_json(tmp_path / "hello-world.traj.json", _minimal())
    import_paths(store, [path], format="mini-swe-agent")
    episode = only_episode(store)
    assert episode.task_id == "mini-swe-agent:hello-world"
    assert episode.family == ""
    task = store.task(episode.task_id)
    assert task is not None and task.environment == "mini-swe-agent"
    assert task.instruction == "Fix the bug."


def test_tool_calling_runs_keep_chat_structure(store: Store, tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Fix the bug."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "setup.py"},
    ]
    path = write_json(tmp_path / "psf__requests-2317.traj.json", _minimal(messages=messages))
    import_paths(store, [path], format="mini-swe-agent")
    steps = store.steps(only_episode(store).id)
    call, result = steps[2], steps[3]
    assert (call.kind, call.action, call.tool_name, call.tool_call_id) == (
        "tool_call",
        'bash({"command": "ls"})',
        "bash",
        "call_1",
    )
    assert (result.kind, result.role, result.observation) == ("tool_result", "tool", "setup.py")
    assert (result.tool_name, result.tool_call_id) == ("bash", "call_1")


def test_importing_twice_adds_nothing(store: Store, mini_dir: Path) -> None:
    assert_reimport_adds_nothing(store, [mini_dir], "mini-swe-agent", episodes=2)


# -- evaluation reports ------------------------------------------------------------------------


def test_per_instance_report_sets_success(store: Store, mini_dir: Path, data_dir: Path) -> None:
    results = data_dir / "swebench-report" / "report.json"
    import_paths(
        store,
        [_traj(mini_dir, DJANGO), _traj(mini_dir, SYMPY)],
        format="mini-swe-agent",
        results=results,
    )
    outcomes = {e.task_id: e.outcome for e in store.episodes()}
    assert outcomes[f"swe-bench:{DJANGO}"].success is True
    assert outcomes[f"swe-bench:{DJANGO}"].message == "Submitted"
    assert outcomes[f"swe-bench:{SYMPY}"].success is False
    assert outcomes[f"swe-bench:{SYMPY}"].message == "LimitsExceeded"


def test_run_report_sets_success(store: Store, tmp_path: Path, mini_dir: Path) -> None:
    results = write_json(
        tmp_path / "gpt.run.json",
        {
            "resolved_ids": [],
            "unresolved_ids": [DJANGO],
            "incomplete_ids": [SYMPY],  # never evaluated: stays unknown
            "schema_version": 2,
        },
    )
    import_paths(store, [mini_dir], format="mini-swe-agent", results=results)
    outcomes = {e.task_id: e.outcome.success for e in store.episodes()}
    assert outcomes == {f"swe-bench:{DJANGO}": False, f"swe-bench:{SYMPY}": None}


def test_malformed_report_names_report_and_field(
    store: Store, tmp_path: Path, mini_dir: Path
) -> None:
    results = write_json(tmp_path / "eval.json", {"resolved_ids": [DJANGO, None]})
    error = import_error(store, _traj(mini_dir, DJANGO), "mini-swe-agent", results=results)
    assert error.path == str(results)
    assert error.field == "resolved_ids.1"
    assert store.episodes() == []


def test_a_report_that_is_not_utf8_is_the_file_named(
    store: Store, tmp_path: Path, mini_dir: Path
) -> None:
    results = tmp_path / "eval.json"
    results.write_bytes(b'{"\xe4resolved_ids": []}\n')
    error = import_error(store, _traj(mini_dir, DJANGO), "mini-swe-agent", results=results)
    assert error.path == str(results) and error.message == "not UTF-8 text"
    assert store.episodes() == []


# -- bad input ---------------------------------------------------------------------------------


def test_truncated_json_names_file_and_line(store: Store, tmp_path: Path, mini_dir: Path) -> None:
    path = tmp_path / f"{DJANGO}.traj.json"
    assert_cut_json_names_line(store, _traj(mini_dir, DJANGO), path, "mini-swe-agent")


def test_wrong_shape_is_a_file_error(store: Store, tmp_path: Path) -> None:
    path = write_json(tmp_path / "run.traj.json", {"choices": []})
    error = import_error(store, path, "mini-swe-agent")
    assert error.path == str(path)
    assert "expected a mini-swe-agent trajectory" in error.message


def _messages_with(message: Any) -> list[Any]:
    return [*_minimal()["messages"], message]


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        (_minimal(messages=None), "messages", "field required"),
        (_minimal(messages={"role": "user"}), "messages", "expected a list"),
        (_minimal(messages=_messages_with("hi")), "messages.4", "expected an object"),
        (_minimal(messages=_messages_with({"content": "hi"})), "messages.4.role", "required"),
        (
            _minimal(messages=_messages_with({"role": "user", "content": 7})),
            "messages.4.content",
            "expected a string",
        ),
        (
            _minimal(messages=_messages_with({"role": "narrator", "content": ""})),
            "messages.4.role",
            "unknown role 'narrator'",
        ),
        (
            _minimal(messages=_messages_with({"role": "assistant", "tool_calls": {"id": 1}})),
            "messages.4.tool_calls",
            "expected a list",
        ),
        (_minimal(info="done"), "info", "expected an object"),
        (
            _minimal(info={"model_stats": {"instance_cost": "cheap"}}),
            "info.model_stats.instance_cost",
            "expected a number",
        ),
    ],
)
def test_bad_record_names_file_instance_and_field(
    store: Store, tmp_path: Path, data: dict[str, Any], field: str, message: str
) -> None:
    path = write_json(tmp_path / "pydata__xarray-4094.traj.json", data)
    where = "instance 'pydata__xarray-4094'"
    assert_record_error(store, path, "mini-swe-agent", where, field, message)


def test_binary_junk_is_an_error(store: Store, tmp_path: Path) -> None:
    path = write_junk(tmp_path / "junk.traj.json", header=b"\x89PNG\r\n\x1a\n")
    assert_not_json(store, path, "mini-swe-agent")


def test_skip_bad_keeps_good_files_and_counts_bad(
    store: Store, tmp_path: Path, mini_dir: Path
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / f"{DJANGO}.traj.json").write_bytes(_traj(mini_dir, DJANGO).read_bytes())
    write_json(runs / "pydata__xarray-4094.traj.json", _minimal(messages=_messages_with(3)))
    (runs / "broken.traj.json").write_text('{"info": {"exit_status": ', encoding="utf-8")

    bad = {"pydata__xarray-4094": "messages.4", "broken.traj.json": ""}
    assert_skip_bad_keeps_good(store, runs, "mini-swe-agent", bad, f"swe-bench:{DJANGO}")


def test_failed_import_rolls_back_everything(store: Store, tmp_path: Path, mini_dir: Path) -> None:
    bad = write_json(tmp_path / "bad.traj.json", _minimal(messages=_messages_with(3)))
    assert_rolled_back(store, [_traj(mini_dir, DJANGO), bad], "mini-swe-agent")


# -- detection ---------------------------------------------------------------------------------


def test_sniff_accepts_mini_files(mini_dir: Path) -> None:
    for path in mini_dir.glob("*/*.traj.json"):
        assert mini_swe_agent.sniff(path, formats.head_of(path))


def test_sniff_accepts_info_and_messages_without_format_key(tmp_path: Path) -> None:
    head = '{"info": {"exit_status": "Submitted", "submission": ""}, "messages": [{"role": "system"'
    assert mini_swe_agent.sniff(tmp_path / "run.json", head)


@pytest.mark.parametrize(
    "head",
    [
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}\n',
        '{"format": "trajectory-workbench", "version": 1, "task": {}, "episode": {}}\n',
        '{"trajectory": [{"action": "ls", "observation": "x"}], "history": [], '
        '"info": {"exit_status": "submitted"}, "messages": []}',
        '{"messages": [{"role": "user", "content": "\\"info\\": {\\"exit_status\\": 1}"}]}',
        '[{"info": 1}]',
        "\x00\x01\x02 binary",
    ],
)
def test_sniff_rejects_other_formats(tmp_path: Path, head: str) -> None:
    assert not mini_swe_agent.sniff(tmp_path / "x.json", head)


def test_swe_agent_sniff_rejects_mini_files(mini_dir: Path) -> None:
    for path in mini_dir.glob("*/*.traj.json"):
        assert not swe_agent.sniff(path, formats.head_of(path))


# -- size --------------------------------------------------------------------------------------


def test_fifty_megabyte_output_is_stored_whole(store: Store, tmp_path: Path) -> None:
    output = "0123456789abcdef" * (FIFTY_MB // 16) + "END"
    messages = [*_minimal()["messages"][:3], {"role": "user", "content": output}]
    path = write_json(tmp_path / "pallets__flask-4992.traj.json", _minimal(messages=messages))
    import_paths(store, [path], format="mini-swe-agent")
    action = store.steps(only_episode(store).id)[2]
    assert action.kind == "action"
    assert_stored_whole(action.observation, output)
