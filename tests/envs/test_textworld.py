"""The TextWorld adapter on real generated games (small ones: a game takes a second or two to
generate, so the session keeps one cache folder and a handful of games)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from store import EpisodeFilter, Store
from workbench.envs import textworld as world
from workbench.envs.base import EnvOptions, EnvTask
from workbench.envs.registry import environment_plugin, make_environment
from workbench.envs.textworld import (
    LEXICON,
    SPLITS,
    GameCache,
    TextWorld,
    columns,
    families,
)
from workbench.executors import InProcess
from workbench.runner import AgentSpec, RunConfig, run_batch

COOK = EnvTask("tw-cooking-level1", 0, "train")
DOORS = EnvTask("tw-cooking-level2", 2, "train")
COIN = "tw-coin_collector-level1"
HUNT = "tw-treasure_hunter-level1"


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("textworld-games")


@pytest.fixture(scope="session")
def textworld(cache_dir: Path):
    env = make_environment("textworld", EnvOptions(step_limit=40, cache_dir=str(cache_dir)))
    yield env
    env.close()


def test_families_carry_levels_and_splits_are_disjoint_seed_ranges(textworld):
    assert {"tw-cooking-level1", "tw-treasure_hunter-level3", COIN} <= set(families())
    seeds = {s: {t.variation for t in textworld.tasks(COIN, s)} for s in ("train", "dev", "test")}
    assert not seeds["train"] & seeds["dev"] and not seeds["dev"] & seeds["test"]
    assert not seeds["train"] & seeds["test"]
    assert [len(seeds[s]) for s in SPLITS] == [len(r) for r in SPLITS.values()]
    assert columns("tw-cooking-level2", 17) == {"family": "tw-cooking", "level": "2", "seed": "17"}
    plugin = environment_plugin("textworld")
    assert plugin.task_columns("tw-cooking-level2", 17)["level"] == "2"
    assert set(plugin.demo_families) <= set(plugin.families())


def test_listing_families_imports_no_simulator():
    code = (
        "import sys\n"
        "from workbench.envs.base import EnvOptions\n"
        "from workbench.envs.registry import environment_plugin\n"
        "plugin = environment_plugin('textworld')\n"
        "plugin.make(EnvOptions()).tasks(plugin.families()[0], 'test')\n"
        "print('textworld' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("family", "split", "seed", "message"),
    [
        ("tw-baking-level1", "train", 0, r"unknown TextWorld family 'tw-baking-level1'; known: "),
        ("tw-cooking-level9", "train", 0, r"tw-cooking has no level 9; levels: 1, 2, 3"),
        (
            "tw-cooking",
            "train",
            0,
            r"tw-cooking needs a level: tw-cooking-level1, tw-cooking-level2, ",
        ),
        (COIN, "test", 5, r"seed 5 is outside the test seeds of .* \(1500-1999\)"),
        (COIN, "other", 5, r"TextWorld has no 'other' split; train 0-999, dev"),
    ],
)
def test_bad_tasks_are_one_line_errors(textworld, family, split, seed, message):
    with pytest.raises(ValueError, match=message) as caught:
        if split == "train":
            textworld.tasks(family, split)
        textworld.reset(EnvTask(family, seed, split), seed=1)
    assert "\n" not in str(caught.value)


def test_the_same_seed_gives_the_same_game_in_any_folder(tmp_path, textworld, monkeypatch):
    """Games are generated in a child process with a fixed PYTHONHASHSEED: before that, the
    cooking generator's set iteration made two processes write different story files. The
    child is kept for later games, so a game must not depend on what it generated before."""
    first = textworld.games.game(DOORS.family, DOORS.variation)
    monkeypatch.setattr(world, "_generator", None)  # a new child, which makes another game first
    other = GameCache(tmp_path).game(DOORS.family, DOORS.variation + 1)
    second = GameCache(tmp_path).game(DOORS.family, DOORS.variation)
    assert first.folder != second.folder
    assert first.manifest["game_hash"] == second.manifest["game_hash"]
    assert first.manifest["files"]["game.json"] == second.manifest["files"]["game.json"]
    walkthrough = [json.loads((g.folder / "game.json").read_text()) for g in (first, second)]
    assert walkthrough[0]["metadata"]["walkthrough"] == walkthrough[1]["metadata"]["walkthrough"]
    assert other.manifest["game_hash"] != first.manifest["game_hash"]


def test_a_damaged_cached_game_is_regenerated_never_played(tmp_path):
    games = GameCache(tmp_path)
    sound = games.game(HUNT, 3)
    z8 = sound.z8.read_bytes()
    sound.z8.write_bytes(z8[: len(z8) // 2])  # truncated
    assert games.verified(sound.folder) is None
    again = games.game(HUNT, 3)
    assert again.z8.read_bytes() == z8
    (again.folder / "manifest.json").write_text("garbage")
    assert games.game(HUNT, 3).manifest["game_hash"] == sound.manifest["game_hash"]
    assert not [p for p in again.folder.parent.iterdir() if p.name.startswith(".")]


def test_workers_generating_the_same_game_at_once_share_one_sound_copy(tmp_path):
    code = (
        "import sys\n"
        "from workbench.envs.textworld import GameCache\n"
        f"print(GameCache(sys.argv[1]).game({HUNT!r}, 11).manifest['game_hash'])"
    )
    workers = [
        subprocess.Popen(
            [sys.executable, "-W", "ignore", "-c", code, str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    hashes = {worker.communicate()[0].strip() for worker in workers}
    assert len(hashes) == 1 and all(worker.returncode == 0 for worker in workers)
    games = GameCache(tmp_path)
    folder = games.folder(HUNT, 11)
    assert games.verified(folder).manifest["game_hash"] in hashes
    assert [p.name for p in folder.parent.iterdir()] == ["11"]  # no temporary folder left


def test_a_cache_folder_that_cannot_hold_games_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ValueError, match=r"cannot keep TextWorld games in .*file"):
        GameCache(blocker).game(HUNT, 1)


def test_the_gold_path_wins_and_success_is_read_from_the_game(textworld):
    reset = textworld.reset(COOK, seed=1)
    assert reset.instruction.startswith("You are hungry!")
    assert reset.observation.startswith("-= Kitchen =-") and "$$" not in reset.observation
    assert reset.info["variation"] == reset.info["seed"] == 0 and reset.info["level"] == 1
    assert reset.info["textworld_version"] == "1.7.0" and len(reset.info["game_hash"]) == 64
    assert not textworld.success()
    gold = textworld.gold_path()
    assert gold[-1] == "eat meal"
    transitions = [textworld.step(action) for action in gold]
    assert transitions[-1].done and not any(t.done for t in transitions[:-1])
    assert sum(t.reward for t in transitions) == transitions[-1].score == reset.info["max_score"]
    assert textworld.success()
    assert all("look" in t.info["admissible"] for t in transitions[:-1])


def test_gold_paths_are_kept_canonical(textworld, store):
    env = TextWorld(gold_paths=store, cache_dir=textworld.games.root)
    store.put_gold_path(COOK.task_id("textworld"), ["look", "eat meal"])
    env.reset(COOK, seed=1)
    assert env.gold_path() == ["look", "eat meal"]
    env.close()


def test_views_take_no_step(textworld):
    textworld.reset(COOK, seed=1)
    look, inventory = textworld.look(), textworld.inventory()
    assert look.startswith("-= Kitchen =-") and inventory == "You are carrying nothing."
    assert textworld.look() == look and "open fridge" in textworld.valid_actions()
    assert textworld.step("look").observation == look
    assert textworld.step("inventory").observation == inventory
    assert textworld.step("open fridge").observation.startswith("You open the fridge")


def _exits(facts, room: str) -> dict[str, str]:
    """The exits of ``room`` as the game's facts hold them: direction → door state."""
    names = [(f.name, [a.name for a in f.arguments]) for f in facts]
    doors = {(args[0], args[2]): args[1] for name, args in names if name == "link"}
    states = {args[0]: name for name, args in names if name in ("open", "closed")}
    return {
        name[: -len("_of")]: states.get(doors.get((room, args[0]), ""), "open")
        for name, args in names
        if name.endswith("_of") and args[1] == room
    }


def test_the_lexicon_reads_real_rooms_as_the_game_holds_them(textworld):
    textworld.reset(DOORS, seed=1)
    seen = 0
    for action in [None, *textworld.gold_path()]:
        if action is not None:
            textworld.step(action)
        scene = LEXICON.scene(textworld.look())
        facts = textworld._state.facts
        room = next(
            f.arguments[1].name for f in facts if f.name == "at" and f.arguments[0].name == "P"
        )
        assert scene is not None and scene.location == room.lower()
        assert {e.name: e.state for e in scene.exits} == _exits(facts, room)
        for exit in scene.exits:
            assert exit.go == f"go {exit.name}"
            if exit.state == "closed":
                assert exit.open in textworld.valid_actions() and LEXICON.is_navigation(exit.open)
                seen += 1
    assert seen, "the game's gold path passes no closed door"


def test_the_lexicon_reports_the_games_refusals(textworld):
    textworld.reset(DOORS, seed=1)
    opening, walk = textworld.gold_path()[1:3]  # this game starts behind a closed door
    assert (LEXICON.role(opening).role, LEXICON.role(walk).role) == ("open", "move")
    refusals = {
        action: textworld.step(action).observation
        for action in ("xyzzy", "take unicorn", "go nowhere", "eat shelf", "prepare meal", walk)
    }
    for action, observation in refusals.items():
        assert LEXICON.error(observation), (action, observation)
    assert LEXICON.error(textworld.step(opening).observation) is None
    assert LEXICON.error(textworld.step(opening).observation) == "already"
    assert LEXICON.error(textworld.step(walk).observation) is None
    assert LEXICON.error(textworld.step("look").observation) is None


def test_the_lexicon_gives_textworld_commands_their_roles():
    roles = {
        "go east": ("move", "east"),
        "open plain door": ("open", "plain door"),
        "unlock wooden gate with key": ("open", "wooden gate"),
        "take red onion from fridge": ("take", "red onion"),
        "examine cookbook": ("check", "cookbook"),
        "read cookbook": ("check", "cookbook"),
        "inventory": ("check", ""),
        "eat meal": ("decide", "meal"),
        "prepare meal": ("other", "meal"),
        "chop red onion with knife": ("other", "red onion"),
        "cook red onion with stove": ("other", "red onion"),
    }
    assert {a: (LEXICON.role(a).role, LEXICON.role(a).target) for a in roles} == roles
    assert LEXICON.is_navigation("open frosted-glass door") and LEXICON.is_navigation("go west")
    assert LEXICON.is_navigation("unlock hatch with key") and not LEXICON.is_navigation(
        "open fridge"
    )
    assert LEXICON.opens_way("open plain door", "go south")
    assert LEXICON.opens_way("open fridge", "take milk from fridge")
    assert not LEXICON.opens_way("open fridge", "go south")
    assert not LEXICON.opens_way("open fridge", "take knife from table")


def test_a_run_records_the_admissible_commands_of_every_step(db_path):
    config = RunConfig(
        env="textworld",
        families=[HUNT],
        episodes=2,
        step_limit=30,
        agent=AgentSpec(rates={}),
    )
    store = Store(db_path)
    env = make_environment("textworld", EnvOptions(30, "", store, str(db_path) + ".cache"))
    report = run_batch(store, config, batch="tw", executor=InProcess(env=env))
    env.close()
    assert report.finished == 2
    for episode in store.episodes(EpisodeFilter(batch="tw")):
        assert episode.outcome.success
        actions = [s for s in store.steps(episode.id) if s.kind == "action"]
        assert actions and all(isinstance(s.raw["admissible"], list) for s in actions)
        assert "look" in actions[0].raw["admissible"]
