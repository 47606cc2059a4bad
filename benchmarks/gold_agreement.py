"""How far two readers of the annotation guide agree on IU sentences: a second reader's labels of 80 sentences
of a held-out set (``graph/extract/eval/gold/iu_sentences_N_second_reader.json``, read blind while the set was
held out; :data:`READINGS`) scored against the set's gold (``iu_sentences_N.json``) with the extractor's own
figures (:func:`graph.extract.eval.gold_eval.score`), so that the extractor's figures on sets labelled the same way
can be read against what a second careful reader gets. Reads labels only: no extractor runs.

A reader's findings of one name in a sentence are folded as the extractor's are (present over uncertain over
absent; left and right make bilateral; change classes pooled).

    python benchmarks/gold_agreement.py
"""

from __future__ import annotations

from collections import defaultdict

from graph.extract.eval.gold_eval import GOLD_DIR, GOLD_FIGURES, Predicted, load_gold, score
from graph.vocabulary import vocabulary

#: (set, its gold, the second reading): the second, fourth and fifth sets (each held out until a round's end, dev
#: since) and the sixth (held out now)
READINGS = tuple((name, GOLD_DIR / f"iu_sentences_{n}.json", GOLD_DIR / f"iu_sentences_{n}_second_reader.json")
                 for name, n in (("second set", 2), ("fourth set", 4), ("fifth set", 5), ("sixth set", 6)))
_RANK = {"present": 0, "uncertain": 1, "absent": 2}


def as_predictions(sentences) -> dict[tuple, list[Predicted]]:
    """A reader's sentences as the ``Predicted`` findings :func:`score` compares with the gold."""
    out = {}
    for g in sentences:
        by_name = defaultdict(list)
        for f in g.findings:
            by_name[f.finding].append(f)
        found = []
        for name, fs in by_name.items():
            sides = {s for f in fs for s in (("left", "right") if f.laterality == "bilateral" else (f.laterality,))}
            sides.discard("none")
            side = "bilateral" if len(sides) == 2 else next(iter(sides), "none")
            found.append(Predicted(name, min((f.assertion for f in fs), key=_RANK.__getitem__), side,
                                   frozenset(f.change for f in fs if f.change)))
        out[g.key] = found
    return out


def main() -> None:
    v = vocabulary()
    agreements = {}
    for name, gold_path, second_path in READINGS:
        second = load_gold(second_path)
        keys = {g.key for g in second}
        agreements[name] = score([g for g in load_gold(gold_path) if g.key in keys], as_predictions(second), v)
    print("second reader against the gold: " + "; ".join(
        f"{name}: {a.sentences} sentences, {a.tp + a.fn} gold findings, {a.tp + a.fp} second-reader findings"
        for name, a in agreements.items()))
    print(f"{'':28}" + "".join(f"{name:>12}" for name in agreements))
    for label, attr in GOLD_FIGURES:
        print(f"{label:28}" + "".join(f"{getattr(a, attr):>12.3f}" for a in agreements.values()))


if __name__ == "__main__":
    main()
