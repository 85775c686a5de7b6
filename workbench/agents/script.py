"""The script agent: plays a given list of actions, verbatim, and nothing else.

It is how recorded actions are executed again in the real simulator as ordinary episodes of a
batch (e.g. the synthesis filter's replays, :mod:`workbench.synth.replays`): the run's
:class:`~workbench.agents.base.AgentSpec` carries one action list per planned episode id
(``script``), and the agent plays the list of the episode it is given. Guidance is ignored: a
replay must take exactly the recorded actions. The episode stops early only when the world
ends it (or its step limit is reached).
"""

from __future__ import annotations

import random
from typing import Any

from workbench.agents.base import AgentSpec, Interaction
from workbench.agents.guidance import Guidance

SOURCE = "script"
"""Recorded as the source of every action the agent takes."""


class ScriptAgent:
    """Plays the action list kept for each episode id.

    Args:
        scripts: actions by planned episode id.
    """

    name = "script"

    def __init__(self, scripts: dict[str, list[str]]) -> None:
        self.scripts = scripts

    def play(
        self, interaction: Interaction, rng: random.Random, guidance: Guidance
    ) -> dict[str, Any]:
        """Take the episode's actions in order until they run out or the world ends it.

        Raises:
            KeyError: no actions are kept for this episode (recorded as the episode's error).
        """
        if interaction.episode_id not in self.scripts:
            raise KeyError(f"the script has no actions for episode {interaction.episode_id!r}")
        actions = self.scripts[interaction.episode_id]
        for action in actions:
            if interaction.done:
                break
            interaction.act(action, "", SOURCE)
        return {"script_length": len(actions), "script_played": len(interaction.taken)}


def from_spec(spec: AgentSpec, db_path: str | None, manual: str) -> ScriptAgent:
    """The script agent of a spec (registered as ``script``; it reads neither the database
    nor a manual)."""
    return ScriptAgent(spec.script)
