"""Hostile input: how many broken files make ``workbench import`` show a traceback.

For each format, ``--cases`` broken files are made at random from its samples (truncated,
bytes flipped, a number made huge or infinite, a value nested thousands deep, a lone
surrogate in a string, a UTF-8 byte order mark in front; for some the results file is the
broken one) and imported with the CLI into a copy of a database holding every sample (the
cases of ``tests/ingest/hostile.py``, which the test suite draws with hypothesis). Counts per
format the cases tried, the tracebacks, failed imports whose message does not name the file,
failed imports that changed the database, and files with only a byte order mark added that
did not import. Target: every count but the first 0.

    python bench/import_fuzz.py [--cases 200] [--seed 0] [--formats workbench,otlp,...] [-v]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.ingest.hostile import (
    DEPTHS,
    FORMATS,
    HUGE_NUMBERS,
    SAMPLE_FILES,
    SURROGATES,
    Case,
    Mutation,
    base_database,
    run_case,
)

KINDS = ("truncate", "flip", "huge", "head", "deep", "surrogate", "bom")


def random_case(rng: random.Random, fmt: str, depths: tuple[int, ...] = DEPTHS) -> Case:
    """One broken file of format ``fmt``, nested at most ``max(depths)`` deep."""
    sample = rng.choice([s for s in SAMPLE_FILES if s.format == fmt])
    kind = rng.choice(KINDS + (("eval",) if fmt == "inspect" else ()))
    at = rng.randrange(1 << 30)
    flips = tuple((rng.randrange(1 << 30), rng.randrange(256)) for _ in range(rng.randint(1, 8)))
    mutation = {
        "truncate": Mutation("truncate", at=at),
        "flip": Mutation("flip", flips=flips),
        "huge": Mutation("huge", at=at, value=rng.choice(HUGE_NUMBERS)),
        "head": Mutation("head", value=rng.choice(HUGE_NUMBERS)),
        "deep": Mutation("deep", at=at, depth=rng.choice(depths), value=rng.choice((b"[", b"{"))),
        "surrogate": Mutation("surrogate", at=at, value=rng.choice(SURROGATES)),
        "bom": Mutation("bom"),
        "eval": Mutation("eval", flips=flips),
    }[kind]
    results = sample.results is not None and kind not in ("bom", "eval") and rng.random() < 0.4
    return Case(
        sample=sample,
        mutation=mutation,
        target="results" if results else "file",
        bom=kind != "bom" and rng.random() < 0.15,
        skip_bad=rng.random() < 0.3,
        detect=kind in ("bom", "head") or rng.random() < 0.2,
        odd_name=rng.random() < 0.1,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200, help="broken files per format")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("-v", "--verbose", action="store_true", help="print each problem")
    parser.add_argument(
        "--max-depth",
        type=int,
        default=max(DEPTHS),
        help="deepest nesting tried (code before the fix takes depth² memory: 24 GB at 100,000)",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        base = base_database(folder)
        print(
            f"{'format':14} {'cases':>6} {'tracebacks':>10} {'unnamed':>8} {'changed':>8} {'bom':>4}"
        )
        for fmt in args.formats.split(","):
            counts: Counter[str] = Counter()
            for _ in range(args.cases):
                case = random_case(rng, fmt, tuple(d for d in DEPTHS if d <= args.max_depth))
                work = folder / "case"
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir()
                outcome = run_case(case, work, base)
                counts["cases"] += 1
                problems = []
                if outcome.traceback is not None:
                    counts["tracebacks"] += 1
                    error = outcome.traceback
                    kinds[f"{type(error).__name__}: {str(error)[:60]}"] += 1
                    problems.append(f"traceback {type(error).__name__}: {str(error)[:200]}")
                elif not outcome.named:
                    counts["unnamed"] += 1
                    problems.append(f"unnamed: {outcome.output.strip()[-300:]}")
                if not outcome.unchanged or not outcome.sound:
                    counts["changed"] += 1
                    problems.append("database changed or unsound")
                if case.mutation.kind == "bom" and outcome.exit_code != 0:
                    counts["bom"] += 1
                    problems.append(f"bom not imported: {outcome.output.strip()[-300:]}")
                if problems and args.verbose:
                    print(f"  {case}\n    " + "\n    ".join(problems))
            totals.update(counts)
            print(
                f"{fmt:14} {counts['cases']:6} {counts['tracebacks']:10} {counts['unnamed']:8}"
                f" {counts['changed']:8} {counts['bom']:4}"
            )
    print(
        f"{'all':14} {totals['cases']:6} {totals['tracebacks']:10} {totals['unnamed']:8}"
        f" {totals['changed']:8} {totals['bom']:4}"
    )
    for kind, n in kinds.most_common():
        print(f"  {n:4}  {kind}")


if __name__ == "__main__":
    main()
