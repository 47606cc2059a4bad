"""CXRTrek-format stages on the whole NIH cohort against the independent check; prints figures.

Issue 46's acceptance: the stage 2 and 5 answers (and stage 6's against the next study) that
`cxrkg cxrtrek generate` writes from the graph of NIH ChestX-ray14 agree with graph.checks.nih.cxrtrek
(plain pandas over the NIH tables, apart from the graph code) on every study: 0 mismatches; and the whole
cohort is generated in under 120 s.

Runs against the NIH benchmark's own local Neo4j (CXRKG_HOME=.cxrkg/bench-nih, Bolt port 7699, as
benchmarks/nih_benchmark.py; CXRKG_HOME / CXRKG_BOLT_PORT / CXRKG_HTTP_PORT set by the caller win), so that
benchmark's load can be reused. Steps:

1. with --load: `cxrkg datasets nih` (the --patients lowest patient ids, default all) and `cxrkg ingest --bulk`
   into an emptied store; otherwise the graph already there is used;
2. `cxrkg cxrtrek generate --out F --seed S`: seconds, samples and questions per stage;
3. the check on F: samples and questions checked per kind, mismatches by problem and the first ten.

--file F skips steps 1-2 and checks an existing file.

Usage: python benchmarks/cxrtrek_nih_check.py [--load] [--patients N] [--seed S] [--file F] [--keep]
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
    """Step 2: the samples from the graph (the server runs)."""
    seconds, said = cxrkg("cxrtrek", "generate", "--out", str(out), "--seed", str(args.seed))
    print(f"cxrkg cxrtrek generate: {seconds:.1f} s wall (target < 120 s on the whole cohort): {said}", flush=True)


def _check(file: Path, patients: int | None) -> int:
    """Step 3: the independent check; returns the exit code."""
    from graph.checks.nih.cxrtrek import check_samples, read_file
    from graph.checks.nih.reference import load_tables

    started = time.perf_counter()
    result = check_samples(read_file(file), load_tables(limit_patients=patients))
    kinds = ", ".join(f"{k} {v:,}" for k, v in result.checked.items())
    print(f"independent check of {file.name}: {result.samples:,} samples, questions checked: {kinds}; "
          f"in {time.perf_counter() - started:.1f} s; {len(result.mismatches):,} mismatches", flush=True)
    print_mismatches(result.mismatches, "problem",
                     lambda m: f"{m.study_id} [{m.kind} {m.finding}] {m.problem}: expected {m.expected!r}, got {m.got!r}")
    return 0 if result.mismatches.empty else 1


def main() -> None:
    run_nih_check(__doc__, "cxrtrek generate", "file", "cxrtrek-nih-{patients}-seed{seed}.json", _generate, _check)


if __name__ == "__main__":
    main()
