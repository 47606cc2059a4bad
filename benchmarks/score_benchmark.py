"""How fast report scoring runs: N synthetic reports scored as copy-prior against their references
(:func:`flows.score_flow.score_items`, the rules extractor on one worker per core as the
command runs it by default, without the graph read), and the training reward (:class:`graph.report_scoring.score.ReportScorer`) on a batch
once its cohort's facts and references are in memory. The facts come from the synthetic cohort's own files
(its RadGraph documents and ground truth), standing in for a graph read (``cohort_facts``: one query).

    python benchmarks/score_benchmark.py --reports 10000 --batch 1000
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pandas as pd

from flows.score_flow import score_items
from graph.extract.pipeline import EXTRACTORS
from graph.records import Rejection
from graph.report_scoring.facts import GraphChange, StudyFacts
from graph.report_scoring.score import ReportScorer
from graph.report_scoring.summary import summarise
from graph.runtime.processes import available_cores
from graph.synth import write_cohort


def cohort_facts_of(folder: Path) -> dict[str, StudyFacts]:
    """Facts of a synthetic cohort from its files: reports, priors, and the truth's changes (stated where the
    report states one, else derived)."""
    texts: dict[str, str] = {}
    for f in (folder / "radgraph").rglob("*.json"):
        for key, doc in json.loads(f.read_text()).items():
            texts[key.rsplit("/s", 1)[1].removesuffix(".txt")] = doc["text"]
    truth = pd.read_parquet(folder / "ground_truth.parquet")
    facts: dict[str, StudyFacts] = {}
    for sid, rows in truth.groupby("study_id"):
        prior = rows["prior_study_id"].iloc[0]
        changes: dict[str, tuple[GraphChange, ...]] = {}
        for r in rows.itertuples():
            stated = r.stated_radgraph if isinstance(r.stated_radgraph, str) else None
            changes[r.finding] = (GraphChange(stated or r.change, "stated" if stated else "derived", "synth"),)
        facts[str(sid)] = StudyFacts(str(sid), str(rows["patient_id"].iloc[0]), str(prior), texts.get(str(sid)),
                                     texts.get(str(prior)), {}, {}, changes)
    return facts


def main() -> None:
    """Score N copy-prior reports on every core, then the reward on one batch; print the times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        patients, facts = max(1, args.reports // 4), {}
        while sum(1 for f in facts.values() if f.prior_report and f.report) < args.reports:
            write_cohort(Path(tmp), patients=patients, seed=0)
            facts = cohort_facts_of(Path(tmp))
            patients = int(patients * 1.3) + 1
    items = [(f.study_id, f.prior_report, f.report) for f in facts.values() if f.prior_report and f.report]
    items = items[:args.reports]
    workers = available_cores()
    started = time.perf_counter()
    out = score_items(items, facts, "rules", workers)
    results = [r for r in out if not isinstance(r, Rejection)]
    rejections = [r for r in out if isinstance(r, Rejection)]
    summary = summarise(results, "rules")
    scored = time.perf_counter() - started
    print(f"{len(results)} reports scored (copy-prior) on {workers} workers, {len(rejections)} rejected: {scored:.1f} s "
          f"({len(results) / scored:.0f} reports/s); temporal precision {summary.temporal_precision[2]:.3f}")
    scorer = ReportScorer(facts, EXTRACTORS["rules"]())
    batch = items[:args.batch]
    scorer([sid for sid, _, _ in batch], [g for _, g, _ in batch])  # references annotated once, kept
    started = time.perf_counter()
    scores = scorer([sid for sid, _, _ in batch], [g for _, g, _ in batch])
    took = time.perf_counter() - started
    print(f"reward: a batch of {len(batch)} scored in {took:.2f} s ({sum(s is not None for s in scores)} scores)")


if __name__ == "__main__":
    main()
