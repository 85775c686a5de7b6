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


@pytest.mark.parametrize("path", ["", "a..b", ".a", "a.", "a[x]", "a b", "a[1"])
def test_bad_paths_are_refused(path):
    with pytest.raises(ValueError, match="bad path"):
        mapped.parse_path(path)


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


def test_a_record_that_does_not_fit_names_file_record_and_mapping_key(store, tmp_path, folder):
    data = json.loads((folder / "bolt-runs.json").read_text())
    data["runs"][1]["result"]["reward"] = "lots"
    log = tmp_path / "bolt-runs.json"
    log.write_text(json.dumps(data))
    importer = mapped.load(folder / "bolt.toml")
    with pytest.raises(IngestError) as caught:
        import_paths(store, [log], format=importer)
    assert str(caught.value) == (
        f"{log}: record 1: field 'episodes.score': expected a number at 'result.reward'"
    )
    assert store.count_episodes() == 0 and store.batches() == []
    report = import_paths(store, [log], format=importer, skip_bad=True)
    assert report.episodes == 1 and len(bad_reasons(report, log)) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda run: run.pop("trace"), "record 0: field 'steps.path': no steps at 'trace[*]'"),
        (lambda run: run.pop("run_id"), "record 0: field 'episodes.id': nothing at 'run_id'"),
        (
            lambda run: run["trace"][0].update(type="dance"),
            "record 0, step 0: field 'steps.kind': 'dance' is no step kind; map it in kinds",
        ),
        (
            lambda run: run["trace"][1].update(r="x"),
            "record 0, step 1: field 'steps.reward': expected a number at 'r'",
        ),
        (
            lambda run: run["trace"].append({"type": "tool"}),
            "record 0, step 3: field 'steps.action': no action, observation, thought or content",
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


# -- the mapping file -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[episodes]\nidd = "x"\n[steps]\npath = "s"\n', "field 'episodes.idd': extra inputs"),
        ('[steps]\npath = "s"\naction = "a..b"\n', "field 'steps.action': value error, bad path"),
        ("[text]\naction = '(unclosed'\n", "field 'text.action': value error, bad regular"),
        ('name = "x"\n', "a jsonl mapping needs a [steps] table"),
        ('name = ""\n[text]\n', "field 'name': string should match pattern"),
        ("[steps\n", "invalid TOML"),
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
    assert f"{log}: line 19: field 'text.action': no step in this episode" in result.output
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


def test_the_readme_mapping_reads_the_sample_log(store, folder, tmp_path):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("### Any other log: a mapping file", 1)[1]
    mapping = tmp_path / "mapping.toml"
    mapping.write_text(section.split("```toml\n", 1)[1].split("```", 1)[0])
    report = import_paths(store, [folder / "bolt-runs.json"], format=mapped.load(mapping))
    assert report.episodes == 2 and report.files[0].steps == 5
