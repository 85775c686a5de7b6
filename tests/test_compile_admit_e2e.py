"""End to end on the real simulator, through the CLI: failures → analysis → specs → first
closure → gates → an active repository that raises held-out success; a harmful hand-written
rule is rejected by the replay gate because preservation cases regress.

The learning and held-out runs, analysis, compilation and replay are README's Example as the
session fixture ``readme_example`` plays it (a demo database, `analyze --batch demo-train`,
`compile`, `replay`, `run --like demo-test --with-repo`): what the README promises is what is
checked here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import Store
from workbench.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples"


def cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def repository(readme_example) -> Path:
    """The demo database after README's Example analysed, compiled and admitted."""
    folder, played = readme_example
    assert all(p.returncode == 0 for p in played), [p.command for p in played if p.returncode]
    return folder / "workbench.db"


@pytest.mark.slow
def test_first_closure_admits_artifacts_of_several_types(repository: Path):
    with Store(repository) as store:
        active = store.versions(status="active")
        kinds = {v.kind for v in active}
        assert len(kinds) >= 2, [(v.artifact, v.kind) for v in store.versions()]
        for version in active:
            assert version.contract_gate and version.contract_gate.passed
            assert version.replay_gate and version.replay_gate.passed
            ledger = store.ledger(version.id)
            assert any(e.change == "fixed" and e.role == "correction" for e in ledger)
            assert not any(e.change == "regressed" and e.role == "preservation" for e in ledger)
            spec = store.spec(version.spec_id)
            attempts = store.attempts(spec.id)
            assert attempts[-1].closed and attempts[-1].kind == version.kind
            # every earlier schema left a witness, and the winner had to close it too
            for earlier in attempts[:-1]:
                assert not earlier.closed and any(c.witness for c in earlier.checks)
            assert len(attempts[-1].carried) == sum(
                not c.closed for a in attempts[:-1] for c in a.checks
            )


@pytest.mark.slow
def test_the_active_repository_raises_held_out_success(readme_example):
    _, played = readme_example
    [like] = [p.printed for p in played if "--like demo-test --with-repo" in p.command]
    found = re.findall(r"(\d+)/(\d+) succeeded", like)
    (before, total), (after, _) = found
    assert int(total) == 8 and int(after) > int(before), like
    assert "paired:" in like


@pytest.mark.slow
def test_a_rule_that_fires_too_broadly_is_rejected_by_the_replay_gate(repository: Path):
    output = cli(repository, "repo", "stage", str(EXAMPLES / "harmful-rule.json"))
    version_id = int(re.search(r"\(id (\d+)\)", output).group(1))
    output = cli(repository, "replay", "--artifact", str(version_id), "--workers", "2")
    with Store(repository) as store:
        version = store.version(version_id)
        assert version.status == "rejected"
        assert version.contract_gate.passed  # well-formed: it is behaviour that fails it
        regressed = [
            e
            for e in store.ledger(version_id)
            if e.role == "preservation" and e.change == "regressed"
        ]
        assert regressed and version.replay_gate.stats["regressed"] == len(regressed)
    assert "no preservation regression: regressed" in output.replace("\n", " ")


@pytest.mark.slow
def test_export_writes_what_agent_runtimes_read(repository: Path, tmp_path: Path):
    cli(repository, "repo", "export", str(tmp_path / "out"))
    rules = (tmp_path / "out" / "RULES.md").read_text()
    assert rules.startswith("# Rules")
    with Store(repository) as store:
        active = store.versions(status="active")
        for version in active:
            spec = store.spec(version.spec_id) if version.spec_id is not None else None
            absent = [o for o in spec.activation.observations if o.absent] if spec else []
            if version.kind == "skill":
                text = (tmp_path / "out" / "skills" / version.artifact / "SKILL.md").read_text()
                assert text.startswith(f"---\nname: {version.artifact}\ndescription: ")
                assert not re.search(r"\bE\d+\b", text), text  # inputs named by role
                assert all(f"unless {o.text}" in text for o in absent), text
            elif version.kind == "subagent":
                text = (tmp_path / "out" / "agents" / f"{version.artifact}.md").read_text()
                assert '"status"' in text and "Input schema" in text
            else:
                own = rules.split(f"## {version.artifact}\n", 1)[1].split("\n## ", 1)[0]
                guard = next(line for line in own.splitlines() if line.startswith("- Guard:"))
                assert all(f"unless {o.text}" in guard for o in absent), guard
