"""A one-line progress bar for a long job running in a thread worker.

The worker hands :meth:`JobProgress.reporter` to the engine as its
:class:`~workbench.progress.Progress`; the reporter posts messages (``post_message`` is
thread-safe) and the bar updates itself from them on the UI thread.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Label, ProgressBar

from tui.escapes import shown


class JobProgress(Horizontal):
    """A description and a progress bar, shown while a job runs (``-shown`` class)."""

    DEFAULT_CSS = """
    JobProgress {
        display: none;
        height: 1;
        background: $panel;
        padding: 0 1;
        &.-shown { display: block; }
        & > Label { width: auto; padding: 0 2 0 0; color: $text-accent; text-style: bold; }
        & > ProgressBar { width: auto; }
        & > #job-hint { color: $text-muted; text-style: none; padding: 0 0 0 2; }
    }
    """

    class Started(Message):
        """The job began: ``total`` units of work are expected (``None``: unknown)."""

        def __init__(self, total: float | None, description: str) -> None:
            self.total = total
            self.description = description
            super().__init__()

    class Advanced(Message):
        """``amount`` more units are done; ``description`` replaces the label if given."""

        def __init__(self, amount: float, description: str | None) -> None:
            self.amount = amount
            self.description = description
            super().__init__()

    class Finished(Message):
        """The job ended (done, failed or cancelled)."""

    def __init__(self, hint: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._hint = hint

    def compose(self) -> ComposeResult:
        yield Label("", id="job-label")
        yield ProgressBar(show_eta=False, id="job-bar")
        yield Label(self._hint, id="job-hint")

    def reporter(self) -> MessageProgress:
        """A :class:`~workbench.progress.Progress` a worker thread can report to."""
        return MessageProgress(self)

    def on_job_progress_started(self, event: Started) -> None:
        event.stop()
        self.add_class("-shown")
        self.query_one("#job-label", Label).update(Text(shown(event.description)))
        self.query_one(ProgressBar).update(total=event.total, progress=0)

    def on_job_progress_advanced(self, event: Advanced) -> None:
        event.stop()
        if event.description is not None:
            self.query_one("#job-label", Label).update(Text(shown(event.description)))
        self.query_one(ProgressBar).advance(event.amount)

    def on_job_progress_finished(self, event: Finished) -> None:
        event.stop()
        self.remove_class("-shown")


class MessageProgress:
    """The :class:`~workbench.progress.Progress` protocol, as messages to a :class:`JobProgress`."""

    def __init__(self, bar: JobProgress) -> None:
        self.bar = bar

    def start(self, total: float | None, description: str = "") -> None:
        self.bar.post_message(JobProgress.Started(total, description))

    def advance(self, amount: float = 1, description: str | None = None) -> None:
        self.bar.post_message(JobProgress.Advanced(amount, description))

    def finish(self) -> None:
        self.bar.post_message(JobProgress.Finished())
