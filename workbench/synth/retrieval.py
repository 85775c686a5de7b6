"""Agentic retrieval of the kept synthesized examples (Learn-by-interact, Algorithm 2).

At every step an agent is given examples found two ways, as the paper does:

- **observation-based**: BM25 of the current observation against every example's
  observations (the one before its first action and each one after); an example that
  contains the current observation word for word ranks first. Up to ``m1`` (5) examples.
- **model-based**: a query written by a :class:`~workbench.synth.queries.QueryWriter` from the
  instruction, the history and the current observation (a model through the ``openai``
  backend; offline, the instruction plus the current observation), searched over dense
  embeddings of the examples when the ``dense`` extra is installed, else by BM25 over their
  instructions. Up to ``m2`` (5) examples that the first set does not already hold.

:class:`ExampleIndex` holds the BM25 indexes (``bm25s``, BM25+ with k1 = 1.5, b = 0.75,
δ = 1) and the dense embeddings of one selection of kept examples (a world, an example kind).
It is persisted beside the database, under ``<db>.cache/synth-index/<selection>-<digest>/``,
where the digest covers the examples' content: a changed set of kept examples gets a new
index. An index is written to a temporary folder and renamed into place, with a manifest of
its files' SHA-256; an index whose files do not match its manifest (corrupt, truncated, half
copied) is rebuilt, never read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import Store
from store.synth import SynthExample
from workbench.synth import dense

if TYPE_CHECKING:
    import numpy as np

    from workbench.synth.queries import QueryWriter

FORMAT = 1
"""Version of the index's files; a change rebuilds every index."""

M1 = 5
"""Most examples from observation-based retrieval (the paper's m1)."""
M2 = 5
"""Most examples from model-based retrieval (the paper's m2)."""

BM25 = {"method": "bm25+", "k1": 1.5, "b": 0.75, "delta": 1.0}
"""The BM25 variant and parameters of every index (and of the speed benchmark)."""

RETRIEVERS = ("bm25_observation", "bm25_instruction", "dense")
"""The retrievers whose scores a :class:`Hit` carries."""

FOLDER = "synth-index"
"""The folder under the database's cache folder that holds the indexes."""

MANIFEST = "manifest.json"

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "and",
        "or",
        "is",
        "are",
        "be",
        "it",
        "its",
        "you",
        "your",
        "to",
        "in",
        "on",
        "at",
        "as",
        "with",
        "that",
        "this",
        "there",
    ]
)
"""Words no retriever indexes (they carry no task's content)."""


def split_examples(k: int) -> tuple[int, int]:
    """``(m1, m2)`` for ``k`` examples per step in all: the observation-based share first
    (10 gives the paper's 5 + 5)."""
    return (k + 1) // 2, k // 2


def tokens(text: str) -> list[str]:
    """The words BM25 indexes: lower-case letters and digits, :data:`STOPWORDS` dropped."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def scores(query: str, documents: Sequence[str]) -> list[float]:
    """BM25 scores of a few ``documents`` for ``query``, with this stage's words and
    parameters, from an index built in memory for the call (for small collections, e.g. a
    task type's library entries; examples go through :class:`ExampleIndex`)."""
    index = _bm25([tokens(d) or ["_"] for d in documents])
    return [float(s) for s in index.get_scores(tokens(query) or ["_"])]


def same_text(text: str) -> str:
    """A text with case and whitespace normalised (what "the same observation" compares)."""
    return " ".join(text.lower().split())


def dense_text(example: SynthExample) -> str:
    """What the dense retriever embeds of an example: its instruction and its actions."""
    return f"{example.instruction}\n" + "; ".join(example.actions)


@dataclass(frozen=True)
class Hit:
    """One retrieved example, with the score each retriever gave it."""

    example: SynthExample
    scores: dict[str, float] = field(default_factory=dict)
    """Score by retriever (:data:`RETRIEVERS`): BM25 scores are 0 for an example sharing no
    word with the query; ``dense`` is a cosine similarity and absent without the extra."""
    retriever: str = ""
    """How it was found: ``observation`` or ``model`` (agentic retrieval), ``search``."""
    point: int | None = None
    """The position in :meth:`ExampleIndex.trajectory` of the example's observation most like
    the queried observation (``None`` when no observation was queried)."""
    exact: bool = False
    """The queried observation is word for word one of the example's."""
    score: float = 0.0
    """What the hits were ranked by (the retriever's own score; ``search``: the sum of each
    retriever's score relative to its best)."""


@dataclass(frozen=True)
class Retrieved:
    """What agentic retrieval returned at one step."""

    query: str
    """The model-based query the writer wrote."""
    hits: list[Hit]
    """The observation-based hits, then the model-based ones (no example twice)."""


class ExampleIndex:
    """BM25 (and, with the extra, dense) retrieval over one selection of kept examples.

    Build one with :meth:`open` (persisted beside the database) or :meth:`build` (in memory).

    Attributes:
        examples: the indexed examples, in order of id.
        digest: a hash of the examples' content and the index settings.
        dense: whether the dense retriever is on.
        folder: where the index is kept (``None`` in memory).
    """

    def __init__(
        self,
        examples: list[SynthExample],
        trajectories: list[list[str]],
        bm25: dict[str, Any],
        vectors: np.ndarray | None,
        digest: str,
        folder: Path | None = None,
    ) -> None:
        self.examples = examples
        self._trajectories = trajectories
        self._bm25 = bm25
        self._vectors = vectors
        self.digest = digest
        self.folder = folder
        self._exact: dict[str, list[int]] = {}
        for position, observations in enumerate(trajectories):
            for text in {same_text(o) for o in observations if o.strip()}:
                self._exact.setdefault(text, []).append(position)

    # -- building and opening --------------------------------------------------------------

    @classmethod
    def open(
        cls,
        store: Store,
        env: str | None = None,
        kind: str | None = None,
        *,
        use_dense: bool | None = None,
    ) -> ExampleIndex:
        """The index of the kept examples of ``env`` and ``kind`` (all when ``None``), read
        from beside the database when a sound copy of it is there, else built (and kept).

        Args:
            store: the database whose kept examples are indexed.
            env: only the examples of this world.
            kind: only examples of this kind (``backward`` or ``whole``).
            use_dense: embed the examples; default: when the ``dense`` extra is installed.
        """
        examples = store.synth_examples(env=env, verdict="kept", kind=kind)
        trajectories = [trajectory_of(store, e) for e in examples]
        embedder = _embedder(use_dense)
        digest = content_digest(examples, trajectories, embedder.name if embedder else "")
        root = index_root(store.path)
        if root is None:
            return cls.build(examples, trajectories, embedder=embedder, digest=digest)
        folder = root / f"{_selection(env, kind)}-{digest[:16]}"
        loaded = _cached(folder, digest, examples, trajectories)
        if loaded is not None:
            return loaded
        built = cls.build(examples, trajectories, embedder=embedder, digest=digest)
        try:
            built.save(folder)
        except OSError:  # nowhere to keep it: use it from memory
            built.folder = None
            return built
        _prune(root, _selection(env, kind), keep=folder)
        loaded = _cached(folder, digest, examples, trajectories)
        if loaded is None:  # the kept copy cannot be read back: use the one just built
            built.folder = None
            return built
        return loaded

    @classmethod
    def build(
        cls,
        examples: list[SynthExample],
        trajectories: list[list[str]] | None = None,
        *,
        embedder: dense.Embedder | None = None,
        digest: str = "",
    ) -> ExampleIndex:
        """An index of ``examples`` in memory.

        Args:
            examples: what to index.
            trajectories: each example's observations (the one before its first action,
                then one per action); default: its recorded observations only.
            embedder: embeds the examples for the dense retriever (``None``: no dense part).
            digest: the content digest (computed when empty).
        """
        trajectories = trajectories or [list(e.observations) for e in examples]
        bm25 = (
            {
                "instruction": _bm25([tokens(e.instruction) for e in examples]),
                "observation": _bm25([tokens("\n".join(t)) for t in trajectories]),
            }
            if examples
            else {}
        )
        vectors = embedder.encode([dense_text(e) for e in examples]) if embedder else None
        name = embedder.name if embedder else ""
        return cls(
            examples,
            trajectories,
            bm25,
            vectors,
            digest or content_digest(examples, trajectories, name),
        )

    def save(self, folder: Path) -> None:
        """Keep the index in ``folder``: written to a temporary folder beside it, with a
        manifest of the files' hashes, then renamed into place (a copy already there and
        sound is kept)."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            for name, index in self._bm25.items():
                index.save(str(work / name), show_progress=False)
            if self._vectors is not None:
                import numpy as np

                np.save(work / "dense.npy", self._vectors, allow_pickle=False)
            manifest = {
                "format": FORMAT,
                "digest": self.digest,
                "examples": [e.id for e in self.examples],
                "dense": dense.MODEL if self._vectors is not None else "",
                "bm25": BM25,
                "files": {
                    str(p.relative_to(work)): _sha(p)
                    for p in sorted(work.rglob("*"))
                    if p.is_file()
                },
            }
            (work / MANIFEST).write_text(json.dumps(manifest, indent=1))
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)  # damaged: replaced, never read
            with contextlib.suppress(OSError):  # another process renamed its copy first
                os.rename(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        self.folder = folder

    # -- what it holds ----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.examples)

    @property
    def dense(self) -> bool:
        return self._vectors is not None

    def dense_note(self) -> str:
        """One line when the dense retriever is off because the extra is missing, else ""."""
        return "" if self.dense or dense.available() else dense.MISSING

    def trajectory(self, position: int) -> list[str]:
        """The observations of the example at ``position``: the one before its first action,
        then the one after each action (``trajectory(p)[k]`` is what ``actions[k]`` was
        taken on)."""
        return self._trajectories[position]

    def position(self, example_id: int | None) -> int:
        """Where the example with id ``example_id`` is in :attr:`examples`.

        Raises:
            KeyError: the index does not hold it.
        """
        for position, example in enumerate(self.examples):
            if example.id == example_id:
                return position
        raise KeyError(example_id)

    # -- the retrievers -------------------------------------------------------------------

    def scores(self, retriever: str, query: str) -> np.ndarray:
        """Every example's score for ``query`` by one retriever (:data:`RETRIEVERS`); BM25
        scores are shifted so that an example sharing no word with the query scores 0."""
        import numpy as np

        if not self.examples:
            return np.zeros(0, dtype=np.float32)
        if retriever == "dense":
            if self._vectors is None:
                return np.zeros(len(self.examples), dtype=np.float32)
            embedder = dense.embedder()
            if embedder is None:
                return np.zeros(len(self.examples), dtype=np.float32)
            return self._vectors @ embedder.encode([query])[0]
        index = self._bm25[retriever.removeprefix("bm25_")]
        words = list(dict.fromkeys(tokens(query)))
        scores = np.asarray(index.get_scores(words), dtype=np.float32)
        known = [index.vocab_dict[w] for w in words if w in index.vocab_dict]
        floor = getattr(index, "nonoccurrence_array", None)
        if floor is not None and known:
            scores = scores - float(np.asarray(floor)[known].sum())
        return np.clip(scores, 0.0, None)

    def by_observation(
        self, observation: str, m: int = M1, exclude: Iterable[int] = ()
    ) -> list[Hit]:
        """Observation-based retrieval: the examples that contain ``observation`` word for
        word, then those BM25 finds most like it, at most ``m``."""
        if m <= 0 or not observation.strip():
            return []
        scores = self.scores("bm25_observation", observation)
        skip = set(exclude)
        exact = [p for p in self._exact.get(same_text(observation), []) if p not in skip]
        exact.sort(key=lambda p: (-scores[p], p))
        ranked = exact + [p for p in _top(scores, m + len(exact) + len(skip)) if p not in skip]
        chosen = list(dict.fromkeys(ranked))[:m]
        return [
            Hit(
                self.examples[p],
                {"bm25_observation": float(scores[p])},
                "observation",
                self.point(p, observation),
                p in exact,
                float(scores[p]),
            )
            for p in chosen
            if p in exact or scores[p] > 0
        ]

    def by_query(self, query: str, m: int = M2, exclude: Iterable[int] = ()) -> list[Hit]:
        """Model-based retrieval: the examples most like ``query``, by dense embeddings when
        the extra is on, else by BM25 over the instructions; at most ``m``, none of
        ``exclude`` (positions)."""
        if m <= 0 or not query.strip():
            return []
        retriever = "dense" if self.dense else "bm25_instruction"
        scores = self.scores(retriever, query)
        skip = set(exclude)
        chosen = [p for p in _top(scores, m + len(skip)) if p not in skip and scores[p] > 0][:m]
        return [
            Hit(self.examples[p], {retriever: float(scores[p])}, "model", score=float(scores[p]))
            for p in chosen
        ]

    def agentic(
        self,
        instruction: str,
        history: Sequence[tuple[str, str]],
        observation: str,
        query_writer: QueryWriter,
        m1: int = M1,
        m2: int = M2,
    ) -> Retrieved:
        """Algorithm 2's retrieval at one step: observation-based hits (at most ``m1``),
        then model-based hits for the writer's query (at most ``m2``, none already found).

        Args:
            instruction: the task.
            history: the ``(action, observation)`` pairs taken so far, oldest first.
            observation: the current observation.
            query_writer: writes the model-based query.
        """
        seen = self.by_observation(observation, m1)
        query = query_writer.write(instruction, history, observation)
        taken = {self.position(h.example.id) for h in seen}
        return Retrieved(query, seen + self.by_query(query, m2, exclude=taken))

    def search(self, query: str, k: int = 5, observation: str | None = None) -> list[Hit]:
        """The top ``k`` examples for a typed query, each with every retriever's score:
        ``bm25_instruction`` and ``dense`` score ``query``, ``bm25_observation`` scores
        ``observation`` (default: ``query``). Ranked by the sum of each retriever's score
        relative to its best."""
        if k <= 0 or not self.examples:
            return []
        seen = observation if observation is not None else query
        table = {
            "bm25_observation": self.scores("bm25_observation", seen),
            "bm25_instruction": self.scores("bm25_instruction", query),
        }
        if self.dense:
            table["dense"] = self.scores("dense", query)
        candidates = sorted({p for s in table.values() for p in _top(s, k) if s[p] > 0})
        best = {
            name: max((float(s[p]) for p in candidates), default=0.0) for name, s in table.items()
        }

        def combined(p: int) -> float:
            return sum(float(s[p]) / best[n] for n, s in table.items() if best[n] > 0)

        ranked = sorted(candidates, key=lambda p: (-combined(p), p))[:k]
        exact = set(self._exact.get(same_text(seen), []))
        return [
            Hit(
                self.examples[p],
                {name: float(s[p]) for name, s in table.items()},
                "search",
                self.point(p, seen),
                p in exact,
                combined(p),
            )
            for p in ranked
        ]

    def point(self, position: int, observation: str) -> int:
        """The position in the example's trajectory of the observation most like
        ``observation`` (word for word first, then most words in common)."""
        trajectory = self._trajectories[position]
        wanted = same_text(observation)
        words = set(tokens(observation))
        best, best_score = 0, -1.0
        for k, seen in enumerate(trajectory):
            if same_text(seen) == wanted:
                return k
            theirs = set(tokens(seen))
            score = len(words & theirs) / (len(words | theirs) or 1)
            if score > best_score:
                best, best_score = k, score
        return best


# -- the examples' observations and content ----------------------------------------------------


def trajectory_of(store: Store, example: SynthExample) -> list[str]:
    """The example's observations: the one its first action was taken on (read from its
    episode's steps, empty when the episode is not in the store), then its own."""
    before = store.step(example.episode_id, example.start - 1) if example.start > 0 else None
    return [before.observation if before else "", *example.observations]


def content_digest(
    examples: Sequence[SynthExample], trajectories: Sequence[Sequence[str]], embedder: str = ""
) -> str:
    """SHA-256 of what an index is built from: the examples' ids, worlds, kinds,
    instructions, actions and observations, the embedder's name and the index settings."""
    hasher = hashlib.sha256(json.dumps([FORMAT, BM25, embedder]).encode())
    for example, trajectory in zip(examples, trajectories, strict=True):
        row = [example.id, example.env, example.kind, example.instruction, example.actions]
        hasher.update(json.dumps([*row, list(trajectory)], ensure_ascii=False).encode())
    return hasher.hexdigest()


def index_root(db_path: str) -> Path | None:
    """Where the indexes of the database at ``db_path`` are kept (``None`` in memory)."""
    from workbench.runner import cache_dir_beside

    cache = cache_dir_beside(db_path)
    return Path(cache) / FOLDER if cache else None


def _selection(env: str | None, kind: str | None) -> str:
    return f"{_safe(env or 'all')}-{_safe(kind or 'all')}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", name)


def _embedder(use_dense: bool | None) -> dense.Embedder | None:
    if use_dense is False:
        return None
    return dense.embedder()


# -- the files --------------------------------------------------------------------------------


def _bm25(corpus: list[list[str]]) -> Any:
    import bm25s

    index = bm25s.BM25(**BM25)
    index.index(corpus, show_progress=False)
    return index


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verified(folder: Path, digest: str) -> dict[str, Any] | None:
    """The manifest of the index in ``folder`` when it is of this format and digest and
    every file matches its hash (and nothing listed is missing), else ``None``."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        files = manifest["files"]
        if manifest["format"] != FORMAT or manifest["digest"] != digest:
            return None
        if not files and manifest["examples"]:
            return None
        if all(_sha(folder / name) == sha for name, sha in files.items()):
            return manifest
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


_LOADED: dict[Path, tuple[ExampleIndex, dict[str, tuple[int, int]]]] = {}
"""Indexes this process has read, by folder, with their files' sizes and modification times
when read: reused while the digest holds and no file has changed since."""


def _stamps(folder: Path, names: Iterable[str]) -> dict[str, tuple[int, int]] | None:
    try:
        return {n: ((s := (folder / n).stat()).st_size, s.st_mtime_ns) for n in names}
    except OSError:
        return None


def _cached(
    folder: Path,
    digest: str,
    examples: list[SynthExample],
    trajectories: list[list[str]],
) -> ExampleIndex | None:
    """The index kept in ``folder``, when sound; ``None`` when absent or damaged."""
    held = _LOADED.get(folder)
    if held is not None and held[0].digest == digest and _stamps(folder, held[1]) == held[1]:
        return held[0]
    manifest = verified(folder, digest)
    if manifest is None or manifest["examples"] != [e.id for e in examples]:
        return None
    loaded = _read(folder, manifest, examples, trajectories, digest)
    stamps = _stamps(folder, [MANIFEST, *manifest["files"]])
    if loaded is not None and stamps is not None:
        _LOADED[folder] = (loaded, stamps)
    return loaded


def _read(
    folder: Path,
    manifest: dict[str, Any],
    examples: list[SynthExample],
    trajectories: list[list[str]],
    digest: str,
) -> ExampleIndex | None:
    import bm25s
    import numpy as np

    try:
        bm25 = {
            name: bm25s.BM25.load(str(folder / name), show_progress=False)
            for name in ("instruction", "observation")
            if examples
        }
        vectors = np.load(folder / "dense.npy", allow_pickle=False) if manifest["dense"] else None
    except (OSError, ValueError, KeyError):  # the caller rebuilds it
        return None
    return ExampleIndex(examples, trajectories, bm25, vectors, digest, folder)


def _prune(root: Path, selection: str, keep: Path) -> None:
    """Remove the older indexes of one selection (their examples have changed)."""
    for old in root.glob(f"{selection}-*"):
        if old != keep and old.is_dir() and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` highest scores, best first (ties: lower position first)."""
    import numpy as np

    if k <= 0 or scores.size == 0:
        return []
    k = min(k, scores.size)
    part = np.argpartition(-scores, k - 1)[:k]
    return sorted((int(p) for p in part), key=lambda p: (-float(scores[p]), p))
