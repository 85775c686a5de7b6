"""Records survive the trip model → row → model, and model → SQLite → model."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from store import (
    Analysis,
    AnalysisRun,
    ArtifactVersion,
    Batch,
    Citation,
    Claim,
    Cluster,
    Episode,
    Gate,
    GateCheck,
    InterventionSpec,
    LedgerEntry,
    LLMCall,
    ManualRule,
    Outcome,
    ReplayCase,
    RuleEvent,
    Scope,
    Source,
    Span,
    Step,
    Store,
    Task,
    Usage,
)
from store.rows import (
    column_names,
    columns,
    from_row,
    row_values,
    rows_values,
    step_rows,
    step_values,
    to_row,
)

text = st.text(max_size=40)
ident = st.text(min_size=1, max_size=20)
int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
floats = st.floats(allow_nan=False, allow_infinity=False)
moments = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
json_values = st.recursive(
    st.none() | st.booleans() | int64 | floats | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
metadata = st.dictionaries(text, json_values, max_size=4)
splits = st.sampled_from(["train", "dev", "test", "other"])

tasks = st.builds(
    Task,
    id=ident,
    environment=ident,
    family=text,
    instruction=text,
    split=splits,
    metadata=metadata,
)
batches = st.builds(
    Batch,
    id=ident,
    name=ident,
    kind=st.sampled_from(["import", "run"]),
    params=metadata,
    created_at=moments,
)
outcomes = st.builds(
    Outcome, success=st.none() | st.booleans(), score=st.none() | floats, message=text
)
usages = st.builds(
    Usage,
    prompt_tokens=st.none() | st.integers(0, 2**62),
    completion_tokens=st.none() | st.integers(0, 2**62),
    cost=st.none() | floats,
)
sources = st.builds(Source, path=text, format=text, hash=text, record=text)
episodes = st.builds(
    Episode,
    id=ident,
    task_id=ident,
    agent=text,
    batch_id=ident,
    seed=st.none() | int64,
    outcome=outcomes,
    n_steps=st.integers(0, 10_000),
    usage=usages,
    source=sources,
    family=text,
    split=splits,
    started_at=st.none() | moments,
    ended_at=st.none() | moments,
    metadata=metadata,
)
steps = st.builds(
    Step,
    episode_id=ident,
    index=st.integers(0, 10_000),
    kind=st.sampled_from(
        [
            "system",
            "message",
            "thought",
            "action",
            "observation",
            "tool_call",
            "tool_result",
            "error",
        ]
    ),
    role=st.sampled_from(["system", "user", "assistant", "tool", "environment", "agent"]),
    content=text,
    thought=text,
    action=text,
    observation=text,
    tool_name=text,
    tool_call_id=text,
    reward=st.none() | floats,
    timestamp=st.none() | moments,
    raw=json_values,
)
spans = st.builds(
    Span,
    id=st.none() | st.integers(1, 2**31),
    episode_id=ident,
    start=st.integers(0, 50),
    end=st.integers(50, 100),
    kind=st.sampled_from(["causal", "contrast", "evidence", "note"]),
    label=text,
    note=text,
    author=st.just("human") | st.from_regex(r"analyzer:[a-z]{1,8}", fullmatch=True),
    confidence=st.none() | st.floats(0, 1),
    created_at=moments,
    updated_at=moments,
)


llm_calls = st.builds(
    LLMCall,
    id=st.none() | st.integers(1, 2**31),
    purpose=ident,
    model=text,
    prompt_hash=ident,
    request=metadata,
    response=st.none() | metadata,
    prompt_tokens=st.none() | st.integers(0, 2**31),
    completion_tokens=st.none() | st.integers(0, 2**31),
    latency_ms=st.floats(0, 1e6),
    cached=st.booleans(),
    error=text,
    turn=st.integers(0, 10),
    gave_up=text,
    episode_id=st.none() | ident,
    created_at=moments,
)
analysis_runs = st.builds(
    AnalysisRun,
    id=st.none() | st.integers(1, 2**31),
    reasoner=ident,
    scope=metadata,
    created_at=moments,
)
step_lists = st.lists(st.integers(0, 10_000), max_size=5)
analyses = st.builds(
    Analysis,
    id=st.none() | st.integers(1, 2**31),
    run_id=st.integers(1, 2**31),
    episode_id=ident,
    failure=text,
    start=st.integers(0, 50),
    end=st.integers(0, 50),
    change=text,
    trigger=text,
    correction=text,
    confidence=st.floats(0, 1),
    rationale=text,
    citations=step_lists,
    contrast_id=st.none() | ident,
    contrast_citations=step_lists,
    contrastive=st.booleans(),
    span_id=st.none() | st.integers(1, 2**31),
    status=st.sampled_from(["proposed", "accepted", "edited", "rejected"]),
    created_at=moments,
)
clusters = st.builds(
    Cluster,
    id=st.none() | st.integers(1, 2**31),
    run_id=st.integers(1, 2**31),
    family=text,
    trigger=text,
    correction=text,
    status=st.sampled_from(["supported", "deferred"]),
    reason=text,
    members=st.lists(st.integers(1, 2**31), max_size=4),
    contrasts=st.lists(ident, max_size=4),
)


citations = st.builds(
    Citation, episode_id=ident, start=st.integers(0, 500), end=st.integers(0, 500)
)
claims = st.builds(Claim, text=text, value=text, citations=st.lists(citations, max_size=3))
specs = st.builds(
    InterventionSpec,
    id=st.none() | st.integers(1, 10_000),
    run_id=st.integers(1, 10_000),
    clusters=st.lists(st.integers(1, 100), max_size=3),
    reasoner=ident,
    mechanism=text,
    families=st.lists(text, max_size=3),
    status=st.sampled_from(["supported", "deferred"]),
    reason=text,
    activation=st.none(),
    scope=st.none() | st.builds(Scope, objective=claims, decisions=st.lists(claims, max_size=3)),
    execution=st.none(),
    sources=st.lists(ident, max_size=3),
    contrasts=st.lists(ident, max_size=3),
    created_at=moments,
)
cases = st.builds(
    ReplayCase,
    episode_id=ident,
    role=st.sampled_from(["correction", "preservation"]),
    family=text,
    variation=st.integers(0, 500),
    split=splits,
    seed=st.integers(0, 2**32),
    why=text,
)
gates = st.builds(
    Gate,
    passed=st.booleans(),
    checks=st.lists(st.builds(GateCheck, name=text, passed=st.booleans(), detail=text), max_size=3),
    stats=metadata,
    decided_at=moments,
)
versions = st.builds(
    ArtifactVersion,
    id=st.none() | st.integers(1, 10_000),
    artifact=st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True),
    version=st.integers(1, 50),
    kind=st.sampled_from(["rule", "skill", "subagent"]),
    status=st.sampled_from(["staged", "active", "rejected", "superseded"]),
    contract=metadata,
    cases=st.lists(cases, max_size=3),
    contract_gate=st.none() | gates,
    replay_gate=st.none() | gates,
    created_at=moments,
)
ledger = st.builds(
    LedgerEntry,
    id=st.none() | st.integers(1, 10_000),
    version_id=st.integers(1, 10_000),
    case=ident,
    role=st.sampled_from(["correction", "preservation"]),
    baseline_success=st.none() | st.booleans(),
    candidate_success=st.none() | st.booleans(),
    fired=st.booleans(),
)
manual_rules = st.builds(
    ManualRule,
    id=st.integers(1, 10_000).map(lambda n: f"rule_{n}"),
    type=st.sampled_from(["Special Phenomenon", "Corrected Error", "Unsolved Error"]),
    content=st.text(min_size=1, max_size=40),
    example=text,
    validation_logs=st.lists(text, max_size=3),
    form=st.none() | metadata,
    deleted=st.booleans(),
    created_at=moments,
    updated_at=moments,
)
rule_events = st.builds(
    RuleEvent,
    id=st.none() | st.integers(1, 10_000),
    rule_id=ident,
    op=st.sampled_from(["write", "update", "delete"]),
    actor=ident,
    episode_id=st.none() | ident,
    before=st.none() | metadata,
    after=st.none() | metadata,
    at=moments,
)


@given(
    st.one_of(tasks, batches, episodes, steps, spans, llm_calls, analysis_runs, analyses, clusters)
    | st.one_of(specs, versions, ledger, manual_rules, rule_events)
)
def test_model_row_model_round_trip(record):
    row = to_row(record)
    assert list(row) == column_names(type(record))
    assert all(not isinstance(v, dict | list) for v in row.values())
    assert from_row(type(record), row) == record


def dumped_row(record):
    """The row as a full dump gives it: the whole record dumped in JSON mode, then flattened,
    JSON columns as compact ``json.dumps`` text."""
    data = record.model_dump(mode="json")
    row = {}
    for column, name, sub, is_json in columns(type(record)):
        value = data[name] if sub is None else data[name][sub]
        if is_json and value is not None:
            value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        row[column] = value
    return row


def same(a, b) -> bool:
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


def same_json(got, want) -> bool:
    """The same JSON column: the same text, or (a float written with another exponent form:
    ``1e16`` for ``1e+16``) compact text of the same value."""
    return got == want or json.loads(got) == json.loads(want)


odd_floats = st.floats(allow_nan=True, allow_infinity=True)
any_moments = st.datetimes(
    min_value=datetime(1971, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.none()
    | st.just(UTC)
    | st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-900, 900)),
)
odd_json = st.recursive(
    st.none() | st.booleans() | int64 | odd_floats | text | any_moments,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
odd_steps = st.builds(
    Step,
    episode_id=ident,
    index=st.integers(0, 10_000),
    kind=st.just("action"),
    content=text,
    reward=st.none() | odd_floats,
    timestamp=st.none() | any_moments,
    raw=odd_json,
)
odd_episodes = st.builds(
    Episode,
    id=ident,
    task_id=ident,
    batch_id=ident,
    outcome=st.builds(Outcome, score=st.none() | odd_floats),
    started_at=st.none() | any_moments,
    metadata=st.dictionaries(text, odd_json, max_size=3),
)


@given(
    st.one_of(tasks, batches, episodes, steps, spans, llm_calls, analysis_runs, analyses, clusters)
    | st.one_of(specs, versions, ledger, manual_rules, rule_events, odd_steps, odd_episodes)
)
@example(
    Step(
        episode_id="e",
        index=0,
        kind="action",
        reward=float("nan"),
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        raw={"x": [float("nan"), float("inf")]},
    )
)
@example(Step(episode_id="e", index=0, kind="action", raw={"at": datetime(2026, 1, 1, tzinfo=UTC)}))
@example(Step(episode_id="e", index=0, kind="action", raw=float("inf")))
def test_rows_read_from_attributes_equal_the_dumped_rows(record):
    """The stored format is what a full JSON-mode dump gives (zones, NaN, nested datetimes),
    JSON columns as compact text of the dumped value."""
    expected = dumped_row(record)
    assert list(to_row(record)) == list(expected)
    values = row_values(record)
    is_json = [is_json for *_, is_json in columns(type(record))]
    for got, want, as_json in zip(values, expected.values(), is_json, strict=True):
        assert same_json(got, want) if as_json and want is not None else same(got, want)


def test_json_columns_hold_compact_text_and_values_msgspec_refuses_go_through_pydantic():
    def raw(value):
        return to_row(Step(episode_id="e", index=0, kind="action", raw=value))["raw"]

    moment = datetime(2026, 1, 1, tzinfo=UTC)
    value = {"a": [1, 2.5, None], "at": moment, "big": 2**70, "f": 1e16, "nan": math.nan}
    big = '"big":1180591620717411303424'
    assert (
        raw(value) == f'{{"a":[1,2.5,null],"at":"2026-01-01T00:00:00Z",{big},"f":1e16,"nan":null}}'
    )
    assert raw(b"\xff") == '"/w=="'  # bytes, which JSON has not, in base64
    outcome = Outcome(success=True, score=1.0)  # a record: dumped by pydantic
    assert json.loads(raw({"o": outcome})) == {"o": outcome.model_dump(mode="json")}
    assert raw(["\ud800"]) == '["\ud800"]'  # a lone surrogate: left for the import to replace
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises((ValueError, RecursionError)):  # what pydantic says of a cycle
        raw(cycle)


def test_nested_records_flatten_with_prefixes():
    episode = Episode(id="e", task_id="t", batch_id="b", outcome=Outcome(success=False, score=-100))
    row = to_row(episode)
    assert row["outcome_success"] is False
    assert row["outcome_score"] == -100
    assert "outcome" not in row


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=tasks, batch=batches, episode=episodes, step_list=st.lists(steps, max_size=4))
def test_records_round_trip_through_sqlite(tmp_path_factory, task, batch, episode, step_list):
    with Store(tmp_path_factory.mktemp("db") / "w.db") as store:
        store.put_task(task)
        store.put_batch(batch)
        episode = episode.model_copy(update={"task_id": task.id, "batch_id": batch.id})
        owned = [
            s.model_copy(update={"episode_id": episode.id, "index": i})
            for i, s in enumerate(step_list)
        ]
        assert store.add_episode(episode, owned)
        assert store.task(task.id) == task
        assert store.batch(batch.id) == batch
        expected = episode.model_copy(
            update={"n_steps": len(owned), "family": task.family, "split": task.split}
        )
        assert store.episode(episode.id) == expected
        assert store.steps(episode.id) == owned


long_text = st.text(min_size=256, max_size=300)
"""Step text long enough for the raw record to store it as a reference (``store.raw``)."""
shared_text_steps = st.builds(
    lambda observation, before: Step(
        episode_id="e",
        index=0,
        kind="tool_result",
        observation=observation,
        raw={"output": before + observation, "n": 1},
    ),
    long_text,
    text,
)


@settings(max_examples=60)
@given(st.lists(st.one_of(steps, odd_steps, shared_text_steps), min_size=1, max_size=5))
def test_rows_made_from_step_fields_are_the_rows_of_their_records(records):
    """Rows made straight from checked fields are those of the records validated from them
    (zones, NaN, shared raw values and texts stored as references included)."""
    shared_raw = records[0].raw  # one raw value kept by two steps (encoded once)
    records = [*records, records[0].model_copy(update={"index": 1, "raw": shared_raw})]
    fields = [dict(record.__dict__) for record in records]
    table = step_values(fields)
    assert table is not None
    expected = [tuple(row) for row in rows_values(records)]
    made = step_rows(table)
    assert len(made) == len(expected)
    for got, want in zip(made, expected, strict=True):
        assert all(same(a, b) for a, b in zip(got, want, strict=True))
    assert step_rows(table) == made  # the table is not changed by making its rows


def _fields(**changed):
    return {"episode_id": "e", "index": 0, "kind": "action", **changed}


def test_step_fields_that_a_record_would_not_hold_as_they_are_are_left_to_validation():
    assert step_values([_fields(), _fields(index=1, thought="t")]) is not None
    refused = [
        {"episode_id": "e", "index": 0},  # no kind
        _fields(kind="dance"),
        _fields(role="robot"),
        _fields(kind=["action"]),  # unhashable
        _fields(notes="extra"),
        _fields(content=3),
        _fields(observation=None),
        _fields(reward=1),  # an int: validation makes it a float
        _fields(reward=True),
        _fields(timestamp="2026-01-01T00:00:00Z"),  # text: validation parses it
        _fields(index=True),
        _fields(index=-1),
        _fields(episode_id=""),
    ]
    for fields in refused:
        assert step_values([_fields(index=1), fields]) is None, fields
