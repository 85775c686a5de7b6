"""ExampleBrowser and RetrievalPlayground on a real TextWorld synthesis (proposed, explored,
constructed backward and filtered with replays in the simulator)."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest

from store import Store
from tests.synthesized import Synthesized, copy_db
from workbench.synth.retrieval import ExampleIndex
from workbench.widgets import ExampleBrowser, RetrievalPlayground, TrajectoryStepper


@pytest.fixture
def filtered(synthesized: Synthesized, tmp_path: Path) -> Path:
    return copy_db(synthesized.filtered, tmp_path)


def test_the_browser_filters_and_shows_one_example(filtered: Path):
    with Store(filtered) as store:
        examples = store.synth_examples()
    rejected = next(e for e in examples if e.verdict == "rejected")
    stepper = TrajectoryStepper(filtered, rejected.episode_id)
    browser = ExampleBrowser(filtered, stepper=stepper)
    assert browser.world.options == (("all", None), ("textworld", "textworld"))
    assert [e.id for e in browser.examples] == [e.id for e in examples]
    assert f"{len(examples)} shown" in browser.summary.value

    browser.verdict.value = "rejected"
    assert [e.id for e in browser.examples] == [e.id for e in examples if e.verdict == "rejected"]
    browser.kind.value = "whole"
    assert browser.examples == [] and "no example here yet" in browser.view.value
    browser.kind.value = None
    browser.list.value = rejected.id
    view = browser.view.value
    assert escape(rejected.instruction) in view and escape(rejected.reason) in view
    assert escape(rejected.episode_id) in view  # provenance
    assert "dedup" in view and escape(rejected.reason) in view.split("dedup", 1)[1]
    assert "reproduced" in view  # the replay's check
    assert all(escape(a) in view for a in rejected.actions)  # the span's steps

    browser.open_button.click()
    assert (stepper.episode_id, stepper.index) == (rejected.episode_id, rejected.start)
    assert "opened" in browser.status.value
    browser.close()
    stepper.close()


def test_the_playground_shows_every_retrievers_score(filtered: Path):
    query, observation = "take the yellow bell pepper", "You open the fridge"
    with Store(filtered) as store:
        index = ExampleIndex.open(store)
        expected = index.search(query, 3, observation=observation)
    browser = ExampleBrowser(filtered)
    playground = RetrievalPlayground(filtered, browser=browser)
    playground.search_button.click()
    assert playground.hits == [] and "type a query" in playground.status.value

    playground.query.value = query
    playground.observation.value = observation
    playground.k.value = 3
    playground.search_button.click()
    assert [h.example.id for h in playground.hits] == [h.example.id for h in expected]
    for hit in expected:
        assert f"{hit.scores['bm25_observation']:.2f}" in playground.results.value
        assert f"{hit.scores['bm25_instruction']:.2f}" in playground.results.value
    assert f"3 of {len(index)} kept examples" in playground.status.value
    assert escape(index.dense_note()) in playground.status.value

    playground.picked.value = expected[1].example.id
    playground.show_button.click()
    assert browser.example is not None and browser.example.id == expected[1].example.id
    playground.kind.value = "whole"  # only whole trajectories are searched
    playground.search_button.click()
    assert {h.example.kind for h in playground.hits} == {"whole"}
    playground.close()
    browser.close()
