"""ReAct-style text logs (and notebooks holding them): steps, outcomes, errors, detection."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import Store
from store.db import EpisodeFilter
from tests.ingest.helpers import only_episode
from workbench.ingest import SAMPLES, IngestError, ReadContext, formats, import_paths, react_text

DATA = Path(__file__).parents[1] / "data" / "react-text"
SAMPLE = SAMPLES / "scienceworld_react.log"


@pytest.fixture
def react_dir(data_dir) -> Path:
    return data_dir / "react-text"


def by_record(store: Store) -> dict[str, object]:
    """Stored episodes keyed by where they start in their file (``line 4``)."""
    return {episode.source.record: episode for episode in store.iter_episodes()}


def import_one(store: Store, path: Path, **options):
    return import_paths(store, [path], format="react-text", **options)


# -- the formats ------------------------------------------------------------------------------


def test_scienceworld_log_episodes_tasks_and_outcomes(store, react_dir):
    report = import_one(store, react_dir / "scienceworld_run.log")
    assert report.episodes == 3 and report.files[0].format == "react-text"
    episodes = by_record(store)
    assert sorted(episodes) == ["line 4", "line 50", "line 67"]

    boil = episodes["line 4"]
    assert boil.task_id == "scienceworld:boil:3" and boil.family == "boil"
    assert (boil.agent, boil.seed) == ("react-gpt-4o-mini", 3)
    assert boil.metadata == {"marker": "Episode 1", "model": "gpt-4o-mini", "variation": "3"}
    assert (boil.outcome.success, boil.outcome.score) == (True, 100.0)
    assert boil.outcome.message == "Score: 100; SUCCESS"
    assert boil.source.format == "react-text" and boil.source.path.endswith("scienceworld_run.log")
    task = store.task("scienceworld:boil:3")
    assert task.environment == "scienceworld" and task.metadata == {"variation": "3"}
    assert task.instruction.startswith("Your task is to boil water. For compounds")
    assert task.instruction.endswith("change its state of matter.")

    wrong_focus = episodes["line 50"]
    assert (wrong_focus.outcome.success, wrong_focus.outcome.score) == (False, -100.0)
    assert wrong_focus.outcome.message == "Score: -100; FAIL"
    early_stop = episodes["line 67"]
    assert early_stop.task_id == "scienceworld:melt:1"
    assert (early_stop.outcome.success, early_stop.outcome.score) == (False, 35.0)
    assert early_stop.outcome.message == "Final score: 35; Task failed"


def test_scienceworld_log_steps(store, react_dir):
    import_one(store, react_dir / "scienceworld_run.log")
    boil = by_record(store)["line 4"]
    steps = store.steps(boil.id)
    assert boil.n_steps == len(steps) == 11
    assert [s.index for s in steps] == list(range(11))
    first = steps[0]
    assert (first.kind, first.role, first.action) == ("observation", "environment", "")
    assert first.observation.startswith("This room is called the hallway. In it, you see: \n")
    assert "\tA door to the kitchen (that is closed)\n\tA door to the workshop" in first.observation
    decision = steps[1]
    assert (decision.kind, decision.role) == ("action", "agent")
    assert (
        decision.thought
        == "Water and a stove are most likely in the kitchen, so I should go there first."
    )
    assert decision.action == "open door to kitchen"
    assert decision.observation == "The door is now open."
    assert decision.reward == 0.0
    assert decision.raw == {
        "where": "line 19",
        "text": "Thought: Water and a stove are most likely in the kitchen, so I should go there "
        "first.\nAction: open door to kitchen\nObservation: The door is now open.\nReward: 0",
    }
    no_thought = steps[3]
    assert (no_thought.thought, no_thought.action) == ("", "pick up thermometer")
    assert steps[6].action == "focus on substance in metal pot" and steps[6].reward == 8.0
    assert steps[9].thought == "I will check the temperature while the water heats."  # no ANSI
    melt = store.steps(by_record(store)["line 67"].id)
    assert (melt[-1].kind, melt[-1].action) == ("thought", "")
    assert melt[-1].thought.startswith("I am not sure how to heat the ice")


def test_alfworld_prompt_style_with_think_and_bare_bars(store, react_dir):
    report = import_one(store, react_dir / "alfworld_react.txt")
    assert report.episodes == 2
    episodes = by_record(store)
    won, lost = episodes["line 1"], episodes["line 24"]
    assert won.task_id == "alfworld:your-task-is-to-put-some-spraybottle-on-toilet"
    assert store.task(won.task_id).instruction == "Your task is to: put some spraybottle on toilet."
    assert lost.task_id == "alfworld:your-task-is-to-look-at-bowl-under-the-desklamp"  # env carries
    assert won.agent == lost.agent == "text-davinci-002"
    assert (won.outcome.success, won.outcome.score) == (True, 1.0)
    assert won.outcome.message == "Reward: 1; Done: True"
    assert won.metadata["done"] is True
    assert (lost.outcome.success, lost.outcome.message) == (
        False,
        "Episode failed (max steps reached)",
    )

    steps = store.steps(won.id)
    assert [s.kind for s in steps] == ["observation"] + ["action"] * 6
    assert steps[0].observation.startswith("You are in the middle of a room.")
    assert steps[0].observation.endswith("and a towelholder 1.")  # the task line is not observed
    think = steps[1]
    assert think.thought.startswith("To solve the task, I need to find and take a spraybottle")
    assert (think.action, think.observation) == (
        "go to cabinet 1",
        "On the cabinet 1, you see a cloth 1, a soapbar 1, and a soapbottle 1.",
    )
    assert "\nOK.\n" in think.raw["text"]  # the echo is dropped from the step, kept in raw
    assert (steps[2].thought, steps[2].action) == ("", "go to cabinet 2")
    assert steps[-1].reward == 1.0
    assert [s.observation for s in store.steps(lost.id)[-2:]] == ["Nothing happens."] * 2


def test_hotpotqa_numbered_labels(store, react_dir):
    import_one(store, react_dir / "hotpotqa_react.txt")
    episodes = by_record(store)
    right, wrong = episodes["line 1"], episodes["line 15"]
    assert right.task_id == "react-text:which-band-was-formed-first-blur-or-oasis"
    task = store.task(right.task_id)
    assert (task.environment, task.family) == ("react-text", "")
    assert task.instruction == "Which band was formed first, Blur or Oasis?"
    assert right.metadata == {"marker": "Task 1 (hotpotqa dev, idx 2841)"}
    assert (right.outcome.success, right.outcome.score) == (True, 1.0)
    assert (wrong.outcome.success, wrong.outcome.score) == (False, 0.0)
    assert wrong.outcome.message == "Reward: 0; Success: False"
    steps = store.steps(right.id)
    assert [(s.action, s.reward) for s in steps] == [
        ("Search[Blur (band)]", None),
        ("Search[Oasis (band)]", None),
        ("Finish[Blur]", 1.0),
    ]
    assert steps[1].observation == "Oasis were an English rock band formed in Manchester in 1991."
    kinds = [(s.kind, s.action) for s in store.steps(wrong.id)]
    assert kinds == [("action", "Search[Jaws (film)]"), ("thought", ""), ("action", "Finish[1947]")]


def test_notebook_outputs(store, react_dir):
    report = import_one(store, react_dir / "hotpotqa_notebook.ipynb")
    assert report.episodes == 2
    episodes = by_record(store)
    assert sorted(episodes) == ["cell 2 line 1", "cell 3 line 1"]
    danube = episodes["cell 2 line 1"]
    assert danube.id.endswith("-cell-2-line-1")
    assert store.task(danube.task_id).instruction == (
        "Which river is longer, the Danube or the Rhine?"
    )
    assert (danube.outcome.success, danube.outcome.score) == (True, 1.0)
    steps = store.steps(danube.id)
    assert [s.action for s in steps] == ["Search[Danube]", "Search[Rhine]", "Finish[Danube]"]
    assert steps[0].raw["where"] == "cell 2 line 3"
    blade = episodes["cell 3 line 1"]
    assert (blade.outcome.success, blade.outcome.message) == (False, "Score: 0")  # execute_result
    assert store.steps(blade.id)[-1].action == "Finish[Ridley Scott]"


def test_sample_log(store):
    report = import_paths(store, [SAMPLE])  # detected, not forced
    assert report.files[0].format == "react-text" and report.episodes == 4
    assert store.count_episodes(EpisodeFilter(outcome="passed")) == 2
    assert store.count_episodes(EpisodeFilter(outcome="failed")) == 2
    assert {e.task_id for e in store.iter_episodes()} == {
        "scienceworld:boil:3",
        "scienceworld:boil:12",
        "scienceworld:melt:1",
        "scienceworld:melt:6",
    }


def test_repeated_runs_of_one_instruction_share_a_task(store, tmp_path):
    run = "Question: What is the capital of Australia?\nThought: Canberra.\nAction: Finish[Canberra]\n"
    path = tmp_path / "runs.log"
    path.write_text(f"Episode 1\n{run}Reward: 1\nEpisode 2\n{run}Reward: 0\n")
    assert import_one(store, path).episodes == 2
    assert {e.task_id for e in store.iter_episodes()} == {
        "react-text:what-is-the-capital-of-australia"
    }


def test_bars_between_steps_and_before_the_score_stay_in_one_episode(store, tmp_path):
    path = tmp_path / "bars.log"
    path.write_text(
        "Task: Your task is to boil water.\n"
        "Action: go to kitchen\nObservation: You move to the kitchen.\n"
        "----------------------------------------\n"
        "Action: activate stove\nObservation: The stove is now activated.\n"
        "Current step: 2\n"
        "==========\n"
        "Score: 100\n"
    )
    assert import_one(store, path).episodes == 1
    episode = only_episode(store)
    assert (episode.outcome.success, episode.n_steps) == (True, 2)
    assert store.step(episode.id, 1).observation == "The stove is now activated.\nCurrent step: 2"


def test_reimporting_the_same_file_adds_nothing(store, react_dir):
    path = react_dir / "scienceworld_run.log"
    first = import_one(store, path)
    ids = sorted(e.id for e in store.iter_episodes())
    again = import_one(store, path)
    assert again.files[0].status == "duplicate" and again.episodes == 0
    assert sorted(e.id for e in store.iter_episodes()) == ids and first.episodes == 3


def test_a_50_mb_observation_is_stored_whole(store, tmp_path):
    big = "The room is full of boxes. " * 2_000_000  # 54 MB
    path = tmp_path / "big.log"
    path.write_text(f"Task: count boxes\nAction: look around\nObservation: {big}\nScore: 1\n")
    assert import_one(store, path).episodes == 1
    episode = only_episode(store)
    observation = store.step(episode.id, 0).observation
    assert len(observation) == len(big) and observation == big


def test_an_observation_of_many_lines_is_its_lines_and_the_raw_text_all_of_them(store, tmp_path):
    lines = [f"shelf {i}: {'a box, ' * (i % 7)}end" for i in range(2_000)]
    body = "\n".join(lines)
    text = f"Observation: first line\n{body}\n\n"
    path = tmp_path / "many.log"
    path.write_text(f"Task: count boxes\nAction: look around\n{text}Score: 1\n")
    assert import_one(store, path).episodes == 1
    [step] = store.steps(only_episode(store).id)
    assert step.observation == f"first line\n{body}"  # blank lines at its end left out
    assert step.raw["text"] == f"Action: look around\n{text}Score: 1"


BODY_LINES = st.lists(st.sampled_from(["", "  ", "a box", "shelf 3: end", "Score"]), max_size=40)
FIELDS = st.lists(
    st.tuples(st.sampled_from(["Thought", "Action", "Observation", "Obs", "Task"]), BODY_LINES),
    min_size=1,
    max_size=6,
)


def _read_steps(path: Path) -> list:
    """What reading ``path`` gives: each episode's task, outcome and steps, and errors."""
    ctx = ReadContext(path=path, content_hash="0" * 64, batch_id="b", format="react-text")
    out = []
    try:
        for item in react_text.read(ctx):
            if isinstance(item, IngestError):
                out.append(str(item))
            else:
                steps = [step.model_dump() for step in item.steps]
                out.append((item.task.model_dump(), item.episode.model_dump(), steps))
    except IngestError as error:
        out.append(str(error))
    return out


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=FIELDS, first=st.sampled_from(["", "first line", "  "]))
def test_packing_a_long_field_s_lines_reads_the_same_steps(monkeypatch, fields, first):
    """Lines of a field are packed into strings as they come (to save memory on big
    observations); with packs of 3 lines the steps read are those read without packing:
    blank lines at a field's ends, the raw text and where the observation is cut from it."""
    text = "Task: pack\n" + "".join(
        f"{label}: {first}\n" + "".join(f"{line}\n" for line in body) for label, body in fields
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        path.write_text(text + "Score: 1\n")
        monkeypatch.setattr(react_text, "_PACK", 10**9)
        unpacked = _read_steps(path)
        monkeypatch.setattr(react_text, "_PACK", 3)
        monkeypatch.setattr(react_text, "_MANY", 4)
        assert _read_steps(path) == unpacked


def test_read_streams_episodes_before_the_end_of_the_file(tmp_path):
    episode = "===== Episode =====\nTask: wait\nAction: wait1\nObservation: You wait.\n"
    path = tmp_path / "long.log"
    path.write_text(episode * 20_000)  # 1.3 MB
    ctx = ReadContext(path=path, content_hash="f" * 64, batch_id="b", format="react-text")
    first = next(iter(react_text.read(ctx)))
    assert first.steps[0].action == "wait1"
    assert ctx.bytes_read() < path.stat().st_size / 4


# -- bad input --------------------------------------------------------------------------------


def broken_notebooks(folder: Path) -> None:
    """Notebooks that cannot be read (made here: the repository's ruff lints ``.ipynb``)."""
    good = (DATA / "hotpotqa_notebook.ipynb").read_text()
    (folder / "truncated.ipynb").write_text(good[: len(good) // 2])
    (folder / "list.ipynb").write_text('[{"cell_type": "code", "outputs": []}]\n')


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("binary.log", "binary.log: line 3 byte 31: binary data (NUL byte), not a text log"),
        ("latin1.log", "latin1.log: line 4 byte 103: not UTF-8 text"),
        ("truncated.ipynb", "truncated.ipynb: line 44 column 7: invalid JSON"),
        ("list.ipynb", "list.ipynb: field 'cells': not a Jupyter notebook"),
        ("no_react.ipynb", "no_react.ipynb: no ReAct steps found"),
    ],
)
def test_unreadable_files_are_raised_and_nothing_is_stored(
    store, react_dir, tmp_path, name, message
):
    broken_notebooks(tmp_path)
    path = react_dir / name if (react_dir / name).exists() else tmp_path / name
    with pytest.raises(IngestError) as caught:
        import_paths(store, [react_dir / "hotpotqa_react.txt", path], format="react-text")
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert store.count_episodes() == 0  # the good file before it was rolled back too
    assert store.batches() == []


def test_an_episode_without_steps_is_a_record_error(store, react_dir):
    path = react_dir / "episode_without_steps.log"
    with pytest.raises(IngestError) as caught:
        import_one(store, path)
    error = caught.value
    assert (error.path, error.where, error.field) == (str(path), "line 10", "steps")
    assert store.count_episodes() == 0

    report = import_one(store, path, skip_bad=True)
    assert report.episodes == 2
    assert report.bad == [
        f"{path}: line 10: field 'steps': episode has no Thought/Action/Observation steps"
    ]
    assert {e.task_id for e in store.iter_episodes()} == {
        "scienceworld:melt:2",
        "scienceworld:melt:4",
    }


def test_skip_bad_skips_unreadable_files(store, react_dir):
    report = import_paths(
        store,
        [react_dir / "binary.log", react_dir / "hotpotqa_react.txt"],
        format="react-text",
        skip_bad=True,
    )
    assert report.episodes == 2 and [f.status for f in report.files] == ["bad", "imported"]
    assert "line 3 byte 31" in report.bad[0]


# -- detection --------------------------------------------------------------------------------


def head(path: Path) -> str:
    return formats.head_of(path)


@pytest.mark.parametrize(
    "name",
    ["scienceworld_run.log", "alfworld_react.txt", "hotpotqa_react.txt", "hotpotqa_notebook.ipynb"],
)
def test_sniff_accepts_react_logs(react_dir, name):
    path = react_dir / name
    assert react_text.sniff(path, head(path))
    assert formats.detect(path) is react_text


def test_sniff_accepts_the_sample():
    assert react_text.sniff(SAMPLE, head(SAMPLE))


CHAT = json.dumps(
    {"messages": [{"role": "user", "content": "Thought: hi\nAction: x"}, {"role": "assistant"}]}
)
WORKBENCH = json.dumps({"format": "trajectory-workbench", "version": 1, "task": {}})


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("chat.jsonl", CHAT + "\n" + CHAT + "\n"),
        ("episodes.jsonl", WORKBENCH + "\n"),
        ("chat.txt", CHAT + "\n" + CHAT + "\n"),
        ("README.md", "# Notes\n\n> a quoted line\n> another quoted line\n\nThought: only one\n"),
        ("prompts.py", 'PROMPT = """\nThought 1: I need to search.\nAction 1: Search[x]\n"""\n'),
        ("plain.log", "INFO starting\nINFO Action: done\nObservation of note\n"),
        ("notebook.ipynb", '{"cells": [{"cell_type": "markdown", "source": ["> a\\n", "> b"]}]}'),
        ("binary.log", "Thought: a\nAction: b\n\x00\x00"),
    ],
)
def test_sniff_rejects_other_formats(tmp_path, name, text):
    assert not react_text.sniff(tmp_path / name, text)


# -- ReAct's published notebooks: one episode per task, with its outcome ------------------------


def by_task(store: Store) -> dict[str, object]:
    return {episode.task_id: episode for episode in store.iter_episodes()}


def test_react_hotpotqa_notebook_gives_one_episode_per_question(store, react_dir):
    report = import_paths(store, [react_dir / "react_hotpotqa.ipynb"])
    assert report.files[0].format == "react-text" and report.episodes == 3
    runs = by_task(store)
    assert sorted(runs) == [
        "react-text:hotpotqa:3125",
        "react-text:hotpotqa:4410",
        "react-text:hotpotqa:611",
    ]
    right, wrong = runs["react-text:hotpotqa:3125"], runs["react-text:hotpotqa:611"]
    assert (right.outcome.success, right.outcome.score) == (True, 1.0)
    assert (wrong.outcome.success, wrong.outcome.score) == (False, 0.0)
    assert wrong.metadata["answer"] == "Italian" and wrong.metadata["gt_answer"] == "Danish"
    task = store.task(wrong.task_id)
    assert task.family == "hotpotqa" and task.instruction == (
        "What is the nationality of the architect of the Verrin Tower?"
    )
    steps = store.steps(right.id)
    assert [s.action for s in steps] == [
        "Search[Harbor Monthly]", "Search[Lantern Weekly]", "Finish[Harbor Monthly]",
    ]  # fmt: skip
    assert steps[2].observation == "Episode finished, reward = 1"  # not the info or the tally
    retried = runs["react-text:hotpotqa:4410"]
    assert store.task(retried.task_id).instruction.endswith("born in the same country?")
    assert store.steps(retried.id)[0].thought == "I need to search Alma Reyes."


def test_react_fever_claims_are_tasks_too(store, tmp_path):
    path = tmp_path / "fever.txt"
    path.write_text(
        "88 Claim: The Verrin Tower is in Denmark.\n"
        "Thought 1: I need to search Verrin Tower.\nAction 1: Search[Verrin Tower]\n"
        "Observation 1: The Verrin Tower stands in Aarhus, Denmark.\n\n"
        "Thought 2: It is in Denmark.\nAction 2: Finish[SUPPORTS]\n"
        "Observation 2: Episode finished, reward = 1\n\n"
        "{'steps': 2, 'answer': 'SUPPORTS', 'gt_answer': 'SUPPORTS', 'question_idx': 88, "
        "'reward': True, 'em': True} \n\n1 1 1.0 2.1\n-----------\n"
    )
    import_paths(store, [path])
    episode = only_episode(store)
    assert episode.task_id == "react-text:fever:88" and episode.outcome.success is True


def test_react_alfworld_notebook_gives_one_episode_per_game(store, react_dir):
    report = import_paths(store, [react_dir / "react_alfworld.ipynb"])
    assert report.episodes == 2
    won, lost = sorted(store.iter_episodes(), key=lambda e: int(e.source.record.split()[-1]))
    assert won.task_id.startswith("react-text:pick_and_place_simple:pick_and_place_simple-Mug")
    assert (won.outcome.success, lost.outcome.success) == (True, False)
    assert lost.outcome.message.startswith("2 r 0 rs")
    task = store.task(won.task_id)
    assert task.family == "pick_and_place_simple"
    assert task.instruction == "Your task is to: put a mug in desk."
    steps = store.steps(won.id)
    assert steps[0].kind == "observation" and steps[0].observation.startswith("You are in the")
    assert "pick_and_place pick" not in steps[0].observation
    first = steps[1]  # "Act 1: think: ..." and its "OK." fold into the next action
    assert first.thought.startswith("To solve the task") and first.action == "go to shelf 1"
    assert [s.action for s in steps[2:]] == [
        "take mug 2 from shelf 1", "go to desk 1", "put mug 2 in/on desk 1",
    ]  # fmt: skip
    assert steps[-1].observation == "You put the mug 2 in/on the desk 1."  # no tally


def test_react_webshop_notebook_gives_one_episode_per_instruction(store, react_dir):
    report = import_paths(store, [react_dir / "react_webshop.ipynb"])
    assert report.episodes == 2
    runs = by_task(store)
    bought, half = runs["react-text:webshop:0"], runs["react-text:webshop:1"]
    assert (bought.outcome.success, bought.outcome.score) == (True, 1.0)
    assert (half.outcome.success, half.outcome.score) == (False, 0.5)
    assert store.task(half.task_id).instruction == "i want a pack of 6 unscented soy candles"
    steps = store.steps(bought.id)
    assert [s.action for s in steps] == [
        "reset", "search[blue ceramic mug]", "click[B0TEST0001]", "click[Buy Now]",
    ]  # fmt: skip
    assert steps[2].thought == "B0TEST0001 is blue, ceramic and under 20 dollars."
    assert steps[-1].observation == "Your score (min 0.0, max 1.0): 1.0"


WEBSHOP_PAGES = (
    "-----------------\n0\nAction: reset\nObservation: \nWebshop \nInstruction:  \n"
    "i need a red mug, and price lower than 20.00 dollars \n[Search] \n\n"
    "Action: search[red mug]\nObservation: \n[Back to Search] \n[B0RED00001] \nRed Mug \n\n"
    "Action: click[Buy Now]\nObservation: \n\n1 0.0 0.0 0.0\n-------------\n"
    "-----------------\n1\nAction: reset\nObservation: \nWebshop \nInstruction:  \n"
    "i want a blue lamp \n[Search] \n\nAction: search[blue lamp]\nObservation: \n"
    "[Back to Search] \n\nAction: click[Buy Now]\n"
    "Observation: Your score (min 0.0, max 1.0): 1.0\n\n2 0.5 0.5 0.0\n-------------\n"
    "-----------------\n2\nAction: reset\nObservation: \nWebshop \nInstruction:  \n"
    "i want green socks \n[Search] \n\nAction: search[green socks]\nObservation: \n"
    "[Back to Search] \n"
)
"""ReAct's WebShop notebook as it prints pages: a line each, the goal under ``Instruction:``
(the sample notebook joins them with ``[SEP]``); the last run cut before it returned."""


def test_react_webshop_pages_name_their_task_and_an_unscored_run_that_ended_failed(store, tmp_path):
    path = tmp_path / "webshop.txt"
    path.write_text(WEBSHOP_PAGES)
    import_paths(store, [path])
    runs = by_task(store)
    assert sorted(runs) == ["react-text:webshop:0", "react-text:webshop:1", "react-text:webshop:2"]
    assert store.task("react-text:webshop:0").instruction == (
        "i need a red mug, and price lower than 20.00 dollars"
    )
    assert store.task("react-text:webshop:0").family == "webshop"
    unscored = runs["react-text:webshop:0"].outcome  # its running total came: it returned
    assert (unscored.success, unscored.score) == (False, 0.0)
    assert unscored.message == react_text.UNSCORED_WEBSHOP
    scored = runs["react-text:webshop:1"].outcome
    assert (scored.success, scored.score) == (True, 1.0)
    cut = runs["react-text:webshop:2"]  # the output stops mid-run: nothing says how it ended
    assert store.task(cut.task_id).instruction == "i want green socks"
    assert (cut.outcome.success, cut.outcome.score) == (None, None)
    steps = store.steps(runs["react-text:webshop:0"].id)
    assert [s.action for s in steps] == ["reset", "search[red mug]", "click[Buy Now]"]
    assert "Instruction:" in steps[0].observation  # the page is still observed whole


def test_a_webshop_run_followed_by_another_ended_though_no_total_came(store, tmp_path):
    path = tmp_path / "webshop.txt"
    path.write_text(WEBSHOP_PAGES.replace("1 0.0 0.0 0.0\n", ""))
    import_paths(store, [path])
    outcome = by_task(store)["react-text:webshop:0"].outcome
    assert (outcome.success, outcome.score) == (False, 0.0)


def test_a_task_line_the_environment_shows_after_the_first_action_is_the_task(store, tmp_path):
    path = tmp_path / "run.log"
    path.write_text(
        "Action: look\nObservation: You are in a lab.\nGoal: mix the red and blue paint\n\n"
        "Action: mix red blue\nObservation: Purple paint.\nGoal: not this one\nScore: 100\n"
    )
    import_paths(store, [path])
    episode = only_episode(store)
    task = store.task(episode.task_id)
    assert task.instruction == "mix the red and blue paint"
    assert episode.task_id == "react-text:mix-the-red-and-blue-paint"
    assert task.family == "" and episode.outcome.success is True
    assert store.steps(episode.id)[0].observation.endswith("Goal: mix the red and blue paint")


def test_a_task_line_of_its_own_wins_over_one_observed(store, tmp_path):
    path = tmp_path / "run.log"
    path.write_text(
        "Task: boil water\nAction: look\nObservation: Goal: something else\n\n"
        "Action: wait\nObservation: nothing happens\n"
    )
    import_paths(store, [path])
    assert store.task(only_episode(store).task_id).instruction == "boil water"


def test_react_notebooks_import_once(store, react_dir):
    from tests.ingest.helpers import assert_reimport_adds_nothing

    paths = [react_dir / f"react_{name}.ipynb" for name in ("hotpotqa", "alfworld", "webshop")]
    assert_reimport_adds_nothing(store, paths, "react-text", episodes=7)


# -- reading text in blocks -------------------------------------------------------------------


def _lines_one_by_one(path: Path) -> list[tuple[str, str]]:
    """The lines of a file as reading it line by line gives them (how the importer read
    text before it read blocks), ending with the error it raises, if any."""
    out = []
    with open(path, "rb") as handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            if react_text.NUL in raw:
                at = offset + raw.index(react_text.NUL)
                return [*out, (f"line {number} byte {at}", "NUL")]
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                return [*out, (f"line {number} byte {offset + error.start}", "UTF-8")]
            offset += len(raw)
            out.append((f"line {number}", react_text._clean(text)))
    return out


def _lines_in_blocks(path: Path) -> list[tuple[str, str]]:
    ctx = ReadContext(path=path, content_hash="0" * 64, batch_id="b", format="react-text")
    out = []
    try:
        for line in react_text._text_lines(ctx):
            out.append((line.where, line.text))
    except IngestError as error:
        out.append((error.where, "NUL" if "NUL" in error.message else "UTF-8"))
    return out


TRICKY = [
    b"\xef\xbb\xbfThought: a BOM first\r\nAction: crlf\r\n\r\nObservation: \x1b[31mred\x1b[0m\n",
    b"lone\rcarriage\rreturns\n\x0cform feed\x85next-line\xe2\x80\xa8separator\nno end",
    b"Thought: fine\n" * 40 + b"Action: \xff not UTF-8\n" + b"Thought: after\n",
    b"Thought: fine\n" * 40 + b"Observation: a \x00 NUL after the head\n" + b"more\n",
    b"Action: " + b"x" * 300 + b"\n" + b"\n" * 5 + "é ☃ across blocks\n".encode() * 20,
    b"",
    b"\n\n\n",
]


@pytest.mark.parametrize("data", TRICKY)
def test_text_read_in_blocks_gives_the_lines_read_one_by_one(tmp_path, monkeypatch, data):
    monkeypatch.setattr(react_text, "TEXT_CHUNK", 7)  # blocks end mid-line and mid-character
    path = tmp_path / "run.log"
    path.write_bytes(b"x" * (1 << 16) + b"\n" + data if b"\x00" in data else data)
    assert _lines_in_blocks(path) == _lines_one_by_one(path)


@pytest.mark.parametrize(
    "line",
    [
        "Thought: go",
        "Action:open door",
        "Observation:  two spaces kept",
        "Obs:\u00a0a no-break space",
        "Act:\tthink: plan",
        "Action: think[plan]",
        "Action: Think: plan",
        "Initial Observation: a room",
        "Think:",
        "Action: a: b: c",
    ],
)
def test_a_step_line_read_by_its_label_reads_as_the_step_pattern(line):
    match = react_text._STEP.match(line)
    kind, value = react_text._STEP_KINDS[match.group(1).lower()], match.group(2)
    think = react_text._THINK_ACT.match(value) if kind == "action" else None
    expected = ("think", think.group(1) or think.group(2)) if think else (kind, value)
    assert tuple(react_text._classify(line))[:2] == expected


@pytest.mark.parametrize("label", sorted(react_text._FIELD_LABELS))
@pytest.mark.parametrize("rest", [": 1", ":true", ": yes ", ": 0.5 points", ":", ": gpt-4o"])
def test_an_outcome_or_header_line_read_by_its_label_reads_as_any_other_line(label, rest):
    """Such a line goes straight to the outcome and header patterns: no heading, step or
    prompt pattern matches it, so the patterns tried first would have left it to them too."""
    line = label + rest
    assert not any(
        p.match(line) for p in (react_text._HEADING, react_text._STEP, react_text._PROMPT)
    )
    assert react_text._classify(line) == react_text._classify_field(line.strip())
