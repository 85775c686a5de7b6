"""The model relabeler and its committee vote against the scripted chat server: checked
instructions with one correction, votes that join the committee, nothing replayed twice."""

from __future__ import annotations

import re
from pathlib import Path

from store import Store
from store.synth import SYNTH_WORKSPACE
from tests.llm_server import ChatServer
from tests.synthesized import copy_db
from workbench.backends import make_backends
from workbench.llm import ChatClient
from workbench.synth.backward import construct
from workbench.synth.filters import filter_examples
from workbench.synth.heuristic_relabeler import HeuristicRelabeler
from workbench.synth.openai_relabeler import RELABEL_PURPOSE, VOTE_PURPOSE, OpenAIRelabeler


def client_on(store: Store, server: ChatServer) -> ChatClient:
    return ChatClient(
        store,
        model="test-model",
        api_key=server.api_key,
        base_url=server.base_url,
        backoff=0,
        timeout=10,
    )


def relabel_reply(request: dict) -> dict:
    """An instruction naming the last thing the span's effects name."""
    prompt = "\n".join(str(m["content"]) for m in request["messages"])
    effects = re.search(r"Effects the environment showed: (.*)", prompt).group(1)
    named = [e for e in effects.split("; ") if not e.startswith("score")]
    last = named[-1].split(": ")[-1].removeprefix("reached ").removeprefix("took ")
    return {"instruction": f"Make sure you {last} now"}


def test_the_model_writes_each_instruction_and_a_vague_one_is_corrected(
    tmp_path: Path, recorded_db, chat_server
):
    chat_server.responder = relabel_reply
    chat_server.queue({"instruction": "Do what needs doing."})  # names nothing the span did
    path = copy_db(recorded_db, tmp_path)
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        relabeler = OpenAIRelabeler(client_on(store, chat_server))
        report = construct(store, relabeler=relabeler, max_spans_per_episode=3)
        backward = store.synth_examples(kind="backward")
        assert report.relabel_calls == len(backward) == chat_server.request_count - 1
        assert all(e.relabeler == "openai:test-model" for e in backward)
        assert all(e.instruction.startswith("Make sure you ") for e in backward)
        correction = chat_server.requests[1].prompt_text()
        assert "names nothing the steps acted on" in correction
        assert "Effects the environment showed:" in chat_server.requests[0].prompt_text()
        calls = store.calls(RELABEL_PURPOSE)
        assert len(calls) == chat_server.request_count
        again = construct(store, relabeler=relabeler)
        assert again.relabel_calls == 0 and len(store.synth_examples(kind="backward")) == len(
            backward
        )


def vote_reply(request: dict) -> dict:
    """Every criterion holds, except that an instruction with a 'then' is not reasonable."""
    prompt = "\n".join(str(m["content"]) for m in request["messages"])
    instruction = re.search(r"Task instruction: (.*)", prompt).group(1)
    long = ", then " in instruction
    reason = "It does two things at once." if long else "Fine."
    return {
        "aligned": True,
        "coherent": True,
        "natural": True,
        "reasonable": not long,
        "reason": reason,
    }


def test_the_models_vote_joins_the_committee_without_replaying_again(
    tmp_path: Path, filtered_db, worlds, chat_server
):
    chat_server.responder = vote_reply
    chat_server.queue(  # a failed criterion without a reason gets one correction
        {"aligned": False, "coherent": True, "natural": True, "reasonable": True, "reason": ""}
    )
    path = copy_db(filtered_db.path, tmp_path)
    with Store(path, workspace=SYNTH_WORKSPACE) as store:
        kept = store.synth_examples(verdict="kept")
        store.set_example_verdicts([e.model_copy(update={"verdict": "pending"}) for e in kept])
        relabeler = OpenAIRelabeler(client_on(store, chat_server))
        report = filter_examples(store, executor=worlds, relabeler=relabeler)
        assert report.examined == len(kept) and report.replays_played == 0
        assert report.votes == len(kept) and chat_server.request_count == len(kept) + 1
        assert "say which step breaks aligned" in chat_server.requests[1].prompt_text()
        two_part = [e for e in kept if ", then " in e.instruction]
        assert two_part and report.rejected["committee: openai:test-model"] == len(two_part)
        for example in store.synth_examples(verdict="rejected"):
            if example.id in {e.id for e in two_part}:
                assert example.reason.startswith(
                    "committee: openai:test-model voted no: not reasonable"
                )
        for example in store.synth_examples(verdict="kept"):
            members = example.checks["committee"]
            assert members["openai:test-model"]["vote"] == "yes" and "heuristic" in members
        assert len(store.calls(VOTE_PURPOSE)) == chat_server.request_count


def test_the_backend_choice_gives_the_relabeler(tmp_path: Path):
    endpoint = {
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "WORKBENCH_MODEL": "env-model",
    }
    with Store(tmp_path / "wb.db") as store:
        assert isinstance(make_backends(store, environ={}).relabeler, HeuristicRelabeler)
        chosen = make_backends(store, "openai", environ=endpoint).relabeler
        assert isinstance(chosen, OpenAIRelabeler) and chosen.name == "openai:env-model"
