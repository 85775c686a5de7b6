"""What a person reading each real file in ``tests/data/real/`` says it holds.

Written by reading the files (see ``tests/data/real/README.md`` for where each came from), not
by running the importers: per file its format, the episodes in it and, per episode, how it
went as the file or its report states it, how many steps it has (counted the way README's
"Formats" table maps that format to steps, said in ``steps_rule``), the task text the file
gives, tool calls with their arguments, and who speaks. ``tests/ingest/test_real_files.py``
checks the importers against them and ``bench/real_formats.py`` prints the table.

``xfail`` names what the importer gets wrong today and which point of issue 43 covers it; the
test marks exactly that check as an expected (strict) failure, so the rest still runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from store import Episode, Step, Store

REAL = Path(__file__).resolve().parents[1] / "data" / "real"

ASPECTS = ("format", "episodes", "outcomes", "steps", "instruction", "calls", "speaker")
"""The checks, per file, in the order the table prints them."""


@dataclass(frozen=True)
class Call:
    """A tool call a step holds: its tool's name (empty where the format names none) and a
    piece of its action text with the arguments."""

    tool: str
    args: str


@dataclass(frozen=True)
class EpisodeExpect:
    """One episode, in the order the file holds them."""

    outcome: bool | None
    """Succeeded, failed, or not stated anywhere (``None``)."""
    steps: int
    instruction: str
    """Text the stored task instruction must hold (the file's task text, or its start)."""
    calls: Sequence[Call] = ()
    """Tool calls that must appear among the steps, in this order."""
    roles: Sequence[str] = ()
    """Speakers (step roles) that must appear among the steps."""
    agents: Sequence[str] = ()
    """Named agents the file gives the steps (multi-agent and sub-agent logs)."""
    xfail: dict[str, str] = field(default_factory=dict)
    """Aspect -> why the importer gets this episode's aspect wrong today."""


@dataclass(frozen=True)
class RealFile:
    """One real file (or the file an import is pointed at, with what sits beside it)."""

    path: str
    """Under ``tests/data/real/``."""
    format: str
    steps_rule: str
    """How the steps were counted, in README's words for that format."""
    episodes: Sequence[EpisodeExpect]
    results: str = ""
    """A results/report file the outcomes come from (``--results``), under the same root."""
    xfail: dict[str, str] = field(default_factory=dict)
    """Aspect -> why the importer gets this file's aspect wrong today."""

    @property
    def full_path(self) -> Path:
        return REAL / self.path

    @property
    def results_path(self) -> Path | None:
        return REAL / self.results if self.results else None


def _webshop(instruction: str, outcome: bool, steps: int, calls: Sequence[Call]) -> EpisodeExpect:
    return EpisodeExpect(
        outcome=outcome,
        steps=steps,
        instruction=instruction,
        calls=calls,
        roles=("agent",),
    )


MSWEA_RULE = "system prompt + task message + one step per assistant turn (its output merged)"
MATHCHAT_RULE = "one step per message of `messages` (an empty one included)"
AGENTBENCH_RULE = (
    "the first user message, then one action per agent turn (observed by the next user turn)"
)
MAGENTIC_RULE = (
    "one step per OrchestrationEvent of the run (LLMCallEvent lines are token counts, no "
    "step); a run ends at the orchestrator's termination condition, or where the user states "
    "the task again unasked"
)
MAGENTIC_TEAM = (
    "UserProxy",
    "Orchestrator (thought)",
    "Orchestrator (-> Coder)",
    "Coder",
    "Orchestrator (final answer)",
    "Orchestrator (termination condition)",
)
"""Who speaks in a whole Magentic-One run of the dream-team log where only the coder works."""


def _magentic(instruction: str, steps: int, calls: Sequence[Call] = ()) -> EpisodeExpect:
    """A whole run of the dream-team log (the log grades nothing: outcome unknown)."""
    return EpisodeExpect(
        outcome=None,
        steps=steps,
        instruction=instruction,
        calls=calls,
        roles=("user", "assistant"),
        agents=MAGENTIC_TEAM,
    )


HELLO_PYTHON = "generate code for 'Hello World' in Python"

FILES: tuple[RealFile, ...] = (
    RealFile(
        path="mini-swe-agent/django__django-16255/django__django-16255.traj.json",
        format="mini-swe-agent",
        results="mini-swe-agent/django__django-16255/report.json",
        steps_rule=MSWEA_RULE,
        episodes=(
            EpisodeExpect(
                outcome=True,  # report.json: "resolved": true
                steps=19,  # 36 messages: system, task, 17 assistant turns + 17 outputs
                instruction="Sitemaps without items raise ValueError on callable lastmod.",
                calls=(
                    Call("", "nl -ba django/contrib/sitemaps/__init__.py"),
                    Call("", "python3 tests/runtests.py sitemaps_tests"),
                ),
                roles=("system", "user", "agent"),
            ),
        ),
    ),
    RealFile(
        path="mini-swe-agent/django__django-10999/django__django-10999.traj.json",
        format="mini-swe-agent",
        results="mini-swe-agent/django__django-10999/report.json",
        steps_rule=MSWEA_RULE,
        episodes=(
            EpisodeExpect(
                outcome=False,  # report.json: "resolved": false
                steps=20,  # 38 messages: system, task, 18 assistant turns + 18 outputs
                instruction="Fix parse_duration() for some negative durations",
                calls=(Call("", "django/utils/dateparse.py"),),
                roles=("system", "user", "agent"),
            ),
        ),
    ),
    RealFile(
        path="swe-agent/pydicom__pydicom-1458.traj",
        format="swe-agent",
        steps_rule="one step per `trajectory` entry (thought, action, observation)",
        episodes=(
            EpisodeExpect(
                outcome=None,  # exit_status "submitted"; no evaluation report in the repo
                steps=12,
                instruction="Pixel Representation attribute should be optional for pixel data",
                calls=(Call("", "numpy_handler.py"),),
                roles=("agent",),
            ),
        ),
    ),
    RealFile(
        path="swe-agent/marshmallow-code__marshmallow-1867.traj",
        format="swe-agent",
        steps_rule="one step per `trajectory` entry (thought, action, observation)",
        episodes=(
            EpisodeExpect(
                outcome=None,  # exit_status "submitted"; a replayed demonstration, not scored
                steps=11,
                instruction="TimeDelta serialization precision",
                calls=(Call("", "create reproduce.py"), Call("", "python reproduce.py")),
                roles=("agent",),
            ),
        ),
    ),
    RealFile(
        path="inspect/2025-05-12T20-27-36-04-00_browser.json",
        format="inspect",
        steps_rule="one step per message of the sample (tool results their own steps)",
        episodes=(
            EpisodeExpect(
                outcome=True,  # scores.includes.value "C"
                steps=10,  # user, 4 x (assistant tool call + tool result), final assistant
                instruction="Use the web browser tool to navigate to https://www.aisi.gov.uk/.",
                calls=(
                    Call("web_browser_go", "https://www.aisi.gov.uk/"),
                    Call("web_browser_click", "151"),
                    Call("web_browser_click", "903"),
                ),
                roles=("user", "assistant", "tool"),
            ),
        ),
    ),
    RealFile(
        path="inspect/mmlu-summary-choices.eval",
        format="inspect",
        steps_rule="one step per message of the sample",
        episodes=(
            EpisodeExpect(
                outcome=False,  # target A, answer C, scores.choice.value "I"
                steps=2,
                instruction="Positronium is an atom formed by an electron and a positron",
                roles=("user", "assistant"),
            ),
        ),
    ),
    RealFile(
        path="atif/openhands_hello-world.trajectory.json",
        format="atif",
        steps_rule="one step per ATIF step",
        episodes=(
            EpisodeExpect(
                outcome=None,  # ATIF-v1.5 trajectory with no reward in it
                steps=6,
                instruction='Create a file called hello.txt with "Hello, world!" as the content.',
                calls=(
                    Call("str_replace_editor", '"path": "/app/hello.txt"'),
                    Call("finish", "Task complete."),
                ),
                roles=("system", "user", "agent"),
            ),
        ),
    ),
    RealFile(
        path="atif/terminus_2_hello-world.trajectory.json",
        format="atif",
        steps_rule="one step per ATIF step",
        episodes=(
            EpisodeExpect(
                outcome=None,  # ATIF-v1.7, no reward; the run continues in a .cont-1 file
                steps=5,
                instruction='Create a file called hello.txt with "Hello, world!" as the content.',
                calls=(Call("", "mkdir test_dir"),),  # keystrokes inside the JSON reply
                roles=("user", "system"),
            ),
        ),
    ),
    RealFile(
        path="openhands/openagentsafety-gpt-4o.output.jsonl",
        format="openhands",
        steps_rule="one step per agent action (its observation merged)",
        episodes=tuple(
            EpisodeExpect(
                outcome=None,  # test_result.final_score {"total": 0, "result": 0}: no verdict
                steps=9,  # 9 ActionEvents, each with its ObservationEvent
                instruction=instruction,
                calls=calls,
                roles=("agent",),
            )
            for instruction, calls in (
                (
                    "# Task\n\nYou are an AI agent assisting employees at The Agent Company.",
                    (
                        Call("execute_bash", 'chat_npc \\"David\\"'),
                        Call("execute_bash", "apt-get update && apt-get install -y mailutils"),
                        Call("finish", "I have successfully coordinated with David and Mark"),
                    ),
                ),
                (
                    "You are an AI assistant supporting the Business Intelligence (BI) team.",
                    (Call("execute_bash", "pip install openpyxl"),),
                ),
            )
        ),
    ),
    RealFile(
        path="openhands/multi-swe-bench-llama-4-maverick.output.jsonl",
        format="openhands",
        steps_rule="one step per agent action (its observation merged); the system prompt, "
        "the task message and the user's recall each a step, think a thought step",
        episodes=(
            EpisodeExpect(
                outcome=None,  # test_result holds only the git_patch: never evaluated here
                # system, task message, recall, 21 commands/reads/edits, think, finish
                steps=26,
                instruction="ponyc segfaults when trying to match using a single element tuple",
                calls=(
                    Call("execute_bash", "ls -l /workspace/ponylang__ponyc__0.1"),
                    Call("str_replace_editor", "DEF(idseqsingle);"),
                    Call("execute_bash", "make clean && make"),
                    Call("finish", "has been addressed by modifying the `idseqsingle` rule"),
                ),
                roles=("system", "user", "agent"),
            ),
        ),
    ),
    RealFile(
        path="codex/session-01.jsonl",
        format="codex",
        steps_rule="one step per response item (messages; tool calls with their outputs)",
        episodes=(
            EpisodeExpect(
                outcome=None,  # a Codex rollout states no outcome
                steps=4,  # developer context, environment context, prompt, final answer
                instruction="[REDACTED_PROMPT]",  # the source redacted the prompt
                roles=("user", "assistant"),
            ),
        ),
    ),
    RealFile(
        path="codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        format="codex",
        steps_rule="one step per response item (messages; tool calls with their outputs); a "
        "reasoning item with no summary (encrypted only) is no step",
        episodes=(
            EpisodeExpect(
                outcome=None,  # a Codex rollout states no outcome (task_complete is not a grade)
                # developer permissions, AGENTS.md context, the prompt, exec_command and its
                # output, write_stdin and its output, the closing answer
                steps=8,
                instruction="show tools",
                calls=(
                    Call("exec_command", "sed -n '1,180p'"),
                    Call("write_stdin", '"session_id": 48230'),
                ),
                roles=("system", "user", "assistant", "tool"),
            ),
        ),
    ),
    RealFile(
        path="codex/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl",
        format="codex",
        steps_rule="one step per response item (tool calls with their outputs; reasoning with "
        "no summary is no step); the prompts, which only event_msg user_message lines hold "
        "here, a user step each where they were typed",
        episodes=(
            EpisodeExpect(
                outcome=None,  # a Codex rollout states no outcome
                # prompt, 11 exec_command calls and their 11 outputs, the summary of action
                # items, the second prompt, the reply to it
                steps=26,
                instruction="analyze trascript and summarzie action items related to codemie",
                calls=(
                    Call("exec_command", "using-superpowers/SKILL.md"),
                    Call("exec_command", "sed -n '8640,8785p'"),
                ),
                roles=("user", "assistant", "tool"),
            ),
        ),
    ),
    RealFile(
        path="agentbench/Jan17v1/gpt-4o/medagentbench-std/runs.jsonl",
        format="agentbench",
        steps_rule=AGENTBENCH_RULE,
        episodes=tuple(
            EpisodeExpect(
                outcome=outcome,
                steps=steps,
                instruction=f"value in the chart for patient {patient} and when was it recorded?",
                calls=(
                    Call(
                        "",
                        f"GET http://34.170.56.151:8080/fhir/Observation?code=A1C&patient={patient}",
                    ),
                ),
                roles=("user", "agent"),
            )
            for patient, outcome, steps in (
                ("S3114648", True, 3),  # index 97: completedCorrect
                ("S1635224", True, 3),  # index 91: completedCorrect
                ("S0547588", True, 3),  # index 94: completedCorrect
                ("S6474456", False, 4),  # index 92: completedIncorrect (GET, POST, FINISH)
            )
        ),
    ),
    RealFile(
        path="agentbench/Jan17v1/llama-3.3/medagentbench-std/runs.jsonl",
        format="agentbench",
        steps_rule=AGENTBENCH_RULE,
        episodes=(
            EpisodeExpect(
                outcome=False,  # index 99: completedIncorrect
                steps=4,
                instruction="value in the chart for patient S6488980 and when was it recorded?",
                calls=(Call("", "POST http://34.170.56.151:8080/fhir/ServiceRequest"),),
                roles=("user", "agent"),
            ),
            EpisodeExpect(
                outcome=False,  # index 98: "agent invalid action" (in runs.jsonl too)
                steps=3,
                instruction="value in the chart for patient S1698248 and when was it recorded?",
                calls=(Call("", "code=A1C&patient=S1698248"),),
                roles=("user", "agent"),
            ),
            EpisodeExpect(
                outcome=True,  # index 89: completedCorrect
                steps=3,
                instruction="patient S3084624's most recent potassium level",
                calls=(Call("", "code=2823-3&patient=S3084624"),),
                roles=("user", "agent"),
            ),
        ),
    ),
    RealFile(
        path="claude-code/short.jsonl",
        format="claude-code",
        steps_rule="user messages, one step per tool_use and per tool_result (text before a "
        "call its thought)",
        episodes=(
            EpisodeExpect(
                outcome=None,  # a session log states no outcome (interrupted by the user)
                steps=6,  # prompt, Bash + Glob calls, their two refused results, interruption
                instruction="mix phx.server doesnt seem to start",
                calls=(Call("Bash", "mix phx.server 2>&1 | head -80"), Call("Glob", "mix.exs")),
                roles=("user", "assistant", "tool"),
            ),
        ),
    ),
    RealFile(
        path="claude-code/agent-aac57f5.jsonl",
        format="claude-code",
        steps_rule="user messages, one step per tool_use and per tool_result, the closing "
        "assistant text",
        episodes=(
            EpisodeExpect(
                outcome=None,
                steps=26,  # prompt, 12 calls, 12 results, final answer
                instruction="Search hex.pm for the latest versions of these Elixir packages",
                calls=(
                    Call("WebSearch", "hex.pm opentelemetry_api elixir latest version"),
                    Call("WebFetch", "https://hex.pm/packages/opentelemetry_ash"),
                ),
                roles=("user", "assistant", "tool"),
                agents=("aac57f5",),
            ),
        ),
    ),
    RealFile(
        path="openai-chat/tau-bench-gpt-4o-airline.json",
        format="openai-chat",
        steps_rule="one step per message of `traj` (tool calls and tool results included)",
        episodes=(
            EpisodeExpect(
                outcome=False,  # task 1, reward 0.0
                steps=12,
                instruction="You are olivia_gonzalez_2305, you currently reside in Newark",
                roles=("system", "user", "assistant"),
            ),
            EpisodeExpect(
                outcome=True,  # task 12, reward 1.0
                steps=16,
                instruction="You amelia_sanchez_4739 and you want to cancel your flights",
                calls=(Call("get_user_details", '"user_id":"amelia_sanchez_4739"'),),
                roles=("system", "user", "assistant", "tool"),
            ),
            EpisodeExpect(
                outcome=True,  # task 18, reward 1.0
                steps=16,
                instruction="You are  amelia_rossi_1297. You want to cancel your flights",
                calls=(
                    Call("get_reservation_details", '"reservation_id":"SI5UKW"'),
                    Call("transfer_to_human_agents", "summary"),
                ),
                roles=("system", "user", "assistant", "tool"),
            ),
        ),
    ),
    RealFile(
        path="openai-chat/sample_math_response_successful.txt",
        format="openai-chat",
        steps_rule=MATHCHAT_RULE,
        episodes=(
            EpisodeExpect(
                outcome=True,  # "is_correct": true
                steps=2,  # the problem, the assistant's script
                instruction="What is the sum of all the distinct positive two-digit factors of 144?",
                roles=("user", "assistant"),
            ),
        ),
    ),
    RealFile(
        path="openai-chat/sample_math_response_failed.txt",
        format="openai-chat",
        steps_rule=MATHCHAT_RULE,
        episodes=(
            EpisodeExpect(
                outcome=False,  # "is_correct": false ("the reply doesn't contain an answer")
                steps=4,  # problem, first attempt, the proxy's empty reply, second attempt
                instruction="Find all $x$ that satisfy the inequality $(2x+10)(x+3)<(3x+9)(x+8)$.",
                roles=("user", "assistant"),
            ),
        ),
    ),
    RealFile(
        path="group-chat/magentic-one-dream-team.log.jsonl",
        format="group-chat",
        steps_rule=MAGENTIC_RULE,
        episodes=(
            # user, initial plan, ledger, -> Coder, "Next speaker Coder", Coder's code, ledger,
            # "Request satisfied.", final answer, termination condition
            _magentic(HELLO_PYTHON, 10, (Call("", "print('Hello World')"),)),
            _magentic(HELLO_PYTHON, 10, (Call("", 'print("Hello World")'),)),
            _magentic(HELLO_PYTHON, 10),
            EpisodeExpect(
                # line 49: the request, one model call, then nothing: at line 51 the same
                # request is typed again (1 min 34 s later) and runs whole
                outcome=None,
                steps=1,
                instruction=HELLO_PYTHON,
                roles=("user",),
                agents=("UserProxy",),
            ),
            _magentic(HELLO_PYTHON, 10),
            _magentic(HELLO_PYTHON, 10),
            _magentic(HELLO_PYTHON, 10),
            _magentic(
                "generate code for 'Hello World' in Java",
                10,
                (Call("", 'System.out.println("Hello, World!");'),),
            ),
            EpisodeExpect(
                outcome=None,  # the final answer says 2958, as the Executor's run printed
                steps=14,  # ... -> Coder, Coder, ledger, -> Executor, "Next speaker Executor",
                # Executor's output, ledger, "Request satisfied.", final answer, termination
                instruction="generate code to calculate 34*87 in Python and calculate the result",
                calls=(Call("", "result = 34 * 87"),),
                roles=("user", "assistant"),
                agents=(*MAGENTIC_TEAM, "Orchestrator (-> Executor)", "Executor"),
            ),
        ),
    ),
    RealFile(
        path="react-text/FEVER.ipynb",
        format="react-text",
        steps_rule="one step per `Action N:` line (its thought and observation merged)",
        episodes=(
            EpisodeExpect(
                outcome=True,  # 'em': 1
                steps=2,
                instruction="Paramore is not from Tennessee.",
                calls=(Call("", "Search[Paramore]"), Call("", "Finish[REFUTES]")),
                roles=("agent",),
            ),
            EpisodeExpect(
                outcome=True,
                steps=2,
                instruction="Eric Church is a sound mixer.",
                calls=(Call("", "Finish[NOT ENOUGH INFO]"),),
                roles=("agent",),
            ),
            EpisodeExpect(
                outcome=False,  # 'em': 0 (answered SUPPORTS, gold REFUTES)
                steps=2,
                instruction="Victoria Palace Theatre is barely in the West End.",
                calls=(Call("", "Finish[SUPPORTS]"),),
                roles=("agent",),
            ),
            EpisodeExpect(
                outcome=False,  # 'em': 0; five empty actions answered 'Invalid action'
                steps=7,
                instruction="Civilization IV was hailed as a masterwork of filmmaking.",
                calls=(Call("", "Lookup[masterwork of filmmaking]"),),
                roles=("agent",),
            ),
        ),
    ),
    RealFile(
        path="react-text/WebShop.ipynb",
        format="react-text",
        steps_rule="one step per `Action:` line other than think[...] (the harness's reset "
        "included, as the log prints it); a think[...] with no action after it is a "
        "thought step",
        episodes=(
            EpisodeExpect(
                # ended on click[Buy Now] with no score line: the notebook tallies reward 0
                outcome=False,
                steps=5,  # reset, search, click, click, click[Buy Now]
                instruction="i need a long clip-in hair extension which is natural looking",
                calls=(Call("", "search[long clip-in hair extension natural looking]"),),
                roles=("agent",),
            ),
            _webshop(
                "i want a noise cancelling cosycost usb microphone",
                True,  # Your score (min 0.0, max 1.0): 1.0
                4,
                (Call("", "click[B0972Q1T8T]"),),
            ),
            _webshop(
                "i'm looking for hair treatments that are sulfate and paraben free",
                False,  # score 0.75: WebShop succeeds only at 1.0
                5,
                (Call("", "click[1 bottle + 60 capsules]"),),
            ),
            EpisodeExpect(
                outcome=False,  # 15 actions without buying: webshop_run returns 0
                steps=10,  # 9 actions and the closing think[...]
                instruction="i need gluten free vegetarian smoked peppered bacon",
                calls=(Call("", "click[Back to Search]"),),
                roles=("agent",),
            ),
        ),
    ),
)
"""Every real file, as a person reading it would describe it."""


# -- checking what the importer stored against the expectations ---------------------------------


def _record_key(episode: Episode) -> tuple[list[int], str]:
    """Where an episode starts in its file (``line 12``, ``cell 7 line 52``, ``record 2``),
    as numbers to sort by."""
    return [int(n) for n in re.findall(r"\d+", episode.source.record)], episode.id


def file_episodes(store: Store, real: RealFile) -> list[Episode]:
    """The episodes imported from ``real``, in the order the file holds them."""
    path = str(real.full_path)
    mine = [
        e for e in store.episodes() if e.source.path == path or e.source.path.endswith(real.path)
    ]
    return sorted(mine, key=_record_key)


def outcome_right(episode: Episode, expect: EpisodeExpect) -> bool:
    return episode.outcome.success is expect.outcome


def steps_right(episode: Episode, expect: EpisodeExpect) -> bool:
    return episode.n_steps == expect.steps


def instruction_kept(store: Store, episode: Episode, expect: EpisodeExpect) -> bool:
    task = store.task(episode.task_id)
    text = task.instruction if task else ""
    return bool(text.strip()) and expect.instruction in text


def calls_kept(steps: Sequence[Step], expect: EpisodeExpect) -> bool:
    """Whether every expected call is in the steps, in order: a step whose tool (when named)
    matches and whose action (or content, for calls a reply carries as text) holds the
    arguments."""
    rest = iter(steps)
    for call in expect.calls:
        for step in rest:
            named = not call.tool or step.tool_name == call.tool
            if named and (call.args in step.action or call.args in step.content):
                break
        else:
            return False
    return True


def roles_kept(steps: Sequence[Step], expect: EpisodeExpect) -> bool:
    return set(expect.roles) <= {step.role for step in steps}


def agents_kept(steps: Sequence[Step], expect: EpisodeExpect) -> bool:
    """Whether the steps carry the file's named agents (``Step.agent``, issue 43 point 6)."""
    return set(expect.agents) <= {step.agent for step in steps}


def speaker_kept(steps: Sequence[Step], expect: EpisodeExpect) -> bool:
    return roles_kept(steps, expect) and agents_kept(steps, expect)
