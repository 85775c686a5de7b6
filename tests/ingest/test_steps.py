"""Steps built from an importer's fields: kept as fields when they fit, validated when not."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from store import Step, Store
from workbench.ingest import IngestError, import_paths
from workbench.ingest import steps as steps_module
from workbench.ingest.base import ReadContext
from workbench.ingest.steps import (
    StepFields,
    build_steps,
    first_user_message,
    step_column,
    step_list,
)

CTX = ReadContext(path=Path("log.jsonl"), content_hash="0" * 64, batch_id="b", format="codex")
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_fields_of_the_right_types_read_back_as_the_records_validation_makes():
    fields = [
        {"kind": "message", "role": "user", "content": "fix the bug", "timestamp": WHEN},
        {"kind": "tool_call", "role": "assistant", "action": "ls()", "raw": {"n": 1}},
    ]
    expected = step_list().validate_python(
        [{**f, "episode_id": "ep", "index": i} for i, f in enumerate(fields)]
    )
    steps = build_steps(CTX, "session", "ep", [dict(f) for f in fields])
    assert isinstance(steps, StepFields) and len(steps) == 2
    assert steps.episode_id == "ep" and steps.table[1][:3] == ("ep", 1, "tool_call")
    assert steps == expected and list(steps) == expected and steps[1:] == expected[1:]
    assert steps[0].timestamp == WHEN and steps[1].raw == {"n": 1}


def test_fields_of_other_types_are_validated_as_before():
    converted = build_steps(CTX, "session", "ep", [{"kind": "action", "reward": 1}])
    assert not isinstance(converted, StepFields)
    assert converted == [Step(episode_id="ep", index=0, kind="action", reward=1.0)]
    with pytest.raises(IngestError) as caught:
        build_steps(CTX, "session", "ep", [{"kind": "action"}, {"kind": "dance"}])
    assert caught.value.field == "steps.1.kind" and caught.value.path == "log.jsonl"


def test_an_import_stores_kept_fields_as_it_stores_validated_records(tmp_path, monkeypatch):
    """The same rollout imported with its steps kept as fields, then made records: the same
    rows (times, raw records, references to shared texts)."""
    rollout = next((Path(__file__).parents[1] / "data/codex").glob("rollout-2025-10-14*.jsonl"))

    def stored_rows(db: Path) -> list[tuple]:
        with Store(db) as store:
            report = import_paths(store, [rollout])
            rows = store.conn.execute("SELECT * FROM steps ORDER BY id").fetchall()
        assert report.files[0].steps == len(rows) > 3
        return [tuple(row)[1:] for row in rows]  # (the row id aside)

    kept = stored_rows(tmp_path / "kept.db")
    monkeypatch.setattr(steps_module, "step_values", lambda fields: None)
    assert stored_rows(tmp_path / "validated.db") == kept
    kinds = {row[2] for row in kept}
    assert {"tool_call", "tool_result", "message"} <= kinds


def test_the_instruction_and_times_are_read_off_kept_fields_as_off_records():
    fields = [
        {"kind": "system", "role": "system", "content": "be brief"},
        {"kind": "message", "role": "assistant", "content": "hello", "timestamp": WHEN},
        {"kind": "message", "role": "user", "content": "fix the bug"},
        {"kind": "message", "role": "user", "content": "and the test"},
    ]
    kept = build_steps(CTX, "session", "ep", [dict(f) for f in fields])
    assert isinstance(kept, StepFields)
    records = list(kept)
    assert first_user_message(kept) == first_user_message(records) == "fix the bug"
    assert (
        step_column(kept, "timestamp")
        == step_column(records, "timestamp")
        == [None, WHEN, None, None]
    )
    assert first_user_message(build_steps(CTX, "s", "ep", fields[:2])) == ""
