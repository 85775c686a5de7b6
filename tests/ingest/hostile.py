"""Hostile input for the importers: every format's samples, broken in the ways real files break.

A :class:`Case` is a sample (a trajectory file, and for some a results file to join), a
mutation of one of them and the import options; :func:`run_case` imports it through the CLI
(``workbench import``, in this process) into a copy of a database that already holds every
sample, and says what happened. ``tests/ingest/test_hostile.py`` draws cases with hypothesis,
``bench/import_fuzz.py`` draws a few hundred per format at random and counts tracebacks.

A mutated import must end in one of two ways: it imports (then the database is still sound),
or it fails with a message that names the file, and the database is as it was.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from store import Store
from workbench.cli import main
from workbench.ingest import SAMPLES, formats, import_paths
from workbench.ingest.base import path_text

DATA = Path(__file__).parents[1] / "data"

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Sample:
    """A file one format reads, with the results file joined to it (if any)."""

    format: str
    path: Path
    results: Path | None = None


def _samples() -> list[Sample]:
    found = [
        ("workbench", DATA / "workbench" / "two_episodes.jsonl", None),
        ("otlp", SAMPLES / "otlp_genai_trace.json", None),
        ("otlp", DATA / "otlp" / "openinference_traces.jsonl", None),
        ("mini-swe-agent", SAMPLES / "mini" / "django__django-11099.traj.json", None),
        (
            "mini-swe-agent",
            DATA / "mini-swe-agent" / "sympy__sympy-20590" / "sympy__sympy-20590.traj.json",
            DATA / "swebench-report" / "report.json",
        ),
        ("swe-agent", SAMPLES / "astropy__astropy-12907.traj", None),
        (
            "swe-agent",
            DATA / "swe-agent" / "astropy__astropy-12907.traj",
            DATA / "swebench-report" / "claude-3-5-sonnet.verified-run.json",
        ),
        ("inspect", SAMPLES / "inspect_arith.json", None),
        ("inspect", DATA / "inspect" / "log.json", None),
        ("atif", SAMPLES / "terminal_task.atif.json", None),
        ("atif", DATA / "atif" / "hello.atif.json", DATA / "atif" / "hello.result.json"),
        ("atif", DATA / "atif" / "runs.jsonl", None),
        ("openhands", SAMPLES / "openhands_output.jsonl", None),
        ("openhands", DATA / "openhands" / "output_sdk.jsonl", None),
        ("codex", SAMPLES / "codex_rollout.jsonl", None),
        ("agentbench", SAMPLES / "agentbench" / "gpt-4o" / "os-std" / "runs.jsonl", None),
        (
            "agentbench",
            DATA / "agentbench" / "gpt-4o" / "dbbench-std" / "runs.jsonl",
            DATA / "agentbench" / "gpt-4o" / "os-std" / "overall.json",
        ),
        ("claude-code", SAMPLES / "claude_code_session.jsonl", None),
        ("group-chat", SAMPLES / "group_chat.jsonl", None),
        ("group-chat", DATA / "group-chat" / "primes.json", None),
        ("openai-chat", SAMPLES / "chat_runs.jsonl", None),
        ("openai-chat", DATA / "openai-chat" / "tools.jsonl", None),
        (
            "openai-chat",
            DATA / "openai-chat" / "joined.jsonl",
            DATA / "openai-chat" / "joined.results.jsonl",
        ),
        ("react-text", SAMPLES / "scienceworld_react.log", None),
        ("react-text", DATA / "react-text" / "react_hotpotqa.ipynb", None),
    ]
    return [Sample(fmt, path, results) for fmt, path, results in found]


SAMPLE_FILES = _samples()
"""Every format's samples (the shipped ones and the test data), some with a results file."""
FORMATS = sorted({sample.format for sample in SAMPLE_FILES})


# -- mutations --------------------------------------------------------------------------------

_NUMBER = re.compile(rb'(?<![\w."\\+-])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w"])')
_VALUE = re.compile(rb':\s*(?:"(?:[^"\\\n]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)')
_STRING_START = re.compile(rb'"(?=[^"\\\n])')

HUGE_NUMBERS = (
    b"9223372036854775808",  # 2**63: one past SQLite's integers
    b"-9223372036854775809",
    b"18446744073709551616",
    b"1" + b"0" * 40,
    b"1e400",  # a float literal past float's range: infinity
    b"-1e400",
    b"Infinity",
    b"-Infinity",
    b"NaN",
    b"1" * 5000,  # past Python's digit limit for int(str)
    b"1e-400",
    b"123456789012345678901234567890.5",
)
SURROGATES = (b"\\ud800", b"\\udfff", b"\\udbff\\u0041", b"\xed\xa0\x80", b"\xed\xbf\xbf")
"""Lone surrogates as JSON escapes, and as the bytes a careless encoder writes for one."""
DEPTHS = (100, 1_000, 10_000, 100_000)


@dataclass(frozen=True)
class Mutation:
    """One way to break a file; ``at`` picks the place (taken modulo the candidates)."""

    kind: str
    at: int = 0
    value: bytes = b""
    depth: int = 0
    flips: tuple[tuple[int, int], ...] = ()

    def apply(self, data: bytes) -> bytes:
        return getattr(self, f"_{self.kind}")(data)

    def _truncate(self, data: bytes) -> bytes:
        return data[: self.at % max(len(data), 1)]

    def _flip(self, data: bytes) -> bytes:
        out = bytearray(data)
        for position, byte in self.flips:
            if out:
                out[position % len(out)] = byte
        return bytes(out)

    def _huge(self, data: bytes) -> bytes:
        spans = [m.span() for m in _NUMBER.finditer(data)]
        start, end = spans[self.at % len(spans)] if spans else (0, 0)
        return data[:start] + self.value + data[end:]

    def _deep(self, data: bytes) -> bytes:
        opener, closer = (b"[", b"]") if self.value != b"{" else (b'{"a":', b"}")
        nested = opener * self.depth + b"1" + closer * self.depth
        spans = [m.span() for m in _VALUE.finditer(data)]
        if not spans:
            cut = self.at % (len(data) + 1)
            return data[:cut] + nested + data[cut:]
        start, end = spans[self.at % len(spans)]
        return data[: start + 1] + nested + data[end:]

    def _surrogate(self, data: bytes) -> bytes:
        starts = [m.end() for m in _STRING_START.finditer(data)]
        cut = starts[self.at % len(starts)] if starts else self.at % (len(data) + 1)
        return data[:cut] + self.value + data[cut:]

    def _head(self, data: bytes) -> bytes:
        """The file's first number made ``value``: what format detection reads (ijson's C
        parser crashed the process on an integer of 4,300 digits there)."""
        match = _NUMBER.search(data)
        start, end = match.span() if match else (0, 0)
        return data[:start] + self.value + data[end:]

    def _bom(self, data: bytes) -> bytes:
        return BOM + data

    def _eval(self, data: bytes) -> bytes:
        return data  # the archive made of it is broken (see write_case)


def mutations_of(kind: str) -> Sequence[str]:
    """Mutation kinds (all of them for ``"all"``)."""
    return ("truncate", "flip", "huge", "head", "deep", "surrogate") if kind == "all" else (kind,)


# -- running a case ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A sample, how it is broken and how it is imported."""

    sample: Sample
    mutation: Mutation
    target: str = "file"
    """``file``: the trajectory file is broken; ``results``: its results file is."""
    bom: bool = False
    """Whether the broken file also starts with a UTF-8 byte order mark."""
    skip_bad: bool = False
    detect: bool = False
    """Whether the format is detected rather than given with ``--format``."""
    odd_name: bool = False
    """Whether the broken file's name holds bytes that are not UTF-8."""


ODD = os.fsdecode(b"\xff\xfe-")
"""What an odd name starts with (bytes that are not UTF-8, as Python names them)."""


@dataclass
class Outcome:
    """What importing a case did."""

    exit_code: int
    output: str
    traceback: BaseException | None
    """The exception that escaped the CLI (a traceback a user would see), if any."""
    named: bool
    """Whether a failed import's message names the broken file."""
    unchanged: bool
    """Whether a failed import left the database's content as it was."""
    sound: bool
    """Whether the database passes its integrity checks afterwards."""


def base_database(folder: Path) -> Path:
    """A database holding every sample (what each case's import starts from)."""
    path = folder / "base.db"
    if not path.exists():
        with Store(path) as store:
            import_paths(store, [SAMPLES], batch="samples")
    return path


def digest(path: Path) -> str:
    """The database's content in brief: rows per table, FTS rows, integrity and foreign keys."""
    conn = sqlite3.connect(path)
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'steps_fts%'"
                " ORDER BY name"
            )
        ]
        count = lambda table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]  # noqa: E731
        parts = [f"{table}={count(table)}" for table in tables]
        parts.append(f"fts={conn.execute('SELECT count(*) FROM steps_fts').fetchone()[0]}")
        parts.append(f"integrity={conn.execute('PRAGMA integrity_check').fetchone()[0]}")
        parts.append(f"fk={conn.execute('PRAGMA foreign_key_check').fetchall()}")
        sources = conn.execute("SELECT hash FROM sources ORDER BY hash").fetchall()
        parts.append(hashlib.sha256(repr(sources).encode()).hexdigest()[:16])
    finally:
        conn.close()
    return ";".join(parts)


def _sound(path: Path) -> bool:
    conn = sqlite3.connect(path)
    try:
        ok = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        steps = conn.execute("SELECT count(*) FROM steps").fetchone()[0]
        indexed = conn.execute("SELECT count(*) FROM steps_fts").fetchone()[0]
        return ok and steps == indexed and not conn.execute("PRAGMA foreign_key_check").fetchall()
    finally:
        conn.close()


def write_case(case: Case, folder: Path) -> tuple[Path, Path | None]:
    """The case's files in ``folder``: ``(trajectory file, results file or None)``."""
    folder.mkdir(parents=True, exist_ok=True)
    sample = case.sample
    paths = {"file": folder / sample.path.name}
    if sample.results is not None:
        paths["results"] = folder / sample.results.name
    if case.odd_name:
        paths[case.target] = folder / (ODD + paths[case.target].name)
    for key, path in paths.items():
        data = (sample.path if key == "file" else sample.results).read_bytes()
        if key == case.target:
            data = case.mutation.apply(data)
            if case.bom:
                data = BOM + data
        path.write_bytes(data)
    if sample.format == "inspect" and case.target == "file" and case.mutation.kind == "eval":
        paths["file"] = _as_eval(paths["file"], case.mutation)
    return paths["file"], paths.get("results")


def _as_eval(path: Path, mutation: Mutation) -> Path:
    """An Inspect ``.eval`` archive of the JSON log at ``path``, one member's bytes broken."""
    import json

    log = json.loads(path.read_bytes())
    samples = log.pop("samples", [])
    target = path.with_suffix(".eval")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(log))
        for k, sample in enumerate(samples):
            name = f"samples/{sample.get('id', k)}_epoch_{sample.get('epoch', 1)}.json"
            archive.writestr(name, json.dumps(sample))
    data = bytearray(target.read_bytes())
    for position, byte in mutation.flips:
        data[position % len(data)] = byte
    target.write_bytes(bytes(data))
    return target


def run_case(case: Case, folder: Path, base: Path) -> Outcome:
    """Import ``case`` with ``workbench import`` into a copy of ``base``, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "workbench.db"
    shutil.copyfile(base, db)
    before = digest(db)
    path, results = write_case(case, folder / "in")
    args = ["--db", str(db), "import", str(path)]
    if not case.detect:
        args += ["--format", case.sample.format]
    if results is not None:
        args += ["--results", str(results)]
    if case.skip_bad:
        args.append("--skip-bad")
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    escaped = result.exception
    if isinstance(escaped, SystemExit):
        escaped = None
    broken = results if case.target == "results" else path
    failed = result.exit_code != 0
    return Outcome(
        exit_code=result.exit_code,
        output=result.output,
        traceback=escaped,
        named=not failed or path_text(broken) in result.output,
        unchanged=not failed or digest(db) == before,
        sound=_sound(db),
    )


def detected(path: Path) -> str:
    """The format detection gives ``path``."""
    return formats.detect(path).name


# -- hostile text ------------------------------------------------------------------------------

HOSTILE_TEXT = (
    "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m<img src=x onerror=alert(1)>"
    "<script>alert(1)</script>\u202e"
)
"""Text a log may hold that must reach no terminal or exported file as it is: it clears the
screen, writes the clipboard (OSC 52, ended by BEL), starts an escape sequence in one
character (C1 CSI), runs script in a page (an image's error handler, a script) and shows what
follows it right to left (a bidirectional override)."""
HOSTILE_NAME = "_\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m<script>x</script>\u202e_x"
"""The same as a name (a tool's, say): no spaces or parentheses, which would end it, and a
word character at each end."""
DISGUISING = "\x7f\x85\u2028\u2029\u202a\u202e\u2066\u2069"
"""Characters JSON writes raw: DEL, a C1 control (NEL), the line and paragraph separators,
bidirectional embeddings, overrides and isolates."""
RAW_CONTROLS = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
"""DEL, C1, the line and paragraph separators and the bidirectional controls, in UTF-8: what an
exported JSON file must not hold raw."""
