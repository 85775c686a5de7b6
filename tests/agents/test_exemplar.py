"""The exemplar agent on the real simulators: examples recorded from some variations of a
task solve another variation it cannot solve without them; and ``run --with-examples`` from
the command line, for the exemplar agent and for the LLM agent against the local server."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from store import EpisodeFilter, Store
from tests.llm_server import serve
from tests.synth.examples import example_of, record_episode
from workbench.cli import main
from workbench.envs.base import EnvOptions
from workbench.envs.registry import make_environment
from workbench.executors import InProcess
from workbench.runner import (
    AgentSpec,
    PlannedEpisode,
    RunConfig,
    cache_dir_beside,
    episode_seed,
    run_batch,
)

pytestmark = pytest.mark.slow


def planned(batch: str, family: str, variations: list[int]) -> list[PlannedEpisode]:
    return [
        PlannedEpisode(
            id=f"{batch}:{family}:{v}",
            family=family,
            variation=v,
            split="train",
            trial=0,
            seed=episode_seed(0, family, v, 0),
        )
        for v in variations
    ]


def play(store, env, world, family, batch, variations, agent, step_limit=20):
    config = RunConfig(env=world, families=[family], step_limit=step_limit, agent=agent)
    with InProcess(env=env) as executor:
        run_batch(
            store, config, executor=executor, batch=batch, plan=planned(batch, family, variations)
        )
    return store.episodes(EpisodeFilter(batch=batch))


def learn(store, env, world, family, sources, target):
    """Gold episodes of ``sources`` kept as whole examples, after the exemplar agent has
    played ``target`` with no example in the store (batch ``without``)."""
    gold = play(store, env, world, family, "gold", sources, AgentSpec(kind="scripted", rates={}))
    assert all(e.outcome.success for e in gold)
    play(store, env, world, family, "without", [target], AgentSpec(kind="exemplar"))
    for episode in gold:
        example_of(store, episode.id)


def followed(episode) -> list[dict]:
    return episode.metadata["exemplar"]["steps"]


@pytest.fixture(scope="module")
def scienceworld_db(tmp_path_factory, scienceworld) -> Path:
    """find-living-thing: examples from variations 0 and 2 (a red and a blue box), the agent
    tried on variation 3 (an orange box, starting outside) before they existed."""
    path = tmp_path_factory.mktemp("exemplar-sw") / "w.db"
    with Store(path) as store:
        learn(store, scienceworld, "scienceworld", "find-living-thing", [0, 2], 3)
    return path


@pytest.fixture(scope="module")
def textworld_db(tmp_path_factory) -> Path:
    """tw-cooking-level1: examples from games 0 and 1 (recipes of an orange and a yellow bell
    pepper), the agent tried on game 2 (a block of cheese) before they existed. The games are
    kept beside the database, where runs look for them."""
    path = tmp_path_factory.mktemp("exemplar-tw") / "w.db"
    env = make_environment(
        "textworld", EnvOptions(step_limit=20, cache_dir=cache_dir_beside(str(path)))
    )
    try:
        with Store(path) as store:
            learn(store, env, "textworld", "tw-cooking-level1", [0, 1], 2)
    finally:
        env.close()
    return path


def test_without_examples_it_stops_and_fails(scienceworld_db, textworld_db):
    for path in (scienceworld_db, textworld_db):
        with Store(path) as store:
            [episode] = store.episodes(EpisodeFilter(batch="without"))
        assert not episode.outcome.success and episode.n_steps == 1  # the first observation only
        assert episode.metadata["exemplar"]["stopped"] == "no examples"


def test_examples_of_other_variations_solve_a_scienceworld_task(scienceworld_db, scienceworld):
    with Store(scienceworld_db) as store:
        [episode] = play(
            store,
            scienceworld,
            "scienceworld",
            "find-living-thing",
            "with",
            [3],
            AgentSpec(kind="exemplar"),
        )
        kept = {e.id for e in store.synth_examples(verdict="kept")}
        actions = [s.action for s in store.steps(episode.id)][1:]
    assert episode.outcome.success, episode.outcome.message
    steps = followed(episode)
    assert [s["action"] for s in steps] == actions and {s["example"] for s in steps} <= kept
    last = steps[-1]  # the box of the example's task carried into this one's
    assert last["action"].endswith("to orange box") and not last["example_action"].endswith(
        "orange box"
    )
    assert [last["example_action"].rsplit(" to ", 1)[1], "orange box"] in last["pairs"]


def test_examples_of_other_games_solve_a_textworld_task(textworld_db):
    env = make_environment(
        "textworld", EnvOptions(step_limit=20, cache_dir=cache_dir_beside(str(textworld_db)))
    )
    try:
        with Store(textworld_db) as store:
            runs = [
                play(
                    store,
                    env,
                    "textworld",
                    "tw-cooking-level1",
                    batch,
                    [2],
                    AgentSpec(kind="exemplar"),
                )[0]
                for batch in ("with", "again")
            ]
    finally:
        env.close()
    assert all(e.outcome.success for e in runs), runs[0].outcome.message
    first, again = (followed(e) for e in runs)
    assert first == again  # deterministic
    taking = next(s for s in first if s["action"].startswith("take "))
    assert taking["action"] == "take block of cheese from fridge"
    assert "bell pepper" in taking["example_action"]  # read from the recipe the game showed
    assert any(target == "block of cheese" for _, target in taking["pairs"])


PLAYS_GAME_2 = 904
"""A run seed whose plan of one tw-cooking-level1 train episode is game 2 (a test checks)."""


def test_with_and_without_examples_from_the_command_line(textworld_db):
    from workbench.runner import plan_batch

    def run(*args: str) -> str:
        result = CliRunner().invoke(
            main,
            ["--db", str(textworld_db), "run", *args, "--workers", "1"],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        return result.output

    base = ["--env", "textworld", "--family", "tw-cooking-level1", "--agent", "exemplar"]
    base += ["--episodes", "1", "--seed", str(PLAYS_GAME_2), "--step-limit", "20"]
    config = RunConfig(
        env="textworld", families=["tw-cooking-level1"], episodes=1, seed=PLAYS_GAME_2
    )
    assert [p.variation for p in plan_batch(config, "x")] == [2]
    without = run(*base, "--example-kind", "backward", "--batch", "cli")
    assert "no kept backward examples of textworld: the exemplar agent will stop at once" in without
    paired = run("--like", "cli", "--with-examples", "6", "--example-kind", "whole")
    assert "retrieving from 2 kept whole examples of textworld (BM25" in paired
    assert "cli: 0/1 succeeded" in paired and "cli-examples: 1/1 succeeded" in paired
    assert "paired: 1 fixed, 0 broken" in paired
    with Store(textworld_db) as store:
        [episode] = store.episodes(EpisodeFilter(batch="cli-examples"))
        agent = store.batch("cli-examples").params["config"]["agent"]
    assert episode.agent == "exemplar" and episode.metadata["exemplar"]["examples"] == 2
    assert (agent["examples"], agent["example_kind"]) == (6, "whole")
    explores = run(
        *base, "--example-kind", "backward", "--example-fallback", "explorer", "--batch", "explore"
    )
    assert (
        "no kept backward examples of textworld: the exemplar agent will play as the explorer"
        in explores
    )
    with Store(textworld_db) as store:
        batch = store.batch("explore")
        [episode] = store.episodes(EpisodeFilter(batch="explore"))
    assert batch.params["config"]["agent"]["example_fallback"] == "explorer"
    record = episode.metadata["exemplar"]
    assert record["fallback"] == "explorer" and record["fallback_steps"] > 0
    assert all(step["example"] is None for step in record["steps"])


def test_the_llm_agent_sees_retrieved_examples_in_its_prompt(db_path, monkeypatch):
    with Store(db_path) as store:
        record_episode(
            store,
            "boxed",
            "Your task is to find a(n) living thing. Then move it to the red box.",
            "This room is called the hallway.",
            [
                ("open door to greenhouse", "The door is now open."),
                ("focus on dove egg", "You focus on the dove egg."),
            ],
            env="scienceworld",
        )
        example = example_of(store, "boxed")

    def respond(request):
        if request["response_format"]["json_schema"]["name"] == "QueryAnswer":
            return {"query": "find a living thing and move it to a box"}
        return {"thought": "looking first", "action": "look around"}

    server_gen = serve(respond)
    server = next(server_gen)
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
        args = [
            "--db",
            str(db_path),
            "run",
            "--env",
            "scienceworld",
            "--family",
            "find-living-thing",
        ]
        args += [
            "--agent",
            "openai",
            "--with-examples",
            "4",
            "--episodes",
            "1",
            "--step-limit",
            "2",
        ]
        result = CliRunner().invoke(
            main, [*args, "--workers", "1", "--batch", "llm"], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        acting = [
            r for r in server.requests if r.body["response_format"]["json_schema"]["name"] == "Act"
        ]
    finally:
        server_gen.close()
    assert len(acting) == 2
    prompt = acting[0].prompt_text()
    assert "Examples retrieved from synthesized interactions" in prompt
    assert example.instruction in prompt and "> focus on dove egg" in prompt
    with Store(db_path) as store:
        [episode] = store.episodes(EpisodeFilter(batch="llm"))
        queries = store.calls(purpose="synth.query")
    shown = episode.metadata["examples"]
    assert [s["examples"] for s in shown] == [[example.id], [example.id]]
    assert shown[0]["query"] == "find a living thing and move it to a box" and len(queries) == 2


def test_examples_need_an_agent_that_reads_them(db_path):
    result = CliRunner().invoke(
        main, ["--db", str(db_path), "run", "--family", "boil", "--with-examples", "3"]
    )
    assert (
        result.exit_code == 2
        and "--with-examples needs an agent that reads examples" in result.output
    )
    result = CliRunner().invoke(
        main, ["--db", str(db_path), "run", "--family", "boil", "--example-fallback", "explorer"]
    )
    assert result.exit_code == 2 and "--example-fallback is for --agent exemplar" in result.output
