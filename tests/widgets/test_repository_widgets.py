"""ClusterInspector, WitnessView, ReplayPanel and ManualView on real database files."""

from __future__ import annotations

import threading

from store import Manual, Store
from tests.llm_server import ChatServer
from tests.tui.conftest import RULE, SKILL
from workbench.progress import check_cancel
from workbench.widgets import (
    ClusterInspector,
    ManualView,
    ReplayPanel,
    TrajectoryStepper,
    WitnessView,
)


def test_cluster_open_moves_the_stepper(analysed_db):
    stepper = TrajectoryStepper(analysed_db, "boil-ok")
    inspector = ClusterInspector(analysed_db, stepper=stepper)
    with Store(analysed_db) as store:
        clusters = store.clusters(store.analysis_runs()[0].id)
    assert [v for _, v in inspector.clusters.options] == [c.id for c in clusters]
    door = next(c for c in clusters if "door" in c.correction)
    inspector.clusters.value = door.id
    assert len(inspector.members.options) == len(door.members)
    assert inspector.contrasts.options == ("boil-ok",)
    member = inspector.member
    assert member is not None and member.episode_id in inspector.detail.value
    inspector.open_button.click()
    assert (stepper.episode_id, stepper.index) == (member.episode_id, member.start)
    assert f"step {member.start} /" in stepper.position.value
    inspector.open_contrast_button.click()
    assert (stepper.episode_id, stepper.index) == ("boil-ok", 0)


def test_witness_rows_match_the_attempts(compiled_db):
    view = WitnessView(compiled_db)
    with Store(compiled_db) as store:
        spec = next(s for s in store.specs() if s.status == "supported")
        deferred = next(s for s in store.specs() if s.status == "deferred")
        attempts = store.attempts(spec.id)
    view.picker.value = spec.id
    expected = [
        (a.kind, c.obligation, "closed" if c.closed else "open", c.slot)
        for a in attempts
        for c in a.checks
    ]
    assert [(r.schema, r.obligation, r.status, r.slot) for r in view.rows] == expected
    assert "a rule keeps nothing between decisions" in view.obligations.value
    assert "activation.trigger" in view.fields.value and "door-1@1" in view.fields.value
    view.picker.value = deferred.id
    assert view.rows == [] and "deferred" in view.fields.value


def test_admitting_the_staged_rule_runs_its_contract_gate(compiled_db):
    panel = ReplayPanel(compiled_db)
    with Store(compiled_db) as store:
        rule = next(v for v in store.versions() if v.artifact == RULE)
    assert panel.versions.value == rule.id  # the first staged version is chosen
    panel.admit_button.click()
    admission = panel.wait(timeout=900)
    assert admission.status == "rejected", admission
    with Store(compiled_db) as fresh:
        stored = fresh.version(rule.id)
    assert stored.status == "rejected" and stored.contract_gate.passed is False
    assert "rejected" in panel.status.value and "contract" in panel.gates.value
    assert panel.cancel_button.disabled and not panel.admit_button.disabled


def test_the_ledger_of_an_admitted_version(compiled_db):
    panel = ReplayPanel(compiled_db)
    with Store(compiled_db) as store:
        skill = next(v for v in store.versions() if v.artifact == SKILL)
        ledger = store.ledger(skill.id)
    panel.versions.value = skill.id
    assert [e.case for e in panel.ledger] == [e.case for e in ledger]
    assert all(e.case in panel.ledger_view.value for e in ledger)
    assert "fixed" in panel.ledger_view.value


def test_compile_stages_a_version_in_the_background(analysed_db):
    panel = ReplayPanel(analysed_db)
    assert panel.versions.options == ()
    panel.compile_button.click()
    report = panel.wait(timeout=900)
    assert not isinstance(report, str), report
    with Store(analysed_db) as fresh:
        versions = fresh.versions()
        assert fresh.specs()
    assert [v for _, v in panel.versions.options] == [v.id for v in versions]
    assert "compiled" in panel.status.value
    assert panel.bar.value == panel.bar.max


def test_compile_uses_the_configured_reasoner(analysed_db, monkeypatch):
    no_spec = {
        "supported": False,
        "reason": "the members need different corrections",
        "mechanism": "mixed",
        "activation": None,
        "scope": None,
        "execution": None,
    }
    with ChatServer(responder=lambda request: no_spec) as server:
        monkeypatch.setenv("WORKBENCH_REASONER", "openai")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("WORKBENCH_MODEL", "test-model")
        panel = ReplayPanel(analysed_db)
        panel.compile_button.click()
        report = panel.wait()
        assert not isinstance(report, str), report
        assert server.request_count > 0
    with Store(analysed_db) as fresh:
        assert {s.reasoner for s in fresh.specs()} == {"openai:test-model"}


def test_a_misconfigured_reasoner_is_one_line_in_the_status(analysed_db, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    panel = ReplayPanel(analysed_db, reasoner="openai")
    panel.compile_button.click()
    message = panel.wait()
    assert message.startswith("the openai reasoner needs an endpoint: set OPENAI_BASE_URL")
    assert message in panel.status.value and "Error" not in panel.status.value
    with Store(analysed_db) as fresh:
        assert fresh.specs() == []


def test_admitting_nothing_and_cancelling(analysed_db):
    panel = ReplayPanel(analysed_db)
    assert panel.admit() is False and "choose a staged version" in panel.status.value
    started = threading.Event()

    def job(store):  # stands in for a long replay: runs until cancelled
        started.set()
        panel._cancel.wait(30)
        check_cancel(panel._cancel)

    panel._start(job, "replaying")
    assert started.wait(30) and panel.running and not panel.cancel_button.disabled
    panel.cancel_button.click()
    assert panel.wait(30) is None and not panel.running
    assert "cancelled" in panel.status.value and not panel.compile_button.disabled


def test_manual_versions_diff_and_export(compiled_db, tmp_path):
    with Store(compiled_db) as store:
        store.add_manual(Manual(version=1, markdown="# Manual\n\n- open the door\n"))
        store.add_manual(Manual(version=1, markdown="# Manual\n\n- open the door first\n"))
    view = ManualView(compiled_db, path=tmp_path / "MANUAL.md")
    assert [v for _, v in view.picker.options] == [1, 2] and view.picker.value == 2
    assert "<h1>Manual</h1>" in view.view.value and "open the door first" in view.view.value
    view.show_diff.value = True
    assert "- open the door" in view.view.value and "+- open the door first" in view.view.value
    view.picker.value = 1
    assert "no previous version" in view.view.value
    view.export_button.click()
    assert (tmp_path / "MANUAL.md").read_text() == "# Manual\n\n- open the door\n"
    assert "exported manual v1" in view.status.value
    view.path.value = str(tmp_path / "missing" / "MANUAL.md")
    assert view.export() is None and "not exported" in view.status.value


def test_empty_database_says_what_to_do(db_path):
    Store(db_path).close()
    assert "no analysis run" in ClusterInspector(db_path).summary.value
    assert "no spec yet" in WitnessView(db_path).fields.value
    assert "no manual yet" in ManualView(db_path).view.value
    assert "compile first" in ReplayPanel(db_path).gates.value
