"""Every reader of an imported step sees its verbatim source record, though the store keeps the
text the record shares with the step once (``store.raw``); a record of many megabytes is
staged alone and stored whole."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from store import Store
from store import raw as raw_texts
from workbench.cli import main
from workbench.ingest import import_paths
from workbench.ingest.imports import LARGE_RECORD


def chat_record(output: str) -> dict:
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    return {
        "task_id": "big",
        "messages": [
            {"role": "user", "content": "List the files."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": output},
            {"role": "assistant", "content": "Done."},
        ],
    }


def write_chat(path: Path, output: str) -> Path:
    path.write_text(json.dumps(chat_record(output)) + "\n")
    return path


def cli(db_path: Path, *args: str) -> str:
    result = CliRunner().invoke(main, list(args), env={"WORKBENCH_DB": str(db_path)})
    assert result.exit_code == 0, result.output
    return result.output


def test_show_and_export_give_the_verbatim_record(tmp_path, db_path):
    output = "".join(f"file_{i}.py quokka\n" for i in range(40))
    assert len(output) >= raw_texts.SHORTEST
    source = write_chat(tmp_path / "chat.jsonl", output)
    cli(db_path, "import", "--format", "openai-chat", str(source))
    with Store(db_path) as store:
        [episode] = store.episodes()
        [column] = store.conn.execute(
            "SELECT raw FROM steps WHERE observation = ?", (output,)
        ).fetchone()
        tool = next(s for s in store.steps(episode.id) if s.observation == output)
    assert column.startswith(raw_texts.MARK) and "quokka" not in column
    assert tool.raw == chat_record(output)["messages"][2]
    shown = cli(db_path, "show", episode.id, "--raw")
    assert shown.count("file_39.py quokka") == 2  # the observation, and the raw record's
    out = tmp_path / "export.jsonl"
    cli(db_path, "export", "--out", str(out))
    [line] = out.read_text().splitlines()
    raws = [step["raw"] for step in json.loads(line)["steps"]]
    assert chat_record(output)["messages"][2] in raws


def test_a_record_of_many_megabytes_is_stored_whole_and_found(tmp_path, store):
    line = "src/module.py error value\n"
    output = line * (LARGE_RECORD // len(line) + 1000) + "wombat at the end\n"
    source = write_chat(tmp_path / "chat.jsonl", output)
    small = write_chat(tmp_path / "small.jsonl", "a small output")
    report = import_paths(store, [small, source], format="openai-chat")
    assert report.episodes == 2
    [hit] = store.search("wombat")
    steps = store.steps(hit.episode_id)
    assert steps[hit.index].observation == output
    assert steps[hit.index].raw == chat_record(output)["messages"][2]
    assert [s.raw for s in steps] == chat_record(output)["messages"]
    again = import_paths(store, [source], format="openai-chat")
    assert again.episodes == 0 and store.count_episodes() == 2
