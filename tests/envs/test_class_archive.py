"""A JVM's class-data archive: made once by a real JVM, used by the next, keyed by Java,
program and options; a failure is remembered and warned about, never raised."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from workbench.envs.class_archive import QUIET, ClassArchive, ClassArchiveWarning


class Training:
    """Runs ``java -version`` with the options it is given, counting its runs."""

    def __init__(self, *, archive: bool = True) -> None:
        self.runs, self.archive = 0, archive

    def __call__(self, options: list[str]) -> None:
        self.runs += 1
        given = options if self.archive else list(QUIET)
        subprocess.run(["java", *given, "-version"], check=True, capture_output=True)


def archive_in(folder: Path, options: list[str] | None = None) -> ClassArchive:
    program = folder / "program.jar"
    if not program.exists():
        program.write_bytes(b"a program")
    return ClassArchive.for_jvm(folder / "cache", "test", "java", str(program), options or [])


def test_a_real_jvm_makes_the_archive_once_and_the_next_starts_from_it(tmp_path):
    archive, train = archive_in(tmp_path), Training()
    assert archive.options() == []
    archive.path.parent.mkdir()
    killed = archive.path.with_name(f"{archive.path.name}.1234567.partial")
    killed.write_bytes(b"half an archive")  # left by a maker that was killed
    assert archive.make(train) and archive.make(train)
    assert train.runs == 1 and archive.path.stat().st_size > 0
    assert archive.options() == [f"-XX:SharedArchiveFile={archive.path}", *QUIET]
    started = subprocess.run(
        ["java", *archive.options(), "-Xshare:on", "-version"], capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr  # (-Xshare:on fails on an unusable archive)
    assert not list(archive.path.parent.glob("*.partial"))  # its own and the killed maker's


def test_the_archive_is_named_by_the_java_the_program_and_the_options(tmp_path):
    first = archive_in(tmp_path, ["-Xmx1g"])
    assert archive_in(tmp_path, ["-Xmx1g"]) == first
    assert archive_in(tmp_path, ["-Xmx2g"]) != first
    (tmp_path / "program.jar").write_bytes(b"another version of the program")
    assert archive_in(tmp_path, ["-Xmx1g"]) != first
    other_java = ClassArchive.for_jvm(tmp_path, "test", "/usr/bin/true", "p.jar", ["-Xmx1g"])
    assert other_java.path.name != first.path.name


def test_a_failed_training_is_warned_about_once_and_not_tried_again(tmp_path):
    archive = archive_in(tmp_path)

    def failing(options: list[str]) -> None:
        raise RuntimeError("the simulator did not start")

    with pytest.warns(ClassArchiveWarning, match="the simulator did not start"):
        assert not archive.make(failing)
    failed = archive.path.with_name(archive.path.name + ".failed")
    assert "RuntimeError: the simulator did not start" in failed.read_text()
    train = Training()
    assert not archive.make(train) and train.runs == 0 and archive.options() == []
    failed.unlink()  # deleting the note tries again
    assert archive.make(train) and train.runs == 1


def test_a_jvm_that_writes_no_archive_is_a_failure(tmp_path):
    archive = archive_in(tmp_path)
    with pytest.warns(ClassArchiveWarning, match="wrote no archive"):
        assert not archive.make(Training(archive=False))
    assert not archive.path.exists() and archive.options() == []


def test_a_folder_that_cannot_be_written_starts_without_an_archive(tmp_path):
    (tmp_path / "a file").write_text("not a folder")
    archive = ClassArchive(tmp_path / "a file" / "cache" / "test.jsa")
    with pytest.warns(ClassArchiveWarning, match="cannot write in"):
        assert not archive.make(Training())
    assert archive.options() == []
