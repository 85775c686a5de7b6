"""What runs inside the sandbox (:mod:`workbench.admit.sandbox`): a candidate's patterns on
recorded decision points, and a skill or subagent executed on the real environment."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from workbench.agents.base import Interaction, OutOfSteps
from workbench.agents.guidance import (
    Bindings,
    DelegateForm,
    Evidence,
    Form,
    Guidance,
    ProcedureForm,
    RuleForm,
    match,
    review,
    run_delegate,
    run_procedure,
)
from workbench.compare import entity_phrases
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
        if spec.inputs:
            names = sorted(spec.inputs, key=lambda k: (not k.isdigit(), k))
            groups = Bindings(tuple(spec.inputs[k] for k in names), entity_phrases(io.instruction))
        else:
            groups = match(form, spec.action, io.evidence())
        if groups is None:
            return {"applicable": False}
        before = len(io.taken)

        def act(action: str, thought: str) -> str:
            return io.act(action, thought, f"probe:{form.id}").observation

        try:
            if isinstance(form, ProcedureForm):
                result = run_procedure(form, groups, act, lambda: io.done)
                return _ran(io, before, {"result": result})
            assert isinstance(form, DelegateForm)
            returned = run_delegate(form, groups, act, env.look, lambda: io.done)
        except PermissionError as error:
            return _ran(io, before, {"violation": str(error)})
        except OutOfSteps:
            return _ran(io, before, {"result": False, "error": "the episode ran out of steps"})
        status = "success" if returned.success else "failure"
        value = {
            "status": status,
            **{k: getattr(returned, k) for k in ("steps", "visited", "reason")},
        }
        return _ran(io, before, {"return": value})
    finally:
        env.close()


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
