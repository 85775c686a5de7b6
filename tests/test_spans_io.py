"""Human span labels in and out: `spans import` / `spans export` with workbench or source step
numbers, bad lines named and nothing half-written, and agreement against one labeller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Span, Store
from tests.ingest.helpers import write_jsonl
from tests.ingest.hostile import DISGUISING, HOSTILE_NAME, HOSTILE_TEXT, RAW_CONTROLS
from tests.ingest.test_imports_report import chat_run
from workbench.analyze.agreement import agreement
from workbench.cli import main
from workbench.ingest import import_paths
from workbench.spans_io import BadLabels, import_spans, source_positions, stored_author

DATA = Path(__file__).parent / "data"


@pytest.fixture
def run(db_path):
    def invoke(*args: str, ok: bool = True):
        result = CliRunner().invoke(main, list(args), env={"WORKBENCH_DB": str(db_path)})
        if ok:
            assert result.exit_code == 0, result.output
        return result

    return invoke


@pytest.fixture
def episodes(db_path, tmp_path) -> list[str]:
    """Three chat runs imported into the database: ids of t1 (5 steps), t2 (7), t3 (9).

    t2's assistant message makes two tool calls, t3's three: steps 2-3 (and 2-4) share
    source message 2.
    """
    runs = write_jsonl(
        tmp_path / "runs.jsonl",
        [chat_run("t1", 0.0), chat_run("t2", 0.0, calls=2), chat_run("t3", 0.0, calls=3)],
    )
    with Store(db_path) as store:
        import_paths(store, [runs])
        return [e.id for e in sorted(store.episodes(), key=lambda e: e.task_id)]


def label(episode: str, start: int, end: int | None = None, **fields) -> dict:
    line = {"episode": episode, "start": start, "kind": "causal", **fields}
    if end is not None:
        line["end"] = end
    return line


def all_spans(db_path: Path) -> list[Span]:
    with Store(db_path) as store:
        return [s for e in store.episodes() for s in store.spans(e.id)]


def test_import_then_export_gives_the_same_lines(run, db_path, episodes, tmp_path):
    t1, t2, t3 = episodes
    lines = [
        {
            "episode": t1,
            "start": 2,
            "end": 3,
            "kind": "causal",
            "label": "wrong-call",
            "note": "should have checked",
            "author": "human:alice",
        },
        {
            "episode": t2,
            "start": 4,
            "end": 4,
            "kind": "evidence",
            "label": "",
            "note": "",
            "author": "human",
        },
        {
            "episode": t3,
            "start": 1,
            "end": 1,
            "kind": "note",
            "label": HOSTILE_NAME,
            "note": HOSTILE_TEXT + DISGUISING,
            "author": "human:alice",
        },
    ]
    labels = write_jsonl(tmp_path / "labels.jsonl", lines)
    assert "imported 3 span(s)" in run("spans", "import", str(labels)).output
    out = tmp_path / "out.jsonl"
    run("spans", "export", "--out", str(out))
    assert not RAW_CONTROLS.search(out.read_bytes())  # written as \u009b, \u2028...
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(exported, key=lambda s: s["episode"]) == sorted(lines, key=lambda s: s["episode"])


def test_importing_the_same_file_twice_adds_nothing(run, db_path, episodes, tmp_path):
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [label(episodes[0], 2, author="alice"), label(episodes[0], 2, author="alice")],
    )
    first = run("spans", "import", str(labels)).output
    assert "imported 1 span(s); 1 already present" in first
    assert "imported 0 span(s); 2 already present" in run("spans", "import", str(labels)).output
    assert len(all_spans(db_path)) == 1


def test_a_named_labeller_is_stored_as_a_human(db_path, episodes, tmp_path):
    labels = write_jsonl(tmp_path / "l.jsonl", [label(episodes[0], 1, author="alice")])
    with Store(db_path) as store:
        import_spans(store, labels)
        [span] = store.spans(episodes[0])
    assert (span.author, span.start, span.end) == ("human:alice", 1, 1)
    assert stored_author("human") == "human" and stored_author("analyzer:x") == "analyzer:x"


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ({"episode": "nope", "start": 1}, "episode", "no episode 'nope'"),
        ({"start": 1}, "episode", "field required"),
        (
            {"episode": "{t1}", "start": 1, "end": 9},
            "end",
            "step 9 is past the episode's last step 4",
        ),
        ({"episode": "{t1}", "start": 7}, "start", "step 7 is past"),
        ({"episode": "{t1}", "start": 3, "end": 1}, "end", "end 1 is before start 3"),
        ({"episode": "{t1}", "start": -1}, "start", "greater than or equal to 0"),
        ({"episode": "{t1}", "start": 1, "kind": "blame"}, "kind", "input should be"),
        ({"episode": "{t1}", "start": 1, "lable": "x"}, "lable", "extra inputs"),
        ({"episode": "{t1}", "start": 1, "confidence": 2}, "confidence", "less than or equal"),
    ],
)
def test_a_bad_line_is_named_by_number_and_field_and_nothing_is_written(
    run, db_path, episodes, tmp_path, line, field, message
):
    bad = json.loads(json.dumps(line).replace("{t1}", episodes[0]))
    labels = write_jsonl(tmp_path / "labels.jsonl", [label(episodes[0], 1), bad])
    result = run("spans", "import", str(labels), ok=False)
    assert result.exit_code == 1
    assert f"{labels}: line 2: field '{field}': " in result.output
    assert message in result.output
    assert "no span was imported" in result.output
    assert all_spans(db_path) == []


def test_every_bad_line_is_reported_and_invalid_json_too(db_path, episodes, tmp_path):
    labels = tmp_path / "labels.jsonl"
    good = json.dumps(label(episodes[0], 1))
    labels.write_text(f"{good}\n{{oops\n\n[1, 2]\n{good}\n\xff\n", encoding="latin-1")
    with Store(db_path) as store, pytest.raises(BadLabels) as caught:
        import_spans(store, labels)
    assert [(e.where, e.field) for e in caught.value.errors] == [
        ("line 2", ""),
        ("line 4", ""),
        ("line 6", ""),
    ]
    assert "invalid JSON" in str(caught.value) and "expected a JSON object" in str(caught.value)
    assert all_spans(db_path) == []


def test_a_missing_file_is_one_line(run, tmp_path):
    result = run("spans", "import", str(tmp_path / "nope.jsonl"), ok=False)
    assert result.exit_code == 1 and "nope.jsonl" in result.output
    assert "Traceback" not in result.output


def test_source_indices_map_to_the_steps_of_that_message(run, db_path, episodes, tmp_path):
    _, t2, t3 = episodes
    # t3's messages: 0 system, 1 user, 2 assistant (3 tool calls), 3-5 tool results, 6 reply.
    labels = write_jsonl(
        tmp_path / "labels.jsonl", [label(t3, 2, 2, author="alice"), label(t2, 3, 4)]
    )
    run("spans", "import", "--index", "source", str(labels))
    with Store(db_path) as store:
        [calls] = store.spans(t3)
        [results] = store.spans(t2)
    assert (calls.start, calls.end) == (2, 4)  # the three tool-call steps of message 2
    assert (results.start, results.end) == (4, 5)
    out = run("spans", "export", "--index", "source", "--author", "alice").output
    [line] = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    assert (line["start"], line["end"]) == (2, 2)
    past = write_jsonl(tmp_path / "past.jsonl", [label(t2, 2, 9)])
    result = run("spans", "import", "--index", "source", str(past), ok=False)
    assert "line 1: field 'end': source message 9 is past the log's last message 5" in (
        result.output
    )


def file_messages(path: Path) -> list[list[dict]]:
    """The message lists of a mini-swe-agent trajectory or an OpenAI-chat JSONL file."""
    if path.suffix == ".jsonl":
        return [json.loads(line)["messages"] for line in path.read_text().splitlines()]
    return [json.loads(path.read_text())["messages"]]


@pytest.mark.parametrize(
    "path",
    [
        DATA / "mini-swe-agent" / "django__django-11099" / "django__django-11099.traj.json",
        DATA / "openai-chat" / "tools.jsonl",
    ],
    ids=["mini-swe-agent", "openai-chat"],
)
def test_source_positions_are_the_messages_steps_were_read_from(store, path):
    import_paths(store, [path])
    episodes = sorted(store.episodes(), key=lambda e: e.source.record)
    for episode, messages in zip(episodes, file_messages(path), strict=True):
        steps = store.steps(episode.id)
        for step, (first, last) in zip(steps, source_positions(steps), strict=True):
            read = step.raw if isinstance(step.raw, list) else [step.raw]
            assert messages[first : last + 1] == read, (episode.id, step.index)
        assert source_positions(steps)[-1][1] == len(messages) - 1


def add(store: Store, episode: str, start: int, end: int, author: str) -> None:
    store.add_span(Span(episode_id=episode, start=start, end=end, kind="causal", author=author))


def test_agreement_against_one_labeller_per_family(run, db_path, episodes):
    t1, t2, t3 = episodes
    with Store(db_path) as store:
        for episode in episodes:
            add(store, episode, 2, 2, "analyzer:heuristic")
        add(store, t1, 2, 2, "human:alice")  # exact
        add(store, t2, 3, 4, "human:alice")  # ±1, IoU 0
        add(store, t3, 0, 0, "human:bob")  # only bob labelled t3
        rows = {row.key: row for row in agreement(store, author="alice")}
        assert rows["all"].episodes == 2
        assert (rows["all"].exact, rows["all"].within_one, rows["all"].iou) == (0.5, 1.0, 0.5)
        [bob] = [row for row in agreement(store, author="bob") if row.key == "all"]
        assert (bob.episodes, bob.exact, bob.within_one) == (1, 0.0, 0.0)
        assert {row.key: row.episodes for row in agreement(store)}["all"] == 3
    out = run("analyze", "--agreement", "--author", "alice").output
    assert "50%" in out and "100%" in out and "0.50" in out
    missing = run("analyze", "--agreement", "--author", "carol", ok=False)
    assert missing.exit_code == 1 and "causal span by 'carol'" in missing.output
    assert run("analyze", "--author", "alice", ok=False).exit_code == 2


def test_an_exported_span_names_the_agents_that_acted_in_it_and_reads_back(run, db_path, tmp_path):
    chat = {
        "messages": [
            {"role": "user", "content": "Count the primes below 20.", "name": "Admin"},
            {"role": "user", "content": "There are 9.", "name": "Coder"},
            {"role": "user", "content": "Agreed.", "name": "Critic"},
        ]
    }
    runs = write_jsonl(tmp_path / "chat.jsonl", [chat])
    run("import", str(runs))
    with Store(db_path) as store:
        (episode,) = store.episodes()
    labels = write_jsonl(tmp_path / "labels.jsonl", [label(episode.id, 1, 2)])
    run("spans", "import", str(labels))
    out = tmp_path / "out.jsonl"
    run("spans", "export", "--out", str(out))
    (line,) = [json.loads(text) for text in out.read_text().splitlines()]
    assert line["agents"] == ["Coder", "Critic"]
    again = run("spans", "import", str(out)).output  # (its agents are left aside)
    assert "0 new" in again or "already" in again
    assert len(all_spans(db_path)) == 1
