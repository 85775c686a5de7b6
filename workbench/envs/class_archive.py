"""A class-data archive for a JVM that a world starts again and again (Java's dynamic AppCDS).

A JVM that starts from an archive of the classes an earlier run of the same program loaded
maps them in instead of reading, parsing and verifying them again. Measured on the built-in
simulator whose world starts a JVM (Java 17, ``bench/jvm_start.py``): its first observation
comes after 0.75 of the wall time and 0.80 of the CPU it takes without one; once started, it
runs at the same speed.

The archive is made once per Java, program and options (:meth:`ClassArchive.for_jvm` keys its
file name by all three), by a short training run that the world supplies, under a file lock
so that workers starting together make it once; it is written beside its final name and moved
there whole, so no JVM ever maps a part of one. A Java (or a training run) that cannot make
one leaves a ``.failed`` file saying why, and no later start pays for trying again; where the
folder cannot be written, each start says so and goes on without an archive. The JVM checks an
archive against itself and the class path and starts without it when they differ, silently
(:data:`QUIET`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

QUIET = ("-Xlog:cds*=off", "-Xlog:cds*=off:stderr")
"""Keeps the JVM's class-sharing messages (an archive it cannot use, one it cannot write) off
its standard output and its standard error, wherever its warnings are sent."""


class ClassArchiveWarning(UserWarning):
    """A JVM's class-data archive could not be made; the world starts without one."""


@dataclass(frozen=True)
class ClassArchive:
    """Where one JVM configuration's archive lives, and how it is made and used."""

    path: Path

    @classmethod
    def for_jvm(
        cls, folder: Path, name: str, java: str, classpath: str, options: Sequence[str]
    ) -> ClassArchive:
        """The archive in ``folder`` of the ``java`` executable (a name on ``PATH`` or a path)
        running ``classpath`` with ``options``: its file name changes when any of them does
        (a file's identity is its real path, size and modification time)."""
        found = shutil.which(java) or java
        key = json.dumps([_identity(found), _identity(classpath), list(options)])
        return cls(folder / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa")

    def options(self) -> list[str]:
        """The JVM options that start from the archive; none while there is none."""
        return [f"-XX:SharedArchiveFile={self.path}", *QUIET] if self.path.is_file() else []

    def make(self, train: Callable[[list[str]], None]) -> bool:
        """Make the archive unless it exists or making it failed before; whether it exists.

        ``train(options)`` runs the JVM with ``options`` added (they tell it to write its
        classes out when it exits) through the work it is archived for, and returns once the
        JVM has exited. Whatever goes wrong (a Java without dynamic archives, a folder that
        cannot be written, a training run that fails) is written to a ``.failed`` file where
        possible and warned about once; the caller starts its JVM without an archive.
        """
        if self.path.is_file():
            return True
        failed = self.path.with_name(f"{self.path.name}.failed")
        if failed.exists():
            return False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_name(f"{self.path.name}.lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be making it
                return self._made(train, failed)
        except OSError as error:
            _warn(f"cannot write in {self.path.parent}: {error.strerror}")
            return False

    def _made(self, train: Callable[[list[str]], None], failed: Path) -> bool:
        """:meth:`make`'s work, under its lock."""
        if self.path.is_file() or failed.exists():
            return self.path.is_file()
        for stale in self.path.parent.glob(f"{self.path.name}.*.partial"):
            stale.unlink(missing_ok=True)  # a killed maker's (the lock is ours)
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        try:
            train([f"-XX:ArchiveClassesAtExit={partial}", *QUIET])
            if not partial.is_file() or partial.stat().st_size == 0:
                raise OSError("the JVM wrote no archive when it exited")
            os.replace(partial, self.path)
        except Exception as error:  # any failure: start without an archive
            reason = f"{type(error).__name__}: {error}"
            with contextlib.suppress(OSError):
                failed.write_text(reason + "\n")
            _warn(f"{reason} (noted in {failed}; delete it to try again)")
            return False
        finally:
            partial.unlink(missing_ok=True)
        return True


def _identity(path: str) -> list[object]:
    """A file's real path, size and modification time (the path alone if it is missing)."""
    real = os.path.realpath(path)
    try:
        stat = os.stat(real)
    except OSError:
        return [real]
    return [real, stat.st_size, stat.st_mtime_ns]


def _warn(reason: str) -> None:
    warnings.warn(
        f"no class-data archive for the JVM ({reason}); it starts without one",
        ClassArchiveWarning,
        stacklevel=3,
    )
