"""Compiling an analysis a second time stages nothing new, even where two of its specs share
a key (the same mechanism and trigger for different clusters): the second compile compared
each proposal with only the last spec of its key and staged the others again as revisions."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from store import Store
from workbench.cli import main

CODING = Path(__file__).parent.parent.parent / "bench" / "labels" / "coding"


def cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_second_compile_of_the_same_analysis_stages_nothing(tmp_path: Path):
    source = json.loads((CODING / "source.json").read_text())
    db = tmp_path / "coding.db"
    paths = [str(CODING / p) for p in source["paths"]]
    cli(
        db,
        "import",
        *paths,
        "--format",
        source["format"],
        "--results",
        str(CODING / source["results"]),
    )
    cli(db, "analyze")
    first = cli(db, "compile")
    with Store(db) as store:
        specs = store.specs(store.analysis_runs()[0].id)
        keys = [s.key() for s in specs if s.status == "supported"]
        versions = len(store.versions())
    assert len(keys) > len(set(keys)), "the case needs two specs of one key"
    assert versions > 0 and "new version(s) staged" in first
    second = cli(db, "compile")
    with Store(db) as store:
        assert len(store.versions()) == versions
        assert len(store.specs(store.analysis_runs()[0].id)) == len(specs)
    assert " 0 new version(s) staged" in " " + " ".join(second.split())
