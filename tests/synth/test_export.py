"""Exports parse back, and text from trajectories cannot break their structure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from store import Store
from store.synth import SYNTH_WORKSPACE
from tests.ingest.hostile import DISGUISING, HOSTILE_TEXT, RAW_CONTROLS
from tests.synthesized import copy_db
from tests.written_markdown import live_html, raw_unsafe
from workbench.escapes import shown
from workbench.markdown import read_front_matter
from workbench.synth.export import SYSTEM, export_examples

HOSTILE_INSTRUCTION = (
    f"# Not a heading\n---\nverdict: kept\n[link](x) *bold* `code` {HOSTILE_TEXT}{DISGUISING}"
)
HOSTILE_OBSERVATION = f"```\n# inner heading\n---\nkind: evil\n````\n{HOSTILE_TEXT}{DISGUISING}"


def test_chat_jsonl_holds_one_conversation_per_kept_example(tmp_path: Path, filtered_db):
    out = tmp_path / "train.jsonl"
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        report = export_examples(store, out, "chat-jsonl")
        kept = {e.id: e for e in store.synth_examples(verdict="kept")}
        only_whole = export_examples(store, tmp_path / "whole.jsonl", "chat-jsonl", kind="whole")
    lines = out.read_text().splitlines()
    assert report.examples == len(lines) == len(kept) > 0
    for line in lines:
        record = json.loads(line)
        example = kept[record["metadata"]["example"]]
        messages = record["messages"]
        assert messages[0] == {"role": "system", "content": SYSTEM}
        assert messages[1]["content"].startswith(f"Task: {example.instruction}\n\nObservation:")
        roles = [m["role"] for m in messages[2:]]
        assert roles == ["assistant"] + ["user", "assistant"] * (len(example.actions) - 1)
        assert [m["content"] for m in messages if m["role"] == "assistant"] == example.actions
        assert record["metadata"]["episode"] == example.episode_id
        assert (record["metadata"]["start"], record["metadata"]["end"]) == (
            example.start,
            example.end,
        )
    whole = [json.loads(line) for line in (tmp_path / "whole.jsonl").read_text().splitlines()]
    assert only_whole.examples == len(whole) and {r["metadata"]["kind"] for r in whole} == {"whole"}


def test_markdown_examples_keep_their_structure_whatever_the_trajectory_says(
    tmp_path: Path, constructed_db
):
    path = copy_db(constructed_db, tmp_path)
    out = tmp_path / "examples"
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        wholes = {(e.episode_id, e.start, e.end) for e in store.synth_examples(kind="whole")}
        target = next(
            e
            for e in store.synth_examples(kind="backward")
            if (e.episode_id, e.start, e.end) not in wholes
        )
        hostile = target.model_copy(
            update={
                "id": None,
                "kind": "whole",
                "instruction": HOSTILE_INSTRUCTION,
                "actions": ["`rm -rf`"] * len(target.actions),
                "observations": [HOSTILE_OBSERVATION] * len(target.actions),
            }
        )
        (stored,) = store.add_synth_examples([hostile])
        store.set_example_verdicts([stored.model_copy(update={"verdict": "kept"})])
        report = export_examples(store, out, "examples-md")
        export_examples(store, tmp_path / "train.jsonl", "chat-jsonl")
    assert report.examples == 1
    (written,) = report.files
    assert written == out / stored.env / f"whole-{stored.id}.md"
    text = written.read_text()
    assert not raw_unsafe(text) and not live_html(text)
    front = read_front_matter(text)
    assert front["instruction"] == HOSTILE_INSTRUCTION and front["example"] == stored.id
    assert (front["episode"], front["start"], front["end"]) == (
        stored.episode_id,
        stored.start,
        stored.end,
    )
    body = text.split("\n---\n", 1)[1]
    tokens = MarkdownIt("commonmark").parse(body)
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h1"]
    inline = tokens[[t.type for t in tokens].index("heading_open") + 1]
    assert inline.children and "".join(c.content for c in inline.children) == shown(
        " ".join(HOSTILE_INSTRUCTION.split())
    )
    fences = [t.content.rstrip("\n") for t in tokens if t.type == "fence"]
    n = len(stored.actions)
    assert len(fences) == 1 + 2 * n
    assert fences[1::2] == ["`rm -rf`"] * n and fences[2::2] == [shown(HOSTILE_OBSERVATION)] * n
    assert not list(out.rglob("*.tmp"))
    chat = (tmp_path / "train.jsonl").read_bytes()
    assert not RAW_CONTROLS.search(chat)  # written as \u009b, \u2028...
    records = [json.loads(line) for line in chat.decode().splitlines()]
    (record,) = [r for r in records if r["metadata"]["example"] == stored.id]
    assert record["metadata"]["instruction"] == HOSTILE_INSTRUCTION
    assert record["messages"][1]["content"].startswith(f"Task: {HOSTILE_INSTRUCTION}\n")


def test_an_export_to_the_wrong_kind_of_path_is_refused(tmp_path: Path, filtered_db):
    (tmp_path / "file.md").write_text("x")
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        with pytest.raises(ValueError, match="is a folder"):
            export_examples(store, tmp_path, "chat-jsonl")
        with pytest.raises(ValueError, match="is a file"):
            export_examples(store, tmp_path / "file.md", "examples-md")
