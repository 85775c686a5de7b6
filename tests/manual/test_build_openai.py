"""The building stage with the model as Planner and Builder: the LLM agent plays real
ScienceWorld episodes against the local chat server, reads the rules, and the Builder's
typed calls change the rule system."""

from __future__ import annotations

import pytest

from store import Store
from tests.llm_server import serve
from workbench.envs.scienceworld import ScienceWorld
from workbench.executors import InProcess
from workbench.llm import ChatClient
from workbench.manual.build import build
from workbench.manual.openai_builder import BuildAnswer, CaseAnswer, OpenAIBuilder, RuleCall
from workbench.runner import AgentSpec, RunConfig

RULE = "In find-living-thing tasks: looking around shows what the room holds."


def reply(request):
    schema = request["response_format"]["json_schema"]["name"]
    if schema == "CaseAnswer":
        return CaseAnswer(analysis="Step 1 only looked around.", label="Imperfect Rules")
    if schema == "BuildAnswer":
        return BuildAnswer(
            potential_rules="A phenomenon worth keeping.",
            calls=[RuleCall(function="write_rule", type="Special Phenomenon", content=RULE)],
        )
    return {"thought": "I look first.", "action": "look around"}


@pytest.mark.slow
def test_the_llm_planner_reads_the_rules_the_model_builder_writes(db_path, monkeypatch):
    for server in serve():
        server.responder = reply
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
        config = RunConfig(
            families=["find-living-thing"], episodes=2, step_limit=2, agent=AgentSpec(kind="openai")
        )
        env = ScienceWorld(step_limit=2)
        try:
            with Store(db_path) as store:
                client = ChatClient(
                    store,
                    model="test-model",
                    api_key=server.api_key,
                    base_url=server.base_url,
                    backoff=0,
                )
                report = build(
                    store, OpenAIBuilder(client), config, executor=InProcess(env=env), n_max=5
                )
                assert report.episodes == 2
                rules = store.manual_rules()
                assert {r.content for r in rules} == {RULE} and rules[0].id == "rule_1"
                assert {e.actor for e in store.rule_events()} == {"builder:openai:test-model"}
        finally:
            env.close()
        acts = [
            r for r in server.requests if r.body["response_format"]["json_schema"]["name"] == "Act"
        ]
        first_episode, second_episode = acts[0], acts[-1]
        assert RULE not in first_episode.messages[0]["content"]
        assert "Rules (from earlier episodes)" in second_episode.messages[0]["content"]
        assert RULE in second_episode.messages[0]["content"]


@pytest.mark.slow
def test_run_with_manual_gives_the_llm_agent_the_formulated_manual(db_path, monkeypatch):
    from click.testing import CliRunner

    from workbench.cli import main
    from workbench.manual.formulate import formulate
    from workbench.manual.heuristic import HeuristicFormulator
    from workbench.manual.operations import OPERATIONS, apply

    with Store(db_path) as store:
        calls = [{"op": "write_rule", "type": "Special Phenomenon", "content": RULE}]
        apply(store, OPERATIONS.validate_python(calls), "human")
        formulate(store, HeuristicFormulator())
    for server in serve():
        server.responder = reply
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
        args = ["--db", str(db_path), "run", "--family", "find-living-thing", "--episodes", "1"]
        args += ["--agent", "openai", "--step-limit", "1", "--workers", "1", "--with-manual"]
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        system = server.requests[0].messages[0]["content"]
        assert "=== Manual ===" in system and "rule_1 (Special Phenomenon)" in system
        assert RULE.split(":")[0] in system


def planner_reply(request):
    """The model as Planner (the paper's four parts) and as Builder."""
    schema = request["response_format"]["json_schema"]["name"]
    if schema != "PlannerReply":
        return reply(request)
    shown = "rule_1" in "\n".join(m["content"] for m in request["messages"])
    return {
        "analysis": "The task asks for a living thing; first I look.",
        "related_rules": ["rule_1"] if shown else [],
        "overall_plan": "Look around, then find the living thing.",
        "code": "print(act('look around'))\nact('look around')",
    }


@pytest.mark.slow
def test_the_model_planner_names_the_rules_it_uses_and_the_builder_reads_them(db_path, monkeypatch):
    for server in serve():
        server.responder = planner_reply
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
        config = RunConfig(
            families=["find-living-thing"],
            episodes=2,
            step_limit=2,
            agent=AgentSpec(kind="openai-planner"),
        )
        env = ScienceWorld(step_limit=2)
        try:
            with Store(db_path) as store:
                client = ChatClient(
                    store, model="test-model", api_key=server.api_key, base_url=server.base_url
                )
                build(store, OpenAIBuilder(client), config, executor=InProcess(env=env), n_max=5)
                second = store.episodes()[-1]
                [cycle] = second.metadata["planner"]["cycles"]
                assert cycle["related_rules"] == ["rule_1"] and cycle["status"] == "completed"
        finally:
            env.close()
        builds = [
            r
            for r in server.requests
            if r.body["response_format"]["json_schema"]["name"] == "BuildAnswer"
        ]
        assert "Related rules: rule_1." in builds[-1].messages[-1]["content"]
        plans = [
            r
            for r in server.requests
            if r.body["response_format"]["json_schema"]["name"] == "PlannerReply"
        ]
        assert RULE in plans[-1].messages[1]["content"]
