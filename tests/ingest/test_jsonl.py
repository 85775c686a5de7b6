"""The workbench's own JSONL: lossless round trip, clear errors, all-or-nothing imports."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from store import Store
from tests.ingest.helpers import FIFTY_MB, assert_stored_whole
from tests.ingest.hostile import DISGUISING, HOSTILE_NAME, HOSTILE_TEXT, RAW_CONTROLS
from workbench.ingest import IngestError, ReadContext, base, import_paths, jsonl
from workbench.ingest.base import iter_jsonl


def export(store: Store) -> str:
    out = io.StringIO()
    jsonl.write(store, store.iter_episodes(), out)
    return out.getvalue()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_import_reads_tasks_batches_steps_and_spans(store, data_dir):
    report = import_paths(store, [data_dir / "workbench" / "two_episodes.jsonl"])
    assert report.episodes == 2
    assert report.files[0].format == "workbench"
    failed = store.episode("boil-3-s8")
    assert failed.outcome.success is False and failed.outcome.score == -100
    assert failed.batch_id == "run-7" and store.batch("run-7").name == "scripted-baseline"
    assert store.task("scienceworld:boil:3").family == "boil"
    assert store.step("boil-3-s8", 2).action == "focus on sink"
    [span] = store.spans("boil-3-s8")
    assert (span.kind, span.start, span.label, span.confidence) == ("causal", 2, "wrong-focus", 0.9)


def test_export_then_import_is_lossless(tmp_path, store, data_dir):
    import_paths(store, [data_dir / "workbench" / "two_episodes.jsonl"])
    first = export(store)
    exported = tmp_path / "out.jsonl"
    exported.write_text(first)
    with Store(tmp_path / "second.db") as second:
        import_paths(second, [exported])
        assert export(second) == first
    assert [line["episode"]["id"] for line in map(json.loads, first.splitlines())] == [
        "boil-3-s7",
        "boil-3-s8",
    ]


def test_export_writes_no_raw_control_and_reads_back_the_same(tmp_path, store, good_lines):
    line = good_lines[0]
    line["task"]["instruction"] += HOSTILE_TEXT
    line["steps"][0].update(action=HOSTILE_NAME, observation=HOSTILE_TEXT + DISGUISING)
    line["episode"]["outcome"]["message"] = DISGUISING
    import_paths(store, [write_lines(tmp_path / "hostile.jsonl", [line])])
    first = export(store)
    assert not RAW_CONTROLS.search(first.encode()) and "\\u009b31m" in first
    exported = tmp_path / "out.jsonl"
    exported.write_text(first, encoding="utf-8")
    with Store(tmp_path / "second.db") as second:
        import_paths(second, [exported])
        assert export(second) == first
        assert second.step("boil-3-s7", 0).observation == HOSTILE_TEXT + DISGUISING
        assert second.task("scienceworld:boil:3").instruction.endswith(HOSTILE_TEXT)


def test_reimporting_the_same_file_adds_nothing(store, data_dir, tmp_path):
    path = data_dir / "workbench" / "two_episodes.jsonl"
    import_paths(store, [path])
    again = import_paths(store, [path])
    assert again.files[0].status == "duplicate" and again.episodes == 0 and again.batch_id is None
    copy = tmp_path / "renamed.jsonl"
    copy.write_bytes(path.read_bytes())
    assert import_paths(store, [copy]).files[0].status == "duplicate"
    assert store.count_episodes() == 2
    assert len(store.batches()) == 1


def write_lines(path: Path, objects: list) -> Path:
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objects))
    return path


@pytest.fixture
def good_lines(data_dir) -> list[dict]:
    return lines(data_dir / "workbench" / "two_episodes.jsonl")


@pytest.mark.parametrize(
    ("mutate", "where", "field"),
    [
        (lambda o: o["steps"][1].update(action=42), "line 2", "steps.1.action"),
        (lambda o: o["episode"].pop("task_id"), "line 2", "episode.task_id"),
        (lambda o: o["steps"][2].update(index=7), "line 2", "steps.2.index"),
        (lambda o: o["spans"][0].update(end=9), "line 2", "spans.0.end"),
        (lambda o: o["spans"][0].update(kind="bogus"), "line 2", "spans.0.kind"),
        (lambda o: o.update(version=99), "line 2", "version"),
        (lambda o: o["episode"].update(batch_id="elsewhere"), "line 2", "episode.batch_id"),
    ],
)
def test_bad_record_names_file_line_and_field_and_writes_nothing(
    store, tmp_path, good_lines, mutate, where, field
):
    mutate(good_lines[1])
    path = write_lines(tmp_path / "bad.jsonl", good_lines)
    with pytest.raises(IngestError) as caught:
        import_paths(store, [path])
    message = str(caught.value)
    assert message.startswith(f"{path}: {where}: field '{field}'")
    assert (
        store.count_episodes() == 0
        and store.batches() == []
        and store.task("scienceworld:boil:3") is None
    )


def test_truncated_line_is_reported_with_its_line_number(store, tmp_path, good_lines):
    text = json.dumps(good_lines[0]) + "\n" + json.dumps(good_lines[1])[:300] + "\n"
    path = tmp_path / "cut.jsonl"
    path.write_text(text)
    with pytest.raises(IngestError, match=r"cut\.jsonl: line 2: invalid JSON"):
        import_paths(store, [path])
    assert store.count_episodes() == 0


def test_skip_bad_keeps_good_records_and_counts_the_rest(store, tmp_path, good_lines):
    broken = json.loads(json.dumps(good_lines[1]))
    broken["steps"][0]["kind"] = "dance"
    path = write_lines(tmp_path / "mixed.jsonl", [good_lines[0], "{not json", broken])
    report = import_paths(store, [path], skip_bad=True)
    assert report.episodes == 1
    assert len(report.bad) == 2
    assert "line 2: invalid JSON" in report.bad[0]
    assert "line 3: field 'steps.0.kind'" in report.bad[1]


def test_one_bad_file_rolls_back_the_good_ones_before_it(store, tmp_path, data_dir):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02binary\xff" * 100)
    with pytest.raises(IngestError, match="binary data"):
        import_paths(store, [data_dir / "workbench" / "two_episodes.jsonl", junk])
    assert store.count_episodes() == 0
    assert not store.has_source("anything")
    assert store.conn.execute("SELECT count(*) FROM sources").fetchone()[0] == 0


def test_forced_format_on_the_wrong_file_is_a_clear_error(store, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    with pytest.raises(IngestError, match=r"chat\.json: line 1: field 'format'"):
        import_paths(store, [path], format="workbench")


def test_missing_path_is_an_error(store, tmp_path):
    with pytest.raises(IngestError, match="no such file"):
        import_paths(store, [tmp_path / "nope.jsonl"])


def test_fifty_megabyte_observation_is_stored_whole(store, tmp_path, good_lines):
    huge = "x" * FIFTY_MB
    good_lines[0]["steps"][0]["observation"] = huge
    path = write_lines(tmp_path / "huge.jsonl", good_lines[:1])
    import_paths(store, [path])
    assert_stored_whole(store.step("boil-3-s7", 0).observation, huge)


def test_sniff_claims_only_workbench_lines(data_dir):
    head = (data_dir / "workbench" / "two_episodes.jsonl").read_text()[:65536]
    assert jsonl.sniff(Path("x.jsonl"), head)
    assert not jsonl.sniff(Path("x.jsonl"), '{"messages": [{"role": "user", "content": "x"}]}\n')
    assert not jsonl.sniff(Path("x.txt"), "Action: look around\nObservation: a room\n")


# -- JSON lines read in blocks (every JSON-lines importer reads them so) ----------------------


def _records_line_by_line(path: Path) -> list[tuple]:
    """``iter_jsonl`` as it read files before blocks: one line at a time."""
    out = []
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                out.append((number, json.loads(raw)))
            except UnicodeDecodeError:
                out.append((f"line {number}", "not UTF-8 text"))
            except json.JSONDecodeError as error:
                out.append((f"line {number}", f"{error.msg} (column {error.colno})"))
    return out


def _records_in_blocks(path: Path, in_memory: bool = False) -> list[tuple]:
    content = path.read_bytes() if in_memory else None
    ctx = ReadContext(
        path=path, content_hash="0" * 64, batch_id="b", format="workbench", content=content
    )
    return [
        (item.where, item.message.removeprefix("invalid JSON: "))
        if isinstance(item, IngestError)
        else item
        for item in iter_jsonl(ctx)
    ]


JSON_LINES = [
    b'{"a": 1}\n{"b": [1, 2, {"c": "\\u00e9 \\ud83d\\ude00"}]}\r\n\n  \t\n{"d": null}',
    b'{"a": \n1}\n{"truncated": \n{"ok": true} trailing\n["array", 1]\n  {"lead": 1}\n',
    b'{"a": "\xff"}\n{"b": 2}\n\xef\xbb\xbf{"bom": 1}\n{"nan": NaN}\n{"big": 1e400}\n',
    b'{\x00"nul": 1}\n\xc2\xa0\n{"nbsp": 1}\n"string"\n7\n{"x": 1}{"y": 2}\n',
    b'{"long": "' + b"x" * 200 + b'"}\n' + '{"é": "☃"}\n'.encode() * 9 + b"\x0b\x0c\n",
    b'{"int": 123456789012345678901234567890, "neg": -9223372036854775809, "dup": 1, "dup": 2}\n'
    b'{"lone": "\\ud800"}\n{"float": 2.2250738585072011e-308, "tiny": 5e-324, "e": 1E5}\n',
    b"",
]


@pytest.mark.parametrize("data", JSON_LINES)
def test_json_lines_read_in_blocks_give_what_reading_them_line_by_line_gave(
    tmp_path, monkeypatch, data
):
    monkeypatch.setattr(base, "LINE_BLOCK", 5)  # blocks that end mid-line, mid-character
    path = tmp_path / "lines.jsonl"
    path.write_bytes(data)
    assert _records_in_blocks(path) == _records_line_by_line(path)
    # a small file the import read already is read where it is, as one block
    assert _records_in_blocks(path, in_memory=True) == _records_line_by_line(path)


def test_a_file_read_already_counts_as_read_once(tmp_path):
    data = b'\xef\xbb\xbf{"a": 1}\n{"b": 2}\n'
    ctx = ReadContext(
        path=tmp_path / "x.jsonl", content_hash="0" * 64, batch_id="b", format="workbench"
    )
    assert ctx.in_memory() is None and ctx.bytes_read() == 0
    ctx.content = data
    assert ctx.in_memory() == data[3:]  # after the byte order mark, as open() reads it
    assert ctx.in_memory() == data[3:]
    assert ctx.bytes_read() == len(data)
    assert [record for _, record in iter_jsonl(ctx)] == [{"a": 1}, {"b": 2}]
    assert ctx.bytes_read() == len(data)
