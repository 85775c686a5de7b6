"""Logs of any shape read through a mapping file: JSON paths for JSON/JSONL, regexes for text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Store
from tests.ingest.helpers import bad_reasons, write_jsonl
from workbench.cli import main
from workbench.ingest import IngestError, import_paths, mapped


@pytest.fixture
def folder(data_dir: Path) -> Path:
    return data_dir / "mapped"


@pytest.fixture
def bolt(folder: Path) -> mapped.MappedImporter:
    return mapped.load(folder / "bolt.toml")


@pytest.fixture
def gardener(folder: Path) -> mapped.MappedImporter:
    return mapped.load(folder / "gardener.toml")


def by_task(store: Store) -> dict:
    return {e.task_id: e for e in store.episodes()}


def cli(db_path: Path, *args: str):
    return CliRunner().invoke(main, list(args), env={"WORKBENCH_DB": str(db_path)})


# -- paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("info.reward", [0.5]),
        ("traj[*].content", ["a", "b"]),
        ("traj[1].content", ["b"]),
        ("traj[5].content", []),
        ("info.missing", []),
        ("$", [{"info": {"reward": 0.5}, "traj": [{"content": "a"}, {"content": "b"}]}]),
    ],
)
def test_paths_reach_keys_indices_and_every_element(path, found):
    record = {"info": {"reward": 0.5}, "traj": [{"content": "a"}, {"content": "b"}]}
    assert mapped.resolve(record, mapped.parse_path(path)) == found


@pytest.mark.parametrize(
    ("record", "found"),
    [
        ({"name": "Critic", "role": "assistant"}, ["Critic"]),
        ({"name": None, "role": "WebSurfer"}, ["WebSurfer"]),
        ({"name": "", "role": "WebSurfer"}, ["WebSurfer"]),
        ({"role": "WebSurfer"}, ["WebSurfer"]),
        ({"name": None}, []),
        ({"other": 1}, []),
    ],
)
def test_alternatives_read_the_first_path_that_gives_a_value(record, found):
    assert mapped.paths.first_found(record, "name | role") == found


@pytest.mark.parametrize("path", ["", "a..b", ".a", "a.", "a[x]", "a b", "a[1"])
def test_bad_paths_are_refused(path):
    with pytest.raises(ValueError, match="bad path"):
        mapped.parse_path(path)
    with pytest.raises(ValueError, match="bad path"):
        mapped.parse_alternatives(f"ok | {path}")


# -- JSON -------------------------------------------------------------------------------------


def test_a_json_log_becomes_episodes_with_tasks_outcomes_and_steps(store, folder, bolt):
    report = import_paths(store, [folder / "bolt-runs.json"], format=bolt)
    assert report.files[0].format == "bolt" and report.episodes == 2
    runs = by_task(store)
    done, gave_up = runs["bolt:sort-files"], runs["bolt:count-lines"]
    assert (done.agent, done.family) == ("bolt-0.3", "files")
    assert (done.outcome.success, done.outcome.score) == (True, 1.0)
    assert (gave_up.outcome.success, gave_up.outcome.score) == (False, 0.0)
    assert store.task("bolt:sort-files").instruction == "List the files in /data, largest first."
    steps = store.steps(done.id)
    assert [s.kind for s in steps] == ["thought", "action", "action"]
    assert steps[0].content == "I should list /data sorted by size."
    assert (steps[1].thought, steps[1].action) == ("ls can sort by size.", "ls -S /data")
    assert (steps[1].observation, steps[2].reward) == ("big.bin\nsmall.txt", 1.0)


def test_reimporting_adds_nothing(store, folder, bolt, gardener):
    for log, importer in (("bolt-runs.json", bolt), ("gardener.log", gardener)):
        first = import_paths(store, [folder / log], format=importer)
        again = import_paths(store, [folder / log], format=importer)
        assert first.episodes == 2 and again.episodes == 0
        assert [f.status for f in again.files] == ["duplicate"]
    assert store.count_episodes() == 4


def test_jsonl_has_one_episode_per_line_and_wildcards_join_text(store, tmp_path):
    mapping = tmp_path / "m.toml"
    mapping.write_text(
        'name = "chat"\n[episodes]\nid = "id"\nsuccess = "ok"\n'
        '[steps]\npath = "turns"\naction = "say"\nobservation = "hear[*].text"\n'
    )
    log = write_jsonl(
        tmp_path / "runs.jsonl",
        [
            {"id": 1, "ok": True, "turns": [{"say": "hi", "hear": [{"text": "a"}, {"text": "b"}]}]},
            {"id": 2, "ok": 0, "turns": [{"say": "bye"}]},
        ],
    )
    import_paths(store, [log], format=mapped.load(mapping))
    runs = by_task(store)
    assert runs["chat:1"].outcome.success is True and runs["chat:2"].outcome.success is False
    assert store.steps(runs["chat:1"].id)[0].observation == "a\nb"


def mapping_file(tmp_path: Path, toml: str) -> mapped.MappedImporter:
    path = tmp_path / "mapping.toml"
    path.write_text(toml)
    return mapped.load(path)


CHAT = """
name = "chat"
[episodes]
id = "id"
agent = "meta.agent | meta.model"
family = { value = "gaia" }
success = false
score = 0
[steps]
path = "messages"
kind = { value = "message" }
content = "content"
thought = "name | role"
reward = 0.5
role = { map = "role", values = { user_proxy = "user", Orchestrator = "assistant" } }
"""


def test_constants_alternatives_and_value_maps(store, tmp_path):
    importer = mapping_file(tmp_path, CHAT)
    log = write_jsonl(
        tmp_path / "runs.jsonl",
        [
            {
                "id": "a",
                "meta": {"agent": "team-1", "model": "gpt"},
                "messages": [
                    {"content": "Add 2 and 2.", "role": "user_proxy"},
                    {"content": "4", "role": "Orchestrator", "name": "Solver"},
                ],
            },
            {"id": "b", "meta": {"model": "gpt"}, "messages": [{"content": "hi", "role": None}]},
        ],
    )
    import_paths(store, [log], format=importer)
    runs = by_task(store)
    first, second = runs["chat:a"], runs["chat:b"]
    assert (first.agent, second.agent, first.family) == ("team-1", "gpt", "gaia")
    assert (first.outcome.success, first.outcome.score) == (False, 0.0)
    steps = store.steps(first.id)
    assert [(s.kind, s.role, s.content, s.thought) for s in steps] == [
        ("message", "user", "Add 2 and 2.", "user_proxy"),
        ("message", "assistant", "4", "Solver"),
    ]
    assert steps[0].reward == 0.5
    assert store.task("chat:a").instruction == "Add 2 and 2."  # the first user message
    assert store.steps(second.id)[0].role == "agent"  # nothing to map: the kind's default


def test_a_value_the_map_lacks_is_an_error_quoting_it_and_a_default_takes_it(store, tmp_path):
    log = write_jsonl(
        tmp_path / "runs.jsonl",
        [{"id": "a", "messages": [{"content": "hm", "role": "WebSurfer"}]}],
    )
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=mapping_file(tmp_path, CHAT))
    assert str(caught.value) == (
        f"{log}: line 1, step 0: field 'steps.role': 'WebSurfer' at 'role' is not in the value "
        "map (user_proxy, Orchestrator) and it has no default"
    )
    fallback = CHAT.replace('"assistant" }', '"assistant" }, default = "assistant"')
    import_paths(store, [log], format=mapping_file(tmp_path, fallback))
    (episode,) = store.episodes()
    assert store.steps(episode.id)[0].role == "assistant"


def test_a_role_read_as_it_is_must_be_one_of_six_and_its_error_shows_it(store, tmp_path):
    importer = mapping_file(tmp_path, '[steps]\npath = "turns"\ncontent = "text"\nrole = "who"\n')
    speaker = "Orchestrator (thought) " + "x" * 1000
    log = write_jsonl(tmp_path / "runs.jsonl", [{"turns": [{"text": "hi", "who": speaker}]}])
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=importer)
    message = caught.value.message
    assert message.startswith("'Orchestrator (thought) xxx") and "(1,023 characters)" in message
    assert message.endswith(
        "at 'who' is no role (one of system, user, assistant, tool, environment, agent); map it "
        "with a value map"
    )
    assert len(str(caught.value)) < 500


def test_a_step_mapped_with_message_text_only_is_a_message(store, tmp_path):
    """With no kind mapped, a step's texts say what it is: message text alone is a message
    (it was an action step with an empty action)."""
    importer = mapping_file(
        tmp_path, '[steps]\npath = "turns"\ncontent = "text"\naction = "cmd"\nagent = "who"\n'
    )
    turns = [{"text": "What is 2 + 2?", "who": "asker"}, {"cmd": "add 2 2", "who": "solver"}]
    log = write_jsonl(tmp_path / "runs.jsonl", [{"turns": turns}])
    import_paths(store, [log], format=importer)
    (episode,) = store.episodes()
    steps = store.steps(episode.id)
    assert [(s.kind, s.agent) for s in steps] == [("message", "asker"), ("action", "solver")]


def test_records_without_steps_are_episodes_of_their_outcome(db_path, store, folder, tmp_path):
    """A record whose steps are absent or empty imports with its outcome and no step (one
    with neither steps nor an outcome is an error naming what the record holds, above)."""
    data = json.loads((folder / "bolt-runs.json").read_text())
    data["runs"][0]["trace"] = []
    del data["runs"][1]["trace"]
    log = tmp_path / "bolt-runs.json"
    log.write_text(json.dumps(data))
    report = import_paths(store, [log], format=mapped.load(folder / "bolt.toml"))
    assert report.episodes == 2 and report.files[0].steps == 0
    runs = by_task(store)
    assert runs["bolt:sort-files"].n_steps == 0
    assert runs["bolt:sort-files"].outcome.success is True
    shown = cli(db_path, "show", runs["bolt:count-lines"].id)
    assert shown.exit_code == 0 and "FAIL" in shown.output and "steps=0" in shown.output
    assert "step 0" not in shown.output


def test_a_results_file_imports_as_outcomes_and_analyze_leaves_them_out(db_path, folder):
    args = ("import", "--map", str(folder / "results.toml"), str(folder / "results.jsonl"))
    result = cli(db_path, *args)
    assert result.exit_code == 0, result.output
    assert "bolt: 3 new episode(s); 1 succeeded, 2 failed, 0 unknown; 0 step(s)" in result.output
    with Store(db_path) as store:
        assert sorted(e.task_id for e in store.episodes()) == [
            "bolt:count-lines",
            "bolt:count-lines",
            "bolt:sort-files",
        ]
    result = cli(db_path, "analyze")
    assert result.exit_code == 0, result.output
    assert "0 failure(s) analysed, 2 left out (no steps: outcome only)" in result.output
    assert "rejected" not in result.output


def test_a_status_the_results_map_does_not_list_is_an_error_naming_it(store, folder, tmp_path):
    log = write_jsonl(
        tmp_path / "results.jsonl", [{"run": "r-9", "task": "t", "status": "crashed"}]
    )
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=mapped.load(folder / "results.toml"))
    assert str(caught.value) == (
        f"{log}: line 1: field 'episodes.success': 'crashed' at 'status' is not in the value "
        "map (pass, fail, timeout) and it has no default"
    )


@pytest.mark.parametrize(
    ("name", "text", "episodes"),
    [
        ("runs.json", json.dumps([{"id": "a", "ok": True}, {"id": "b", "ok": False}]), 2),
        ("run.json", json.dumps({"id": "a", "ok": True}), 1),
        ("runs.jsonl", '{"id": "a", "ok": true}\n{"id": "b", "ok": false}\n', 2),
        ("runs.ndjson", '{"id": "a", "ok": true}\n', 1),
    ],
)
def test_the_format_follows_the_file_name_when_the_mapping_gives_none(
    store, tmp_path, name, text, episodes
):
    importer = mapping_file(tmp_path, '[episodes]\nid = "id"\nsuccess = "ok"\n')
    log = tmp_path / name
    log.write_text(text)
    assert import_paths(store, [log], format=importer).episodes == episodes


def test_a_jsonl_log_may_hold_a_list_of_episodes_per_line(store, tmp_path):
    importer = mapping_file(tmp_path, '[episodes]\npath = "runs[*]"\nsuccess = "ok"\n')
    log = write_jsonl(tmp_path / "runs.jsonl", [{"runs": [{"ok": True}, {"ok": False}]}])
    import_paths(store, [log], format=importer)
    assert sorted(e.id.split("-", 1)[1] for e in store.episodes()) == [
        "line1.record0",
        "line1.record1",
    ]


def test_each_mapped_step_keeps_its_element_of_the_log(db_path, store, folder):
    import_paths(store, [folder / "bolt-runs.json"], format=mapped.load(folder / "bolt.toml"))
    done = by_task(store)["bolt:sort-files"]
    trace = json.loads((folder / "bolt-runs.json").read_text())["runs"][0]["trace"]
    assert [s.raw for s in store.steps(done.id)] == trace
    shown = cli(db_path, "show", done.id, "--raw")
    assert '"act": {"cmd": "ls -S /data"}' in shown.output


def test_a_record_that_does_not_fit_names_file_record_and_mapping_key(store, tmp_path, folder):
    data = json.loads((folder / "bolt-runs.json").read_text())
    data["runs"][1]["result"]["reward"] = "lots"
    log = tmp_path / "bolt-runs.json"
    log.write_text(json.dumps(data))
    importer = mapped.load(folder / "bolt.toml")
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=importer)
    assert str(caught.value) == (
        f"{log}: record 1: field 'episodes.score': expected a number at 'result.reward', got 'lots'"
    )
    assert store.count_episodes() == 0 and store.batches() == []
    report = import_paths(store, [log], format=importer, skip_bad=True)
    assert report.episodes == 1 and len(bad_reasons(report, log)) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda run: [run.pop("trace"), run.pop("result")],
            "record 0: field 'steps.path': no steps at 'trace[*]' and no outcome in an object "
            "with keys run_id, meta, task",
        ),
        (
            lambda run: run.pop("run_id"),
            "record 0: field 'episodes.id': nothing at 'run_id' in an object with keys meta, "
            "task, result, trace",
        ),
        (
            lambda run: run.update(run_id=1.5),
            "record 0: field 'episodes.id': expected text at 'run_id', got 1.5",
        ),
        (
            lambda run: run["trace"][0].update(type="dance"),
            "record 0, step 0: field 'steps.kind': 'dance' is no step kind; map it in kinds",
        ),
        (
            lambda run: run["trace"][1].update(r="x"),
            "record 0, step 1: field 'steps.reward': expected a number at 'r', got 'x'",
        ),
        (
            lambda run: run["trace"].append({"type": "tool"}),
            "record 0, step 3: field 'steps.action': no action, observation, thought or content "
            'in {"type": "tool"}',
        ),
    ],
)
def test_each_misfit_names_its_key(store, tmp_path, folder, bolt, change, message):
    data = json.loads((folder / "bolt-runs.json").read_text())
    change(data["runs"][0])
    log = tmp_path / "bolt-runs.json"
    log.write_text(json.dumps(data))
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=bolt)
    assert str(caught.value) == f"{log}: {message}"


# -- text -------------------------------------------------------------------------------------


def test_a_text_log_splits_at_start_lines_into_steps_and_outcomes(store, folder, gardener):
    report = import_paths(store, [folder / "gardener.log"], format=gardener)
    assert report.episodes == 2
    runs = by_task(store)
    water, feed = runs["gardener:water-plant"], runs["gardener:feed-cat"]
    assert water.agent == "gardener-v2" and water.id.endswith("-7")
    assert (water.outcome.success, water.outcome.score) == (True, 1.0)
    assert (feed.outcome.success, feed.outcome.score) == (False, 0.0)
    assert store.task(water.task_id).instruction == "water the plant in the kitchen"
    first, second = store.steps(water.id)
    assert (first.thought, first.action) == ("the plant is in the kitchen", "go kitchen")
    assert first.observation == "You are in the kitchen.\n  A plant is here, its soil is dry."
    assert (second.action, second.observation) == ("water plant", "The plant is watered.")
    steps = store.steps(feed.id)
    assert [(s.thought, s.action) for s in steps] == [
        ("", "open fridge"),
        ("cats like milk", "give milk to dog"),
    ]


def test_a_text_log_without_start_pattern_is_one_episode(store, tmp_path):
    mapping = tmp_path / "m.toml"
    mapping.write_text("[text]\naction = '^> (?P<action>.*)'\noutcome = 'Score: (?P<score>.*)'\n")
    log = tmp_path / "run.txt"
    log.write_text("> look\nA room.\n> go north\nA hall.\nScore: nine\n")
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=mapped.load(mapping))
    assert str(caught.value) == f"{log}: line 5: field 'text.outcome': score 'nine' is no number"
    log.write_text("> look\nA room.\n> go north\nA hall.\nScore: 9\n")
    import_paths(store, [log], format=mapped.load(mapping))
    (episode,) = store.episodes()
    assert episode.outcome.score == 9.0 and episode.task_id.startswith("mapped:")
    assert [s.action for s in store.steps(episode.id)] == ["look", "go north"]


def test_a_pattern_that_runs_too_long_ends_the_file_with_one_line_naming_it(
    db_path, store, tmp_path
):
    """Nested repetition on a long line: ``re`` would backtrack for minutes, the one
    time-limited matcher (``workbench.patterns``) stops it, and the file is named."""
    mapping = tmp_path / "m.toml"
    mapping.write_text("[text]\nepisode = '^(a+)+$'\naction = '^> (?P<action>.*)'\n")
    log = tmp_path / "run.txt"
    log.write_text("> look\n" + "a" * 50_000 + "!\n> go\n")
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=mapped.load(mapping))
    assert (caught.value.where, caught.value.field) == ("line 2", "text.episode")
    assert "'^(a+)+$' ran past its 0.5 s limit" in caught.value.message
    assert store.count_episodes() == 0
    result = cli(db_path, "import", "--map", str(mapping), str(log), "--skip-bad")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "ran past its 0.5 s limit" in result.output


def test_multiline_fields_keep_their_lines_up_to_the_next_marker(store, folder):
    """Aider's chat history: a reply runs over many lines (blank ones and code included)
    until the next marker; a user message of several ``#### `` lines is one message."""
    importer = mapped.load(folder / "aider.toml")
    report = import_paths(store, [folder / "aider.chat.history.md"], format=importer)
    assert report.episodes == 2
    sessions = by_task(store)
    first, second = sessions["aider:L1"], sessions["aider:L32"]
    steps = store.steps(first.id)
    assert [(s.kind, s.role) for s in steps] == [
        ("observation", "environment"),
        ("message", "user"),
        ("message", "assistant"),
        ("observation", "environment"),
        ("message", "user"),
        ("message", "assistant"),
        ("observation", "environment"),
    ]
    reply = steps[2].content
    assert reply.startswith("I will add the flag to the argument parser.\n\ncli.py\n```python")
    assert '    parser.add_argument("--verbose", action="store_true")' in reply
    assert reply.endswith(">>>>>>> REPLACE\n```")
    assert steps[3].observation == "Applied edit to cli.py\nCommit 1a2b3c4 feat: add --verbose flag"
    assert steps[4].content == "the tests fail:\nAssertionError: '--verbose' not in the help text"
    assert (steps[1].raw, steps[2].raw) == ({"line": 7}, {"line": 9})
    assert store.task(first.task_id).instruction == "add a --verbose flag to cli.py"
    assert (first.family, second.family, second.n_steps) == ("aider", "aider", 3)
    assert first.outcome.success is None and first.outcome.score is None


def test_without_multiline_a_reply_keeps_only_its_first_line(store, folder, tmp_path):
    """The same log read without ``multiline``: what the setting changes."""
    toml = (folder / "aider.toml").read_text().replace("multiline =", "# multiline =")
    import_paths(store, [folder / "aider.chat.history.md"], format=mapping_file(tmp_path, toml))
    replies = [
        s.content for e in store.episodes() for s in store.steps(e.id) if s.role == "assistant"
    ]
    assert "I will add the flag to the argument parser." in replies
    assert "cli.py" in replies  # each line a message of its own


def test_a_text_episode_of_an_outcome_alone_has_no_steps(store, tmp_path):
    importer = mapping_file(
        tmp_path,
        "[episodes]\nagent = { value = 'gardener-v2' }\n[text]\n"
        "episode = '^### run (?P<id>\\S+)'\naction = '^Do: (?P<action>.+)'\n"
        "outcome = '^Result: (?P<success>\\w+)'\n",
    )
    log = tmp_path / "run.log"
    log.write_text("### run 1\nResult: failure\n### run 2\nDo: look\nResult: success\n")
    import_paths(store, [log], format=importer)
    runs = {e.id.rsplit("-", 1)[1]: e for e in store.episodes()}
    assert (runs["1"].n_steps, runs["1"].outcome.success) == (0, False)
    assert (runs["2"].n_steps, runs["2"].outcome.success) == (1, True)
    assert runs["1"].agent == runs["2"].agent == "gardener-v2"


# -- the mapping file -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[episodes]\nidd = "x"\n[steps]\npath = "s"\n', "field 'episodes.idd': extra inputs"),
        ('[steps]\npath = "s"\naction = "a..b"\n', "field 'steps.action': value error, bad path"),
        ("[text]\naction = '(unclosed'\n", "field 'text.action': value error, bad regular"),
        ('name = "x"\n', "a json mapping needs a [steps] table, or episodes.success or"),
        ('name = ""\n[text]\n', "field 'name': string should match pattern"),
        ("[steps\n", "invalid TOML"),
        (
            "[episodes]\nscore = true\n",
            "field 'episodes.score': value error, expected a number, got true",
        ),
        (
            "[episodes]\nsuccess = 1\n",
            "field 'episodes.success': value error, expected true or false, got 1",
        ),
        (
            "[episodes]\nfamily = 3\nscore = 's'\n",
            "field 'episodes.family': value error, expected text, got 3",
        ),
        (
            "[episodes]\nid = { value = 'x' }\nscore = 's'\n",
            "field 'episodes.id': value error, an id is read from each record",
        ),
        ("[episodes]\nagent = [1]\nscore = 's'\n", "field 'episodes.agent': expected a path"),
        (
            "[episodes]\nagent = 'a | b..c'\nscore = 's'\n",
            "field 'episodes.agent': value error, bad",
        ),
        (
            '[steps]\npath = "s"\nrole = { map = "r", values = { bot = "robot" } }\n',
            "field 'steps.role': value error, 'robot' is no role (one of system, user",
        ),
        (
            '[steps]\npath = "s"\nrole = { map = "r", values = {}, default = "x" }\n',
            "field 'steps.role': value error, 'x' is no role",
        ),
        (
            "[episodes]\nsuccess = { map = 's', values = { ok = 'yes' } }\n",
            "field 'episodes.success': value error, expected true or false, got 'yes'",
        ),
        ("[episodes]\nagent = 'a'\n[text]\naction = 'x'\n", "episodes.agent must be a constant"),
        (
            "[text]\naction = 'x'\nmultiline = ['thought']\n",
            "multiline names 'thought', which has no pattern",
        ),
        ("[text]\naction = 'x'\nmultiline = ['outcome']\n", "field 'text.multiline.0': input"),
    ],
)
def test_a_bad_mapping_is_one_error_naming_file_and_key(tmp_path, toml, message):
    mapping = tmp_path / "mapping.toml"
    mapping.write_text(toml)
    with pytest.raises(IngestError) as caught:
        mapped.load(mapping)
    assert str(caught.value).startswith(f"{mapping}: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


# -- the command ------------------------------------------------------------------------------


def test_import_map_reads_the_files_and_skip_bad_works(db_path, folder, tmp_path):
    log = tmp_path / "gardener.log"
    log.write_text((folder / "gardener.log").read_text() + "### run 9 | task: t | agent: a\n")
    args = ("import", "--map", str(folder / "gardener.toml"), str(log))
    result = cli(db_path, *args)
    assert result.exit_code == 1
    assert (
        f"{log}: line 19: field 'text.action': no step and no outcome in this episode: "
        "'### run 9 | task: t | agent: a'"
    ) in result.output
    result = cli(db_path, *args, "--skip-bad")
    assert result.exit_code == 0, result.output
    assert "gardener: 2 new episode(s); 1 succeeded, 1 failed" in result.output
    assert "1 bad record(s) skipped" in result.output
    again = cli(db_path, *args, "--skip-bad")
    assert "already imported, skipped" in again.output and "imported 0 episode(s)" in again.output


def test_import_map_errors_are_one_line(db_path, folder, tmp_path):
    bad = tmp_path / "mapping.toml"
    bad.write_text('[steps]\npath = "trace"\nwhat = "x"\n')
    result = cli(db_path, "import", "--map", str(bad), str(folder / "bolt-runs.json"))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{bad}: field 'steps.what': extra inputs are not permitted" in result.output
    both = ("import", "--map", str(bad), "--format", "workbench", str(folder / "bolt-runs.json"))
    assert "not both" in cli(db_path, *both).output


README_SECTION = (
    (Path(__file__).resolve().parents[2] / "README.md")
    .read_text()
    .split("### Any other log: a mapping file", 1)[1]
    .split("\n## ", 1)[0]
)


def test_the_readme_mapping_reads_the_sample_log(store, folder, tmp_path):
    mapping = tmp_path / "mapping.toml"
    mapping.write_text(README_SECTION.split("```toml\n", 1)[1].split("```", 1)[0])
    report = import_paths(store, [folder / "bolt-runs.json"], format=mapped.load(mapping))
    assert report.episodes == 2 and report.files[0].steps == 5


def test_the_readme_worked_mappings_are_the_sample_files(folder):
    """Each worked mapping in README is a file under tests/data/mapped, word for word (the
    tests here import those files and check what README says of them)."""
    blocks = [block.split("```", 1)[0] for block in README_SECTION.split("```toml\n")[1:]]
    named = [block for block in blocks if block.startswith("# tests/data/mapped/")]
    assert len(named) == 3
    for block in named:
        name = block.split(":", 1)[0].removeprefix("# tests/data/mapped/")
        assert (folder / name).read_text() == block, name


def test_the_readme_group_chat_mapping_reads_both_kinds_of_file(store, folder):
    importer = mapped.load(folder / "groupchat.toml")
    files = [folder / "groupchat-names.json", folder / "groupchat-roles.json"]
    report = import_paths(store, files, format=importer)
    assert report.episodes == 2
    runs = by_task(store)
    low, water = runs["groupchat:q-017"], runs["groupchat:q-023"]
    assert (low.outcome.success, water.outcome.success) == (False, True)
    assert (low.family, low.n_steps, water.n_steps) == ("gaia", 6, 5)
    assert store.task(water.task_id).instruction.startswith("What is the boiling point")
    speakers = [(s.role, s.agent) for s in store.steps(low.id)]
    assert speakers[:3] == [
        ("user", "user_proxy"),
        ("assistant", "Music_Expert"),
        ("assistant", "WebSearch_Expert"),
    ]
    roles = [(s.role, s.agent) for s in store.steps(water.id)]
    assert roles[:2] == [("user", "human"), ("assistant", "Orchestrator (thought)")]
    assert store.steps(low.id)[0].raw["name"] == "user_proxy"


def test_a_steps_agent_is_read_from_either_path_and_checked_as_text(store, tmp_path):
    mapping = tmp_path / "m.toml"
    mapping.write_text(
        '[steps]\npath = "chat[*]"\ncontent = "text"\nagent = "speaker | name"\n'
        'kind = { value = "message" }\n'
    )
    log = tmp_path / "chats.jsonl"
    log.write_text(
        '{"chat": [{"speaker": "Coder", "text": "4"}, {"name": "Critic", "text": "ok"},'
        ' {"text": "done"}], "success": true}\n'
    )
    import_paths(store, [log], format=mapped.load(mapping))
    (episode,) = store.episodes()
    assert [s.agent for s in store.steps(episode.id)] == ["Coder", "Critic", ""]
    mapping.write_text('[steps]\npath = "chat[*]"\ncontent = "text"\nagent = 3\n')
    with pytest.raises(IngestError, match=r"steps\.agent"):
        mapped.load(mapping)
