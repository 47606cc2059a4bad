"""Where the bulk load's plan and files stages spend their CPU, per input file: the steps of writing import
files run one after the other in this one process (no workers, no Neo4j), each timed in CPU seconds of
the process, then (``--cprofile``) the functions that took the most time under cProfile.

Steps: plan (discover the files, read the metadata CSVs, order and batch them), parse (read each file once,
its SHA-256, JSON to records, validation), fingerprint (hashing the files parse did not read whole), rows
(checks and the rows of records written to the import files), measure (the images' measurements and their
Measurement rows written: a part of the rows step, counted on its own), derive (states and events per patient, their rows written), finish (patients, studies,
vocabulary). The sum is the CPU per input file a worker spends; the load spreads it over its workers.

With and without the measurements (issue 54): the same steps run in turns with the Measurement rows
(``graph.ingest.bulk.measurement_rows``, the anatomy boxes measured and their rows written) and without them
(that function patched to return no rows, so nothing is measured), ``--rounds`` times each, alternating, after
one round not counted (imports, the vocabulary and the files read once); the
line per arm gives its fastest round and the ratio of the two (the target: at most 1.10). The measure step
of the arm with the measurements gives the same ratio within one run, free of the noise between runs:
its total over its total less the measure step. Without COHORT a
1,000-patient synthetic cohort (``cxrkg synth --patients 1000 --seed 0``) is written to a temporary folder.

Usage: python benchmarks/files_profile.py [COHORT] [--patients 1000] [--seed 0] [--rounds 3] [--batch-files 500]
       [--cprofile] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def step_seconds(cohort: Path, out: Path, batch_files: int = 500) -> tuple[int, dict[str, float]]:
    """(input files, CPU seconds per step) of writing the cohort's import files into ``out`` in this
    process, as the bulk load's workers write them (every batch in turn)."""
    import graph.ingest.bulk as bulk
    from graph.ingest import discover, parse_files, plan_ingest, store_files
    from graph.ingest.bulk import BulkSink
    from graph.ingest.import_files import ImportFiles
    from graph.ingest.parse import fingerprinted
    from graph.vocabulary import vocabulary

    cpu = time.process_time
    took = dict.fromkeys(("plan", "parse", "fingerprint", "rows", "measure", "derive", "finish"), 0.0)
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
    measured, node_rows, pairs = bulk.measurement_rows, sink.files.node_rows, sink.files.relationship_pairs

    def timed(step, *args):  # the measurements and the writing of their rows, inside store_files
        started = cpu()
        done = step(*args)
        took["measure"] += cpu() - started
        return done
    bulk.measurement_rows = lambda *a: timed(measured, *a)  # type: ignore[assignment]
    sink.files.node_rows = lambda label, rows: (timed if label == "Measurement" else _call)(node_rows, label, rows)
    sink.files.relationship_pairs = lambda t, *a: (timed if t == "HAS_MEASUREMENT" else _call)(pairs, t, *a)
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
    bulk.measurement_rows = measured
    took["rows"] -= took["derive"] + took["measure"]  # derivation and measurement are counted on their own
    t, derived = cpu(), took["derive"]
    sink.link_patients(unlinked)
    sink.finish(vocab)
    took["finish"] = cpu() - t - (took["derive"] - derived)  # parked patients' derivation: in derive
    return len(the_plan.load), took


def _call(step, *args):
    return step(*args)


@contextmanager
def without_measurements():
    """The bulk sink writes no Measurement rows (and measures nothing) inside the block."""
    import graph.ingest.bulk as bulk

    if not hasattr(bulk, "measurement_rows"):
        raise SystemExit("graph.ingest.bulk has no measurement_rows: this checkout writes no measurements")
    kept = bulk.measurement_rows
    bulk.measurement_rows = lambda files, study_patient: []
    try:
        yield
    finally:
        bulk.measurement_rows = kept


def side_by_side(cohort: Path, out: Path, batch_files: int, rounds: int) -> None:
    """Print each arm's fastest round (CPU per input file by step) and the ratio with / without."""
    best: dict[str, tuple[float, dict[str, float]]] = {}
    files = 0
    arms = [("with measurements", nullcontext), ("without measurements", without_measurements)]
    files, took = step_seconds(cohort, out / "warm-up", batch_files)  # imports, vocabulary, the page cache
    shutil.rmtree(out / "warm-up", ignore_errors=True)
    print(f"  warm-up round, not counted: {1000 * sum(took.values()) / files:.3f} ms per file", flush=True)
    for r in range(rounds):
        for arm, patched in arms if r % 2 == 0 else arms[::-1]:  # each arm first in every other round
            folder = out / f"{r}-{arm.split()[0]}"
            with patched():
                files, took = step_seconds(cohort, folder, batch_files)
            shutil.rmtree(folder, ignore_errors=True)
            total = sum(took.values())
            print(f"  round {r + 1}, {arm}: {1000 * total / files:.3f} ms per file", flush=True)
            if arm not in best or total < best[arm][0]:
                best[arm] = (total, took)
    for arm, (total, took) in best.items():
        print(f"{arm}, fastest of {rounds}, CPU per input file ({files:,} files): "
              + ", ".join(f"{k} {1000 * v / files:.3f} ms" for k, v in took.items())
              + f"; total {1000 * total / files:.3f} ms", flush=True)
    ratio = best["with measurements"][0] / best["without measurements"][0]
    total, took = best["with measurements"]
    print(f"with / without measurements: {ratio:.3f} (target at most 1.10); within the fastest round with them, "
          f"its total over its total less the measure step: {total / (total - took['measure']):.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cohort", type=Path, nargs="?", default=None)
    parser.add_argument("--patients", type=int, default=1000, help="patients when no COHORT is given")
    parser.add_argument("--seed", type=int, default=0, help="seed when no COHORT is given")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each arm, alternating")
    parser.add_argument("--batch-files", type=int, default=500)
    parser.add_argument("--cprofile", action="store_true", help="then the top functions under cProfile")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="files-profile-"))
    try:
        cohort = args.cohort
        if cohort is None:
            from graph.synth import write_cohort

            cohort = out / "cohort"
            print(write_cohort(cohort, patients=args.patients, seed=args.seed).line(), flush=True)
        side_by_side(cohort, out, args.batch_files, args.rounds)
        if args.cprofile:
            profile = cProfile.Profile()
            profile.runcall(step_seconds, cohort, out / "profiled", args.batch_files)
            pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(args.top)
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
