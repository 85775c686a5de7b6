"""The one backend choice: --reasoner > WORKBENCH_REASONER > workbench.toml > heuristic, every
stage's backend from it, and a misconfiguration as one line naming what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from store import ManualRule, Store
from tests.analyze.test_causes import SUCCESS, add
from tests.llm_server import ChatServer
from workbench.analyze.heuristic import HeuristicAnalyst
from workbench.analyze.openai import OpenAIAnalyst
from workbench.backends import make_backends, reasoner_config
from workbench.cli import main
from workbench.compile.heuristic import HeuristicCompiler
from workbench.compile.openai import OpenAICompiler
from workbench.llm import ConfigError
from workbench.manual.formulate import RuleGroup
from workbench.manual.heuristic import HeuristicFormulator
from workbench.manual.heuristic_builder import HeuristicBuilder
from workbench.manual.openai import OpenAIFormulator
from workbench.manual.openai_builder import OpenAIBuilder

KEY = {"OPENAI_API_KEY": "sk-test"}
ENDPOINT = {**KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "WORKBENCH_MODEL": "env-model"}


def write_toml(db_path: Path, text: str) -> Path:
    path = db_path.parent / "workbench.toml"
    path.write_text(text)
    return path


def test_without_any_configuration_every_stage_is_heuristic(store):
    backends = make_backends(store, environ={})
    assert (backends.name, backends.describe()) == ("heuristic", "heuristic")
    assert isinstance(backends.analyst, HeuristicAnalyst)
    assert isinstance(backends.compiler, HeuristicCompiler)
    assert isinstance(backends.formulator, HeuristicFormulator)
    assert isinstance(backends.builder, HeuristicBuilder)
    assert backends.analyst.name == backends.compiler.name == "heuristic"


def test_an_openai_choice_builds_every_stage_on_one_client(store):
    backends = make_backends(store, "openai", environ=ENDPOINT)
    assert backends.name == "openai"
    assert backends.describe() == "openai · env-model @ 127.0.0.1:9"
    assert isinstance(backends.analyst, OpenAIAnalyst)
    assert isinstance(backends.compiler, OpenAICompiler)
    assert isinstance(backends.formulator, OpenAIFormulator)
    assert isinstance(backends.builder, OpenAIBuilder)
    clients = {id(b.client) for b in (backends.analyst, backends.compiler, backends.builder)}
    assert clients == {id(backends.formulator.client)}
    assert backends.analyst.name == "openai:env-model"
    assert backends.analyst.client.store is store


def test_the_choice_is_made_in_order(db_path):
    write_toml(db_path, '[reasoner]\nbackend = "openai"\nbase_url = "http://h/v1"\nmodel = "m"\n')
    assert reasoner_config(db_path, environ=KEY).source.startswith("backend in [reasoner]")
    env = {**KEY, "WORKBENCH_REASONER": "heuristic"}
    assert reasoner_config(db_path, environ=env).backend == "heuristic"
    chosen = reasoner_config(db_path, "openai", environ=env)
    assert (chosen.backend, chosen.source) == ("openai", "--reasoner")
    assert reasoner_config(db_path, "heuristic", environ=KEY).backend == "heuristic"


def test_the_environment_overrides_the_files_endpoint(db_path):
    write_toml(db_path, '[reasoner]\nbackend = "openai"\nbase_url = "http://h/v1"\nmodel = "m"\n')
    from_file = reasoner_config(db_path, environ=KEY)
    assert (from_file.base_url, from_file.model) == ("http://h/v1", "m")
    from_env = reasoner_config(db_path, environ=ENDPOINT)
    assert (from_env.base_url, from_env.model) == ("http://127.0.0.1:9/v1", "env-model")


def test_a_toml_configured_endpoint_answers_with_the_key_it_names(db_path, store):
    rules = [ManualRule(id="rule_1", type="Corrected Error", content="Doors: open them first.")]
    groups = {"groups": [{"title": "Doors", "introduction": "Open first.", "rule_ids": ["rule_1"]}]}
    with ChatServer(responder=lambda request: groups) as server:
        write_toml(
            db_path,
            f'[reasoner]\nbackend = "openai"\nbase_url = "{server.base_url}"\n'
            'model = "toml-model"\napi_key_env = "MY_KEY"\n',
        )
        backends = make_backends(store, environ={"MY_KEY": server.api_key})
        assert backends.formulator.group_rules(rules) == [RuleGroup(**groups["groups"][0])]
        assert server.request_count == 1
        assert server.requests[0].body["model"] == "toml-model"
    assert store.calls("manual.formulate")[0].model == "toml-model"


@pytest.mark.parametrize(
    ("environ", "toml", "expected"),
    [
        (
            {**KEY, "WORKBENCH_MODEL": "m"},
            "",
            r"needs an endpoint: set OPENAI_BASE_URL or base_url",
        ),
        (
            {**KEY, "OPENAI_BASE_URL": "http://h"},
            "",
            r"needs a model: set WORKBENCH_MODEL or model",
        ),
        ({"OPENAI_BASE_URL": "http://h", "WORKBENCH_MODEL": "m"}, "", r"export OPENAI_API_KEY"),
        (ENDPOINT, 'api_key_env = "MY_KEY"', r"export MY_KEY"),
        ({"WORKBENCH_REASONER": "gpt"}, "", r"unknown reasoner 'gpt' \(from WORKBENCH_REASONER\)"),
        (ENDPOINT, 'api_key = "sk-secret"', r"must not hold the key itself"),
        (ENDPOINT, 'modle = "m"', r"has no key 'modle'"),
        (ENDPOINT, "model = 3", r"model must be a string"),
        (ENDPOINT, 'model = "unterminated', r"workbench\.toml: .*line 3"),
    ],
)
def test_a_misconfiguration_names_what_is_missing(db_path, store, environ, toml, expected):
    write_toml(db_path, f'[reasoner]\nbackend = "openai"\n{toml}\n')
    with pytest.raises(ConfigError, match=expected) as raised:
        make_backends(store, environ=environ)
    assert "\n" not in str(raised.value)


def test_a_missing_endpoint_names_the_file_it_looked_in(db_path, store):
    write_toml(db_path, '[reasoner]\nbackend = "openai"\n')
    with pytest.raises(ConfigError) as raised:
        make_backends(store, environ=KEY)
    assert f"or base_url in [reasoner] of {db_path.resolve().parent / 'workbench.toml'}" in str(
        raised.value
    )


def test_the_cli_follows_the_environment_and_fails_in_one_line(db_path, monkeypatch):
    with Store(db_path) as store:
        add(store, "ok", "sw:boil:1", True, SUCCESS)
        add(store, "door", "sw:boil:1", False, [("go to kitchen", "The door is not open.")])
    monkeypatch.setenv("WORKBENCH_REASONER", "openai")
    for name in ("OPENAI_BASE_URL", "WORKBENCH_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for args in (["analyze"], ["compile"], ["manual", "formulate"]):
        result = CliRunner().invoke(main, ["--db", str(db_path), *args])
        assert result.exit_code == 1, result.output
        assert result.output.startswith("Error: the openai reasoner needs an endpoint")
        assert len(result.output.strip().splitlines()) == 1 and result.exception is not None
        assert isinstance(result.exception, SystemExit)
    heuristic = CliRunner().invoke(
        main, ["--db", str(db_path), "analyze", "--reasoner", "heuristic"]
    )
    assert "analysis run 1 (heuristic)" in heuristic.output
