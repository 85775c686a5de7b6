"""The Inspect AI importer, on real files in a real on-disk store."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from store import Store
from tests.ingest.helpers import (
    ASSISTANT,
    FIFTY_MB,
    SYSTEM,
    USER,
    assert_reimport_adds_nothing,
    assert_rolled_back,
    assert_stored_whole,
    import_error,
    kinds_and_roles,
    write_junk,
)
from workbench.ingest import SAMPLES, formats, import_paths, inspect_log

FORMAT = "inspect"


@pytest.fixture
def log_path(data_dir: Path) -> Path:
    return data_dir / "inspect" / "log.json"


def load_log(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def write_eval(
    path: Path,
    log: dict[str, Any],
    *,
    header: bool = True,
    extra: dict[str, bytes] | None = None,
    compression: int = zipfile.ZIP_DEFLATED,
    module: Any = zipfile,
) -> Path:
    """Write ``log`` as Inspect's ``.eval`` archive layout."""
    head = {key: value for key, value in log.items() if key != "samples"}
    start = {key: log[key] for key in ("version", "eval", "plan")}
    summaries = [
        {k: s.get(k) for k in ("id", "epoch", "input", "target", "scores")} for s in log["samples"]
    ]
    with module.ZipFile(path, "w", compression=compression) as archive:
        archive.writestr("_journal/start.json", json.dumps(start))
        for sample in log["samples"]:
            archive.writestr(
                f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample)
            )
        archive.writestr("_journal/summaries/1.json", json.dumps(summaries))
        archive.writestr("summaries.json", json.dumps(summaries))
        archive.writestr("reductions.json", json.dumps([]))
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
        if header:
            archive.writestr("header.json", json.dumps(head))
    return path


def by_task(store: Store) -> dict[tuple[str, int], Any]:
    return {(e.task_id, e.metadata["epoch"]): e for e in store.episodes()}


# -- good files -------------------------------------------------------------------------------


def test_json_log_becomes_one_episode_per_sample(store: Store, log_path: Path) -> None:
    report = import_paths(store, [log_path], format=FORMAT)

    assert report.episodes == 5 and report.bad == []
    episodes = by_task(store)
    assert set(episodes) == {
        ("inspect_evals/gsm8k:1", 1),
        ("inspect_evals/gsm8k:1", 2),
        ("inspect_evals/gsm8k:q-17", 1),
        ("inspect_evals/gsm8k:3", 1),
        ("inspect_evals/gsm8k:4", 1),
    }
    first = episodes["inspect_evals/gsm8k:1", 1]
    assert first.agent == "anthropic/claude-3-7-sonnet-20250219"
    assert first.family == "inspect_evals/gsm8k"
    assert first.source.format == "inspect" and first.source.record == "samples.0"
    assert first.id.endswith("-1-e1")
    assert first.metadata["scorer"] == "match" and first.metadata["run_id"] == "RunTest0001"
    assert first.started_at is not None and first.started_at.isoformat().startswith(
        "2025-04-02T14:00:01"
    )
    task = store.task("inspect_evals/gsm8k:1")
    assert task is not None
    assert task.environment == "inspect_evals/gsm8k"
    assert task.instruction.startswith("Natalia sold clips to 48")
    assert task.metadata["target"] == "72" and task.metadata["dataset"] == "gsm8k"


def test_scores_errors_and_limits_become_outcomes(store: Store, log_path: Path) -> None:
    import_paths(store, [log_path], format=FORMAT)
    episodes = by_task(store)

    correct = episodes["inspect_evals/gsm8k:1", 1].outcome
    assert (correct.success, correct.score, correct.message) == (True, 1.0, "ANSWER: 72")
    wrong = episodes["inspect_evals/gsm8k:1", 2].outcome
    assert (wrong.success, wrong.score, wrong.message) == (False, 0.0, "96")
    partial = episodes["inspect_evals/gsm8k:q-17", 1]
    assert (partial.outcome.success, partial.outcome.score) == (False, 0.5)
    assert partial.outcome.message == "Found 1 of 2 targets."
    assert set(partial.metadata["scores"]) == {"includes", "model_graded_fact"}
    crashed = episodes["inspect_evals/gsm8k:3", 1]
    assert crashed.outcome.success is False and crashed.outcome.score is None
    assert crashed.outcome.message.startswith("RuntimeError: sandbox container exited")
    assert "Traceback" in crashed.metadata["error"]["traceback"]
    limited = episodes["inspect_evals/gsm8k:4", 1].outcome
    assert (limited.success, limited.score) == (False, 0.0)
    assert limited.message == "token limit reached (2000)"


def test_usage_sums_models(store: Store, log_path: Path) -> None:
    import_paths(store, [log_path], format=FORMAT)
    episodes = by_task(store)

    usage = episodes["inspect_evals/gsm8k:1", 1].usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (550, 125)
    assert usage.cost == pytest.approx(0.0001)
    assert episodes["inspect_evals/gsm8k:3", 1].usage.prompt_tokens is None


def test_messages_become_steps(store: Store, log_path: Path) -> None:
    import_paths(store, [log_path], format=FORMAT)
    episodes = by_task(store)

    steps = store.steps(episodes["inspect_evals/gsm8k:1", 1].id)
    assert kinds_and_roles(steps) == [
        SYSTEM,
        USER,
        ("tool_call", "assistant"),
        ("tool_result", "tool"),
        ASSISTANT,
    ]
    assert steps[0].content.startswith("Solve the problem.")
    call = steps[2]
    assert call.content == "I'll add April and May."
    assert call.thought == "April is 48, May is half of that."
    assert call.action == 'python({"code": "print(48 + 48 // 2)"})'
    assert (call.tool_name, call.tool_call_id) == ("python", "toolu_1")
    assert (steps[3].observation, steps[3].tool_call_id, steps[3].tool_name) == (
        "72\n",
        "toolu_1",
        "python",
    )
    assert steps[4].content.endswith("ANSWER: 72")
    assert steps[3].raw["id"] == "a4"
    redacted = store.steps(episodes["inspect_evals/gsm8k:1", 2].id)[2]
    assert (redacted.thought, redacted.content) == ("Doubling April.", "ANSWER: 96")


def test_parallel_tool_calls_errors_and_attachments(store: Store, log_path: Path) -> None:
    import_paths(store, [log_path], format=FORMAT)
    episodes = by_task(store)

    steps = store.steps(episodes["inspect_evals/gsm8k:q-17", 1].id)
    assert [s.kind for s in steps] == [
        "system",
        "message",
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "message",
    ]
    assert steps[1].content == "How many rows does the table in the picture have?\n[image]"
    assert steps[1].raw["content"][1]["image"] == "data:image/png;base64,iVBORw0KGgo="
    first, second = steps[2], steps[3]
    assert first.content == "Let me list the data and count it." and second.content == ""
    assert first.action == 'bash({"cmd": "cat table.txt"})'
    assert second.tool_call_id == "call_b"
    assert (
        steps[4].observation.startswith("row 0: 0\nrow 1: 1")
        and "row 39: 1521" in steps[4].observation
    )
    assert steps[5].tool_name == "python"  # from the call, as the tool message names none
    assert steps[5].observation == "[timeout] Command timed out before completing."
    task = store.task("inspect_evals/gsm8k:q-17")
    assert task is not None and task.instruction.startswith("How many rows")
    assert task.metadata["target"] == ["40", "forty"]


def test_sample_error_adds_an_error_step(store: Store, log_path: Path) -> None:
    import_paths(store, [log_path], format=FORMAT)
    crashed = by_task(store)["inspect_evals/gsm8k:3", 1]

    steps = store.steps(crashed.id)
    assert crashed.n_steps == 3 == len(steps)
    assert steps[1].kind == "tool_call" and steps[1].content == ""
    assert (steps[2].kind, steps[2].role) == ("error", "environment")
    assert steps[2].content.startswith("RuntimeError: sandbox container exited")


def test_eval_archive_matches_json_log(store: Store, log_path: Path, tmp_path: Path) -> None:
    archive = write_eval(tmp_path / "run.eval", load_log(log_path))
    import_paths(store, [log_path], format=FORMAT)
    from_json = {key: (e, store.steps(e.id)) for key, e in by_task(store).items()}

    report = import_paths(store, [archive], format=FORMAT)

    assert report.episodes == 5
    from_eval = [e for e in store.episodes() if e.source.path == str(archive)]
    assert len(from_eval) == 5
    for episode in from_eval:
        twin, twin_steps = from_json[episode.task_id, episode.metadata["epoch"]]
        assert episode.id != twin.id
        assert episode.source.record.startswith("samples/") and episode.source.record.endswith(
            f"_epoch_{episode.metadata['epoch']}.json"
        )
        assert episode.outcome == twin.outcome and episode.usage == twin.usage
        assert [s.model_dump(exclude={"episode_id"}) for s in store.steps(episode.id)] == [
            s.model_dump(exclude={"episode_id"}) for s in twin_steps
        ]


def test_eval_archive_still_running_reads_journal_start(
    store: Store, log_path: Path, tmp_path: Path
) -> None:
    archive = write_eval(tmp_path / "running.eval", load_log(log_path), header=False)

    report = import_paths(store, [archive], format=FORMAT)

    assert report.episodes == 5
    assert {e.metadata.get("log_status") for e in store.episodes()} == {None}
    assert {e.agent for e in store.episodes()} == {"anthropic/claude-3-7-sonnet-20250219"}


def test_importing_twice_adds_nothing(store: Store, log_path: Path, tmp_path: Path) -> None:
    archive = write_eval(tmp_path / "run.eval", load_log(log_path))
    assert_reimport_adds_nothing(store, [log_path, archive], FORMAT, episodes=10)


def test_detection_picks_inspect_for_both_forms(
    store: Store, log_path: Path, tmp_path: Path
) -> None:
    archive = write_eval(tmp_path / "run.eval", load_log(log_path))

    report = import_paths(store, [log_path, archive])

    assert [f.format for f in report.files] == ["inspect", "inspect"]


# -- detection --------------------------------------------------------------------------------


def test_sniff_accepts_inspect_logs(log_path: Path, tmp_path: Path) -> None:
    archive = write_eval(tmp_path / "run.eval", load_log(log_path))

    assert inspect_log.sniff(log_path, formats.head_of(log_path))
    assert inspect_log.sniff(archive, formats.head_of(archive))
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(load_log(log_path)))
    assert inspect_log.sniff(compact, formats.head_of(compact))


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("chat.jsonl", '{"messages": [{"role": "user", "content": "hi"}]}\n'),
        (
            "export.jsonl",
            '{"format": "trajectory-workbench", "version": 1, "task": {}, "batch": {}}\n',
        ),
        ("output.jsonl", '{"instance_id": "a__b-1", "test_result": {}, "history": []}\n'),
        ("config.json", '{"version": 3, "status": "ok", "name": "x"}'),
        ("results.json", '{"status": "success", "results": {"accuracy": 0.5}}'),
        ("archive.zip", "PK\x03\x04rest-of-a-zip"),
        ("notes.eval", "not a zip at all"),
    ],
)
def test_sniff_rejects_other_files(tmp_path: Path, filename: str, text: str) -> None:
    path = tmp_path / filename
    path.write_text(text)

    assert not inspect_log.sniff(path, formats.head_of(path))


def test_a_header_longer_than_its_read_buffer_is_read_whole(
    store: Store, log_path: Path, tmp_path: Path
) -> None:
    log = load_log(log_path)
    log["eval"]["metadata"] = {"notes": "n" * (3 * inspect_log.HEADER_BUFFER)}  # before samples
    path = tmp_path / "long-header.json"
    path.write_text(json.dumps(log))

    import_paths(store, [path], format=FORMAT)

    with Store(tmp_path / "short.db") as short:
        import_paths(short, [log_path], format=FORMAT)
        expected = {key: (e, short.steps(e.id)) for key, e in by_task(short).items()}
    episodes = by_task(store)
    assert episodes.keys() == expected.keys() and len(episodes) == 5
    for key, episode in episodes.items():
        assert episode.outcome == expected[key][0].outcome
        steps = [(s.kind, s.content, s.action, s.observation) for s in store.steps(episode.id)]
        assert steps == [(s.kind, s.content, s.action, s.observation) for s in expected[key][1]]


# -- bad input --------------------------------------------------------------------------------


def test_truncated_json_log_names_the_record(store: Store, log_path: Path, tmp_path: Path) -> None:
    text = log_path.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index('"id": "q-17"') + 20])

    error = import_error(store, cut, FORMAT)

    assert error.path == str(cut)
    assert (error.where, error.field) == ("record 2", "samples.2")
    assert "invalid JSON" in str(error)
    assert store.count_episodes() == 0


def test_truncated_json_log_keeps_earlier_samples_with_skip_bad(
    store: Store, log_path: Path, tmp_path: Path
) -> None:
    text = log_path.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index('"id": "q-17"') + 20])

    report = import_paths(store, [cut], format=FORMAT, skip_bad=True)

    assert report.files[0].status == "bad" and report.episodes == 2
    assert "record 2" in report.bad[0]


def test_malformed_json_header(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"version": 2, "status": "success", "eval": {"task": "x",, }')

    error = import_error(store, path, FORMAT)

    assert error.path == str(path) and "invalid JSON" in error.message


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("[1, 2, 3]", "", "expected a JSON object"),
        ('{"version": 2, "status": "success", "samples": []}', "eval", "field required"),
        ('{"version": 2, "eval": "gsm8k", "samples": []}', "eval", "field required"),
    ],
)
def test_wrong_shape_is_a_file_error(
    store: Store, tmp_path: Path, text: str, field: str, message: str
) -> None:
    path = tmp_path / "log.json"
    path.write_text(text)

    error = import_error(store, path, FORMAT)

    assert error.path == str(path) and error.field == field and message in error.message


def test_missing_fields_are_record_errors(store: Store, log_path: Path, tmp_path: Path) -> None:
    log = load_log(log_path)
    del log["samples"][2]["messages"]
    del log["samples"][3]["id"]
    log["samples"][4]["messages"][0]["role"] = "narrator"
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))

    error = import_error(store, path, FORMAT)
    assert (error.where, error.field) == ("sample 'q-17' epoch 1", "messages")
    assert str(error).startswith(f"{path}: sample 'q-17' epoch 1: field 'messages'")
    assert store.count_episodes() == 0

    report = import_paths(store, [path], format=FORMAT, skip_bad=True)
    assert report.episodes == 2 and len(report.bad) == 3
    assert "record 3: field 'id'" in report.bad[1]
    assert "sample 4 epoch 1: field 'messages.0.role': unknown role 'narrator'" in report.bad[2]


def test_bad_tool_call_names_the_field(store: Store, log_path: Path, tmp_path: Path) -> None:
    log = load_log(log_path)
    log["samples"][0]["messages"][2]["tool_calls"][0].pop("function")
    path = write_eval(tmp_path / "run.eval", log)

    report = import_paths(store, [path], format=FORMAT, skip_bad=True)

    assert report.episodes == 4
    assert report.bad == [
        f"{path}: sample 1 epoch 1: field 'messages.2.tool_calls.0.function': "
        "field required (the tool's name)"
    ]


def test_bad_archive_member_is_a_record_error(store: Store, log_path: Path, tmp_path: Path) -> None:
    path = write_eval(
        tmp_path / "run.eval", load_log(log_path), extra={"samples/9_epoch_1.json": b'{"id": 9,'}
    )

    error = import_error(store, path, FORMAT)
    assert error.where == "member samples/9_epoch_1.json" and "invalid JSON" in error.message

    report = import_paths(store, [path], format=FORMAT, skip_bad=True)
    assert report.episodes == 5 and len(report.bad) == 1


def test_archive_without_header_is_a_file_error(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "empty.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("samples/1_epoch_1.json", "{}")

    error = import_error(store, path, FORMAT)

    assert error.path == str(path) and error.where == "member header.json"
    assert "missing" in error.message


def test_corrupt_archive_is_a_file_error(store: Store, log_path: Path, tmp_path: Path) -> None:
    path = write_eval(tmp_path / "run.eval", load_log(log_path))
    path.write_bytes(path.read_bytes()[:-200])

    error = import_error(store, path, FORMAT)

    assert error.path == str(path) and "not a readable .eval (zip) archive" in error.message
    assert store.count_episodes() == 0


def test_binary_junk_is_a_file_error(store: Store, tmp_path: Path) -> None:
    for name in ("junk.eval", "junk.json"):
        path = write_junk(tmp_path / name)

        error = import_error(store, path, FORMAT)

        assert error.path == str(path)
        assert "zip" in error.message or "invalid JSON" in error.message
    assert store.count_episodes() == 0


def test_failed_import_rolls_everything_back(store: Store, log_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]")

    assert_rolled_back(store, [log_path, bad], FORMAT)


# -- compression and size ---------------------------------------------------------------------


zstd = pytest.mark.skipif(
    not hasattr(inspect_log.zipfile, "ZIP_ZSTANDARD"), reason="no Zstandard zip support"
)


@zstd
def test_zstandard_archive_is_read(store: Store, log_path: Path, tmp_path: Path) -> None:
    module = inspect_log.zipfile
    path = write_eval(
        tmp_path / "zstd.eval", load_log(log_path), compression=module.ZIP_ZSTANDARD, module=module
    )

    assert import_paths(store, [path], format=FORMAT).episodes == 5


@zstd
def test_zstandard_without_support_says_what_to_do(
    store: Store, log_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = inspect_log.zipfile
    path = write_eval(
        tmp_path / "zstd.eval", load_log(log_path), compression=module.ZIP_ZSTANDARD, module=module
    )
    monkeypatch.setattr(inspect_log, "READABLE_METHODS", {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})

    error = import_error(store, path, FORMAT)

    assert "Zstandard" in error.message and "backports.zstd" in error.message


@pytest.mark.parametrize("suffix", [".json", ".eval"])
def test_huge_tool_output_is_stored_whole(
    store: Store, log_path: Path, tmp_path: Path, suffix: str
) -> None:
    huge = "x" * (FIFTY_MB - 1) + "!"
    log = load_log(log_path)
    sample = log["samples"][0]
    sample["messages"][3]["content"] = huge
    log["samples"] = [sample]
    path = tmp_path / f"big{suffix}"
    if suffix == ".eval":
        write_eval(path, log)
    else:
        path.write_text(json.dumps(log))

    import_paths(store, [path], format=FORMAT)

    (episode,) = store.episodes()
    assert_stored_whole(store.step(episode.id, 3).observation, huge)


def test_quick_start_sample_imports(store: Store) -> None:
    report = import_paths(store, [SAMPLES / "inspect_arith.json"])

    assert report.files[0].format == "inspect" and report.episodes == 4
    outcomes = sorted(e.outcome.success for e in store.episodes())
    assert outcomes == [False, False, True, True]
    assert all(e.n_steps >= 5 for e in store.episodes())
