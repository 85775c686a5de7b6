"""One synthesized example as the faces show it: its span's steps read a window at a time."""

from __future__ import annotations

from store import Store
from tests.synth.examples import example_of, record_episode
from workbench.synth.catalog import SPAN_CHARS, read_example

LOG = "".join(f"{i:07d} a line of a long tool output\n" for i in range(100_000))
"""A 3,700,000-character observation."""


def test_a_span_step_of_megabytes_is_read_a_window_at_a_time(store: Store) -> None:
    steps = [("cat log.txt", LOG), ("wait", "Done.")]
    record_episode(store, "long", "Read the log.", "A terminal.", steps)
    detail = read_example(store, example_of(store, "long"))
    long, short = detail.steps
    assert long.step.action == "cat log.txt" and long.step.observation == LOG[:SPAN_CHARS]
    assert long.lengths["observation"] == len(LOG) == 3_700_000
    assert long.more("observation") == f" … {len(LOG) - SPAN_CHARS:,} more character(s)"
    assert long.more("action") == ""
    assert short.step == store.step("long", 2) and short.more("observation") == ""
