"""Small, realistic workbench databases for the terminal UI, and helpers to drive the app.

The main database is built once per session through the Store (two ScienceWorld-like
families, failed and successful runs, one 10,000-step episode, fixed timestamps) and copied
for each test, so tests may write to it and still run in parallel. The repository database
holds an analysed boil family; with ``compiled`` also a spec with its attempts and two
artifact versions, one admitted with its replay ledger.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest
from textual.pilot import Pilot
from textual.screen import Screen

from store import (
    Activation,
    Analysis,
    AnalysisRun,
    ArtifactVersion,
    Batch,
    Citation,
    Claim,
    Cluster,
    CompileAttempt,
    Episode,
    Execution,
    Gate,
    GateCheck,
    InterventionSpec,
    LedgerEntry,
    ObligationCheck,
    Observed,
    Outcome,
    ReplayCase,
    Scope,
    Source,
    Span,
    Step,
    Store,
    Task,
)
from tui.app import WorkbenchApp, make_app
from workbench.admit.gates import judge
from workbench.agents.guidance import ProcedureForm, RuleForm
from workbench.compile.contracts import Probe, RuleContract, SkillContract, TriggerCase

WHEN = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
SIZE = (120, 36)
"""Terminal size of every Pilot and snapshot test."""

BOIL_0 = (
    "Your task is to boil water. For compounds without a boiling point, combining heat sources "
    "is allowed. First, focus on the substance. Then, take actions that will cause it to "
    "change its state of matter."
)
BOIL_1 = BOIL_0.replace("water", "chocolate")
THERMO_0 = (
    "Your task is to measure the temperature of unknown substance B, which is located around "
    "the kitchen. First, focus on the thermometer. Next, focus on the unknown substance B. If "
    "the unknown substance B temperature is above 50.0 degrees, place it in the red box. If "
    "the unknown substance B temperature is below 50.0 degrees, place it in the green box."
)
THERMO_1 = (
    "Your task is to measure the temperature of orange juice, which is located around the "
    "bathroom. First, focus on the thermometer. Next, focus on the orange juice. If the orange "
    "juice temperature is above 23.0 degrees, place it in the blue box. If the orange juice "
    "temperature is below 23.0 degrees, place it in the orange box."
)

KITCHEN = (
    "This room is called the kitchen. In it, you see:\n"
    "\ta substance called air\n\ta chair. On the chair is: nothing.\n"
    "\ta counter. On the counter is: a bowl (containing a red apple, a banana), a drawer.\n"
    "\ta cupboard. The cupboard door is closed.\n\ta freezer. The freezer door is closed.\n"
    "\ta fridge. The fridge door is closed.\n\ta glass jar (containing a substance called "
    "sodium chloride)\n\ta lighter\n\ta oven, which is turned off. The oven door is closed.\n"
    "\ta painting\n\ta sink, which is turned off. In the sink is: nothing.\n"
    "\ta stopwatch, which is deactivated.\n\ta stove, which is turned off. On the stove is: "
    "nothing.\n\ta table. On the table is: a metal pot (containing a substance called water).\n"
    "\ta thermometer, currently reading a temperature of 10 degrees celsius\n"
    "You also see:\n\tA door to the bathroom (that is open)\n\tA door to the hallway (that is "
    "open)\n\tA door to the outside (that is open)"
)

BOIL_WIN = [
    (
        "I need water first; the kitchen has a pot of it.",
        "go to kitchen",
        "You move to the kitchen.",
    ),
    ("", "focus on substance in metal pot", "You focus on the water."),
    ("", "move metal pot to stove", "You move the metal pot to the stove."),
    ("Heat it.", "activate stove", "The stove is now activated."),
    ("Boiling takes time.", "wait", "You decide to wait for 10 iterations."),
    ("", "look at metal pot", "a metal pot (containing a substance called steam)"),
]
BOIL_LOSE = [
    ("I need water first.", "go to kitchen", "You move to the kitchen."),
    ("The sink holds water, I think.", "focus on sink", "You focus on the sink."),
]
BOIL_STUCK = [
    ("", "go to kitchen", "You move to the kitchen."),
    ("", "look at table", "a table. On the table is: a strange purple crystal."),
    ("", "pick up crystal", "You move the crystal to the inventory."),
    ("", "focus on substance in metal pot", "You focus on the chocolate."),
    ("", "wait", "You decide to wait for 10 iterations."),
]
THERMO_WIN_0 = [
    ("", "go to kitchen", "You move to the kitchen."),
    ("", "pick up thermometer", "You move the thermometer to the inventory."),
    ("", "focus on thermometer", "You focus on the thermometer."),
    ("", "focus on unknown substance B", "You focus on the unknown substance B."),
    ("", "use thermometer on unknown substance B", "the thermometer measures 68 degrees celsius"),
    ("Above 50: red box.", "move unknown substance B to red box", "You move it to the red box."),
]
THERMO_LOSE_0 = [
    ("", "go to kitchen", "You move to the kitchen."),
    ("", "pick up thermometer", "You move the thermometer to the inventory."),
    ("", "focus on thermometer", "You focus on the thermometer."),
    ("", "focus on unknown substance B", "You focus on the unknown substance B."),
    (
        "It is probably cold.",
        "move unknown substance B to green box",
        "You move it to the green box.",
    ),
]
THERMO_LOSE_1 = [
    ("", "go to bathroom", "You move to the bathroom."),
    ("", "pick up thermometer", "You move the thermometer to the inventory."),
    ("", "focus on thermometer", "You focus on the thermometer."),
    ("", "focus on orange juice", "You focus on the orange juice."),
    ("", "use thermometer on orange juice", "the thermometer measures 31 degrees celsius"),
    ("Warm juice goes left.", "move orange juice to orange box", "You move it to the orange box."),
]

LONG_ID = "boil-1-long"
LONG_STEPS = 10_000

# (episode id, task, agent, split, success, score, message, actions)
EPISODES = [
    (
        "boil-0-s3",
        "boil:0",
        "scripted",
        "train",
        False,
        -100.0,
        "Critical failure (score -100) after: focus on sink",
        BOIL_LOSE,
    ),
    (
        "thermo-0-s5",
        "use-thermometer:0",
        "scripted",
        "train",
        False,
        0.0,
        "Agent stopped before completing the task (score 0)",
        THERMO_LOSE_0,
    ),
    (
        "thermo-1-s2",
        "use-thermometer:1",
        "scripted",
        "test",
        False,
        0.0,
        "Agent stopped before completing the task (score 0)",
        THERMO_LOSE_1,
    ),
    (
        "boil-1-s4",
        "boil:1",
        "llm",
        "test",
        False,
        25.0,
        "Step limit 5 reached (score 25)",
        BOIL_STUCK,
    ),
    ("thermo-0-s9", "use-thermometer:0", "llm", "train", None, None, "", THERMO_WIN_0[:3]),
    (
        "boil-0-s1",
        "boil:0",
        "scripted",
        "train",
        True,
        100.0,
        "Task completed (score 100)",
        BOIL_WIN,
    ),
    (
        "thermo-0-s1",
        "use-thermometer:0",
        "scripted",
        "train",
        True,
        100.0,
        "Task completed (score 100)",
        THERMO_WIN_0,
    ),
]

TASKS = {
    "boil:0": ("boil", "train", BOIL_0),
    "boil:1": ("boil", "test", BOIL_1),
    "use-thermometer:0": ("use-thermometer", "train", THERMO_0),
    "use-thermometer:1": ("use-thermometer", "test", THERMO_1),
}


def steps_for(episode_id: str, actions: list[tuple[str, str, str]]) -> list[Step]:
    """An initial observation, then one action step per (thought, action, observation)."""
    steps = [
        Step(
            episode_id=episode_id,
            index=0,
            kind="observation",
            role="environment",
            observation=KITCHEN,
            timestamp=WHEN,
        )
    ]
    for i, (thought, action, observation) in enumerate(actions, start=1):
        steps.append(
            Step(
                episode_id=episode_id,
                index=i,
                kind="action",
                thought=thought,
                action=action,
                observation=observation,
                reward=0.25 if i % 3 == 0 else 0.0,
                timestamp=WHEN + timedelta(seconds=i),
                raw={"source": "scripted", "score": 25 * (i // 3)},
            )
        )
    return steps


def long_steps(episode_id: str, n: int) -> list[Step]:
    """A very long episode: an agent pacing between rooms, reading the thermometer."""
    rooms = ["kitchen", "hallway", "bathroom", "outside"]
    steps = steps_for(episode_id, [])
    for i in range(1, n):
        room = rooms[i % len(rooms)]
        steps.append(
            Step(
                episode_id=episode_id,
                index=i,
                kind="action",
                action=f"go to {room}" if i % 2 else "look at thermometer",
                observation=f"You move to the {room}."
                if i % 2
                else f"the thermometer reads {10 + i % 7} degrees celsius",
                reward=0.0,
            )
        )
    steps[-1] = steps[-1].model_copy(update={"action": "wait", "observation": "The end is near."})
    return steps


def add_episode(store: Store, spec: tuple, batch: str = "demo-train") -> None:
    """Store one episode of the ``EPISODES`` shape."""
    eid, task, agent, _split, success, score, message, actions = spec
    store.add_episode(
        Episode(
            id=eid,
            task_id=f"scienceworld:{task}",
            agent=agent,
            batch_id=batch,
            seed=int(eid.rsplit("s", 1)[-1]) if eid[-1].isdigit() else None,
            outcome=Outcome(success=success, score=score, message=message),
            source=Source(format="run", record=eid),
            started_at=WHEN,
            ended_at=WHEN + timedelta(minutes=1),
        ),
        steps_for(eid, actions),
    )


def add_failed_run(
    store: Store, episode_id: str, steps: list[Step], task: str = "scienceworld:boil:0"
) -> None:
    """Store a failed run of ``task`` in the demo-train batch: ``steps`` and nothing more (no
    score, message, agent or times)."""
    store.add_episode(
        Episode(id=episode_id, task_id=task, batch_id="demo-train", outcome=Outcome(success=False)),
        steps,
    )


def build(path: Path) -> None:
    """Write the test database at ``path``."""
    with Store(path) as store:
        store.put_batch(Batch(id="demo-train", name="demo-train", kind="run", created_at=WHEN))
        store.put_batch(Batch(id="long-runs", name="long-runs", kind="run", created_at=WHEN))
        for key, (family, split, instruction) in TASKS.items():
            store.put_task(
                Task(
                    id=f"scienceworld:{key}",
                    environment="scienceworld",
                    family=family,
                    instruction=instruction,
                    split=split,
                    metadata={"variation": int(key[-1])},
                )
            )
        for spec in EPISODES:
            add_episode(store, spec)
        store.add_episode(
            Episode(
                id=LONG_ID,
                task_id="scienceworld:boil:1",
                agent="scripted",
                batch_id="long-runs",
                outcome=Outcome(success=False, score=0.0, message="Step limit 10000 reached"),
                started_at=WHEN,
            ),
            long_steps(LONG_ID, LONG_STEPS),
        )


@pytest.fixture(scope="session")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tui-db") / "workbench.db"
    build(path)
    return path


@pytest.fixture
def tui_db(template_db: Path, tmp_path: Path) -> Path:
    """A private copy of the test database."""
    path = tmp_path / "workbench.db"
    shutil.copyfile(template_db, path)
    return path


@pytest.fixture
def app(tui_db: Path) -> WorkbenchApp:
    """The app on the test database, live polling off (tests poll explicitly)."""
    return make_app(tui_db, poll_interval=0)


async def settle(pilot: Pilot) -> None:
    """Wait until no worker is running and every message they caused is handled."""
    app = pilot.app
    for _ in range(100):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if all(worker.is_finished for worker in app.workers):
            return
    raise AssertionError("workers did not settle")


ScreenT = TypeVar("ScreenT", bound=Screen)


async def screen_for_key(pilot: Pilot, key: str, kind: type[ScreenT]) -> ScreenT:
    """Press ``key`` once everything has settled: the screen shown once everything has settled
    again, checked to be a ``kind``."""
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, kind)
    return screen


def rows(table) -> list[list[str]]:
    """A DataTable's cells as plain text, row by row."""
    return [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]


def shown(table) -> list[str]:
    """What a DataTable (or an option list) shows, line by line, as cut to its width."""
    return [table.render_line(y).text.rstrip() for y in range(table.size.height)]


# -- the repository database -------------------------------------------------------------------

HALLWAY = "This room is called the hallway."
BOIL = "Your task is to boil water. First, focus on the water."
OPEN_DOOR = [
    ("open door to kitchen", "The door is now open."),
    ("go to kitchen", "You move to the kitchen."),
    ("focus on water", "You focus on the water."),
    ("activate stove", "The stove is now activated."),
]
SHUT_DOOR = [("go to kitchen", "The door is not open."), ("go to kitchen", "The door is not open.")]

# (episode id, batch, success, turns)
REPO_EPISODES = [
    ("boil-ok", "b", True, OPEN_DOOR),
    ("door-1", "b", False, SHUT_DOOR),
    ("door-2", "b", False, [SHUT_DOOR[0], ("look around", "You see the hallway.")]),
    ("focus-sink", "b", False, [*OPEN_DOOR[:2], ("focus on sink", "CRITICAL")]),
    ("replay-v1-base:door-1", "replay-v1-base", False, SHUT_DOOR),
    ("replay-v1-cand:door-1", "replay-v1-cand", True, OPEN_DOOR),
    ("replay-v1-base:door-2", "replay-v1-base", False, SHUT_DOOR),
    ("replay-v1-cand:door-2", "replay-v1-cand", True, OPEN_DOOR),
    ("replay-v1-base:boil-ok", "replay-v1-base", True, OPEN_DOOR),
    ("replay-v1-cand:boil-ok", "replay-v1-cand", True, OPEN_DOOR),
]
SKILL = "open-door-before-go-boil"
RULE = "no-repeat-after-the-door-is-not-open"


def cite(episode_id: str, start: int, end: int | None = None) -> Citation:
    return Citation(episode_id=episode_id, start=start, end=start if end is None else end)


def turn_steps(episode_id: str, turns: list[tuple[str, str]]) -> list[Step]:
    """The hallway, then one action step per (action, observation)."""
    steps = [Step(episode_id=episode_id, index=0, kind="observation", observation=HALLWAY)]
    for i, (action, observation) in enumerate(turns, start=1):
        steps.append(
            Step(
                episode_id=episode_id,
                index=i,
                kind="action",
                action=action,
                observation=observation,
                reward=-100.0 if observation == "CRITICAL" else 0.0,
                timestamp=WHEN + timedelta(seconds=i),
            )
        )
    return steps


def analyse(store: Store) -> list[Cluster]:
    """An analysis run as the heuristic analyzer leaves it: two door failures and a critical
    focus, each with its causal span, in two supported clusters."""
    run = store.add_analysis_run(AnalysisRun(reasoner="heuristic", created_at=WHEN))
    assert run.id is not None
    found = {}
    for episode_id, start, trigger, correction, change in (
        ("door-1", 1, "go to <X> | is not open", "open door to <X>", "open door to kitchen"),
        ("door-2", 1, "go to <X> | is not open", "open door to <X>", "open door to kitchen"),
        ("focus-sink", 3, "focus on <X> | critical", "focus on <E1>", "focus on water"),
    ):
        analysis = Analysis(
            run_id=run.id,
            episode_id=episode_id,
            failure="Agent stopped (score 0)",
            start=start,
            end=start,
            change=f"instead of what it did, do {change!r}",
            trigger=trigger,
            correction=correction,
            confidence=0.7,
            rationale=f"a successful run of the same task (boil-ok) does {change!r} there",
            citations=[start],
            contrast_id="boil-ok",
            contrast_citations=[1 if "door" in change else 3],
            contrastive=True,
            created_at=WHEN,
        )
        span = Span(
            episode_id=episode_id,
            start=start,
            end=start,
            kind="causal",
            label=trigger,
            author="analyzer:heuristic",
            confidence=0.7,
            created_at=WHEN,
            updated_at=WHEN,
        )
        found[episode_id] = store.add_analysis(analysis, span).id
    return store.replace_clusters(
        run.id,
        [
            Cluster(
                run_id=run.id,
                family="boil",
                trigger="go to <X> | is not open",
                correction="open door to <X>",
                members=[found["door-1"], found["door-2"]],
                contrasts=["boil-ok"],
            ),
            Cluster(
                run_id=run.id,
                family="boil",
                trigger="focus on <X> | critical",
                correction="focus on <E1>",
                members=[found["focus-sink"]],
                contrasts=["boil-ok"],
            ),
        ],
    )


def door_spec(run_id: int, cluster_id: int) -> InterventionSpec:
    """Open the door before going through it: a two-decision procedure with cited fields."""
    return InterventionSpec(
        run_id=run_id,
        clusters=[cluster_id],
        reasoner="heuristic",
        mechanism="blocked-precondition",
        families=["boil"],
        activation=Activation(
            trigger=Claim(
                text="the agent is about to 'go to <X>'",
                value="go to (.+)",
                citations=[cite("door-1", 1)],
            ),
            observations=[
                Observed(
                    text="the door to <X> is not open",
                    value="The door is not open",
                    citations=[cite("door-1", 2)],
                )
            ],
        ),
        scope=Scope(
            objective=Claim(
                text="open the door before going through it",
                value="open door to {1}",
                citations=[cite("boil-ok", 1, 2)],
            ),
            decisions=[
                Claim(
                    text="open door to <X>",
                    value="open door to {1}",
                    citations=[cite("boil-ok", 1)],
                ),
                Claim(text="go to <X>", value="go to {1}", citations=[cite("boil-ok", 2)]),
            ],
        ),
        execution=Execution(
            state=Claim(text="which door was opened", citations=[cite("boil-ok", 1)]),
            owner="parent",
            lifetime="procedure",
            completion=Claim(
                text="the agent arrives in <X>",
                value="You move to the {1}",
                citations=[cite("boil-ok", 2), cite("door-1", 2)],
            ),
            inputs=["{1}"],
        ),
        sources=["door-1", "door-2"],
        contrasts=["boil-ok"],
        created_at=WHEN,
    )


def door_attempts() -> list[CompileAttempt]:
    """Rule fails (state, decision and completion outlive one decision), then Skill closes."""
    rule = [
        ObligationCheck(
            obligation="observation", closed=True, slot="guard", citations=[cite("door-1", 1)]
        ),
        ObligationCheck(
            obligation="state",
            closed=False,
            witness="which door was opened must persist for the procedure; "
            "a rule keeps nothing between decisions",
        ),
        ObligationCheck(
            obligation="decision",
            closed=False,
            witness="the correction takes 2 dependent decisions (open door to <X>; go to <X>); "
            "a rule owns one control point",
        ),
        ObligationCheck(
            obligation="completion",
            closed=False,
            witness="completion (the agent arrives in <X>) is observed only after the procedure",
        ),
    ]
    skill = [
        ObligationCheck(
            obligation="observation",
            closed=True,
            slot="applicability",
            citations=[cite("door-1", 1), cite("door-1", 2)],
        ),
        ObligationCheck(
            obligation="state", closed=True, slot="inputs", citations=[cite("boil-ok", 1)]
        ),
        ObligationCheck(
            obligation="decision",
            closed=True,
            slot="procedure",
            citations=[cite("boil-ok", 1), cite("boil-ok", 2)],
        ),
        ObligationCheck(
            obligation="completion",
            closed=True,
            slot="expected_result",
            citations=[cite("boil-ok", 2)],
        ),
    ]
    carried = [f"rule {c.obligation}: {c.witness}" for c in rule if not c.closed]
    return [
        CompileAttempt(
            spec_id=0, kind="rule", position=1, checks=rule, missing=["negative"], created_at=WHEN
        ),
        CompileAttempt(
            spec_id=0,
            kind="skill",
            position=2,
            closed=True,
            checks=skill,
            carried=carried,
            contract=skill_contract(),
            created_at=WHEN,
        ),
    ]


def skill_contract() -> dict:
    return SkillContract(
        name=SKILL,
        description="Open a closed door before going through it.",
        applicability="the agent is about to 'go to <X>' and the door to <X> is not open",
        inputs=["{1}"],
        procedure=["open door to {1}", "go to {1}"],
        recovery="look around and try the next door",
        expected_result="the agent arrives in <X>",
        probes=[Probe(episode_id="door-1", step=1, action="go to kitchen")],
        form=ProcedureForm(
            id=SKILL,
            when_action="go to (.+)",
            when_evidence="The door is not open",
            steps=["open door to {1}", "go to {1}"],
            until="You move to the {1}",
        ),
    ).model_dump(mode="json")


def rule_contract() -> dict:
    """A hand-written rule without negative triggers: the contract gate refuses it."""
    return RuleContract(
        name=RULE,
        description="Do not repeat an action the environment rejected.",
        activation="any action the agent proposes",
        guard="that same action was just rejected with 'The door is not open.'",
        response="veto the repeated action",
        positive=[
            TriggerCase(
                action="go to kitchen",
                instruction=BOIL,
                observation="The door is not open.",
                history=[("go to kitchen", "The door is not open.")],
                citation=cite("door-1", 2),
            )
        ],
        form=RuleForm(id=RULE, when_action="(.+)", when_evidence="The door is not open"),
    ).model_dump(mode="json")


def stage_versions(store: Store, spec: InterventionSpec, attempt: CompileAttempt) -> None:
    """The skill, admitted (both gates passed, its ledger filled), and a staged rule."""
    case = {"family": "boil", "variation": 1, "split": "train", "seed": 7}
    cases = [
        ReplayCase(episode_id="door-1", role="correction", why="source failure", **case),
        ReplayCase(episode_id="door-2", role="correction", why="source failure", **case),
        ReplayCase(episode_id="boil-ok", role="preservation", why="contrastive success", **case),
    ]
    skill = store.stage_version(
        ArtifactVersion(
            artifact=SKILL,
            version=1,
            kind="skill",
            contract=skill_contract(),
            spec_id=spec.id,
            attempt_id=attempt.id,
            cases=cases,
            created_at=WHEN,
        )
    )
    assert skill.id is not None
    contract = Gate(
        passed=True,
        checks=[
            GateCheck(name="schema", passed=True, detail="every required slot filled"),
            GateCheck(name="patterns", passed=True, detail="3 compile"),
            GateCheck(
                name="declared inputs",
                passed=True,
                detail="templates read only what the trigger binds and the task names",
            ),
            GateCheck(
                name="reaches its result",
                passed=True,
                detail="from door-1@1: 'You move to the kitchen.' after 2 steps",
            ),
        ],
        decided_at=WHEN,
    )
    store.record_gate(skill.id, "contract", contract)
    ledger = [
        store.put_ledger(
            LedgerEntry(
                version_id=skill.id,
                case=c.episode_id,
                role=c.role,
                baseline_episode=f"replay-v1-base:{c.episode_id}",
                candidate_episode=f"replay-v1-cand:{c.episode_id}",
                baseline_success=c.role == "preservation",
                candidate_success=True,
                fired=c.role == "correction",
            )
        )
        for c in cases
    ]
    replay = judge(ledger).model_copy(update={"decided_at": WHEN})
    store.record_gate(skill.id, "replay", replay, "active")
    store.stage_version(
        ArtifactVersion(
            artifact=RULE,
            version=1,
            kind="rule",
            contract=rule_contract(),
            origin="hand",
            created_at=WHEN,
        )
    )


def build_repository(path: Path, compiled: bool) -> None:
    """Write the repository database at ``path``: analysed, and with ``compiled`` a spec
    with its attempts (and a deferred one) and two artifact versions."""
    with Store(path) as store:
        for batch in ("b", "replay-v1-base", "replay-v1-cand"):
            kind = "replay" if batch.startswith("replay") else "run"
            store.put_batch(Batch(id=batch, name=batch, kind=kind, created_at=WHEN))
        store.put_task(
            Task(
                id="sw:boil:1",
                environment="scienceworld",
                family="boil",
                instruction=BOIL,
                split="train",
            )
        )
        for episode_id, batch, success, turns in REPO_EPISODES:
            store.add_episode(
                Episode(
                    id=episode_id,
                    task_id="sw:boil:1",
                    batch_id=batch,
                    seed=7,
                    outcome=Outcome(success=success, score=100.0 if success else 0.0),
                    started_at=WHEN,
                ),
                turn_steps(episode_id, turns),
            )
        door, focus = analyse(store)
        if not compiled:
            return
        assert door.id is not None and focus.id is not None
        spec, attempts = store.add_spec(door_spec(door.run_id, door.id), door_attempts())
        store.add_spec(
            InterventionSpec(
                run_id=focus.run_id,
                clusters=[focus.id],
                reasoner="heuristic",
                status="deferred",
                reason="unrecognised cluster: no mechanism with an observable trigger fits",
                created_at=WHEN,
            )
        )
        stage_versions(store, spec, attempts[-1])


@pytest.fixture(scope="session")
def repository_templates(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    folder = tmp_path_factory.mktemp("repository-db")
    paths = {}
    for compiled in (False, True):
        paths[compiled] = folder / f"{'compiled' if compiled else 'analysed'}.db"
        build_repository(paths[compiled], compiled)
    return paths


@pytest.fixture
def analysed_repo_db(repository_templates: dict[bool, Path], tmp_path: Path) -> Path:
    """A private copy of the repository database before compilation."""
    return Path(shutil.copyfile(repository_templates[False], tmp_path / "analysed.db"))


@pytest.fixture
def repo_db(repository_templates: dict[bool, Path], tmp_path: Path) -> Path:
    """A private copy of the compiled repository database."""
    return Path(shutil.copyfile(repository_templates[True], tmp_path / "compiled.db"))
