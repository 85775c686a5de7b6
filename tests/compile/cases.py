"""Member cases for compilation tests: small failed runs with their contrastive successes,
shaped like the scripted agent's ScienceWorld runs (no simulator needed)."""

from __future__ import annotations

from workbench.analyze.analyst import FailureCase
from workbench.compile.proposals import MemberCase
from workbench.llm.steps import CaseStep

THERMO = (
    "Your task is to measure the temperature of {thing}, which is located around the kitchen. "
    "First, focus on the thermometer. Next, focus on the {thing}. If the {thing} temperature is "
    "above 50.0 degrees celsius, place it in the red box. If the {thing} temperature is below "
    "50.0 degrees celsius, place it in the green box. The boxes are located around the kitchen."
)
HALLWAY = (
    "This room is called the hallway. In it, you see:\n\tthe agent\n\ta picture\n"
    "You also see:\n\tA door to the kitchen (that is closed)\n\tA door to the bedroom (that is open)"
)
REGIME = "Your task is to measure the temperature of"


def steps(*rows: tuple[str, str] | tuple[str, str, float]) -> list[CaseStep]:
    """Action steps numbered from 1: ``(action, observation[, reward])``."""
    return [
        CaseStep(index=i, action=row[0], observation=row[1], reward=row[2] if len(row) > 2 else 0.0)
        for i, row in enumerate(rows, start=1)
    ]


def member(
    analysis_id: int,
    cluster_id: int,
    failed: list[CaseStep],
    start: int,
    *,
    thing: str = "unknown substance B",
    contrast: list[CaseStep] | None = None,
    contrast_step: int | None = None,
    contrast_thing: str = "orange juice",
    initial: str = HALLWAY,
    correction: str = "",
) -> MemberCase:
    """A cluster member: episode ``f{analysis_id}``, contrast ``s{analysis_id}``."""
    return MemberCase(
        analysis_id=analysis_id,
        cluster_id=cluster_id,
        case=FailureCase(
            episode_id=f"f{analysis_id}",
            family="use-thermometer",
            instruction=THERMO.format(thing=thing),
            outcome="failed",
            steps=failed,
            contrast_id=f"s{analysis_id}" if contrast else None,
            contrast_instruction=THERMO.format(thing=contrast_thing) if contrast else "",
            contrast_steps=contrast or [],
        ),
        initial_observation=initial,
        contrast_initial_observation=initial if contrast else "",
        start=start,
        correction=correction,
        contrast_step=contrast_step,
        regime=REGIME,
    )


def repeated(
    analysis_id: int, cluster_id: int, garbled: str = "look around carefully"
) -> MemberCase:
    """The run repeats an action the simulator does not understand."""
    rejection = "No known action matches that input."
    failed = steps(("open door to kitchen", "The door is now open."), *[(garbled, rejection)] * 4)
    contrast = steps(("open door to kitchen", "The door is now open."), ("look around", HALLWAY))
    return member(analysis_id, cluster_id, failed, 2, contrast=contrast, contrast_step=2)


def blocked(analysis_id: int, cluster_id: int) -> MemberCase:
    """The run walks into a room whose door is closed; the success opens it first."""
    failed = steps(("go to kitchen", "The door is not open."), ("look around", HALLWAY))
    contrast = steps(
        ("open door to kitchen", "The door is now open."),
        ("go to kitchen", "You move to the kitchen."),
    )
    return member(analysis_id, cluster_id, failed, 1, contrast=contrast, contrast_step=1)


def premature(analysis_id: int, cluster_id: int) -> MemberCase:
    """The run places the substance in a box without measuring; the success measures first."""
    failed = steps(
        ("focus on unknown substance B", "You focus on the unknown substance B."),
        (
            "move unknown substance B to red box",
            "You move the unknown substance B to the red box.",
            -100.0,
        ),
    )
    contrast = steps(
        ("focus on orange juice", "You focus on the orange juice."),
        (
            "use thermometer on orange juice",
            "the thermometer measures a temperature of 19 degrees celsius",
        ),
        ("move orange juice to green box", "You move the orange juice to the green box."),
    )
    return member(analysis_id, cluster_id, failed, 2, contrast=contrast, contrast_step=2)


def unnamed(analysis_id: int, cluster_id: int) -> MemberCase:
    """The run focuses on an object the task does not name (a critical failure)."""
    failed = steps(("focus on chair", "You focus on the chair.", -100.0))
    contrast = steps(
        ("focus on thermometer", "You focus on the thermometer."),
        ("focus on orange juice", "You focus on the orange juice."),
    )
    return member(analysis_id, cluster_id, failed, 1, contrast=contrast, contrast_step=1)


def stopped(analysis_id: int, cluster_id: int) -> MemberCase:
    """The run stops early without any error: nothing observable to trigger on."""
    failed = steps(("look around", HALLWAY))
    return member(analysis_id, cluster_id, failed, 1)
