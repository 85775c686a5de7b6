"""A toy world for the workbench's plugin test: set a counter to a target.

The counter stands in a workshop behind a closed door. An episode succeeds when the counter,
focused on, shows the target; focusing on anything else ends it at once (score -100). Two
families: ``count-up`` (from 0 up to 2..4) and ``count-down`` (from 2..4 down to 0), each with
its own train, dev and test variations. The gold path opens the door, walks in, focuses on the
counter and steps it to the target, so the workbench's scripted agent can play it with its
seeded mistakes (walking into the closed door, focusing on the wrong thing, garbled actions,
stopping early).
"""

from __future__ import annotations

from workbench.envs.base import EnvironmentPlugin, EnvOptions, EnvTask, Reset, Transition

SPLITS = {"train": range(0, 12), "dev": range(12, 15), "test": range(15, 21)}
FAMILIES = ("count-up", "count-down")
ROOMS = ("hallway", "workshop")
SUCCESS = 100


class Counter:
    """The counter world, speaking the workbench's ``Environment`` protocol."""

    name = "counter"

    def __init__(self, options: EnvOptions) -> None:
        self.step_limit = options.step_limit
        self._gold_paths = options.gold_paths
        self._task = EnvTask("count-up", 0, "train")
        self._room, self._door, self._focus = "hallway", False, ""
        self._value = self._target = 0
        self._score = 0

    def families(self) -> list[str]:
        return list(FAMILIES)

    def tasks(self, family: str, split: str) -> list[EnvTask]:
        if family not in FAMILIES:
            raise ValueError(f"unknown counter family {family!r}; known: {', '.join(FAMILIES)}")
        return [EnvTask(family, v, split) for v in SPLITS.get(split, [])]

    def reset(self, task: EnvTask, seed: int) -> Reset:
        self._task = task
        size = _size(task)
        self._value, self._target = (0, size) if task.family == "count-up" else (size, 0)
        self._room, self._door, self._focus, self._score = "hallway", False, "", 0
        instruction = (
            f"Your task is to set the counter to {self._target}. "
            "First, focus on the counter in the workshop."
        )
        return Reset(instruction, self.look(), {"variation": task.variation})

    def step(self, action: str) -> Transition:
        before = self._score
        observation = self._act(action.strip().lower())
        if self._focus == "counter" and self._value == self._target:
            self._score = SUCCESS
        done = self._score in (SUCCESS, -100)
        return Transition(observation, float(self._score - before), done, float(self._score))

    def _act(self, action: str) -> str:
        if action == "look around":
            return self.look()
        if action == "open door to workshop" and self._room == "hallway":
            self._door = True
            return "The door is now open."
        if action.startswith("go to ") and action[6:] in ROOMS:
            return self._go(action[6:])
        if action.startswith("focus on ") and action[9:] in self._things():
            self._focus = action[9:]
            if self._focus != "counter":
                self._score = -100
            return f"You focus on the {self._focus}."
        if action in ("increment counter", "decrement counter") and self._room == "workshop":
            self._value += 1 if action.startswith("inc") else -1
            return f"The counter now shows {self._value}."
        return "No known action matches that input."

    def _go(self, room: str) -> str:
        if room == self._room:
            return f"You are already in the {room}."
        if not self._door:
            return f"The door to the {room} is not open."
        self._room = room
        return f"You move to the {room}."

    def _things(self) -> list[str]:
        return ["counter", "bench"] if self._room == "workshop" else ["door", "coat"]

    def success(self) -> bool:
        return self._score >= SUCCESS

    def valid_actions(self) -> list[str]:
        other = ROOMS[1 - ROOMS.index(self._room)]
        actions = ["look around", f"go to {other}"]
        actions += [f"focus on {thing}" for thing in self._things()]
        if self._room == "hallway":
            actions.append("open door to workshop")
        else:
            actions += ["increment counter", "decrement counter"]
        return actions

    def look(self) -> str:
        door = "open" if self._door else "closed"
        if self._room == "hallway":
            return f"This room is called the hallway. You see a coat. The door to the workshop is {door}."
        return f"This room is called the workshop. You see a counter showing {self._value} and a bench."

    def inventory(self) -> str:
        return "In your inventory, you see: nothing."

    def gold_path(self) -> list[str]:
        verb = "increment" if self._task.family == "count-up" else "decrement"
        gold = ["open door to workshop", "go to workshop", "focus on counter"]
        gold += [f"{verb} counter"] * _size(self._task)
        if self._gold_paths is None:
            return gold
        key = self._task.task_id(self.name)
        return self._gold_paths.gold_path(key) or self._gold_paths.put_gold_path(key, gold)

    def close(self) -> None:
        """Nothing to release."""


def _size(task: EnvTask) -> int:
    """How far the counter must move in ``task``: 2, 3 or 4 steps."""
    return 2 + task.variation % 3


PLUGIN = EnvironmentPlugin(
    name="counter",
    make=Counter,
    families=lambda: list(FAMILIES),
    demo_families=FAMILIES,
)
"""What ``pyproject.toml`` registers under ``workbench.environments``."""
