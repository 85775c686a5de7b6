"""A private JupyterLab server for browser tests, and the notebook it serves.

The server runs the test's own Python (``sys.executable``) with every Jupyter directory
(config, data, runtime, workspaces, IPython profile) in the test's temporary folder, so
nothing the machine or the user has installed changes what the browser sees. Its only
kernelspec, ``python3``, lies first on ``JUPYTER_PATH`` and starts ipykernel with that
same interpreter.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

STARTUP_TIMEOUT = 300.0
"""Seconds the server may take to answer ``/api/status``."""

STOP_TIMEOUT = 10.0
"""Seconds the server may take to stop after it is asked to."""


def kernelspec(folder: Path) -> Path:
    """Write a ``python3`` kernelspec that runs ipykernel with this interpreter; return the
    directory to put first on ``JUPYTER_PATH``."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3 (workbench)", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    return folder


def write_notebook(path: Path, db: Path, episode_id: str) -> Path:
    """A notebook whose first code cell shows a stepper and an annotator on ``episode_id``,
    and whose second a retrieval playground over the database's kept synthesized examples."""
    source = "\n".join(
        [
            "from workbench.widgets import SpanAnnotator, TrajectoryStepper",
            "",
            f"DB = {str(db)!r}",
            f"EPISODE_ID = {episode_id!r}",
            "stepper = TrajectoryStepper(DB, EPISODE_ID)",
            "annotator = SpanAnnotator(DB, stepper=stepper)",
            "display(stepper, annotator)",
        ]
    )
    playground = "\n".join(
        [
            "from workbench.widgets import RetrievalPlayground",
            "",
            "display(RetrievalPlayground(DB))",
        ]
    )
    cells = [nbformat.v4.new_code_cell(source), nbformat.v4.new_code_cell(playground)]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (workbench)",
        "language": "python",
    }
    nbformat.write(notebook, path)
    return path


@dataclass
class JupyterLab:
    """A JupyterLab server on 127.0.0.1 serving ``root``, with all its state under ``home``."""

    root: Path
    home: Path
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen | None = None
    port: int | None = None

    @property
    def log_path(self) -> Path:
        return self.home / "server.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def page(self, notebook: str) -> str:
        """The address that opens ``notebook`` (relative to the root) in the lab."""
        return f"{self.url}/lab/tree/{notebook}?token={self.token}"

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
        env.update(
            JUPYTER_PATH=str(kernelspec(self.home / "path")),
            JUPYTER_CONFIG_DIR=str(self.home / "config"),
            JUPYTER_DATA_DIR=str(self.home / "data"),
            JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
            IPYTHONDIR=str(self.home / "ipython"),
            JUPYTER_PLATFORM_DIRS="0",
            PYTHONUNBUFFERED="1",
        )
        return env

    def command(self) -> list[str]:
        args = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            "--port=0",
            f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={self.token}",
            f"--LabApp.workspaces_dir={self.home / 'workspaces'}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.terminals_enabled=False",
        ]
        if os.geteuid() == 0:
            args.append("--allow-root")
        return args

    def configure(self) -> None:
        """Write the lab's user settings: never fetch news (no question toast, no request)."""
        folder = (
            self.home / "config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
        )
        folder.mkdir(parents=True)
        settings = {"fetchNews": "false", "checkForUpdates": False}
        (folder / "notification.jupyterlab-settings").write_text(json.dumps(settings))

    def start(self) -> None:
        """Start the server and wait until its REST API answers."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.configure()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.root,
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with {self.process.returncode}\n{self.tail()}"
                )
            if self.port is None:
                self.port = self._announced_port()
            elif self.answers():
                return
            time.sleep(0.2)
        raise RuntimeError(f"JupyterLab did not answer within {STARTUP_TIMEOUT} s\n{self.tail()}")

    def _announced_port(self) -> int | None:
        """The port from the server's runtime file (it chose a free one: ``--port=0``)."""
        assert self.process is not None
        info = self.home / "runtime" / f"jpserver-{self.process.pid}.json"
        with contextlib.suppress(OSError, ValueError):
            return int(json.loads(info.read_text())["port"])
        return None

    def api(self, path: str, method: str = "GET") -> dict:
        """Call the server's REST API and return its JSON answer."""
        request = urllib.request.Request(
            f"{self.url}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def answers(self) -> bool:
        with contextlib.suppress(OSError, ValueError):
            self.api("status")
            return True
        return False

    def stop(self) -> None:
        """Ask the server to shut down (it stops its kernels); end its process group if it
        does not."""
        if self.process is None or self.process.poll() is not None:
            return
        if self.port is not None:
            with contextlib.suppress(OSError, ValueError):
                self.api("shutdown", method="POST")
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()

    def _signal(self, sig: signal.Signals) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def tail(self, lines: int = 60) -> str:
        """The end of the server's log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])
