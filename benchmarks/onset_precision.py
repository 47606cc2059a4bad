"""Derived onsets against the synthetic ground truth, with and without presence implied by stated comparisons.

Writes the demo's synthetic cohort (200 patients, seed 7, as `cxrkg demo` does) unless it is there, reads it
as an ingest would and derives every patient with graph.longitudinal.events (the derivation every loader stores), then
prints, for the strict reading (stated states only) and the default one (implied presence), the anatomy-level
derived onsets: how many, how many true, precision and recall against ground_truth.parquet's "new" rows, the
false onsets that a stated no change / improved / resolved / repositioned against the same prior contradicts,
and the true onsets lost where a source stated such a change (the cohort's ~10 % comparison label noise).
No Neo4j needed.

Usage: python benchmarks/onset_precision.py [--patients 200] [--seed 7] [--out FOLDER]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help="cohort folder (default: a temporary one)")
    args = parser.parse_args()

    from graph.synth import GROUND_TRUTH, write_cohort
    from graph.synth.onsets import cohort_facts, score_onsets, true_onsets

    with tempfile.TemporaryDirectory() as tmp:
        cohort = args.out or Path(tmp) / "cohort"
        if not (cohort / GROUND_TRUTH).exists():
            write_cohort(cohort, patients=args.patients, seed=args.seed)
        t = time.perf_counter()
        facts, mentions = cohort_facts(cohort)
        truth = true_onsets(cohort)
        print(f"cohort: {args.patients} patients, seed {args.seed}; {sum(map(len, facts.values())):,} studies "
              f"read in {time.perf_counter() - t:.1f} s")
        for label, implied in (("stated states only (strict)", False), ("implied presence (default)", True)):
            s = score_onsets(facts, mentions, truth, implied_presence=implied)
            print(f"{label:<30} derived {s.derived:5,}  true {s.true:5,}  hits {s.hits:5,}  precision "
                  f"{s.precision:.3f}  recall {s.recall:.3f}  false onsets contradicted by a stated comparison "
                  f"{s.contradicted_false:4}  true onsets where a source stated no onset {s.lost_to_statements:4}")


if __name__ == "__main__":
    main()
