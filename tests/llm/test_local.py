"""The local model: finding its file, the variables it exports, and (slow, only with the
``model`` extra installed) the real SmolLM2-135M server judging a real case end to end."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from workbench.backends import make_backends
from workbench.cli import main
from workbench.llm import ChatClient
from workbench.llm.local import (
    INSTALL_HINT,
    MODEL_NAME,
    LocalModelError,
    LocalServer,
    check_installed,
    model_file,
)

EXTRA_INSTALLED = importlib.util.find_spec("llama_cpp") is not None


def test_the_model_file_is_found_inside_its_package(tmp_path, monkeypatch):
    package = tmp_path / "shipped_model"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "Tiny.Q4_1.gguf").write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert model_file("shipped_model") == package / "Tiny.Q4_1.gguf"
    (package / "Tiny.Q4_1.gguf").unlink()
    with pytest.raises(LocalModelError, match=r"holds no \.gguf file"):
        model_file("shipped_model")


def test_a_missing_half_of_the_extra_names_the_extra():
    with pytest.raises(LocalModelError) as raised:
        check_installed(server="no_such_server_package_here")
    assert str(raised.value) == INSTALL_HINT
    with pytest.raises(LocalModelError, match=r"pip install 'trajectory-workbench\[model\]'"):
        model_file("no_such_model_package_here")


def test_the_exported_variables_configure_every_openai_path(store):
    environment = LocalServer(port=18088).environment()
    assert environment["OPENAI_BASE_URL"] == "http://127.0.0.1:18088/v1"
    client = ChatClient.from_env(store, environ=environment)
    assert (client.model, client.base_url) == (MODEL_NAME, "http://127.0.0.1:18088/v1")
    backends = make_backends(store, "openai", environ=environment)
    assert backends.describe() == f"openai · {MODEL_NAME} @ 127.0.0.1:18088"


@pytest.mark.skipif(EXTRA_INSTALLED, reason="the model extra is installed here")
def test_serve_without_the_extra_says_which_extra_to_install():
    result = CliRunner().invoke(main, ["model", "serve", "--port", "0"])
    assert result.exit_code == 1
    assert f"Error: {INSTALL_HINT}" in result.output
    assert "Traceback" not in result.output


# -- the real model (slow: a CPU model; only where the extra is installed) -------------------


@pytest.fixture(scope="module")
def real_model():
    """The real SmolLM2-135M server on 127.0.0.1, for the module."""
    pytest.importorskip("llama_cpp")
    with LocalServer() as server:
        yield server


@pytest.mark.slow
def test_the_real_model_analyses_real_failures_to_a_clear_outcome(real_model, store):
    from store import EpisodeFilter
    from tests.analyze.test_causes import SUCCESS, add
    from workbench.analyze.analyzer import analyze

    add(store, "ok", "sw:boil:1", True, SUCCESS)
    add(store, "door", "sw:boil:1", False, [("go to kitchen", "The door is not open.")] * 2)
    add(store, "focus", "sw:boil:1", False, [*SUCCESS[:3], ("focus on sink", "CRITICAL")])
    analyst = make_backends(store, "openai", environ=real_model.environment()).analyst
    report = analyze(store, EpisodeFilter(), analyst)
    assert report.analyzed + len(report.rejected) + len(report.failed) == 2
    calls = store.calls()
    assert calls and all(c.purpose == "analyze.failure" and c.model == MODEL_NAME for c in calls)
    gave_up = [c for c in calls if c.gave_up]
    assert len(gave_up) == len(report.failed)  # every ModelError is on the call it ended on
    analysed = {a.episode_id for a in store.analyses(report.run.id)}
    assert len(analysed) == report.analyzed
