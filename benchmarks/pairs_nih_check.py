"""Progression pairs on the whole NIH cohort against the independent check; prints figures.

Issue 55's acceptance: the pairs file that `cxrkg export pairs` writes from the graph of NIH ChestX-ray14 agrees
with graph.checks.nih.pairs (plain pandas over the NIH tables, apart from the graph code) on every pair and
finding: 0 mismatches; and the file is written in under 60 s on a warm server.

Runs against the NIH benchmark's own local Neo4j (CXRKG_HOME=.cxrkg/bench-nih, Bolt port 7699, as
benchmarks/nih_benchmark.py; CXRKG_HOME / CXRKG_BOLT_PORT / CXRKG_HTTP_PORT set by the caller win), so that
benchmark's load can be reused. Steps:

1. with --load: `cxrkg datasets nih` (the --patients lowest patient ids, default all) and `cxrkg ingest --bulk`
   into an emptied store; otherwise the graph already there is used;
2. `cxrkg export pairs --out F --classes C` --rounds times (default 2: the first warms the server's page cache
   and query plans, the last is the figure): each round's wall seconds and the command's own line (rows,
   labels per class, pairs left out, seconds of the read, build and write);
3. the check on F: pairs and labels expected, mismatches by problem and the first ten.

--file F skips steps 1-2 and checks an existing file (of --classes C, --stated-only as it was written).

Usage: python benchmarks/pairs_nih_check.py [--load] [--patients N] [--classes 3|5] [--stated-only] [--rounds R]
       [--file F] [--keep]
Exit code 1 when a mismatch was found.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import cxrkg, load_nih, stop_server, use_dedicated_server  # noqa: E402

use_dedicated_server("bench-nih", 7699, 7489)


def _export(out: Path, classes: int, stated_only: bool, rounds: int) -> None:
    """Step 2: the pairs from the graph (the server must run), ``rounds`` times."""
    cxrkg("db", "start")
    extra = ["--stated-only"] if stated_only else []
    for n in range(1, rounds + 1):
        seconds, said = cxrkg("export", "pairs", "--out", str(out), "--classes", str(classes), *extra)
        warm = "warm" if n > 1 else "first"
        print(f"cxrkg export pairs, round {n} ({warm}): {seconds:.1f} s wall (target < 60 s warm): {said}", flush=True)


def _check(file: Path, patients: int | None, classes: int, stated_only: bool) -> int:
    """Step 3: the independent check; returns the exit code."""
    from graph.checks.nih.pairs import check_pairs
    from graph.checks.nih.reference import load_tables

    started = time.perf_counter()
    result = check_pairs(file, load_tables(limit_patients=patients), classes, stated_only)
    labels = ", ".join(f"{k} {v:,}" for k, v in sorted(result.labels.items())) or "none"
    print(f"independent check of {file.name}: {result.pairs:,} pairs expected, labels expected: {labels}; "
          f"in {time.perf_counter() - started:.1f} s; {len(result.mismatches):,} mismatches", flush=True)
    if len(result.mismatches):
        print("  by problem: " + ", ".join(f"{k} {v:,}" for k, v in result.mismatches["problem"].value_counts().items()))
        for m in result.mismatches.head(10).itertuples(index=False):
            print(f"  {m.dicom_id} <- {m.previous_dicom_id} [{m.finding}] {m.problem}: expected {m.expected!r}, "
                  f"got {m.got!r}")
    return 0 if result.mismatches.empty else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", action="store_true", help="convert the wheel and bulk-load it first")
    parser.add_argument("--patients", type=int, default=None, help="only the N lowest patient ids")
    parser.add_argument("--classes", type=int, choices=(3, 5), default=3, help="label set of the export")
    parser.add_argument("--stated-only", action="store_true", help="export stated labels only")
    parser.add_argument("--rounds", type=int, default=2, help="exports in a row (the last is the warm figure)")
    parser.add_argument("--file", type=Path, default=None, help="check this file; load and export nothing")
    parser.add_argument("--keep", action="store_true", help="leave the server running at the end")
    args = parser.parse_args()
    if args.file is not None:
        sys.exit(_check(args.file, args.patients, args.classes, args.stated_only))
    home = Path(os.environ["CXRKG_HOME"])
    out = home / f"pairs-nih-{args.patients or 'all'}-{args.classes}{'-stated' if args.stated_only else ''}.csv"
    try:
        if args.load:
            load_nih(home, args.patients)
        _export(out, args.classes, args.stated_only, max(1, args.rounds))
    finally:
        if not args.keep:
            stop_server()
    sys.exit(_check(out, args.patients, args.classes, args.stated_only))


if __name__ == "__main__":
    main()
