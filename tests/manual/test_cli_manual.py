"""`workbench manual formulate | export | diff` through click's runner, on database files."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from store import Store
from tests.llm_server import ChatServer
from tests.manual.test_formulate import DOOR, add_active_rule, add_episode, fill
from workbench.cli import main
from workbench.manual.operations import OPERATIONS, apply


def invoke(db_path: Path, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(
        main, ["--db", str(db_path), "manual", *args], env=env, catch_exceptions=False
    )


def test_formulate_export_and_diff(db_path: Path, tmp_path: Path):
    with Store(db_path) as store:
        fill(store)
    first = invoke(db_path, "formulate")
    assert first.exit_code == 0, first.output
    assert "manual v1: 4 rule(s), 1 active artifact(s), formulated by heuristic" in first.output
    again = invoke(db_path, "formulate", "--reasoner", "heuristic")
    assert "manual v1 is unchanged" in again.output
    out = tmp_path / "manual.md"
    exported = invoke(db_path, "export", "--out", str(out))
    assert exported.exit_code == 0 and f"manual v1 written to {out}" in exported.output
    with Store(db_path) as store:
        assert out.read_text(encoding="utf-8") == store.manual(1).markdown
        update = {"op": "update_rule", "rule_id": "rule_1", "example": "go to kitchen, twice"}
        apply(store, OPERATIONS.validate_python([update]), "human")
    assert "manual v2:" in invoke(db_path, "formulate").output
    changed = invoke(db_path, "diff", "1", "2")
    assert changed.exit_code == 0
    assert "--- manual v1" in changed.output and "+go to kitchen, twice" in changed.output
    assert "manual v2 and v2 are identical" in invoke(db_path, "diff", "2", "2").output
    invoke(db_path, "export", "--out", str(out), "--version", "1")
    assert "go to kitchen, twice" not in out.read_text(encoding="utf-8")
    unknown = invoke(db_path, "export", "--out", str(out), "--version", "5")
    assert unknown.exit_code == 1
    assert "no manual version 5 (versions 1 to 2)" in unknown.output
    assert "no manual version 9" in invoke(db_path, "diff", "1", "9").output


def test_clear_errors_before_any_manual(db_path: Path, tmp_path: Path):
    Store(db_path).close()
    nothing = invoke(db_path, "formulate")
    assert nothing.exit_code == 1
    assert "nothing to formulate" in nothing.output
    assert "workbench manual build" in nothing.output
    out = tmp_path / "manual.md"
    missing = invoke(db_path, "export", "--out", str(out))
    assert missing.exit_code == 1 and "no manual has been formulated yet" in missing.output
    assert "workbench manual formulate" in missing.output and not out.exists()
    assert "no manual has been formulated yet" in invoke(db_path, "diff", "1", "2").output


def test_formulate_before_any_rule_is_built_says_so_in_one_line(db_path: Path):
    with Store(db_path) as store:
        add_episode(store, DOOR, success=False)
        add_active_rule(store)
    result = invoke(db_path, "formulate")
    assert result.exit_code == 0, result.output
    assert "manual v1: 0 rule(s), 1 active artifact(s)" in result.output
    [warning] = [line for line in result.output.splitlines() if "no rules yet" in line]
    assert warning.startswith("no rules yet:") and "`workbench manual build`" in warning
    with Store(db_path) as store:
        fill(store)  # the rules built: no warning any more
    assert "no rules yet" not in invoke(db_path, "formulate").output


def test_export_to_an_unwritable_place_is_a_clear_error(db_path: Path, tmp_path: Path):
    with Store(db_path) as store:
        fill(store)
    invoke(db_path, "formulate")
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "manual.md"
    result = invoke(db_path, "export", "--out", str(target))
    assert result.exit_code == 1 and f"cannot write under {target.parent}" in result.output
    made = invoke(db_path, "export", "--out", str(tmp_path / "new-folder" / "manual.md"))
    assert made.exit_code == 0 and (tmp_path / "new-folder" / "manual.md").is_file()


def serve_env(server: ChatServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": server.api_key,
        "WORKBENCH_MODEL": "test-model",
    }


def test_formulate_with_the_openai_reasoner_against_a_local_server(db_path: Path):
    with Store(db_path) as store:
        fill(store)
    grouped = {
        "groups": [
            {"title": "Doors", "introduction": "Open first.", "rule_ids": ["rule_1"]},
            {"title": "Boiling", "introduction": "Heat.", "rule_ids": ["rule_2", "rule_3"]},
            {"title": "Open problems", "introduction": "Unsolved.", "rule_ids": ["rule_4"]},
        ]
    }
    with ChatServer(replies=[grouped]) as server:
        result = invoke(db_path, "formulate", "--reasoner", "openai", env=serve_env(server))
    assert result.exit_code == 0, result.output
    assert "manual v1: 4 rule(s), 1 active artifact(s), formulated by openai:test-model" in (
        result.output
    )
    with Store(db_path) as store:
        assert "## 2. Boiling\n\nHeat.\n" in store.manual(1).markdown


def test_a_model_that_keeps_dropping_a_rule_fails_clearly(db_path: Path):
    with Store(db_path) as store:
        fill(store)
    dropped = {"groups": [{"title": "All", "introduction": "x", "rule_ids": ["rule_1"]}]}
    with ChatServer(replies=[dropped, dropped]) as server:
        failed = invoke(db_path, "formulate", "--reasoner", "openai", env=serve_env(server))
        assert server.request_count == 2  # the answer, then the answer to one correction
    assert failed.exit_code == 1
    assert "rule_2 is in no group" in failed.output and "after a correction" in failed.output
    with Store(db_path) as store:
        assert store.manuals() == []
