"""An importer passed from Python that builds episodes whose parts do not fit: the import
names the file, the episode and the field, writes nothing, and ``skip_bad`` keeps the rest."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from store import Store
from workbench.ingest import formats, import_paths
from workbench.ingest.base import IngestError, ParsedEpisode, ReadContext

Breakage = Callable[[ParsedEpisode], ParsedEpisode]


@dataclass
class Broken:
    """The openai-chat importer with ``breakage`` done to its second episode."""

    breakage: Breakage
    name: str = "broken"
    description: str = "openai-chat, then broken"

    def sniff(self, path: Path, head: str) -> bool:
        return False

    def read(self, ctx: ReadContext) -> Iterator[ParsedEpisode | IngestError]:
        for position, item in enumerate(formats.by_name("openai-chat").read(ctx)):
            broken = position == 1 and isinstance(item, ParsedEpisode)
            yield self.breakage(item) if broken else item


def renumbered(parsed: ParsedEpisode) -> ParsedEpisode:
    steps = [s.model_copy(update={"index": 0}) for s in parsed.steps]
    return replace(parsed, steps=steps)


def moved(parsed: ParsedEpisode) -> ParsedEpisode:
    steps = [*parsed.steps[:-1], parsed.steps[-1].model_copy(update={"episode_id": "elsewhere"})]
    return replace(parsed, steps=steps)


def orphaned(parsed: ParsedEpisode) -> ParsedEpisode:
    """An episode of a task the importer never gave: only the database can tell."""
    episode = parsed.episode.model_copy(update={"task_id": "no-such-task"})
    return replace(parsed, episode=episode)


@pytest.fixture
def chat_log(data_dir: Path) -> Path:
    return data_dir / "openai-chat" / "tools.jsonl"


def test_the_sample_has_episodes_to_break(store: Store, chat_log: Path):
    [file] = import_paths(store, [chat_log], format=Broken(lambda p: p), dry_run=True).files
    assert file.episodes >= 2 and file.steps > 2 * file.episodes


@pytest.mark.parametrize(
    ("breakage", "field", "message"),
    [
        (renumbered, "steps.1.index", "expected 1, got 0"),
        (moved, "episode_id", "names another episode (elsewhere)"),
    ],
)
def test_misfitting_parts_are_named_and_nothing_is_written(
    store: Store, chat_log: Path, breakage: Breakage, field: str, message: str
):
    with pytest.raises(IngestError) as caught:
        import_paths(store, [chat_log], format=Broken(breakage))
    error = caught.value
    assert error.path == str(chat_log) and error.where.startswith("episode ")
    assert error.field.endswith(field) and error.message == message
    assert store.count_episodes() == 0 and store.batches() == []

    report = import_paths(store, [chat_log], format=Broken(breakage), skip_bad=True)
    assert len(report.bad) == 1 and message in report.bad[0]
    assert store.count_episodes() == report.files[0].episodes >= 1


def test_what_only_the_database_refuses_is_one_error_naming_the_file(store: Store, chat_log: Path):
    with pytest.raises(IngestError) as caught:
        import_paths(store, [chat_log], format=Broken(orphaned))
    assert caught.value.path == str(chat_log)
    assert "the database refused an episode read from it" in caught.value.message
    assert store.count_episodes() == 0 and store.batches() == []
