"""Self-instruct from documentation: heuristic proposals are deterministic, grounded in what
the world holds, stored once; the model-backed proposer is checked and corrected."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store
from tests.llm_server import ChatServer
from tests.synthesized import BOIL, COOKING, LIVING, beside
from workbench.envs.base import EnvOptions
from workbench.envs.registry import environment_plugin
from workbench.envs.scienceworld import splits
from workbench.envs.textworld import SPLITS
from workbench.llm import ModelError
from workbench.synth.heuristic_proposer import HeuristicProposer
from workbench.synth.openai_proposer import PURPOSE, OpenAIProposer
from workbench.synth.proposer import ProposalRequest, check_proposals, mentions
from workbench.synth.tasks import documentation, grounds_for, propose_tasks, world_tasks


def proposals(path: Path, seed: int) -> list[tuple[str, str, int, str]]:
    with Store(path) as store:
        report = propose_tasks(
            store,
            "scienceworld",
            3,
            proposer=HeuristicProposer(),
            seed=seed,
            families=[BOIL, "test-conductivity"],
        )
    return [(t.source, t.family, t.variation, t.instruction) for t in report.tasks]


def test_heuristic_proposals_are_the_same_for_the_same_seed(tmp_path: Path):
    first = proposals(tmp_path / "a.db", seed=0)
    assert first == proposals(tmp_path / "b.db", seed=0)
    assert first != proposals(tmp_path / "c.db", seed=1)
    assert len(first) > 30
    # a documented goal recombined with what another variation's goal names, played there
    swapped = [(v, i) for _, f, v, i in first if f == BOIL and i.startswith("Your task is to boil")]
    assert any("water" not in i for _, i in swapped)


def test_proposals_are_grounded_in_what_their_world_task_holds(proposed: Path, games: Path):
    train = {"scienceworld": set(splits()[LIVING]["train"]), "textworld": set(SPLITS["train"])}
    with Store(proposed) as store:
        for env, family in (("scienceworld", LIVING), ("textworld", COOKING)):
            passages = documentation(
                environment_plugin(env), EnvOptions(cache_dir=str(games)), [family]
            )
            known = {
                (p.family, p.variation): {*p.entities, *p.places}
                for p in passages
                if p.variation is not None
            }
            sources = {p.id: p.text for p in passages}
            tasks = store.synth_tasks(env)
            assert {t.source for t in tasks} <= set(sources)
            stated = {p.id for p in passages if p.kind in ("task", "intro")}
            assert stated <= {t.source for t in tasks}  # every documented task proposed some
            for task in tasks:
                assert task.family == family and task.variation in train[env]
                assert task.passage == sources[task.source]
                assert task.proposer == "heuristic" and task.seed == 0
                assert task.entities, task.instruction
                for entity in task.entities:
                    assert entity in known[(task.family, task.variation)], (task, entity)
                    assert mentions(task.instruction, entity)


def tasks_of(path: Path, env: str):
    with Store(path) as store:
        return store.synth_tasks(env)


def test_proposing_again_adds_nothing(proposed: Path):
    before = tasks_of(proposed, "textworld")
    with Store(proposed) as store:
        again = propose_tasks(
            store, "textworld", 2, proposer=HeuristicProposer(), families=[COOKING]
        )
    assert again.added == 0 and again.present == again.proposed > 0
    assert {t.id for t in again.tasks} == {t.id for t in before}
    assert all(s.present == s.proposed for s in again.sources)
    assert tasks_of(proposed, "textworld") == before


def request(games: Path, n: int = 2, intro: int = 0) -> ProposalRequest:
    plugin = environment_plugin("textworld")
    passages = documentation(plugin, EnvOptions(cache_dir=str(games)), [COOKING])
    grounds = world_tasks(plugin, passages, EnvOptions(cache_dir=str(games)))
    passage = [p for p in passages if p.kind == "intro"][intro]
    actions = tuple(p for p in passages if p.template)
    return ProposalRequest(passage, grounds_for(passage, grounds, 0), actions, n, 0, plugin.lexicon)


def answer(*tasks: tuple[str, int, list[str]]) -> dict:
    return {"tasks": [{"instruction": i, "world_task": w, "entities": e} for i, w, e in tasks]}


GOOD = answer(
    ("Open the fridge and take what the recipe needs.", 1, ["fridge"]),
    ("Read the cookbook, then prepare the meal.", 2, ["cookbook", "meal"]),
)


def test_the_model_reads_the_passage_and_its_world_tasks(client, scripted, store, games):
    asked = request(games)
    found = OpenAIProposer(client).propose(asked)
    assert [p.instruction for p in found] == [
        "Open the fridge and take what the recipe needs.",
        "Read the cookbook, then prepare the meal.",
    ]
    assert [p.ground for p in found] == list(asked.grounds[:2])
    assert not check_proposals(asked, found)
    prompt = scripted.prompt_text()
    assert f'<passage id="intro:{COOKING}:0" kind="intro">' in prompt
    assert "Check the cookbook in the kitchen" in prompt
    assert f"[1] {COOKING}, variation 0" in prompt and "objects: " in prompt
    assert "`take OBJ from OBJ`" in prompt and "Propose 2 task(s)." in prompt
    [call] = store.calls(purpose=PURPOSE)
    assert not call.cached


@pytest.fixture
def scripted(chat_server: ChatServer) -> ChatServer:
    chat_server.queue(GOOD)
    return chat_server


def test_an_answer_naming_what_its_world_task_lacks_gets_one_correction(client, chat_server, games):
    chat_server.queue(
        answer(("Take the unicorn.", 1, ["unicorn"]), ("Eat.", 9, [])),
        GOOD,
    )
    found = OpenAIProposer(client).propose(request(games))
    assert len(found) == 2 and chat_server.request_count == 2
    correction = chat_server.requests[1].messages[-1]["content"]
    assert "task 2 names world task 9, not one of 1 to" in correction
    chat_server.queue(answer(("Take the unicorn.", 1, ["unicorn"]), ("Eat the meal.", 1, ["meal"])))
    chat_server.queue(answer(("Take the unicorn.", 1, ["unicorn"]), ("Eat the meal.", 1, ["meal"])))
    with pytest.raises(ModelError) as raised:  # another passage: not answered from the cache
        OpenAIProposer(client).propose(request(games, intro=1))
    assert "task 1 names 'unicorn', which world task" in str(raised.value)
    assert str(raised.value).startswith(f"{PURPOSE}: the model's tasks still fail")


def test_propose_tasks_stores_the_models_tasks_once(client, chat_server, db_path, games):
    beside(db_path, games)
    chat_server.responder = lambda body: answer(
        ("Open the fridge.", 1, ["fridge"]), ("Examine the cookbook.", 1, ["cookbook"])
    )
    with Store(db_path) as store:
        report = propose_tasks(
            store, "textworld", 2, proposer=OpenAIProposer(client), families=[COOKING]
        )
        assert report.proposer == "openai:test-model"
        assert chat_server.request_count == len(report.sources)  # one call per passage
        tasks = store.synth_tasks("textworld")
        assert {t.instruction for t in tasks} == {"Open the fridge.", "Examine the cookbook."}
        assert {t.proposer for t in tasks} == {"openai:test-model"}
        assert report.added == len(tasks) < report.proposed  # the same task is stored once
