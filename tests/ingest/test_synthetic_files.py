"""The benchmarks' synthetic files: every registered format has one, and it imports whole.

``bench/import_speed.py`` measures each format's importer on a file grown from its sample;
a format added without one would go unmeasured, and a grown file its importer reads
differently from the sample (fewer steps, bad records, duplicate copies) would measure
something else.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from store import Store
from workbench.ingest import formats, import_paths

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import _synthetic  # bench/ is not a package

EPISODES = 3


@pytest.mark.parametrize("fmt", formats.names())
def test_every_format_has_a_synthetic_file_of_full_length_episodes(fmt, tmp_path):
    source = _synthetic.format_file(fmt, tmp_path, EPISODES, steps=_synthetic.LENGTH)
    with Store(":memory:") as store:
        report = import_paths(store, [source], format=fmt)
    assert report.bad == [] and all(f.status == "imported" for f in report.files)
    assert report.episodes >= EPISODES  # a session's sub-agents are episodes of their own
    steps = sum(f.steps for f in report.files) / EPISODES
    assert 0.75 * _synthetic.LENGTH <= steps <= 1.5 * _synthetic.LENGTH


def test_a_format_without_one_is_named(tmp_path):
    with pytest.raises(_synthetic.NoSyntheticFile) as caught:
        _synthetic.format_file("not-a-format", tmp_path, 1)
    assert str(caught.value) == (
        "no synthetic 'not-a-format' file (add one to bench/_synthetic.py)"
    )
