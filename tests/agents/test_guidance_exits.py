"""The subagent explores any world through its lexicon: a toy world whose rooms read like a
parser text adventure (compass exits, a closed door), read by a toy lexicon — no world's own
vocabulary in the interpreter."""

from __future__ import annotations

import re

import pytest

from workbench.agents.guidance import DelegateForm, Evidence, match
from workbench.agents.subagents import World, run_subagent, way_back
from workbench.envs.lexicon import PLAIN, Exit, Lexicon, Scene

_HEADER = re.compile(r"^-= (.+?) =-", re.MULTILINE)
_CLOSED = re.compile(r"There is a closed ([\w ]+?) leading (\w+)\.")
_OPEN = re.compile(r"There is an (?:open [\w ]+?|exit) leading (\w+)\.")
_SEE = re.compile(r"You see (.+?)\.")


class CompassLexicon(Lexicon):
    """Room texts with a ``-= Room =-`` header, exits named by compass direction."""

    def scene(self, text: str) -> Scene | None:
        header = _HEADER.search(text)
        if header is None:
            return None
        exits = [Exit(d, "closed", f"go {d}", f"open {door}") for door, d in _CLOSED.findall(text)]
        exits += [Exit(d, "open", f"go {d}") for d in _OPEN.findall(text)]
        seen = _SEE.search(text)
        visible = tuple(re.split(r", | and ", seen.group(1))) if seen else ()
        return Scene(header.group(1).lower(), tuple(exits), visible)


COMPASS = CompassLexicon()

ROOMS = {
    "kitchen": ("a table", {"east": "hall", "north": "garden"}),
    "hall": ("a coat", {"west": "kitchen", "north": "pantry"}),
    "pantry": ("a shelf", {"south": "hall"}),
    "garden": ("an apple", {"south": "kitchen"}),
}


class Manor:
    """Four rooms; a closed wooden door between the kitchen and the hall."""

    def __init__(self) -> None:
        self.room, self.door_open, self.actions = "kitchen", False, []

    def look(self) -> str:
        thing, exits = ROOMS[self.room]
        lines = [f"-= {self.room.title()} =-", f"You see {thing}."]
        for direction in exits:
            door = {self.room, exits[direction]} == {"kitchen", "hall"}
            if door and not self.door_open:
                lines.append(f"There is a closed wooden door leading {direction}.")
            else:
                lines.append(f"There is an exit leading {direction}.")
        return "\n".join(lines)

    def act(self, action: str, thought: str) -> str:
        self.actions.append(action)
        if action == "open wooden door" and self.room in ("kitchen", "hall"):
            self.door_open = True
            return "You open the wooden door."
        direction = action.removeprefix("go ")
        target = ROOMS[self.room][1].get(direction)
        if target is None or ({self.room, target} == {"kitchen", "hall"} and not self.door_open):
            return "You can't go that way."
        self.room = target
        return self.look()


FIND = DelegateForm(
    id="find",
    inputs=[{"name": "thing", "bind": "{1}"}],
    objective="find the {thing}",
    success=r"(?<![\w-])(?i:{thing})(?![\w-])",
    max_steps=20,
)


def explore(form: DelegateForm, thing: str, manor: Manor):
    """Run the subagent in the manor, read through the compass lexicon."""
    world = World(manor.act, manor.look, list, lambda: False)
    return run_subagent(form, {"thing": thing}, world, COMPASS)


def test_the_subagent_explores_compass_exits_depth_first_and_comes_back_the_way_it_went():
    manor = Manor()
    result = explore(FIND, "apple", manor)
    assert result.success, result
    assert (result.where, result.found) == ("garden", "You see an apple.")
    assert result.visited == ["kitchen", "hall", "pantry", "garden"]
    assert manor.actions == [
        "open wooden door",  # the first exit is closed: opened through the lexicon's Exit.open
        "go east",
        "go north",  # into the pantry: nothing there
        "go south",  # back the way it came (the opposite direction)
        "go west",
        "go north",  # the garden, where the apple is
    ]


def test_a_target_nowhere_ends_when_every_reachable_room_is_explored():
    manor = Manor()
    result = explore(FIND, "unicorn", manor)
    assert not result.success and result.reason == "covered every reachable place"
    assert sorted(result.visited) == ["garden", "hall", "kitchen", "pantry"]
    assert manor.room == "kitchen"  # it walked back to where it started


def test_a_place_is_reached_when_the_scene_line_names_it():
    manor = Manor()
    reach = FIND.model_copy(update={"success": r"\nhere: (?i:{thing})(?:\n|$)"})
    result = explore(reach, "Pantry", manor)
    assert result.success and manor.room == "pantry"
    assert result.found == "here: pantry"


def test_tools_are_roles_read_through_the_lexicon_and_others_are_refused():
    manor = Manor()
    walker = FIND.model_copy(update={"tools": ["move"]})
    result = explore(walker, "apple", manor)
    # the closed door is refused (recorded, never taken); the walk goes on the open way
    assert result.refused == ["open wooden door"] and "open wooden door" not in manor.actions
    assert result.success and manor.actions == ["go north"]


@pytest.mark.parametrize("strategy", ["explore-rooms", "explore-exits"])
def test_forms_stored_in_the_first_format_still_load(strategy):
    form = DelegateForm.model_validate(
        {
            "kind": "subagent",
            "id": "x",
            "when_action": "go to (.+)",
            "strategy": strategy,
            "objective": "reach the {1}",
            "success": "called the {1}",
        }
    )
    assert (form.format, form.strategy) == (2, "search-exits")
    assert [(i.name, i.bind) for i in form.inputs] == [("target", "{1}")]
    assert (form.objective, form.success) == ("reach the {target}", "called the {target}")
    assert DelegateForm(id="y").strategy == "search-exits"


def test_the_way_back_is_the_exit_named_after_the_place_left_or_the_opposite_direction():
    hall = Scene("hall", (Exit("west", go="go west"), Exit("north", go="go north")))
    kitchen = Scene("kitchen", (Exit("east", go="go east"),))
    assert way_back(Exit("east", go="go east"), kitchen, hall).go == "go west"
    rooms = Scene("kitchen", (Exit("hallway", go="go to hallway"),))
    left = Scene("hallway", (Exit("kitchen", go="go to kitchen"),))
    assert way_back(Exit("kitchen", go="go to kitchen"), left, rooms).go == "go to hallway"


def test_evidence_shows_the_scene_lines_its_world_reads():
    manor = Manor()
    evidence = Evidence("find the apple", "", look=manor.look(), lexicon=PLAIN)
    assert "exit: east" not in evidence.text()  # the plain reading knows no room format
    evidence.lexicon = COMPASS
    text = evidence.text()
    assert "\nhere: kitchen\nexit: east (closed)\nexit: north (open)\ninventory:" in text
    form = DelegateForm(id="f", when_action=r"take (.+)", unless_evidence=r"\nexit: (?i:{1}) \(")
    assert match(form, "take apple", evidence) is not None
    assert match(form, "take north", evidence) is None
