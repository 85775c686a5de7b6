"""The exemplar agent's fallback and the explorer's judged acts, on real TextWorld games:
with no example, ``example_fallback="explorer"`` plays exactly as the greedy explorer (the
baseline arm of ``bench/synthesis_effect.py``); the default still stops; and the explorer
takes a final act only when the instruction names it."""

from __future__ import annotations

import pytest

from store import Store
from tests.synthesized import COOKING
from workbench.agents.exemplar import ExemplarAgent
from workbench.agents.explorer import ExplorerAgent
from workbench.runner import AgentSpec, PlannedEpisode, RunConfig, play_episode

pytestmark = pytest.mark.slow


def planned(seed: int, instruction: str | None = None) -> PlannedEpisode:
    return PlannedEpisode(
        id=f"e{seed}",
        family=COOKING,
        variation=0,
        split="train",
        trial=0,
        seed=seed,
        instruction=instruction,
    )


def actions(played) -> list[str]:
    return [s["action"] for s in played.steps[1:]]


CONFIG = RunConfig(env="textworld", families=[COOKING], step_limit=10)


def test_with_no_example_the_fallback_plays_as_the_greedy_explorer(db_path, textworld_env):
    with Store(db_path) as store:
        for seed in (1, 2):
            exemplar = ExemplarAgent(store, fallback="explorer")
            mine = play_episode(textworld_env, exemplar, planned(seed), CONFIG, "b")
            greedy = play_episode(textworld_env, ExplorerAgent.greedy(), planned(seed), CONFIG, "b")
            assert actions(mine) == actions(greedy) and len(actions(mine)) == 10
            record = mine.episode["metadata"]["exemplar"]
            assert record["fallback_steps"] == 10 and record["examples"] == 0
            assert all(step["example"] is None for step in record["steps"])
        stops = play_episode(textworld_env, ExemplarAgent(store), planned(1), CONFIG, "b")
    assert (
        actions(stops) == [] and stops.episode["metadata"]["exemplar"]["stopped"] == "no examples"
    )


def test_the_spec_carries_the_fallback(db_path):
    from workbench.agents.exemplar import from_spec

    with Store(db_path):
        pass
    spec = AgentSpec(kind="exemplar", example_fallback="explorer")
    assert from_spec(spec, str(db_path), "").fallback == "explorer"
    assert from_spec(AgentSpec(kind="exemplar"), str(db_path), "").fallback == "stop"
    with pytest.raises(ValueError, match="unknown fallback 'guess'"):
        ExemplarAgent(Store(db_path), fallback="guess")


def test_the_explorer_takes_a_final_act_only_when_the_instruction_names_it(textworld_env):
    asked = "Take the orange bell pepper from the fridge, then eat the orange bell pepper."
    only_take = "Take the orange bell pepper from the fridge."
    plays = {
        text: actions(
            play_episode(textworld_env, ExplorerAgent.greedy(), planned(3, text), CONFIG, "b")
        )
        for text in (asked, only_take)
    }
    assert "take orange bell pepper from fridge" in plays[only_take]
    assert not any(a.startswith("eat ") for a in plays[only_take])
    assert plays[asked][-1] == "eat orange bell pepper"  # eating it ends the game
