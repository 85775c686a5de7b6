"""A step's raw record stores the text it shares with the step once, and reads back verbatim."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import Batch, Episode, Step, Store, Task
from store import raw as raw_texts
from store.rows import from_row, row_values, rows_values, to_row

LONG = "x" * raw_texts.SHORTEST

texts = st.text(min_size=raw_texts.SHORTEST, max_size=raw_texts.SHORTEST + 40) | st.just(LONG)
"""Step texts long enough to be shared."""
shorts = st.text(max_size=12) | st.sampled_from(["~", "~[", raw_texts.MARK + "[null, []]"])
"""Other strings, with some that look like the mark."""


def raw_values(pieces: list[str]) -> st.SearchStrategy:
    """JSON values whose strings are short ones, ``pieces`` themselves, or ``pieces`` inside
    other text."""
    inner = st.sampled_from(pieces) if pieces else st.nothing()
    wrapped = st.tuples(shorts, inner, shorts).map("".join)
    leaves = st.none() | st.booleans() | st.integers(-5, 5) | shorts | inner | wrapped
    return st.recursive(
        leaves,
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(shorts, kids, max_size=3),
        max_leaves=10,
    )


@st.composite
def shared_steps(draw: st.DrawFn) -> Step:
    fields = {f: draw(st.none() | texts | shorts) for f in raw_texts.TEXTS}
    fields = {f: v for f, v in fields.items() if v is not None}
    raw = draw(raw_values(list(fields.values())))
    return Step(episode_id="e", index=0, kind="action", raw=raw, **fields)


@settings(max_examples=200, deadline=None)
@given(step=shared_steps())
def test_rows_round_trip_the_raw_record(step):
    row = to_row(step)
    assert from_row(Step, row) == step
    [values] = rows_values([step])
    assert values == row_values(step) == list(row.values())
    assert json.loads(json.dumps(from_row(Step, row).raw)) == json.loads(json.dumps(step.raw))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(step_list=st.lists(shared_steps(), min_size=1, max_size=4))
def test_steps_read_back_from_a_file_keep_their_raw_record(tmp_path_factory, step_list):
    with Store(tmp_path_factory.mktemp("db") / "w.db") as store:
        owned = _stored(store, step_list)
        assert store.steps("ep") == owned
        assert [store.step("ep", s.index) for s in owned] == owned


def _stored(store: Store, step_list: list[Step]) -> list[Step]:
    store.put_task(Task(id="t", environment="env"))
    store.put_batch(Batch(id="b", name="b", kind="import"))
    owned = [s.model_copy(update={"episode_id": "ep", "index": i}) for i, s in enumerate(step_list)]
    assert store.add_episode(Episode(id="ep", task_id="t", agent="a", batch_id="b"), owned)
    return owned


def test_a_shared_text_is_stored_once_as_a_reference(store):
    big = "tool output line\n" * 10_000
    message = {"role": "tool", "tool_call_id": "c1", "content": big, "n": [1, {"k": big}]}
    step = Step(episode_id="ep", index=0, kind="tool_result", observation=big, raw=message)
    _stored(store, [step])
    [column] = store.conn.execute("SELECT raw FROM steps").fetchone()
    assert column.startswith(raw_texts.MARK) and len(column) < 200
    assert store.steps("ep")[0].raw == message


def test_text_within_a_longer_string_is_a_reference_with_what_surrounds_it(store):
    big = "Observation: " * 100
    raw = {"where": "line 2", "text": f"Action: ls\nObservation: {big}\nScore: 1"}
    _stored(store, [Step(episode_id="ep", index=0, kind="action", observation=big, raw=raw)])
    [column] = store.conn.execute("SELECT raw FROM steps").fetchone()
    assert column.startswith(raw_texts.MARK) and big not in column
    assert store.steps("ep")[0].raw == raw


def test_rows_written_before_read_as_plain_json(store):
    """A database written before references existed holds plain JSON in every raw column,
    whatever its strings look like."""
    big = "y" * 1000
    _stored(store, [Step(episode_id="ep", index=0, kind="action", observation=big)])
    old = {"content": big, "mark": "~[[], []]", "list": ["~", big]}
    store.conn.execute("UPDATE steps SET raw = ?", (json.dumps(old),))
    assert store.steps("ep")[0].raw == old
    store.conn.execute("UPDATE steps SET raw = ?", (json.dumps("~" + big),))
    assert store.steps("ep")[0].raw == "~" + big


def test_short_texts_and_unshared_raw_stay_plain_json():
    step = Step(
        episode_id="e", index=0, kind="message", content="hi", raw={"content": "hi", "x": LONG}
    )
    assert to_row(step)["raw"] == json.dumps(step.raw, separators=(",", ":"))


def test_keys_that_are_not_text_are_not_looked_into():
    """JSON writes such keys as text: a path through them would not lead back."""
    step = Step(episode_id="e", index=0, kind="action", observation=LONG, raw={1: LONG})
    assert to_row(step)["raw"] == json.dumps({"1": LONG}, separators=(",", ":"))
