"""The forecasters' patient bootstrap: scikit-learn called once a draw (the plain way) against the batched draws
of gnn.forecast.draw_metrics (built once, then a sparse product a batch), on the same synthetic validation
table and the same draws, in one run.

The table is the size of the whole NIH cohort's validation split by default (2,025 patients; docs/forecasting.md
counts about 214,000 (pair, finding) rows over 14 findings, this table draws 2 to 14 pairs a patient). The
plain way runs ``--plain-draws`` draws (a quarter of a second each); the batched way runs those same draws,
whose figures must agree to 1e-9, and then ``--draws`` (the commands' default, 2,000). Also printed: one point
evaluation (the figures without a bootstrap), about what any one draw costs the plain way.

Usage: python benchmarks/bootstrap_draws.py [--patients 2025] [--draws 2000] [--plain-draws 100]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from gnn.forecast.evaluation import METRICS, TARGETS, Subsets
from gnn.forecast.rows import ONSET, PERSISTENCE, RESOLUTION, STAYS_ABSENT
from graph.bootstrap import cluster_bootstrap
from graph.terms import BOOTSTRAP_DRAWS

FINDINGS = 14


def synthetic_rows(patients: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """(rows, p): one row per (pair, finding) for ``patients`` patients of 2 to 14 pairs, a prior state that
    persists with probability 0.6, and a forecast p that leans towards the truth."""
    rng = np.random.default_rng(seed)
    pairs = rng.integers(2, 15, patients)
    patient = np.repeat(np.arange(patients), pairs * FINDINGS)
    finding = np.tile(np.arange(FINDINGS), pairs.sum())
    prior = (rng.random(len(patient)) < 0.09).astype(int)
    nxt = np.where(rng.random(len(patient)) < 0.6, prior, (rng.random(len(patient)) < 0.1).astype(int))
    p = np.clip(0.2 * nxt + 0.2 * prior + 0.6 * rng.random(len(patient)), 0, 1).round(3)  # ties, as models give
    target = np.where(prior == 1, np.where(nxt == 1, PERSISTENCE, RESOLUTION), np.where(nxt == 1, ONSET, STAYS_ABSENT))
    rows = pd.DataFrame({"patient_id": patient.astype(str), "finding": [f"f{k}" for k in finding],
                         "prior_present": prior, "next_present": nxt, "target": target})
    return rows, p


def plain_draw(subsets: Subsets, p: np.ndarray, w: np.ndarray) -> list[float]:
    """The five macro figures of one draw, scikit-learn with ``sample_weight`` on the drawn rows."""
    figures: dict[str, list[float]] = {m: [] for m in METRICS[:4]}
    for onset, resolution in subsets.by_finding.values():
        for name, idx, y, s in (("onset", onset, subsets.next[onset], p[onset]),
                                ("resolution", resolution, 1 - subsets.next[resolution], 1 - p[resolution])):
            keep = w[idx] > 0
            if keep.any() and y[keep].min() != y[keep].max():
                figures[f"{name}_auroc"].append(roc_auc_score(y[keep], s[keep], sample_weight=w[idx][keep]))
                figures[f"{name}_auprc"].append(average_precision_score(y[keep], s[keep], sample_weight=w[idx][keep]))
    f1 = f1_score(subsets.target, subsets.predicted(p), labels=list(TARGETS), average="macro", zero_division=0,
                  sample_weight=w)
    return [float(np.mean(v)) if v else np.nan for v in figures.values()] + [float(f1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=2025)
    parser.add_argument("--draws", type=int, default=BOOTSTRAP_DRAWS)
    parser.add_argument("--plain-draws", type=int, default=100)
    args = parser.parse_args()

    rows, p = synthetic_rows(args.patients)
    subsets = Subsets(rows)
    print(f"{len(rows):,} rows, {args.patients:,} patients, {FINDINGS} findings")

    started = time.perf_counter()
    subsets.macro(p)
    point = time.perf_counter() - started

    started = time.perf_counter()
    plain = cluster_bootstrap(rows["patient_id"], lambda w: plain_draw(subsets, p, w), args.plain_draws, 0)
    plain_s = time.perf_counter() - started

    started = time.perf_counter()
    same = cluster_bootstrap(len(subsets.patients), subsets.macro_draws(p), args.plain_draws, 0, batched=True)
    same_s = time.perf_counter() - started
    gap = float(np.nanmax(np.abs(plain.values - same.values)))

    started = time.perf_counter()
    full = cluster_bootstrap(len(subsets.patients), subsets.macro_draws(p), args.draws, 0, batched=True)
    full_s = time.perf_counter() - started

    print(f"{'':34}{'seconds':>10}{'ms a draw':>12}")
    print(f"{'one point evaluation (scikit-learn)':34}{point:10.2f}{1000 * point:12.1f}")
    print(f"{f'plain, {args.plain_draws:,} draws':34}{plain_s:10.2f}{1000 * plain_s / args.plain_draws:12.1f}")
    print(f"{f'batched, the same {args.plain_draws:,} draws':34}{same_s:10.2f}{1000 * same_s / args.plain_draws:12.1f}")
    print(f"{f'batched, {args.draws:,} draws':34}{full_s:10.2f}{1000 * full_s / max(args.draws, 1):12.1f}")
    print(f"plain / batched on the same draws: {plain_s / same_s:.1f}x; largest difference of a figure {gap:.1e}")
    print(f"plain at {args.draws:,} draws (extrapolated): {plain_s / args.plain_draws * args.draws:.0f} s a model and "
          f"split, against {full_s:.1f} s batched")
    for k, m in enumerate(METRICS):
        low, high = full.interval(k)
        print(f"  {m}: [{low:.3f}, {high:.3f}]")
    if gap > 1e-9:
        raise SystemExit(f"the batched figures differ from scikit-learn's by {gap:.1e}")


if __name__ == "__main__":
    main()
