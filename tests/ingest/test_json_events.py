"""ijson's events, safe on runs of digits its C parser crashes on (``workbench.ingest.json_events``):
every sample with a 5,000-digit integer in its head imports or fails with one line, in a child
process (a crash would kill it, not fail the test), and a long run of digits inside a string
is read whole by the Python parser."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import ijson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import Store
from tests.ingest.hostile import SAMPLE_FILES, Sample
from workbench.ingest import import_paths
from workbench.ingest.json_events import LONG_DIGITS, Guarded, LongDigits, events, long_digits

_FIRST_NUMBER = re.compile(rb'(?<![\w."\\+-])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w"])')


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(
        st.one_of(
            st.integers(0, 9000).map(lambda n: b"7" * n),
            st.binary(max_size=50),
        ),
        max_size=6,
    )
)
def test_long_digits_finds_exactly_the_runs_a_search_finds(pieces: list[bytes]) -> None:
    data = b"".join(pieces)
    assert long_digits(data) == (re.search(rb"[0-9]{%d}" % LONG_DIGITS, data) is not None)


@settings(max_examples=100, deadline=None)
@given(run=st.integers(LONG_DIGITS - 5, LONG_DIGITS + 5), cut=st.integers(0, LONG_DIGITS + 20))
def test_a_run_split_across_reads_is_still_found(run: int, cut: int) -> None:
    data = b'["x", ' + b"1" * run + b"]"
    guarded = Guarded(io.BytesIO(data))
    first = min(cut, len(data))
    read = []
    try:
        read.append(guarded.read(first))
        read.append(guarded.read())
    except LongDigits:
        assert run >= LONG_DIGITS
    else:
        assert run < LONG_DIGITS and b"".join(read) == data


def test_a_long_string_of_digits_is_read_whole_and_a_long_number_is_a_json_error() -> None:
    digits = "4" * 9000
    document = json.dumps({"a": [1, 2.5], "b": digits, "c": {"d": None}}).encode()
    expected = list(ijson.basic_parse(io.BytesIO(document.replace(b"4", b"x")), use_float=True))
    got = list(events(io.BytesIO(document), buf_size=64))
    assert [e for e, _ in got] == [e for e, _ in expected]
    assert ("string", digits) in got and ("number", 2.5) in got
    with pytest.raises(ijson.JSONError):
        list(events(io.BytesIO(b'{"a": [' + b"9" * 5000 + b"]}"), buf_size=64))


def _with_huge_head_number(sample: Sample, folder: Path) -> Path:
    data = sample.path.read_bytes()
    match = _FIRST_NUMBER.search(data)
    assert match is not None
    path = folder / sample.path.name
    path.write_bytes(data[: match.start()] + b"9" * 5000 + data[match.end() :])
    return path


JSON_SAMPLES = [
    s
    for s in SAMPLE_FILES
    if s.path.suffix not in (".log", ".ipynb") and _FIRST_NUMBER.search(s.path.read_bytes())
]
"""The samples that are JSON and hold a number."""


@pytest.mark.parametrize("sample", JSON_SAMPLES, ids=lambda s: f"{s.format}:{s.path.name}")
def test_a_huge_integer_in_a_files_head_is_one_line_never_a_crash(
    sample: Sample, tmp_path: Path
) -> None:
    path = _with_huge_head_number(sample, tmp_path)
    command = [sys.executable, "-m", "workbench", "--db", str(tmp_path / "w.db"), "import"]
    for extra in ([], ["--format", sample.format]):  # detected, then forced
        done = subprocess.run(
            [*command, str(path), *extra],
            capture_output=True,
            text=True,
        )
        assert done.returncode in (0, 1), (done.returncode, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        if done.returncode:
            assert str(path) in done.stderr or path.name in done.stderr


def test_a_chat_log_holding_a_long_run_of_digits_in_a_message_imports_it_whole(
    tmp_path: Path,
) -> None:
    digits = "31415926" * 1000
    records = [
        {
            "messages": [
                {"role": "user", "content": "print factorial(2000)"},
                {"role": "assistant", "content": digits},
            ]
        }
    ]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(records))
    with Store(tmp_path / "w.db") as store:
        report = import_paths(store, [path])
        assert report.episodes == 1
        (episode,) = store.episodes()
        assert digits in [s.content for s in store.steps(episode.id)]
