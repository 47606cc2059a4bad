"""Diff-VQA questions on the whole NIH cohort against the independent check; prints figures.

Issue 32's acceptance: the difference and abnormality answers of at least 30,000 (main, reference) pairs drawn
as Medical-Diff-VQA's generator draws them, generated from the graph by `cxrkg diffvqa generate`, agree with
graph.checks.nih.diffvqa (plain pandas over the NIH tables, apart from the graph code): 0 mismatches on
the findings whose NIH label has exactly one Diff-VQA name.

Runs against the NIH benchmark's own local Neo4j (CXRKG_HOME=.cxrkg/bench-nih, Bolt port 7699, as
benchmarks/nih_benchmark.py), so that benchmark's load can be reused. Steps:

1. with --load: `cxrkg datasets nih` (whole wheel) and `cxrkg ingest --bulk` into an emptied store; otherwise
   the graph already there is used (`cxrkg db start` first);
2. `cxrkg diffvqa generate --out F --seed S` (whole cohort; --patients N passes a limit): seconds;
3. the check on F: pairs and questions checked, unchecked, mismatches by kind and the first ten.

--questions F skips steps 1-2 and checks an existing file (for example one written by `cxrkg diffvqa answer`).

Usage: python benchmarks/diffvqa_nih_check.py [--load] [--patients N] [--seed S] [--questions F] [--keep]
Exit code 1 when fewer than 30,000 pairs were checked or a mismatch was found.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import cxrkg, use_dedicated_server  # noqa: E402
from nih_check_run import print_mismatches, run_nih_check  # noqa: E402

use_dedicated_server("bench-nih", 7699, 7489)

MIN_PAIRS = 30_000


def _generate(out: Path, args: argparse.Namespace) -> None:
    """Step 2: the questions from the graph (the server runs)."""
    limit = ["--patients", str(args.patients)] if args.patients else []
    seconds = cxrkg("diffvqa", "generate", "--out", str(out), "--seed", str(args.seed), *limit)[0]
    print(f"cxrkg diffvqa generate: {seconds:.1f} s (target < 120 s on the whole cohort)", flush=True)


def _check(questions: Path, patients: int | None) -> int:
    """Step 3: the independent check; returns the exit code."""
    from graph.checks.nih.diffvqa import check_answers
    from graph.checks.nih.reference import load_tables
    from graph.formats.diffvqa import ANSWER_COLUMNS, read_question_file

    started = time.perf_counter()
    frame = read_question_file(questions, ANSWER_COLUMNS)
    result = check_answers(frame, load_tables(limit_patients=patients))
    seconds = time.perf_counter() - started
    types = ", ".join(f"{k} {v:,}" for k, v in sorted(frame["question_type"].value_counts().to_dict().items()))
    print(f"questions in {questions.name}: {len(frame):,} ({types})")
    print(f"independent check: {result.pairs_checked:,} pairs, {result.questions_checked:,} difference and abnormality "
          f"questions checked, {result.unchecked:,} unchecked, in {seconds:.1f} s; "
          f"{len(result.mismatches):,} mismatches", flush=True)
    print_mismatches(result.mismatches, "kind",
                     lambda m: f"{m.study_id} vs {m.ref_id} [{m.kind}] {m.question!r}: {m.answer!r}; {m.detail}")
    if result.pairs_checked < MIN_PAIRS:
        print(f"fewer than {MIN_PAIRS:,} pairs checked")
    return 0 if result.pairs_checked >= MIN_PAIRS and result.mismatches.empty else 1


def main() -> None:
    run_nih_check(__doc__, "diffvqa generate", "questions", "diffvqa-nih-{patients}-seed{seed}.csv", _generate, _check)


if __name__ == "__main__":
    main()
