"""Development figures of the rules extractor on the annotated IU sentences, on the whole ``dev`` half and
on its two folds (:func:`graph.extract.eval.gold_eval.dev_fold`), so that a rule change can be kept only when it
helps (or is neutral) on both; with ``--mesh``, also the IU-vs-MeSH micro-F1 and laterality of
``cxrkg eval extract``, whose floors (0.92) a change must keep; with ``--misses``, the development
findings missed, per fold.

Reads only the ``dev`` sentences (the first set's two halves since its held-out half was retired on
2026-11-26): the held-out set is never loaded (``load_gold(split="dev")``).

    python benchmarks/gold_folds.py [--mesh] [--misses]
"""

from __future__ import annotations

import argparse

from graph.extract.eval.gold_eval import GOLD_FIGURES, dev_fold, load_gold, rules_predictions, score
from graph.datasets.iu import load_reports
from graph.vocabulary import vocabulary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", action="store_true", help="also the IU-vs-MeSH micro-F1 and laterality")
    parser.add_argument("--misses", action="store_true", help="list the missed development findings")
    args = parser.parse_args()
    v = vocabulary()
    reports = load_reports()
    by_id = {r.report_id: r for r in reports}
    gold = load_gold(split="dev")
    predicted = rules_predictions(by_id, gold, v)
    parts = {"dev": gold, "fold A": [g for g in gold if dev_fold(g.report_id) == "A"],
             "fold B": [g for g in gold if dev_fold(g.report_id) == "B"]}
    scores = {name: score(part, predicted, v) for name, part in parts.items()}
    print(f"vocabulary {v.version}; " + ", ".join(f"{n}: {s.sentences} sentences, {s.tp + s.fn} findings"
                                                   for n, s in scores.items()))
    print(f"{'':28}" + "".join(f"{n:>10}" for n in scores))
    for label, attr in GOLD_FIGURES:
        print(f"{label:28}" + "".join(f"{getattr(s, attr):>10.3f}" for s in scores.values()))
    if args.misses:
        text = {g.key: getattr(by_id[g.report_id], g.section)[g.start:g.end] for g in gold}
        for name in ("fold A", "fold B"):
            print(f"\nmisses, {name}:")
            for key, finding in scores[name].misses:
                print(f"  {finding:<32} {key[0]:>5} {text[key][:110]}")
    if args.mesh:
        from graph.extract.eval.evaluate import evaluate_all

        result = evaluate_all(reports, v=v)
        print(f"\nIU vs MeSH: rules micro-F1 {result.scores['rules'].micro_f1():.3f}, "
              f"laterality {result.laterality.accuracy():.3f}")


if __name__ == "__main__":
    main()
