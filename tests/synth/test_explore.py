"""Interaction: synthesized tasks played by the scripted explorer in both worlds, recorded in
the synth workspace (never among the researcher's own episodes), resumable; the runner asks
the agent the synthesized instruction and keeps the world's on the task."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from store import SYNTH_WORKSPACE, Store
from tests.synthesized import COOKING
from workbench.agents.base import words_of
from workbench.agents.explorer import ExplorerAgent
from workbench.envs.registry import lexicon_of
from workbench.executors import InProcess
from workbench.progress import Cancelled
from workbench.runner import AgentSpec, PlannedEpisode, RunConfig, plan_run, play_episode
from workbench.synth import backward
from workbench.synth.explore import TASK_KEY, explore, plan_exploration
from workbench.synth.heuristic_relabeler import HeuristicRelabeler

EFFECTS = ("take", "open", "move")


def test_a_plan_without_a_synthesized_instruction_serializes_as_before(scienceworld):
    config = RunConfig(families=["boil"], episodes=2)
    for planned in plan_run(config, scienceworld, "b"):
        assert set(planned.model_dump()) == {"id", "family", "variation", "split", "trial", "seed"}
        assert "instruction" not in planned.model_dump_json()


def effects(store: Store, episode_id: str, env: str) -> list[str]:
    """The actions of an episode that changed the world and were not refused."""
    lexicon = lexicon_of(env)
    return [
        s.action
        for s in store.steps(episode_id)[1:]
        if lexicon.role(s.action).role in EFFECTS and not lexicon.error(s.observation)
    ]


def off_instruction(store: Store, episode_id: str, instruction: str) -> list[str]:
    """Actions naming nothing the instruction names (exploration)."""
    asked = set(words_of(instruction))
    return [s.action for s in store.steps(episode_id)[1:] if not asked & set(words_of(s.action))]


def test_scienceworld_exploration_is_recorded_in_the_synth_workspace_and_resumes(
    proposed: Path, scienceworld
):
    cancel = threading.Event()
    cancel.set()  # stop after the first finished episode
    with Store(proposed) as store, InProcess(scienceworld) as executor:
        asked = dict(executor=executor, env="scienceworld", limit=2, step_limit=6)
        with pytest.raises(Cancelled):
            explore(store, cancel=cancel, **asked)
        synth = Store(proposed, workspace=SYNTH_WORKSPACE)
        assert len(synth.episodes()) == 1
        report = explore(store, **asked)  # the unfinished batch resumes
        assert (report.planned, report.skipped, report.finished) == (2, 1, 1)
        again = explore(store, batch=report.batch_id, **asked)
        assert (again.planned, again.skipped, again.finished) == (2, 2, 0)
        assert report.batch_id == "synth/explore-scienceworld-explorer-1"
        assert store.episodes() == [] and store.count_episodes() == 0  # not the user's
        episodes = synth.episodes()
        tasks = {t.id: t for t in store.synth_tasks("scienceworld")}
        assert len({e.id for e in episodes}) == 2
        for episode in episodes:
            task = tasks[episode.metadata[TASK_KEY]]
            world = store.task(episode.task_id)
            assert episode.metadata["instruction"] == task.instruction
            assert episode.metadata["world_instruction"] == world.instruction
            assert world.instruction.startswith("Your task is to find a(n) living thing.")
            assert episode.task_id == f"scienceworld:{task.family}:{task.variation}"
            assert episode.agent == "explorer" and episode.metadata["step_limit"] == 6
            assert effects(synth, episode.id, "scienceworld"), episode.id
        assert any(off_instruction(synth, e.id, e.metadata["instruction"]) for e in episodes)
        synth.close()


def test_textworld_exploration_reaches_effects_and_strays_from_the_instruction(
    proposed: Path, textworld_env
):
    with Store(proposed) as store, InProcess(textworld_env) as executor:
        report = explore(store, executor=executor, env="textworld", limit=4, step_limit=12)
        assert report.finished == 4 and not report.errors
        synth = Store(proposed, workspace=SYNTH_WORKSPACE)
        episodes = synth.episodes()
        assert all(e.task_id.startswith(f"textworld:{COOKING}:") for e in episodes)
        done = [effects(synth, e.id, "textworld") for e in episodes]
        assert all(done) and any("open fridge" in d for d in done)
        assert not all(e.outcome.success for e in episodes)
        assert any(off_instruction(synth, e.id, e.metadata["instruction"]) for e in episodes)
        # backward construction reads what the episodes were asked and the task they played
        assert TASK_KEY == backward.TASK_KEY
        built = backward.construct(synth, relabeler=HeuristicRelabeler())
        assert built.episodes == 4 and built.examples > 0
        for episode in episodes:
            whole = synth.synth_examples(kind="whole", episode_id=episode.id)
            assert [(w.task_id, w.instruction) for w in whole] == [
                (episode.metadata[TASK_KEY], episode.metadata["instruction"])
            ]
        synth.close()


def test_the_explorer_replays_the_same_episode_from_the_same_seed(proposed: Path, textworld_env):
    with Store(proposed) as store:
        [task] = store.synth_tasks("textworld")[:1]
    [planned] = plan_exploration([task], "synth/t", seed=0)
    config = RunConfig(
        env="textworld", families=[COOKING], step_limit=10, agent=AgentSpec(kind="explorer")
    )
    played = [
        play_episode(textworld_env, ExplorerAgent(), planned, config, "synth/t") for _ in "ab"
    ]
    first, second = ([s["action"] for s in p.steps[1:]] for p in played)
    assert first == second and len(first) >= 3
    other = planned.model_copy(update={"seed": planned.seed + 1})
    third = play_episode(textworld_env, ExplorerAgent(), other, config, "synth/t")
    assert [s["action"] for s in third.steps[1:]] != first


def test_the_agent_is_asked_the_synthesized_instruction(textworld_env):
    seen = []

    class Asks:
        name = "asks"

        def play(self, interaction, rng: random.Random, guidance):
            seen.append(interaction.instruction)
            interaction.act("look")
            return {}

    planned = PlannedEpisode(
        id="e",
        family=COOKING,
        variation=0,
        split="train",
        trial=0,
        seed=1,
        instruction="Open the fridge.",
        metadata={TASK_KEY: 7},
    )
    config = RunConfig(env="textworld", families=[COOKING], step_limit=3)
    played = play_episode(textworld_env, Asks(), planned, config, "b")
    assert seen == ["Open the fridge."]
    assert played.task["instruction"].startswith("You are hungry!")
    meta = played.episode["metadata"]
    assert meta["instruction"] == "Open the fridge." and meta[TASK_KEY] == 7
    assert meta["world_instruction"] == played.task["instruction"]
