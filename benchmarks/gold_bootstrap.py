"""How much the annotated-sentence figures of one split would move with another draw of its reports: 95 %
intervals of finding recall, assertion accuracy and finding-level change micro-F1 over 1,000 bootstrap resamples
of the split's reports (a report's sentences stay together, as they were drawn), from one run of the rules
extractor (:func:`graph.extract.eval.gold_eval.rules_predictions`) and the figures of
:func:`graph.extract.eval.gold_eval.score`. It re-scores the predictions the split's own score makes; it tunes
nothing, so on ``held-out`` run it only with that split's one score.

    python benchmarks/gold_bootstrap.py --split held-out
"""

from __future__ import annotations

import argparse
import random

from graph.extract.eval.gold_eval import SPLITS, load_gold, rules_predictions, score
from graph.datasets.iu import load_reports
from graph.vocabulary import vocabulary

FIGURES = (("finding recall", "recall"), ("assertion accuracy", "assertion_accuracy"),
           ("change micro-F1, findings", "change_f1_findings"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=SPLITS, required=True)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    v = vocabulary()
    gold = load_gold(split=args.split)
    predicted = rules_predictions({r.report_id: r for r in load_reports()}, gold, v)
    by_report: dict[str, list] = {}
    for g in gold:
        by_report.setdefault(g.report_id, []).append(g)
    ids, rng = sorted(by_report), random.Random(0)
    draws = {attr: [] for _, attr in FIGURES}
    for _ in range(args.resamples):
        sample = [g for i in (rng.choice(ids) for _ in ids) for g in by_report[i]]
        s = score(sample, predicted, v)
        for attr, values in draws.items():
            values.append(getattr(s, attr))
    whole = score(gold, predicted, v)
    print(f"{args.split}: {len(gold)} sentences of {len(ids)} reports; {args.resamples} resamples of its reports")
    for label, attr in FIGURES:
        values = sorted(draws[attr])
        low, high = values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]
        print(f"{label:28}{getattr(whole, attr):>7.3f}   95 % interval {low:.3f} - {high:.3f}")


if __name__ == "__main__":
    main()
