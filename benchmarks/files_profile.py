"""Where the bulk load's plan and files stages spend their CPU, per input file: the steps of writing import
files run one after the other in this one process (no workers, no Neo4j), each timed in CPU seconds of
the process, then (``--cprofile``) the functions that took the most time under cProfile.

Steps: plan (discover the files, read the metadata CSVs, order and batch them), parse (read each file once,
its SHA-256, JSON to records, validation), fingerprint (hashing the files parse did not read whole), rows
(checks and the rows of records written to the import files), derive (states and events per patient, their rows written), finish (patients, studies,
vocabulary). The sum is the CPU per input file a worker spends; the load spreads it over its workers.

Usage: python benchmarks/files_profile.py COHORT [--batch-files 500] [--cprofile] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def step_seconds(cohort: Path, out: Path, batch_files: int = 500) -> tuple[int, dict[str, float]]:
    """(input files, CPU seconds per step) of writing the cohort's import files into ``out`` in this
    process, as the bulk load's workers write them (every batch in turn)."""
    from graph.ingest import discover, parse_files, plan_ingest, store_files
    from graph.ingest.bulk import BulkSink
    from graph.ingest.import_files import ImportFiles
    from graph.ingest.parse import fingerprinted
    from graph.vocabulary import vocabulary

    cpu = time.process_time
    took = dict.fromkeys(("plan", "parse", "fingerprint", "rows", "derive", "finish"), 0.0)
    t = cpu()
    vocab = vocabulary()
    the_plan = plan_ingest(discover([cohort], fingerprints=False), {}, vocab.version)
    took["plan"] = cpu() - t
    sink = BulkSink(ImportFiles(out), vocab, datetime.now())
    derive = sink._derive_patients

    def timed_derive(*args):  # derivation runs inside end_batch and link_patients
        started = cpu()
        derive(*args)
        took["derive"] += cpu() - started
    sink._derive_patients = timed_derive
    unlinked: set[str] = set()
    for batch in the_plan.batches(batch_files):
        t = cpu()
        parsed = parse_files(batch, vocab, None)
        took["parse"] += cpu() - t
        t = cpu()
        batch = fingerprinted(batch, parsed)
        took["fingerprint"] += cpu() - t
        t = cpu()
        result = store_files(sink, batch, parsed, vocab, set(), the_plan.metadata, the_plan.patients_within(batch))
        sink.end_batch()
        took["rows"] += cpu() - t
        unlinked = (unlinked - result.linked) | (result.patients - result.linked)
    took["rows"] -= took["derive"]  # derivation inside end_batch is counted on its own
    t, derived = cpu(), took["derive"]
    sink.link_patients(unlinked)
    sink.finish(vocab)
    took["finish"] = cpu() - t - (took["derive"] - derived)  # parked patients' derivation: in derive
    return len(the_plan.load), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cohort", type=Path)
    parser.add_argument("--batch-files", type=int, default=500)
    parser.add_argument("--cprofile", action="store_true", help="then the top functions under cProfile")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="files-profile-"))
    try:
        files, took = step_seconds(args.cohort, out / "plain", args.batch_files)
        total = sum(took.values())
        print(f"plan and files stages in one process, CPU per input file ({files:,} files): "
              + ", ".join(f"{k} {1000 * v / files:.3f} ms" for k, v in took.items())
              + f"; total {1000 * total / files:.3f} ms", flush=True)
        if args.cprofile:
            profile = cProfile.Profile()
            profile.runcall(step_seconds, args.cohort, out / "profiled", args.batch_files)
            pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(args.top)
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
