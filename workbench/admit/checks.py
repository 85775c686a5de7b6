"""What runs inside the sandbox (:mod:`workbench.admit.sandbox`): a candidate's patterns on
recorded decision points, and a skill or subagent executed on the real environment (a
subagent in a fresh context with only its declared inputs, by its offline strategy, or by a
model when the payload names an endpoint and the form has a prompt)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from workbench.agents.base import Interaction, OutOfSteps
from workbench.agents.guidance import (
    DelegateForm,
    Evidence,
    Form,
    Guidance,
    ProcedureForm,
    RuleForm,
    bind_inputs,
    match,
    review,
    run_procedure,
)
from workbench.agents.subagents import Policy, run_subagent
from workbench.compile.contracts import Probe, TriggerCase

FORM = TypeAdapter(Form)


def evidence_of(case: TriggerCase) -> Evidence:
    """The parent-visible evidence at a recorded decision point."""
    return Evidence(
        instruction=case.instruction,
        observation=case.observation,
        look=case.look,
        history=list(case.history),
    )


def fires(form: RuleForm | ProcedureForm | DelegateForm, case: TriggerCase) -> dict[str, Any]:
    """Whether ``form`` acts at ``case``, and (a rule that replaces) with which action."""
    evidence = evidence_of(case)
    if isinstance(form, RuleForm):
        verdict = review(Guidance(forms=[form]), case.action, evidence)
        if verdict is None:
            return {"fires": False, "action": ""}
        return {"fires": True, "action": verdict.action}
    return {"fires": match(form, case.action, evidence) is not None, "action": ""}


def screen(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Evaluate a form on recorded decision points."""
    form = FORM.validate_python(payload["form"])
    return [fires(form, TriggerCase.model_validate(c)) for c in payload["cases"]]


def probe(payload: dict[str, Any]) -> dict[str, Any]:
    """Replay a recorded prefix on the real environment (the recorded run's, built by its
    plugin), then run a skill or subagent there."""
    from workbench.envs.base import EnvOptions, EnvTask
    from workbench.envs.registry import make_environment

    form = FORM.validate_python(payload["form"])
    spec = Probe.model_validate(payload["probe"])
    task = payload["task"]
    options = EnvOptions(
        step_limit=task["step_limit"],
        simplifications=task["simplifications"],
        cache_dir=task.get("cache_dir", ""),
    )
    env = make_environment(task["env"], options)
    try:
        reset = env.reset(EnvTask(task["family"], task["variation"], task["split"]), task["seed"])
        io = Interaction(env, reset, task["step_limit"])
        for action in payload["actions"]:
            io.act(action, "", "replay")
            if io.done:
                return {"error": "the recorded actions end the episode before the decision point"}
        if isinstance(form, DelegateForm):
            return _delegate(payload, form, spec, io)
        assert isinstance(form, ProcedureForm)
        groups = match(form, spec.action, io.evidence())
        if groups is None:
            return {"applicable": False}
        before = len(io.taken)

        def act(action: str, thought: str) -> str:
            return io.act(action, thought, f"probe:{form.id}").observation

        try:
            result = run_procedure(form, groups, act, lambda: io.done)
        except OutOfSteps:
            return _ran(io, before, {"result": False, "error": "the episode ran out of steps"})
        return _ran(io, before, {"result": result})
    finally:
        env.close()


def _delegate(
    payload: dict[str, Any], form: DelegateForm, spec: Probe, io: Interaction
) -> dict[str, Any]:
    """Invoke a subagent from the replayed decision point: a fresh context holding only the
    inputs the probe gives or the recorded action binds."""
    inputs = probe_inputs(form, spec, io)
    if inputs is None:
        return {"applicable": False}
    try:
        policy = model_policy(payload.get("model"), payload.get("db", ""), form)
    except ValueError as error:
        return {"error": str(error)}
    before = len(io.taken)
    result = run_subagent(form, inputs, io.world(f"probe:{form.id}"), io.lexicon, policy)
    ran = {
        "return": result.returned(),
        "inputs": inputs,
        "context": result.context,
        "policy": "model" if policy is not None else form.strategy,
    }
    return _ran(io, before, ran)


def probe_inputs(form: DelegateForm, spec: Probe, io: Interaction) -> dict[str, str] | None:
    """The inputs a probe invokes a subagent with: what the recorded action binds, then the
    probe's own values by input name (a number names the input bound to that group, as
    probes of the first format wrote it); ``None`` when neither applies."""
    groups = match(form, spec.action, io.evidence()) if spec.action else None
    if groups is None and not spec.inputs:
        return None
    inputs = bind_inputs(form, groups) if groups is not None else {}
    by_group = {i.bind.strip("{}"): i.name for i in form.inputs if i.bind}
    for key, value in spec.inputs.items():
        inputs[by_group.get(key, key) if key.isdigit() else key] = value
    return inputs


def model_policy(config: dict[str, str] | None, db: str, form: DelegateForm) -> Policy | None:
    """The model a subagent with a prompt runs on, when the payload names an endpoint (its
    key is read from the environment variable named there, never from the payload).

    Raises:
        ValueError: the variable holding the key is not set.
    """
    if not config or not form.prompt:
        return None
    import os

    from store import Store
    from workbench.agents.llm import ModelSubagent
    from workbench.llm import ChatClient

    key = os.environ.get(config["api_key_env"], "")
    if not key:
        raise ValueError(f"{config['api_key_env']} is not set: the model subagent cannot run")
    client = ChatClient(
        Store(db) if db else Store(":memory:"),
        model=config["model"],
        api_key=key,
        base_url=config["base_url"],
        backoff=0,
    )
    return ModelSubagent(client)


def _ran(io: Interaction, before: int, result: dict[str, Any]) -> dict[str, Any]:
    taken = io.taken[before:]
    return {
        "applicable": True,
        "actions": [t.action for t in taken],
        "observation": taken[-1].observation if taken else io.observation,
        **result,
    }


TASKS = {"screen": screen, "probe": probe}
"""Sandbox tasks by name."""
