"""An executor that records every job it is given and plays it on the executor it wraps."""

from __future__ import annotations

from collections.abc import Iterator

from workbench.runner import EpisodeJob, Executor, Played


class RecordingExecutor:
    """Plays every job on ``inner`` and keeps it in :attr:`jobs`, in the order received."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.jobs: list[EpisodeJob] = []

    def run(self, jobs: list[EpisodeJob]) -> Iterator[tuple[EpisodeJob, Played | BaseException]]:
        self.jobs += jobs
        return self.inner.run(jobs)

    def close(self) -> None:
        self.inner.close()
