"""Retrieval speed: the synthesized-example index (bm25s) against rank-bm25, in one run.

100,000 synthesized examples of the sizes real ones have (an instruction of ~120 characters,
three to six steps of a ~25-character action and a 100–400-character observation, drawn from
a text world's vocabulary of rooms, objects, substances and colours) are indexed by
:class:`workbench.synth.retrieval.ExampleIndex` — the observation corpus agentic retrieval
queries at every step, and the instruction corpus — and by ``rank_bm25.BM25Plus`` on exactly
the same tokens (:func:`workbench.synth.retrieval.tokens`) with the same variant and
parameters (BM25+, k1 = 1.5, b = 0.75, δ = 1; query words deduplicated for both). Queries are
observations (for the observation corpus) and instruction + observation queries (for the
instruction corpus) of held-out examples from the same generator.

Prints per corpus: build time (CPU) and the resident memory each library's index keeps, mean
CPU time per query of each and their ratio (target ≥ 50×), and the share of queries whose top 5 are identical
(strictly, and up to exact score ties; target ≥ 95 %).

rank-bm25 is a benchmark-only dependency: ``pip install rank-bm25==0.2.2``.

    python bench/retrieval_speed.py [--examples 100000] [--queries 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
from collections.abc import Callable

import bm25s  # noqa: F401 - imported before any clock starts
import numpy as np

from store.synth import SynthExample
from workbench.synth.retrieval import BM25, ExampleIndex, tokens

try:
    import rank_bm25
except ImportError:  # pragma: no cover - said, not raised
    rank_bm25 = None

TOP = 5

ROOMS = [
    "kitchen",
    "hallway",
    "bathroom",
    "bedroom",
    "workshop",
    "greenhouse",
    "foundry",
    "outside",
    "art",
    "studio",
    "living",
    "room",
    "cellar",
    "pantry",
    "attic",
    "garage",
    "library",
    "laboratory",
    "study",
    "basement",
    "chamber",
    "scullery",
    "corridor",
    "shed",
    "garden",
    "vault",
    "office",
    "studio",
    "cookery",
]
OBJECTS = [
    "apple",
    "banana",
    "orange",
    "potato",
    "carrot",
    "onion",
    "pepper",
    "cheese",
    "egg",
    "thermometer",
    "pot",
    "cup",
    "jug",
    "bowl",
    "knife",
    "stove",
    "oven",
    "fridge",
    "freezer",
    "sink",
    "table",
    "chair",
    "counter",
    "cupboard",
    "drawer",
    "box",
    "book",
    "cookbook",
    "key",
    "passkey",
    "latchkey",
    "coin",
    "lamp",
    "battery",
    "wire",
    "bulb",
    "switch",
    "seed",
    "flower",
    "plant",
    "pot",
    "soil",
    "shovel",
    "axe",
    "wood",
    "fire",
    "pit",
    "fountain",
    "lighter",
    "match",
    "candle",
    "paint",
    "brush",
    "canvas",
    "bell",
    "hammer",
    "screwdriver",
    "bench",
    "shelf",
    "chest",
    "case",
    "trunk",
    "basket",
    "bag",
    "hat",
    "shoe",
    "sock",
    "glove",
    "coat",
]
SUBSTANCES = [
    "water",
    "ice",
    "chocolate",
    "butter",
    "lead",
    "tin",
    "mercury",
    "soap",
    "air",
    "steam",
    "wax",
    "juice",
    "milk",
]
COLOURS = [
    "red",
    "green",
    "blue",
    "orange",
    "yellow",
    "purple",
    "violet",
    "white",
    "black",
    "brown",
]
VERBS = [
    "open",
    "close",
    "take",
    "pick",
    "up",
    "put",
    "move",
    "go",
    "to",
    "look",
    "at",
    "examine",
    "read",
    "focus",
    "on",
    "use",
    "activate",
    "deactivate",
    "pour",
    "mix",
    "connect",
    "wait",
    "eat",
    "cook",
    "slice",
    "dice",
    "chop",
    "prepare",
    "insert",
    "drop",
]
FILLER = [
    "You",
    "see",
    "a",
    "the",
    "in",
    "on",
    "of",
    "and",
    "is",
    "there",
    "here",
    "it",
    "contains",
    "nothing",
    "also",
    "door",
    "that",
    "closed",
    "open",
    "large",
    "small",
    "old",
    "new",
    "shiny",
    "broken",
    "empty",
    "full",
    "called",
    "room",
    "location",
    "which",
    "seems",
    "ordinary",
    "rather",
    "strange",
    "familiar",
    "nearby",
    "over",
    "corner",
    "middle",
    "floor",
    "wall",
    "window",
    "light",
    "dark",
    "warm",
    "cold",
]


def sentence(rng: random.Random, words: int) -> str:
    """A sentence mixing world words and filler, like a room or object description."""
    pools = (ROOMS, OBJECTS, SUBSTANCES, COLOURS, FILLER, FILLER, FILLER)
    return " ".join(rng.choice(rng.choice(pools)) for _ in range(words)).capitalize() + "."


def observation(rng: random.Random) -> str:
    """An observation of 100-400 characters."""
    text = f"This room is called the {rng.choice(ROOMS)}. In it, you see:"
    while len(text) < rng.randint(100, 400):
        text += f" a {rng.choice(COLOURS)} {rng.choice(OBJECTS)}, " + sentence(
            rng, rng.randint(4, 9)
        )
    return text


def action(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(COLOURS)} {rng.choice(OBJECTS)} to {rng.choice(ROOMS)}"


def example(rng: random.Random, number: int) -> SynthExample:
    """One synthesized example of realistic size."""
    steps = rng.randint(3, 6)
    instruction = (
        f"Your task is to {rng.choice(VERBS)} the {rng.choice(SUBSTANCES)} "
        f"in the {rng.choice(COLOURS)} {rng.choice(OBJECTS)}. First, focus on the "
        f"{rng.choice(OBJECTS)}. Then move it to the {rng.choice(ROOMS)}."
    )
    return SynthExample(
        id=number,
        episode_id=f"bench:{number}",
        start=1,
        end=steps,
        env="bench",
        instruction=instruction,
        actions=[action(rng) for _ in range(steps)],
        observations=[observation(rng) for _ in range(steps)],
        relabeler="heuristic",
        verdict="kept",
    )


def resident_mb() -> float:
    """This process's resident memory (MB), after a collection."""
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measured_build(build: Callable[[], object]) -> tuple[object, float, float]:
    """The built index, its build time (CPU seconds) and the resident memory it keeps (MB)."""
    before = resident_mb()
    started = time.process_time()
    built = build()
    elapsed = time.process_time() - started
    return built, elapsed, resident_mb() - before


def top(scores: np.ndarray) -> list[int]:
    """The top positions, best first, ties to the lower position (as the index ranks)."""
    order = np.lexsort((np.arange(scores.size), -scores))
    return [int(p) for p in order[:TOP]]


def run_queries(
    score: Callable[[str], np.ndarray], queries: list[str]
) -> tuple[list[float], list[list[int]], list[np.ndarray]]:
    """CPU milliseconds of each query (scoring and ranking), its top positions and scores."""
    score(queries[0])  # warm up (lazy imports, caches)
    latencies, tops, all_scores = [], [], []
    for query in queries:
        started = time.process_time()
        scores = score(query)
        ranked = top(scores)
        latencies.append((time.process_time() - started) * 1000)
        tops.append(ranked)
        all_scores.append(scores)
    return latencies, tops, all_scores


def agreement(
    ours: list[list[int]], theirs: list[list[int]], reference: list[np.ndarray]
) -> tuple[float, float]:
    """Shares of queries whose top 5 are identical: strictly, and up to ties (the reference
    library's scores of our top 5 equal its own top-5 scores, within float32 precision)."""
    strict = sum(a == b for a, b in zip(ours, theirs, strict=True))
    tied = 0
    for a, b, scores in zip(ours, theirs, reference, strict=True):
        mine = np.sort(scores[a])[::-1]
        best = scores[b]
        tied += bool(np.allclose(mine, best, rtol=1e-5, atol=1e-6))
    return strict / len(ours), tied / len(ours)


def bench_corpus(
    name: str,
    index: ExampleIndex,
    retriever: str,
    corpus: list[list[str]],
    queries: list[str],
    bm25s_build: tuple[float, float],
) -> None:
    """Build rank-bm25 on ``corpus``, time both on ``queries`` and print the comparison."""
    assert rank_bm25 is not None
    reference, build_s, peak = measured_build(
        lambda: rank_bm25.BM25Plus(corpus, k1=BM25["k1"], b=BM25["b"], delta=BM25["delta"])
    )
    ours_ms, ours_top, _ = run_queries(lambda q: index.scores(retriever, q), queries)

    def theirs(query: str) -> np.ndarray:
        return reference.get_scores(list(dict.fromkeys(tokens(query))))  # type: ignore[attr-defined]

    theirs_ms, theirs_top, reference_scores = run_queries(theirs, queries)
    strict, tied = agreement(ours_top, theirs_top, reference_scores)
    ratio = np.mean(theirs_ms) / np.mean(ours_ms)
    print(
        f"\n{name} corpus: {len(corpus):,} documents, {np.mean([len(d) for d in corpus]):.0f} tokens each"
    )
    print(f"  build   bm25s {bm25s_build[0]:6.2f} s  keeps {bm25s_build[1]:7.1f} MB (both corpora)")
    print(f"  build   rank-bm25 {build_s:6.2f} s  keeps {peak:7.1f} MB (this corpus)")
    print(
        f"  query   bm25s {np.mean(ours_ms):7.2f} ms (p50 {np.median(ours_ms):.2f})   "
        f"rank-bm25 {np.mean(theirs_ms):8.1f} ms (p50 {np.median(theirs_ms):.1f})"
    )
    print(f"  ratio   rank-bm25 / bm25s = {ratio:.0f}x (target >= 50x)")
    print(
        f"  top-{TOP} identical: {strict:.0%} strictly, {tied:.0%} up to score ties (target >= 95%)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if rank_bm25 is None:
        print(
            "rank-bm25 is not installed; it is a benchmark-only dependency: pip install rank-bm25==0.2.2"
        )
        return 2
    rng = random.Random(args.seed)
    started = time.perf_counter()
    examples = [example(rng, n) for n in range(args.examples)]
    held_out = [example(rng, args.examples + n) for n in range(args.queries)]
    print(
        f"{args.examples:,} examples generated in {time.perf_counter() - started:.1f} s "
        f"(BM25 variant {BM25['method']}, k1={BM25['k1']}, b={BM25['b']}, delta={BM25['delta']}; "
        f"seed {args.seed})"
    )
    index, build_s, peak = measured_build(lambda: ExampleIndex.build(examples, embedder=None))
    assert isinstance(index, ExampleIndex)
    chars = np.mean([len(e.instruction) + sum(map(len, e.observations)) for e in examples])
    print(f"mean example: {chars:.0f} characters of instruction and observations")
    observations = [rng.choice(e.observations) for e in held_out]
    instruction_queries = [
        f"{e.instruction} {o}" for e, o in zip(held_out, observations, strict=True)
    ]
    bench_corpus(
        "observation",
        index,
        "bm25_observation",
        [tokens("\n".join(index.trajectory(p))) for p in range(len(index))],
        observations,
        (build_s, peak),
    )
    bench_corpus(
        "instruction",
        index,
        "bm25_instruction",
        [tokens(e.instruction) for e in examples],
        instruction_queries,
        (build_s, peak),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
