"""What SQLite would refuse in an episode's rows, found whichever column holds it."""

from __future__ import annotations

import pytest

from store import Batch, Episode, Step, Task
from store.staging import staged
from workbench.ingest import storable
from workbench.ingest.storable import refused

BATCH = Batch(id="b", name="b")
TASK = Task(id="t", environment="e")
EPISODE = Episode(id="ep", task_id="t", batch_id="b")


def _rows(*steps: Step) -> tuple:
    return staged(BATCH, TASK, EPISODE, list(steps), [])


def _step(index: int = 0, **fields: object) -> Step:
    return Step(episode_id="ep", index=index, kind="action", **fields)


def test_plain_rows_are_stored() -> None:
    steps = [_step(k, observation="é ok", reward=1.0, raw={"a": [1, None]}) for k in range(3)]
    assert refused(_rows(*steps)) is None
    assert refused(_rows()) is None


@pytest.mark.parametrize(
    "fields",
    [
        {"observation": "x\ud800y"},
        {"tool_name": "\udfff"},
        {"raw": {"text": "a\ud83d"}},
        {"raw": {"\ud800": 1}},
    ],
)
def test_a_lone_surrogate_in_any_text_column_is_found(fields: dict) -> None:
    assert refused(_rows(_step(0), _step(1, **fields))) == "surrogate"


@pytest.mark.parametrize("joined", [0, 10, 1 << 22])
def test_texts_are_checked_joined_or_one_by_one_alike(monkeypatch, joined: int) -> None:
    """An episode of much text has its texts checked one by one (no copy of them all)."""
    monkeypatch.setattr(storable, "JOINED", joined)
    long = "é" + "a" * 50
    assert refused(_rows(_step(0, observation=long), _step(1, thought=long))) is None
    bad = _rows(_step(0, observation=long), _step(1, thought="ok\ud800" + long))
    assert refused(bad) == "surrogate"


def test_an_integer_past_64_bits_is_found_in_a_number_column() -> None:
    assert refused(_rows(_step(0), _step(2**63))) == "integer"
    assert refused(_rows(_step(2**63 - 1), _step(1, reward=1e300))) is None


def test_an_integer_in_a_json_column_is_text_and_stored() -> None:
    assert refused(_rows(_step(0, raw={"n": 2**70}))) is None


def test_a_value_built_without_validation_is_still_checked() -> None:
    built = Step.model_construct(episode_id="ep", index=0, kind="action", tool_name=2**64)
    assert refused(_rows(_step(0), built)) == "integer"
    built = Step.model_construct(episode_id="ep", index=0, kind="action", content=0)
    assert refused(_rows(built)) is None


def test_the_task_and_episode_rows_are_checked() -> None:
    assert refused(staged(BATCH, TASK, EPISODE.model_copy(update={"seed": 2**64}), [], [])) == (
        "integer"
    )
    task = TASK.model_copy(update={"instruction": "\ud800"})
    assert refused(staged(BATCH, task, EPISODE, [_step(0)], [])) == "surrogate"
