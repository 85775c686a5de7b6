"""Time and memory limits for processes that interpret candidate artifacts."""

from __future__ import annotations

import contextlib
import resource
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType


class TimeLimit(Exception):
    """The work ran past its time limit."""


@dataclass(frozen=True)
class Limits:
    """What a child process may use."""

    seconds: float = 120.0
    """Wall-clock time for one unit of work (a check, or one replayed episode)."""
    memory_mb: int = 8192
    """Address-space limit (an environment's JVM needs several gigabytes of it)."""

    def apply(self) -> None:
        """Limit this process's memory for good (call it in the child, before the work)."""
        limit = self.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Run the block under these limits and lift them after it, so that one long-lived
        worker process can run each unit of work under its own limits: the *soft*
        address-space limit is lowered for the block and raised back (the hard limit is left
        alone, so raising is allowed), and the time limit is armed in this (main) thread."""
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = self.memory_mb * 1024 * 1024
        for bound in (soft, hard):  # never above a limit already in force
            if bound != resource.RLIM_INFINITY:
                limit = min(limit, bound)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        self.arm()
        try:
            yield
        finally:
            self.disarm()
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))

    def arm(self) -> None:
        """Raise :class:`TimeLimit` in this (main) thread after ``seconds``."""

        def expire(signum: int, frame: FrameType | None) -> None:
            raise TimeLimit(f"ran past its {self.seconds:g} s limit")

        signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    @staticmethod
    def disarm() -> None:
        """Cancel a pending time limit."""
        signal.setitimer(signal.ITIMER_REAL, 0)


ENVIRONMENT_LIMITS = Limits()
"""Default limits for work that starts an environment."""
