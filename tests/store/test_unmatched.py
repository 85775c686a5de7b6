"""``Store.unmatched``: which filter values name nothing in the workspace."""

from __future__ import annotations

from store import Batch, EpisodeFilter, Store
from tests.store.test_workspaces import add_run


def test_values_that_name_nothing_come_with_the_known_ones(store: Store):
    add_run(store, "mine", [True, False])
    where = EpisodeFilter(family="biol", agent="scripted", batch="nope", task="boil:1")
    assert store.unmatched(where) == {
        "family": ["boil"],
        "batch": ["mine"],
        "task": ["scienceworld:boil:1"],
    }
    # existing values whose combination selects nothing are not unmatched
    assert store.unmatched(EpisodeFilter(family="boil", split="test", outcome="unknown")) == {}


def test_a_batch_without_episodes_exists_and_other_workspaces_do_not(store: Store, db_path):
    store.put_batch(Batch(id="b-1", name="empty", kind="run"))
    assert store.unmatched(EpisodeFilter(batch="empty")) == {}
    assert store.unmatched(EpisodeFilter(batch="b-1")) == {}
    with Store(db_path, workspace="evolve/x/gated") as other:
        add_run(other, "theirs", [False])
    assert store.unmatched(EpisodeFilter(family="boil", batch="theirs")) == {
        "family": [],
        "batch": [],
    }
