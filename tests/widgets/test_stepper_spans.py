"""TrajectoryStepper and SpanAnnotator as plain Python objects: clicks move and save."""

from __future__ import annotations

import re

import pytest

from store import Span, Store
from tests.tui.conftest import BOIL_LOSE, BOIL_WIN
from workbench.widgets import SpanAnnotator, TrajectoryStepper


@pytest.fixture
def stepper(episodes_db):
    widget = TrajectoryStepper(episodes_db, "boil-0-s1")
    yield widget
    widget.close()


@pytest.fixture
def annotator(episodes_db, stepper):
    widget = SpanAnnotator(episodes_db, stepper=stepper)
    yield widget
    widget.close()


def test_buttons_move_through_the_steps(stepper):
    assert stepper.n_steps == len(BOIL_WIN) + 1
    assert "step 0 / 7" in stepper.position.value
    stepper.buttons["next"].click()
    stepper.buttons["next"].click()
    assert stepper.index == 2
    assert "step 2 / 7" in stepper.position.value
    assert BOIL_WIN[1][1] in stepper.detail.value  # step 2 is the second action
    stepper.buttons["prev"].click()
    assert stepper.index == 1 and BOIL_WIN[0][1] in stepper.detail.value
    stepper.buttons["last"].click()
    assert stepper.index == 6 and "steam" in stepper.detail.value
    stepper.buttons["next"].click()  # clamped at the end
    assert stepper.index == 6
    stepper.buttons["first"].click()
    assert stepper.index == 0 and "kitchen" in stepper.detail.value
    stepper.slider.value = 4
    assert stepper.index == 4 and "activate stove" in stepper.detail.value


def test_keys_step_like_the_terminal_ui(stepper):
    # the message the browser sends for a mapped key press
    stepper.shortcuts._handle_custom_msg({"action": "next"}, [])
    assert stepper.index == 1
    for key, index in (("l", 2), ("ArrowRight", 3), ("h", 2), ("End", 6), ("0", 0), ("$", 6)):
        stepper.shortcuts.press(key)
        assert stepper.index == index, key
    stepper.shortcuts._handle_custom_msg({"action": "explode"}, [])  # unknown actions are ignored
    assert stepper.index == 6
    assert stepper.shortcuts.bindings["ArrowLeft"] == "prev"


def test_css_classes_of_the_contract(stepper, annotator):
    assert "wb-prev" in stepper.buttons["prev"]._dom_classes
    assert "wb-next" in stepper.buttons["next"]._dom_classes
    assert "wb-position" in stepper.position._dom_classes
    for widget, name in (
        (annotator.mark_start, "wb-mark-start"),
        (annotator.mark_end, "wb-mark-end"),
        (annotator.kind, "wb-kind"),
        (annotator.label, "wb-label"),
        (annotator.note, "wb-note"),
        (annotator.save_button, "wb-save"),
        (annotator.status, "wb-status"),
        (annotator.listing, "wb-spans"),
        (annotator.delete_button, "wb-delete"),
    ):
        assert name in widget._dom_classes


def test_setting_the_episode_reloads_and_the_picker_follows(stepper):
    stepper.go(3)
    stepper.episode_id = "boil-0-s3"
    assert stepper.index == 0 and stepper.n_steps == len(BOIL_LOSE) + 1
    assert "boil-0-s3" in stepper.header.value and "failed" in stepper.header.value
    assert stepper.picker.value == "boil-0-s3"
    stepper.picker.value = "thermo-0-s1"
    assert stepper.episode_id == "thermo-0-s1" and stepper.n_steps == 7


def test_the_picker_lists_failures_first(episodes_db):
    stepper = TrajectoryStepper(episodes_db)
    labels = [label for label, _ in stepper.picker.options]
    assert labels[0].startswith("✗") and labels[-1].startswith("✓")
    assert stepper.episode_id == stepper.picker.options[0][1]
    stepper.close()


def test_marked_span_is_saved_in_the_database(episodes_db, stepper, annotator):
    stepper.go(2)
    annotator.mark_start.click()
    stepper.buttons["next"].click()
    annotator.mark_end.click()
    annotator.kind.value = "evidence"
    annotator.label.value = " heat-it "
    annotator.note.value = "the stove"
    annotator.save_button.click()
    assert "saved span #" in annotator.status.value
    span_id = int(re.search(r"saved span #(\d+)", annotator.status.value).group(1))
    with Store(episodes_db) as fresh:
        span = fresh.span(span_id)
    assert span is not None
    assert (span.episode_id, span.start, span.end, span.kind, span.label, span.note) == (
        "boil-0-s1",
        2,
        3,
        "evidence",
        "heat-it",
        "the stove",
    )
    assert annotator.listing.options[0][1] == span_id
    assert f"#{span_id}" in stepper.covering.value  # the stepper shows the new span


def test_edit_delete_and_undo(episodes_db, stepper, annotator):
    annotator.start.value, annotator.end.value = 1, 2
    saved = annotator.save()
    assert saved is not None
    annotator.listing.value = saved.id
    assert annotator.editing == saved and annotator.save_button.description == f"update #{saved.id}"
    annotator.end.value = 4
    annotator.label.value = "longer"
    annotator.save_button.click()
    assert "updated span" in annotator.status.value
    with Store(episodes_db) as fresh:
        assert (fresh.span(saved.id).end, fresh.span(saved.id).label) == (4, "longer")
    annotator.listing.value = saved.id
    annotator.delete_button.click()
    assert f"deleted span #{saved.id}" in annotator.status.value
    with Store(episodes_db) as fresh:
        assert fresh.spans("boil-0-s1") == []
    assert annotator.listing.options == ()
    annotator.undo_button.click()
    with Store(episodes_db) as fresh:
        restored = fresh.spans("boil-0-s1")
    assert [(s.start, s.end, s.label) for s in restored] == [(1, 4, "longer")]


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [(3, 1, "before its start"), (2, 99, "outside episode"), (-1, 2, "start")],
)
def test_a_bad_range_shows_an_error_instead_of_raising(episodes_db, annotator, start, end, message):
    annotator.start.value, annotator.end.value = start, end
    annotator.save_button.click()
    assert "not saved" in annotator.status.value and message in annotator.status.value
    with Store(episodes_db) as fresh:
        assert fresh.spans("boil-0-s1") == []


def test_delete_without_a_choice_warns(annotator):
    annotator.delete_button.click()
    assert "choose a span" in annotator.status.value


def test_annotator_follows_the_steppers_episode(episodes_db, stepper, annotator):
    with Store(episodes_db) as other:  # a span written by another process (e.g. the TUI)
        other.add_span(Span(episode_id="boil-0-s3", start=1, end=1, kind="causal", label="sink"))
    stepper.episode_id = "boil-0-s3"
    assert annotator.episode_id == "boil-0-s3"
    assert [label for label, _ in annotator.listing.options] == ["#1 causal 1–1 sink"]
    stepper.go(1)
    assert "sink" in stepper.covering.value


def test_a_steps_agent_is_named_beside_its_kind_and_role():
    from store import Step
    from workbench.widgets.stepper import step_html

    shown = step_html(Step(episode_id="e", index=0, kind="message", agent="Web<Surfer>"))
    assert "<b>message</b> · agent · Web&lt;Surfer&gt;" in shown
    assert step_html(Step(episode_id="e", index=0, kind="message")) == "<b>message</b> · agent"
