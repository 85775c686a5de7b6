"""A JSON document parsed whole reads as the streaming readers read it, or is left to them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from store import Store
from workbench.ingest import import_paths, inspect_log
from workbench.ingest.base import json_items, json_members
from workbench.ingest.values import MAX_DEPTH

DATA = Path(__file__).parents[1] / "data"


@pytest.mark.parametrize(
    "document",
    [
        {},
        {"a": 1, "samples": [{"x": [1, 2.5, None, True]}, "s", -0.0, {}]},
        {"\\": '"[{', "samples": ['\\"]', "\\\\", "é😀\n\x01"], "z": 1e-12},
        {"n": 900_000_000_000_000_000, "f": 1.5e99, "nested": [[[{"k": []}]]]},
    ],
)
@pytest.mark.parametrize("indent", [None, 2])
def test_members_are_the_documents_members_and_its_samples_the_streamed_ones(
    document: dict, indent: int | None
) -> None:
    data = json.dumps(document, ensure_ascii=False, indent=indent).encode()
    members = json_members(data)
    assert members == list(document.items())
    streamed = list(json_items(io.BytesIO(data), "samples.item", buf_size=1 << 16))
    assert streamed == document.get("samples", [])


def test_repeated_keys_are_each_kept() -> None:
    assert json_members(b'{"a": 1, "samples": [1], "a": 2, "samples": [2]}') == [
        ("a", 1),
        ("samples", [1]),
        ("a", 2),
        ("samples", [2]),
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"[1]",
        b'{"a": 1} x',
        b'{"a": 1,}',
        b'{"a" 1}',
        b'{"a": [1}',
        b'{"a": "open}',
        b'{"a": 9223372036854775808}',
        b'{"a": -9223372036854775809}',
        b'{"a": 1e400}',
        b'{"a": NaN}',
        b'{"a": -Infinity}',
        b'{"a": "\\ud800"}',
        b'{"a": "\\ud83d\\ude00"}',
        b'{"a": "\xff"}',
        b'{"a": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}",
        b'{"a": ' + b'{"b": [' * (MAX_DEPTH // 2) + b"]}" * (MAX_DEPTH // 2) + b"}",
        b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    ],
)
def test_what_the_streaming_readers_must_read_is_left_to_them(data: bytes) -> None:
    assert json_members(data) is None


def test_an_inspect_log_parsed_whole_imports_as_streamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = DATA / "inspect" / "log.json"
    assert json_members(source.read_bytes()) is not None
    stored = []
    for name, whole in (("whole", inspect_log._whole_json), ("streamed", lambda ctx: None)):
        monkeypatch.setattr(inspect_log, "_whole_json", whole)
        with Store(tmp_path / f"{name}.db") as store:
            import_paths(store, [source])
            episodes = store.episodes()
            stored.append(
                [
                    (
                        e.model_dump(exclude={"batch_id"}),
                        [s.model_dump() for s in store.steps(e.id)],
                    )
                    for e in episodes
                ]
            )
    assert stored[0] and stored[0] == stored[1]
