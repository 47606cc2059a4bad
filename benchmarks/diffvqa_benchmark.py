"""Medical-Diff-VQA benchmark on the NIH ChestX-ray14 cohort: `cxrkg diffvqa generate` for the whole cohort
(target < 120 s) and `cxrkg diffvqa answer` for 6,000 of its questions (target < 30 s), server running.

Runs against a dedicated local Neo4j (CXRKG_HOME=.cxrkg/bench-diffvqa, Bolt port 7697, HTTP 7487). With
``--load`` it first converts the NIH tables (`cxrkg datasets nih`) and bulk-loads them into an emptied store
(what `cxrkg ingest --bulk` runs; several minutes); without it, the graph already loaded there is used.
Each command runs as a user runs it, in its own process; the seconds printed are the process's wall time
(imports and the server round trips included). The answers of the 6,000 questions are compared with the
generated ones (they must be equal: both come from the same graph and rules).

Usage: python benchmarks/diffvqa_benchmark.py [--load] [--patients N] [--questions 6000]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import REPO, use_dedicated_server  # noqa: E402

use_dedicated_server("bench-diffvqa", 7697, 7487)


def _cli(*args: str) -> tuple[float, str]:
    """Run ``cxrkg ARGS`` in a fresh process; its wall seconds and output. Exits when it fails."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "flows.cli", *args], capture_output=True, text=True, cwd=REPO,
                          check=False)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"cxrkg {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds, proc.stdout + proc.stderr


def _load(patients: int | None) -> None:
    """Convert the NIH tables and bulk-load them into an emptied store (nih_benchmark.py's bulk child)."""
    from graph.datasets.nih.convert import convert_nih
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    settings = local_server_settings()
    cohort = settings.home / f"nih-{patients or 'all'}"
    shutil.rmtree(cohort, ignore_errors=True)
    summary = convert_nih(cohort, limit_patients=patients)
    server = LocalNeo4jServer(settings)
    server.stop()
    shutil.rmtree(settings.home / "data", ignore_errors=True)
    t = time.perf_counter()
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "nih_benchmark.py"), "--bulk-child", str(cohort)],
                   check=True, capture_output=True, text=True)
    print(f"loaded {summary.images:,} NIH images of {summary.patients:,} patients (bulk) in "
          f"{time.perf_counter() - t:.1f} s", flush=True)


def main() -> None:
    from graph.formats.diffvqa import ANSWER_COLUMNS, read_question_file

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", action="store_true", help="convert and bulk-load NIH first (minutes)")
    parser.add_argument("--patients", type=int, default=None, help="with --load: only the N lowest patient ids")
    parser.add_argument("--questions", type=int, default=6000, help="questions to answer")
    args = parser.parse_args()
    if args.load:
        _load(args.patients)
    _cli("db", "start")
    from graph.settings import local_server_settings

    work = local_server_settings().home / "diffvqa"
    work.mkdir(parents=True, exist_ok=True)
    generated, questions, answers = work / "generated.csv", work / "questions.csv", work / "answers.csv"
    seconds, _ = _cli("diffvqa", "generate", "--out", str(generated), "--seed", "0")
    frame = read_question_file(generated, ANSWER_COLUMNS)
    pairs = frame[["study_id", "ref_id"]].drop_duplicates().shape[0]
    print(f"generate: {len(frame):,} questions for {pairs:,} pairs of {frame['subject_id'].nunique():,} patients in "
          f"{seconds:.1f} s (target < 120 s)", flush=True)
    print("  per type: " + ", ".join(f"{k} {v:,}" for k, v in frame["question_type"].value_counts().items()))
    sample = frame.sample(n=min(args.questions, len(frame)), random_state=0)
    sample.drop(columns=["answer"]).to_csv(questions, index=False)
    seconds, _ = _cli("diffvqa", "answer", str(questions), "--out", str(answers))
    got = read_question_file(answers, ANSWER_COLUMNS)
    same = int((got["answer"].values == sample["answer"].values).sum())
    print(f"answer: {len(got):,} questions in {seconds:.1f} s (target < 30 s); {same:,} answers equal the "
          f"generated ones, {len(got) - same} differ; basis: "
          + ", ".join(f"{k} {v:,}" for k, v in got["basis"].value_counts().items()), flush=True)


if __name__ == "__main__":
    main()
