"""Analysis of imported tool-calling chat logs: any step may be causal, errors read without a
world, tool calls clustered by structure, contrast from the task's reference, family inferred."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import EpisodeFilter, Store
from workbench.analyze.causes import REFERENCE_KEY, build_case, find_cause, step_signal
from workbench.analyze.families import family_of, group_templates, short_name
from workbench.analyze.signals import generic_error, refusal
from workbench.cli import main

TOOLS = [{"type": "function", "function": {"name": n}} for n in ("get_order", "refund", "pay")]


def call(call_id: str, name: str, arguments: dict) -> dict:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "function": function}],
    }


def result(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def run(task: str, reward: float, *turns: dict, tools: list | None = None) -> dict:
    messages = [{"role": "user", "content": f"Refund order {task} to the card."}, *turns]
    return {"task_id": task, "reward": reward, "tools": tools or TOOLS, "messages": messages}


def refund(order: str, amount: float, answer: str) -> list[dict]:
    return [
        call("c1", "get_order", {"order_id": order}),
        result("c1", f'{{"order_id": "{order}", "total": {amount}}}'),
        call("c2", "refund", {"order_id": order, "amount": amount}),
        result("c2", answer),
        {"role": "assistant", "content": "Done: your refund is on its way."},
    ]


RECORDS = [
    run("#W101", 1.0, *refund("#W101", 30.0, "ok")),
    run("#W202", 0.0, *refund("#W202", 99.5, "Error: payment amount does not add up")),
    run("#W303", 0.0, *refund("#W303", 12.0, "Error: payment amount does not add up")),
    run("#W404", 0.0, {"role": "assistant", "content": "I'm unable to help with refunds."}),
]


def invoke(db_path: Path, *args: str) -> str:
    done = CliRunner().invoke(main, ["--db", str(db_path), *args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


@pytest.fixture
def imported(db_path: Path, tmp_path: Path) -> Path:
    logs = tmp_path / "runs.jsonl"
    logs.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    invoke(db_path, "import", str(logs))
    return db_path


def by_task(store: Store, task: str):
    return next(e for e in store.iter_episodes(EpisodeFilter()) if e.task_id.endswith(task))


def test_generic_error_signals():
    assert generic_error("Error: payment amount does not add up") == "error"
    assert generic_error('Traceback (most recent call last):\n  File "x"') == "traceback"
    assert generic_error("ValueError: bad id") == "exception"
    assert generic_error("command exited with code 2") == "exit code"
    assert generic_error("exit code 0") is None
    assert generic_error("HTTP 404 Not Found") == "http error"
    assert generic_error('{"error": "no such user"}') == "error"
    assert generic_error('{"error": null, "ok": true}') is None
    assert generic_error("You move to the kitchen. The error of your ways is clear.") is None
    assert refusal("I'm sorry, but I cannot change the flight.") == "refusal"
    assert refusal("I can help with that.") is None


def test_a_tool_error_is_the_causal_step(imported: Path):
    with Store(imported) as store:
        failed = by_task(store, "#W202")
        found = find_cause(store, failed)
        step = store.steps(failed.id)[found.step]
    assert found.evidence == "error"
    assert step.kind == "tool_call" and step.tool_name == "refund"
    assert step_signal(found.failed_action, found.observation) == "error"


def test_a_run_with_no_tool_call_is_analysed_at_its_refusal(imported: Path):
    invoke(imported, "analyze")
    with Store(imported) as store:
        failed = by_task(store, "#W404")
        analysis = next(a for a in store.analyses(1) if a.episode_id == failed.id)
        step = store.steps(failed.id)[analysis.start]
    assert step.kind == "message" and step.role == "assistant"
    assert analysis.trigger == "reply | refusal"


def test_literal_ids_and_amounts_share_one_cluster_in_an_inferred_family(imported: Path):
    invoke(imported, "analyze")
    with Store(imported) as store:
        clusters = store.clusters(1)
        family = family_of(store, by_task(store, "#W202"))
    assert family == "~openai-chat [get_order,pay,refund]"
    refunds = [c for c in clusters if c.trigger.startswith("refund(")]
    assert len(refunds) == 1 and len(refunds[0].members) == 2
    assert refunds[0].trigger == "refund(amount, order_id=<E2>) | error"
    assert refunds[0].family == family and len(refunds[0].contrasts) == 1


def test_the_reference_is_the_contrast_without_a_success_of_the_task(imported: Path):
    expected = ['get_order({"order_id": "#W303"})', 'cancel({"order_id": "#W303"})']
    with Store(imported) as store:
        failed = by_task(store, "#W303")
        task = store.task(failed.task_id)
        referenced = task.model_copy(update={"id": "ref", "metadata": {REFERENCE_KEY: expected}})
        store.put_task(referenced)
        copy = failed.model_copy(update={"id": "copy", "task_id": "ref"})
        steps = [s.model_copy(update={"episode_id": "copy"}) for s in store.steps(failed.id)]
        store.add_episode(copy, steps)
        case = build_case(store, copy)
        found = find_cause(store, copy, benign={("refund(amount, order_id=<E2>)", "error")})
        tool = store.steps("copy")[found.step].tool_name
    assert case.contrast_reference and case.contrast_id is None and case.contrast_same_task
    assert found.evidence == "divergence" and found.reference
    assert tool == "refund" and found.change == expected[1]


def test_a_success_of_the_family_is_the_contrast_without_a_reference(imported: Path):
    with Store(imported) as store:
        case = build_case(store, by_task(store, "#W303"))
    assert case.contrast_id is not None and not case.contrast_same_task
    assert not case.contrast_reference


def test_a_tool_result_flagged_is_error_is_an_error(db_path: Path):
    with Store(db_path) as store:
        from store import Batch, Episode, Outcome, Step, Task

        store.put_batch(Batch(id="b", name="b"))
        store.put_task(Task(id="t", environment="some-bench", instruction="Look up the weather."))
        steps = [
            Step(episode_id="e", index=0, kind="message", role="user", content="Weather?"),
            Step(
                episode_id="e",
                index=1,
                kind="tool_call",
                role="assistant",
                action='weather({"city": "Oslo"})',
                tool_name="weather",
                tool_call_id="x",
            ),
            Step(
                episode_id="e",
                index=2,
                kind="tool_result",
                role="tool",
                observation="quota exhausted",
                tool_call_id="x",
                raw={"is_error": True},
            ),
        ]
        store.add_episode(
            Episode(id="e", task_id="t", batch_id="b", outcome=Outcome(success=False)), steps
        )
        found = find_cause(store, store.episode("e"))
    assert found.step == 1 and found.evidence == "error"
    assert step_signal(found.failed_action, found.observation) == "tool error"


def test_instructions_from_recurring_templates_are_families_of_their_own():
    boil = "Your task is to boil {}. For compounds without a boiling point, burning is fine."
    find = "Your task is to find a(n) {}. First, focus on the thing. Then move it to the box."
    instructions = {
        **{f"b{i}": boil.format(x) for i, x in enumerate(["water", "chocolate", "tin"])},
        **{f"f{i}": find.format(x) for i, x in enumerate(["animal", "plant", "living thing"])},
    }
    labels = group_templates(instructions)
    assert len(set(labels.values())) == 2
    assert labels["b0"] == labels["b1"] == labels["b2"] != labels["f0"] == labels["f2"]
    assert labels["b0"].startswith("boil")
    # one template for every task is the benchmark itself; stories told once never recur
    assert group_templates({f"b{i}": boil.format(i) for i in range(4)}) == {}
    stories = {
        "s1": "You are Mia and want to fly from New York to Seattle on May 20, one way.",
        "s2": "Your reservation 4WQ150 was cancelled; ask for a refund in cash, be polite.",
        "s3": "You want to upgrade every passenger to business class and pay with gift card.",
        "s4": "Book the cheapest hotel near the stadium for three nights next weekend please.",
    }
    assert group_templates(stories) == {}


def test_imported_tasks_of_two_templates_are_analysed_as_two_families(db_path: Path, tmp_path):
    def chat(task: str, instruction: str, reward: float, answer: str) -> dict:
        record = run(task, reward, *refund(task, 10.0, answer))
        record["messages"][0]["content"] = instruction
        return record

    refund_text = "Refund order {} to the card it was paid with, then confirm by email."
    cancel_text = "Cancel every open reservation of user {} and tell them the penalty fee."
    records = [
        chat(f"#R{i}", refund_text.format(f"#R{i}"), float(i % 2), "ok" if i % 2 else "Error: no")
        for i in range(4)
    ] + [
        chat(f"#C{i}", cancel_text.format(f"u{i}"), float(i % 2), "ok" if i % 2 else "Error: no")
        for i in range(4)
    ]
    logs = tmp_path / "two.jsonl"
    logs.write_text("".join(json.dumps(r) + "\n" for r in records))
    invoke(db_path, "import", str(logs))
    invoke(db_path, "analyze")
    with Store(db_path) as store:
        refunds = family_of(store, by_task(store, "#R0"))
        cancels = family_of(store, by_task(store, "#C0"))
        assert refunds != cancels and refunds.startswith("~openai-chat [get_order,pay,refund] /")
        assert family_of(store, by_task(store, "#R3")) == refunds
        assert short_name(refunds) == refunds.rsplit("/", 1)[1]
        clusters = store.clusters(1)
    assert {c.family for c in clusters} == {refunds, cancels}
    for cluster in clusters:  # each contrasts with a success of its own template
        for contrast in cluster.contrasts:
            with Store(db_path) as store:
                assert family_of(store, store.episode(contrast)) == cluster.family
