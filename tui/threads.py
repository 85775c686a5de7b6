"""Handing a thread worker's result back to the UI thread, and starting worker processes
from inside the app."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

from textual.dom import DOMNode
from textual.worker import get_current_worker


def deliver(node: DOMNode, callback: Callable[..., Any], *args: Any) -> None:
    """Run ``callback(*args)`` on the UI thread, unless the worker running this was
    cancelled or the app has closed meanwhile (then the result is no longer wanted)."""
    if get_current_worker().is_cancelled:
        return
    with contextlib.suppress(RuntimeError):  # the app stopped while the worker was reading
        node.app.call_from_thread(callback, *args)


def processes_ready() -> None:
    """Make sure multiprocessing's resource tracker runs, before a worker opens a process pool
    (:class:`~workbench.executors.LocalPool`).

    A pool starts the tracker on its first job, passing it ``sys.stderr``'s file descriptor;
    inside the app ``sys.stderr`` is Textual's print capture, whose descriptor is -1, and the
    pool fails with ``bad value(s) in fds_to_keep``. The tracker is started here with stderr on
    the null device instead (its rare warnings would draw over the screen anyway).
    """
    from multiprocessing import resource_tracker

    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
        resource_tracker.ensure_running()
