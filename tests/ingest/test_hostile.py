"""Hostile input: every format's samples broken (truncated, bytes flipped, numbers made huge
or infinite, values nested thousands deep, lone surrogates, a byte order mark) import or fail
with a message naming the file, never a traceback, and a failed import leaves the database
as it was (see ``tests/ingest/hostile.py``; ``bench/import_fuzz.py`` counts over many more)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from store import Store
from tests.ingest.hostile import (
    BOM,
    DEPTHS,
    HUGE_NUMBERS,
    SAMPLE_FILES,
    SURROGATES,
    Case,
    Mutation,
    Outcome,
    Sample,
    base_database,
    detected,
    run_case,
)
from workbench.ingest import IngestError, import_paths
from workbench.limits import Limits


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding every sample, which each case's import starts from (a copy)."""
    return base_database(tmp_path_factory.mktemp("hostile"))


PLACE = st.integers(min_value=0, max_value=1 << 30)
FLIPS = st.lists(st.tuples(PLACE, st.integers(0, 255)), min_size=1, max_size=8).map(tuple)
MUTATIONS = st.one_of(
    st.builds(Mutation, kind=st.just("truncate"), at=PLACE),
    st.builds(Mutation, kind=st.just("flip"), flips=FLIPS),
    st.builds(Mutation, kind=st.just("huge"), at=PLACE, value=st.sampled_from(HUGE_NUMBERS)),
    st.builds(Mutation, kind=st.just("head"), value=st.sampled_from(HUGE_NUMBERS)),
    st.builds(
        Mutation,
        kind=st.just("deep"),
        at=PLACE,
        depth=st.sampled_from(DEPTHS),
        value=st.sampled_from([b"[", b"{"]),
    ),
    st.builds(Mutation, kind=st.just("surrogate"), at=PLACE, value=st.sampled_from(SURROGATES)),
)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    sample = draw(st.sampled_from(SAMPLE_FILES))
    mutation = draw(MUTATIONS)
    if sample.format == "inspect" and draw(st.booleans()):
        mutation = Mutation("eval", flips=draw(FLIPS))
    results = sample.results is not None and mutation.kind != "eval" and draw(st.booleans())
    return Case(
        sample=sample,
        mutation=mutation,
        target="results" if results else "file",
        bom=draw(st.booleans()),
        skip_bad=draw(st.booleans()),
        detect=draw(st.booleans()),
        odd_name=draw(st.booleans()),
    )


def _run(case: Case, base: Path) -> Outcome:
    folder = Path(tempfile.mkdtemp(dir=base.parent))
    return run_case(case, folder, base)


def _check(outcome: Outcome) -> None:
    assert outcome.traceback is None, (outcome.traceback, outcome.output)
    assert outcome.named, outcome.output
    assert outcome.unchanged, outcome.output
    assert outcome.sound, outcome.output


def _sample(fmt: str, name: str) -> Sample:
    return next(s for s in SAMPLE_FILES if s.format == fmt and s.path.name == name)


LONG = b"1" * 5000


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(case=cases())
@example(
    case=Case(_sample("openai-chat", "chat_runs.jsonl"), Mutation("head", value=LONG), detect=True)
)
@example(case=Case(_sample("inspect", "log.json"), Mutation("head", value=LONG), detect=True))
@example(
    case=Case(_sample("codex", "codex_rollout.jsonl"), Mutation("truncate", at=700), odd_name=True)
)
def test_a_broken_file_imports_or_is_named_and_changes_nothing(case: Case, base: Path) -> None:
    _check(_run(case, base))


@pytest.mark.parametrize("sample", SAMPLE_FILES, ids=lambda s: f"{s.format}:{s.path.name}")
def test_a_file_starting_with_a_byte_order_mark_is_detected_and_imported(
    sample, tmp_path: Path
) -> None:
    plain, marked = tmp_path / "plain" / sample.path.name, tmp_path / "bom" / sample.path.name
    for path, data in ((plain, sample.path.read_bytes()), (marked, BOM + sample.path.read_bytes())):
        path.parent.mkdir()
        path.write_bytes(data)
    assert detected(marked) == detected(plain) == sample.format
    counts = []
    for path in (plain, marked):
        with Store(tmp_path / f"{path.parent.name}.db") as store:
            report = import_paths(store, [path], results=sample.results)
            counts.append((report.episodes, report.files[0].steps))
    assert counts[0] == counts[1] and counts[0][0] > 0


# -- each kind of hostile value, and what the message says ------------------------------------


def _workbench_line(**episode: object) -> dict:
    line = json.loads((SAMPLE_FILES[0].path.read_text()).splitlines()[0])
    line["episode"].update(episode)
    return line


def _write_lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_an_integer_past_64_bits_is_an_error_naming_record_and_field(
    store: Store, tmp_path: Path
) -> None:
    line = json.dumps(_workbench_line(seed=2**63))
    path = _write_lines(tmp_path / "runs.jsonl", line)
    with pytest.raises(IngestError) as caught:
        import_paths(store, [path])
    episode_id = json.loads(line)["episode"]["id"]
    assert (caught.value.path, caught.value.where) == (str(path), f"episode {episode_id}")
    assert caught.value.field == "episode.seed"
    assert "out of range" in caught.value.message
    assert store.episodes() == []


def test_a_lone_surrogate_is_stored_as_a_replacement_character(tmp_path: Path) -> None:
    line = json.dumps(_workbench_line())
    marked = line.replace('"observation": "', '"observation": "@@ then ', 1).encode()
    assert marked != line.encode()
    # As a JSON escape, and as the bytes a careless encoder writes for one.
    for k, surrogate in enumerate((b"\\ud800", b"\xed\xa0\x80")):
        path = tmp_path / f"runs{k}.jsonl"
        path.write_bytes(marked.replace(b"@@", surrogate) + b"\n")
        with Store(tmp_path / f"{k}.db") as store:
            import_paths(store, [path])
            steps = [s for e in store.episodes() for s in store.steps(e.id)]
            assert [s.observation[:7] for s in steps if "then" in s.observation] == ["\ufffd then "]
            assert store.search("then")


def test_json_nested_ten_thousand_deep_is_an_error_naming_the_line(
    store: Store, tmp_path: Path
) -> None:
    line = json.dumps(_workbench_line()).replace(
        '"seed": ', '"x": ' + "[" * 10_000 + "]" * 10_000 + ', "seed": ', 1
    )
    path = _write_lines(tmp_path / "runs.jsonl", line)
    with pytest.raises(IngestError) as caught:
        import_paths(store, [path])
    assert (caught.value.path, caught.value.where) == (str(path), "line 1")
    assert "nested too deeply" in caught.value.message


def test_a_corrupt_eval_member_is_named(base: Path, tmp_path: Path) -> None:
    sample = next(s for s in SAMPLE_FILES if s.format == "inspect")
    # A flip inside the first member's compressed bytes (after its 30-byte header and name).
    outcome = run_case(
        Case(sample, Mutation("eval", flips=((60, 0), (61, 255), (62, 0)))), tmp_path, base
    )
    _check(outcome)
    assert outcome.exit_code != 0 and ".eval" in outcome.output


def test_a_broken_results_file_is_the_one_named(base: Path, tmp_path: Path) -> None:
    for k, sample in enumerate(s for s in SAMPLE_FILES if s.results is not None):
        case = Case(sample, Mutation("deep", depth=10_000), target="results")
        outcome = run_case(case, tmp_path / str(k), base)
        _check(outcome)
        assert outcome.exit_code != 0 and sample.results.name in outcome.output, outcome.output
        assert f"{sample.path.name}:" not in outcome.output.replace(sample.results.name, ""), (
            outcome.output
        )


def test_the_digest_sees_a_change(base: Path, tmp_path: Path) -> None:
    """The check of the cases above fails when an import does change the database."""
    from tests.ingest.hostile import digest

    copy = tmp_path / "copy.db"
    copy.write_bytes(base.read_bytes())
    before = digest(copy)
    conn = sqlite3.connect(copy)
    with conn:
        conn.execute("DELETE FROM sources WHERE rowid = (SELECT max(rowid) FROM sources)")
    conn.close()
    assert digest(copy) != before


MEMORY_CAP = Limits(memory_mb=3072)
"""Address space of the child that imports a deeply nested log: far more than it needs, far
less than the depth² bytes a parser that keeps every level's path would take."""

PEAK_SCRIPT = """
import sys, tracemalloc
from pathlib import Path
from store import Store
from workbench.ingest import IngestError, import_paths
tracemalloc.start()
with Store(":memory:") as store:
    try:
        import_paths(store, [Path(sys.argv[1])], format=sys.argv[2] or None)
    except IngestError as error:
        print(error)
print(tracemalloc.get_traced_memory()[1] >> 20)
"""
"""Import a file in a fresh process; print the error and the peak of Python's allocations
in MiB."""


@pytest.mark.parametrize("fmt", ["", "inspect"], ids=["detected", "given"])
@pytest.mark.parametrize("opener", [b"[", b"{"])
def test_a_json_log_nested_a_hundred_thousand_deep_in_its_header_is_named_in_little_memory(
    tmp_path: Path, fmt: str, opener: bytes
) -> None:
    """Read before the records — format detection's look at the first record, an Inspect
    log's header (the values before ``samples``) — must not keep the path of every open
    level: depth² bytes, 8 GB here before it was fixed."""
    sample = next(s for s in SAMPLE_FILES if s.format == "inspect")
    path = tmp_path / sample.path.name
    path.write_bytes(
        Mutation("deep", at=1, depth=100_000, value=opener).apply(sample.path.read_bytes())
    )
    command = [sys.executable, "-c", PEAK_SCRIPT, str(path), fmt]
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=MEMORY_CAP.apply)
    assert done.returncode == 0, done.stderr
    message, peak = done.stdout.strip().rsplit("\n", 1)
    assert str(path) in message
    assert ("nested too deeply" if fmt else "cannot tell the format") in message
    assert int(peak) < 256


def test_an_error_quoting_a_huge_value_is_cut_to_a_readable_line(
    store: Store, tmp_path: Path
) -> None:
    """A bad value of 2 MB quoted in the message was echoed whole (a 2 MB error line)."""
    record = {"messages": [{"role": ["x" * 2_000_000], "content": "hi"}]}
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(IngestError) as caught:
        import_paths(store, [path], format="openai-chat")
    message = str(caught.value)
    assert message.startswith(f"{path}: line 1: field 'messages.0.role': not a role: ['xxx")
    assert message.endswith(" characters)") and "(2,000,0" in message and len(message) < 500
