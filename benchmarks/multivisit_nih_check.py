"""MI-CXR-style five-visit questions on the whole NIH cohort against the independent check; prints figures.

Issue 55's acceptance: every TEL and ICR answer that `cxrkg questions multivisit` writes from the graph of
NIH ChestX-ray14 agrees with graph.checks.nih.multivisit (plain pandas over the NIH tables, apart from the
graph code): 0 mismatches (missing, extra, answer, choices); and the file is written in under 60 s on a
warm server.

Runs against the NIH benchmark's own local Neo4j (CXRKG_HOME=.cxrkg/bench-nih, Bolt port 7699, as
benchmarks/nih_benchmark.py; CXRKG_HOME / CXRKG_BOLT_PORT / CXRKG_HTTP_PORT set by the caller win), so that
benchmark's load can be reused. Steps:

1. with --load: `cxrkg datasets nih` (the --patients lowest patient ids, default all) and `cxrkg ingest --bulk`
   into an emptied store; otherwise the graph already there is used;
2. `cxrkg questions multivisit --visits 5 --out F --seed S` twice: the first warms the server (page cache,
   query plans), the second is the figure (wall seconds of the command, and the write's own seconds in its
   line);
3. the check on F: windows, TEL and ICR questions checked per qtype, mismatches by problem and the first ten.

--file F skips steps 1-2 and checks an existing file.

Usage: python benchmarks/multivisit_nih_check.py [--load] [--patients N] [--seed S] [--file F] [--keep]
Exit code 1 when a mismatch was found.
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


def _generate(out: Path, args: argparse.Namespace) -> None:
    """Step 2: the questions from the graph, twice (the server runs)."""
    command = ("questions", "multivisit", "--visits", "5", "--out", str(out), "--seed", str(args.seed))
    for label in ("first run (warms the server)", "warm run"):
        seconds, said = cxrkg(*command)
        print(f"cxrkg questions multivisit, {label}: {seconds:.1f} s wall (target < 60 s warm): {said}", flush=True)


def _check(file: Path, patients: int | None) -> int:
    """Step 3: the independent check; returns the exit code."""
    from graph.checks.nih.multivisit import check_questions, read_file
    from graph.checks.nih.reference import load_tables

    started = time.perf_counter()
    result = check_questions(read_file(file), load_tables(limit_patients=patients))
    kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(result.checked.items()))
    print(f"independent check of {file.name}: {result.windows:,} windows, TEL and ICR questions checked: {kinds}; "
          f"in {time.perf_counter() - started:.1f} s; {len(result.mismatches):,} mismatches", flush=True)
    print_mismatches(result.mismatches, "problem", lambda m: f"{m.key} {m.problem}: expected {m.expected!r}, got {m.got!r}")
    return 0 if result.mismatches.empty else 1


def main() -> None:
    run_nih_check(__doc__, "questions multivisit", "file", "multivisit-nih-{patients}-seed{seed}.jsonl", _generate, _check)


if __name__ == "__main__":
    main()
