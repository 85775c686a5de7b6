"""The filters executed on real simulators: a replay rejects a tampered effect, duplicates by
state collapse to the shortest, a detour is voted down, an interrupted filter resumes."""

from __future__ import annotations

from store import EpisodeFilter, Store
from store.synth import SYNTH_WORKSPACE
from tests.synthesized import TW_FAMILY
from workbench.synth.backward import pending_episodes
from workbench.synth.filters import filter_examples
from workbench.synth.replays import REPLAY_MARK


def test_an_interrupted_filter_resumes_reusing_its_replays_without_duplicates(
    filtered_db, constructed_db, worlds
):
    assert filtered_db.interrupted is None, "the cancelled filter must raise, not return"
    assert filtered_db.replays_after_interrupt == 1 and filtered_db.pending_after_interrupt > 0
    report = filtered_db.report
    assert report.replays_reused == 1 and report.replays_played >= 1
    assert report.pending == 0 and report.kept > 0
    with Store(constructed_db, workspace=SYNTH_WORKSPACE) as before:
        constructed = len(before.synth_examples())
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        examples = store.synth_examples()
        assert len(examples) == constructed + 3  # the three hand-made ones, nothing twice
        assert store.synth_counts().get("pending", 0) == 0
        again = filter_examples(store, executor=worlds)
        assert (again.examined, again.replays_played, again.kept) == (0, 0, 0)


def test_a_claimed_effect_the_replay_does_not_reproduce_is_rejected(filtered_db):
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        tampered = store.synth_example(filtered_db.tampered)
        assert tampered.verdict == "rejected"
        assert tampered.reason.startswith("replay did not reproduce: effects")
        assert "took golden key" in tampered.reason
        replay = tampered.checks["replay"]
        assert replay["verdict"] == "failed" and REPLAY_MARK in replay["episode"]
        honest = [
            e
            for e in store.synth_examples(episode_id=tampered.episode_id, verdict="kept")
            if e.actions == tampered.actions
        ]
        assert honest and honest[0].checks["replay"]["verdict"] == "reproduced"
        seen = honest[0].checks["replay"]["observations"]
        assert seen["differ"] == 0 and seen["identical"] + seen["modulo_numbers_and_order"] > 0


def test_actions_that_are_not_the_episodes_are_rejected_before_any_replay(filtered_db):
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        foreign = store.synth_example(filtered_db.foreign)
        assert foreign.verdict == "rejected" and foreign.reason.startswith("provenance:")
        assert "episode" not in foreign.checks["replay"]


def test_examples_reaching_the_same_state_from_the_same_start_keep_the_shortest(filtered_db):
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        duplicate = store.synth_example(filtered_db.duplicate)
        original = store.synth_example(filtered_db.original)
        assert (duplicate.start_state, duplicate.end_state) == (
            original.start_state,
            original.end_state,
        )
        assert len(duplicate.actions) > len(original.actions)
        assert original.verdict == "kept" and original.checks["dedup"] == {"unique": False}
        assert duplicate.verdict == "rejected"
        assert duplicate.reason == f"duplicate of example {original.id}"
        assert duplicate.checks["dedup"] == {"duplicate_of": original.id}
        assert filtered_db.report.rejected["duplicate"] >= 1


def test_a_detour_is_voted_down_and_every_verdict_keeps_its_checks(filtered_db):
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        detours = [
            e
            for e in store.synth_examples(verdict="rejected")
            if e.reason.startswith("committee: heuristic voted no: detour")
        ]
        assert detours and {store.episode(e.episode_id).family for e in detours} == {TW_FAMILY}
        assert all(e.checks["committee"]["heuristic"]["vote"] == "no" for e in detours)
        for example in store.synth_examples(verdict="kept"):
            checks = example.checks
            assert checks["committee"] == {"heuristic": {"vote": "yes", "reason": ""}}
            assert checks["replay"]["verdict"] == "reproduced" and "dedup" in checks
            assert "repeats" in checks
        assert all(e.reason for e in store.synth_examples(verdict="rejected"))


def test_replays_stay_in_the_synth_workspace_and_are_never_relabelled(filtered_db):
    with Store(filtered_db.path, workspace=SYNTH_WORKSPACE) as store:
        replays = [b for b in store.batches() if b.kind == "replay"]
        assert len(replays) == 2  # one per world's run configuration
        replayed = [e for b in replays for e in store.episodes(EpisodeFilter(batch=b.id))]
        assert replayed and all(e.agent == "script" for e in replayed)
        assert pending_episodes(store) == []  # no replay is taken for a trajectory to relabel
    with Store(filtered_db.path) as own:
        assert own.count_episodes() == 0 and own.batches() == []
