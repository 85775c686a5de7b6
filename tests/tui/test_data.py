"""The plain functions behind the screens: counts, choices, finding, positions, undo."""

from __future__ import annotations

import threading

import pytest

from store import EpisodeFilter, Span, Step, Store
from tests.tui.conftest import LONG_ID, LONG_STEPS, add_failed_run
from tui.data import (
    FIND_CHARS,
    SpanHistory,
    StorePool,
    _wrapped_ranges,
    filter_choices,
    find_step,
    neighbour,
    spans_at,
)


@pytest.fixture
def db(tui_db):
    with Store(tui_db) as store:
        yield store


def test_summary_counts_and_success_rate(db):
    everything = db.summary(EpisodeFilter())
    assert (everything.episodes, everything.failed, everything.passed, everything.unknown) == (
        8,
        5,
        2,
        1,
    )
    assert everything.success_rate == pytest.approx(2 / 7)
    boil = db.summary(EpisodeFilter(family="boil", outcome="failed"))
    assert (boil.episodes, boil.failed, boil.success_rate) == (3, 3, 0.0)
    assert db.summary(EpisodeFilter(family="nothing")).success_rate is None


def test_filter_choices(db):
    choices = filter_choices(db)
    assert choices.family == ["boil", "use-thermometer"]
    assert choices.agent == ["llm", "scripted"]
    assert choices.batch == ["demo-train", "long-runs"]
    assert choices.split == ["train", "dev", "test", "other"]


def test_change_token_moves_when_episodes_are_added(db):
    from tests.tui.conftest import EPISODES, add_episode

    before = db.change_token()
    add_episode(db, ("new-s1", *EPISODES[0][1:]))
    after = db.change_token()
    assert after[1] == before[1] + 1 and after[0] > before[0]


@pytest.mark.parametrize(
    ("n", "after", "forward", "expected"),
    [
        (10, 3, True, [4, 5, 6, 7, 8, 9, 0, 1, 2, 3]),
        (10, 3, False, [2, 1, 0, 9, 8, 7, 6, 5, 4, 3]),
        (10, 9, True, list(range(10))),
        (10, -1, True, list(range(10))),
        (10, 0, False, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]),
        (1, 0, True, [0]),
    ],
)
def test_wrapped_ranges_visit_every_step_once_from_next_to_after(n, after, forward, expected):
    for chunk in (1, 3, 4, 100):
        visited = []
        for start, stop in _wrapped_ranges(n, after, forward, chunk):
            assert stop - start <= chunk
            indices = list(range(start, stop))
            visited += indices if forward else indices[::-1]
        assert visited == expected, chunk


def test_find_step_reads_ranges_and_ignores_case(db, monkeypatch):
    calls = []
    original = db.cut_steps

    def counting(episode_id, start=0, stop=None, chars=4000):
        calls.append((start, stop))
        assert chars == FIND_CHARS
        return original(episode_id, start, stop, chars)

    monkeypatch.setattr(db, "cut_steps", counting)
    assert find_step(db, LONG_ID, LONG_STEPS, "CELSIUS", after=0) == 2
    assert calls == [(1, 501)]  # found in the first range: nothing more read
    assert find_step(db, LONG_ID, LONG_STEPS, "the end is near", after=LONG_STEPS - 1) == 9999
    assert find_step(db, LONG_ID, LONG_STEPS, "celsius", after=2, forward=False) == 0
    assert find_step(db, LONG_ID, LONG_STEPS, "absent words", after=0) is None
    assert all(stop - start <= 500 for start, stop in calls)
    assert find_step(db, LONG_ID, LONG_STEPS, "", after=0) is None


def test_find_step_looks_in_the_first_characters_of_a_long_text(db):
    text = "quokka " + "." * FIND_CHARS + " wombat"
    add_failed_run(
        db,
        "long-text",
        [
            Step(episode_id="long-text", index=0, kind="action", action="look"),
            Step(episode_id="long-text", index=1, kind="observation", observation=text),
        ],
    )
    assert find_step(db, "long-text", 2, "QUOKKA", after=0) == 1
    assert find_step(db, "long-text", 2, "wombat", after=0) is None  # past FIND_CHARS


def test_position_and_neighbours_follow_the_failures_first_order(db):
    everything = EpisodeFilter()
    assert db.episode_position(everything, "boil-0-s3") == (0, True)
    assert db.episode_position(everything, "thermo-0-s9") == (5, True)
    assert db.episode_position(everything, "thermo-0-s1") == (7, True)
    assert neighbour(db, everything, "boil-0-s3", -1) is None
    assert neighbour(db, everything, "boil-0-s3", 1).id == "thermo-0-s5"
    assert neighbour(db, everything, "boil-1-long", 1).id == "thermo-0-s9"
    assert neighbour(db, everything, "thermo-0-s1", 1) is None
    passed = EpisodeFilter(outcome="passed")
    assert db.episode_position(passed, "thermo-0-s1") == (1, True)
    # an episode the filter does not list: its neighbours are where it would stand
    assert db.episode_position(passed, "thermo-0-s5") == (0, False)
    assert neighbour(db, passed, "thermo-0-s5", 1).id == "boil-0-s1"
    assert neighbour(db, passed, "thermo-0-s5", -1) is None


def test_spans_at_prefers_the_innermost_span():
    wide = Span(id=1, episode_id="e", start=0, end=9, kind="note")
    narrow = Span(id=2, episode_id="e", start=3, end=4, kind="causal")
    assert spans_at([wide, narrow], 3) == [narrow, wide]
    assert spans_at([wide, narrow], 7) == [wide]
    assert spans_at([wide, narrow], 10) == []


def test_span_history_undoes_add_edit_and_delete(db):
    history = SpanHistory()
    added = db.add_span(Span(episode_id="boil-0-s3", start=1, end=2, kind="causal", label="a"))
    history.record("add", None, added)
    edited = db.update_span(added.model_copy(update={"label": "b"}))
    history.record("edit", added, edited)
    deleted = db.delete_span(added.id)
    history.record("delete", deleted, None)
    assert db.spans("boil-0-s3") == []

    assert history.undo(db).kind == "delete"
    [back] = db.spans("boil-0-s3")
    assert back.label == "b"
    assert history.undo(db).kind == "edit"  # the re-added span is the one restored
    assert [s.label for s in db.spans("boil-0-s3")] == ["a"]
    assert history.undo(db).kind == "add"
    assert db.spans("boil-0-s3") == []
    assert history.undo(db) is None and len(history) == 0


def test_store_pool_lends_one_store_per_thread_and_reuses_them(tui_db):
    pool = StorePool(tui_db, keep=2)
    seen = []

    def read():
        with pool.store() as store:
            seen.append(id(store))
            assert store.count_episodes() == 8

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with pool.store() as first, pool.store() as second:
        assert first is not second
    with pool.store() as again:
        assert id(again) in {id(first), id(second)}
    pool.close()
    assert len(seen) == 4
