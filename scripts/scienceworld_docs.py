"""Regenerate workbench/envs/scienceworld_docs.json from the installed simulator.

.venv/bin/python scripts/scienceworld_docs.py

For every family it loads a spread of train variations (never dev or test ones: synthesis must
not see held-out tasks) and keeps each distinct task description with the places and objects of
that variation's world: those the description names first, then the others that not every
sampled world holds (objects every sampled world holds are kept once, as ``common``). It also
keeps the simulator's action templates (its ``help``) with commands it accepted in the worlds
it loaded, as examples. The plugin reads the file without starting the simulator.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import version

from scienceworld import ScienceWorldEnv

from workbench.envs.scienceworld import DOCS_FILE, splits, task_names

LOADS = 8
"""Train variations loaded per family (spread over its train list)."""
KEPT = 4
"""Distinct task descriptions kept per family."""
EXAMPLES = 3
"""Example commands kept per action template."""
EXAMPLES_PER_TASK = 8
"""Commands kept per task description: accepted where the task starts, its objects first."""
USEFUL = ("pick up ", "open ", "go to ", "look at ", "move ", "activate ", "use ", "read ")
"""The commands kept as a task's examples (those that act on one thing; no connecting)."""
GENERIC = {
    "agent",
    "air",
    "component",
    "cup",
    "inventory",
    "light",
    "living thing",
    "object",
    "organism",
    "paint",
    "room",
    "self",
    "sittable",
    "substance",
    "table",
    "terminal",
    "universe",
}
"""Referents that name a kind, not a thing (``substance``, ``living thing``)."""
SKIPPED_TYPES = ("Terminal", "Anode", "Cathode", "Wire", "portal.", "InventoryContainer", "Agent")
DECOR_TYPES = ("misc.Picture", "document.Book", "LightBulb")
"""Things kept only where a task description names them (every world hangs many)."""


def main() -> None:
    env = ScienceWorldEnv("", envStepLimit=100)
    types = {number: name for name, number in env.get_object_types().items()}
    families, seen_commands = {}, []
    for family in task_names():
        families[family] = read_family(env, family, types, seen_commands)
        print(family, len(families[family]))
    templates = [str(a) for a in env.get_possible_actions()]
    env.close()
    common = set.intersection(*(set(v["objects"]) for f in families.values() for v in f))
    for variations in families.values():
        for variation in variations:
            variation["objects"] = [o for o in variation["objects"] if o not in common]
    data = {
        "scienceworld": version("scienceworld"),
        "common": sorted(common),
        "families": families,
        "actions": [
            {"template": t, "examples": examples(t, seen_commands)}
            for t in templates
            if t != "reset task"
        ],
    }
    DOCS_FILE.write_text(json.dumps(data, indent=0, separators=(",", ":")) + "\n")
    print(f"wrote {DOCS_FILE}")


def read_family(
    env: ScienceWorldEnv, family: str, types: dict[int, str], commands: list[str]
) -> list[dict]:
    train = splits()[family]["train"]
    spread = sorted({train[i * len(train) // LOADS] for i in range(min(LOADS, len(train)))})
    kept, descriptions = [], set()
    for variation in spread:
        env.load(family, variation, "")
        env.reset()
        description = str(env.get_task_description()).strip()
        if description in descriptions:
            continue
        descriptions.add(description)
        places, objects, decor = world_names(
            env.get_all_object_ids_types_referents_LUTJSON(), types
        )
        named = [n for n in [*places, *objects, *decor] if mentions(description, n)]
        objects += [d for d in decor if d in named]
        valid = [str(a) for a in env.get_valid_action_object_combinations()]
        commands += [c for c in valid if any(mentions(c, n) for n in named)]
        commands += [c for c in valid if c.startswith(("open door", "go to"))]
        useful = [c for c in plain_commands(valid) if c.startswith(USEFUL)]
        usable = sorted(useful, key=lambda c: (not any(mentions(c, n) for n in named), len(c), c))
        kept.append(
            {
                "variation": variation,
                "description": description,
                "places": [p for p in places if p in named] + [p for p in places if p not in named],
                "objects": [o for o in objects if o in named]
                + [o for o in objects if o not in named],
                "named": named,
                "examples": usable[:EXAMPLES_PER_TASK],
            }
        )
        if len(kept) == KEPT:
            break
    return kept


def world_names(lut: dict, types: dict[int, str]) -> tuple[list[str], list[str], list[str]]:
    """The places, object names and decor names of a loaded world (one name per object)."""
    places, objects, decor = set(), set(), set()
    for entry in lut.values():
        kind = types.get(entry["type_id"], "")
        referents = [str(r) for r in entry["referents"]]
        if any(s in kind for s in SKIPPED_TYPES):
            continue
        if ".location." in kind:
            if kind.endswith(".Universe"):
                continue
            places.add(referents[-1])
            continue
        name = object_name(referents)
        if name:
            (decor if any(d in kind for d in DECOR_TYPES) else objects).add(name)
    return sorted(places), sorted(objects), sorted(decor - objects)


def object_name(referents: list[str]) -> str:
    """The most specific plain referent (no ``containing``, no number, no kind word)."""
    plain = [
        r
        for r in referents
        if r not in GENERIC
        and " containing " not in r
        and " on " not in r
        and not re.search(r"\d", r)
        and r.isascii()
        and not r.startswith("ERROR")
    ]
    return max(plain, key=lambda r: (len(r), r), default="")


def mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE) is not None


def plain_commands(commands: list[str]) -> set[str]:
    """Commands without the agent, a container's contents or the inventory in them."""
    return {c for c in commands if not re.search(r"\bagent\b| containing | in inventory$", c)}


def examples(template: str, commands: list[str]) -> list[str]:
    """Commands the simulator accepted that fill ``template``: the shortest plain ones."""
    pattern = re.compile("^" + re.escape(template).replace("OBJ", "(.+)") + "$")
    plain = {c for c in plain_commands(commands) if pattern.match(c)}
    return sorted(plain, key=lambda c: (len(c), c))[:EXAMPLES]


if __name__ == "__main__":
    main()
