"""How far two readers of the annotation guide agree on IU sentences: the second reader's labels
(``graph/extract/gold/iu_sentences_2_second_reader.json``, 80 sentences of the second set, relabelled while it
was the held-out set) scored against the first reading (``iu_sentences_2.json``) with the extractor's own
figures (:func:`graph.extract.gold_eval.score`), so that the extractor's figures on sets labelled the same way
can be read against what a second careful reader gets. Reads labels only: no extractor runs.

A reader's findings of one name in a sentence are folded as the extractor's are (present over uncertain over
absent; left and right make bilateral; change classes pooled).

    python benchmarks/gold_agreement.py
"""

from __future__ import annotations

from collections import defaultdict

from graph.extract.gold_eval import GOLD_DIR, GOLD_FIGURES, Predicted, load_gold, score
from graph.vocabulary import vocabulary

FIRST_READER = GOLD_DIR / "iu_sentences_2.json"
SECOND_READER = GOLD_DIR / "iu_sentences_2_second_reader.json"
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
    second = load_gold(SECOND_READER)
    keys = {g.key for g in second}
    first = [g for g in load_gold(FIRST_READER) if g.key in keys]
    agreement = score(first, as_predictions(second), v)
    print(f"second reader against the first (the second set's gold): {agreement.sentences} sentences, "
          f"{agreement.tp + agreement.fn} gold findings, {agreement.tp + agreement.fp} second-reader findings")
    for label, attr in GOLD_FIGURES:
        print(f"{label:28}{getattr(agreement, attr):>10.3f}")


if __name__ == "__main__":
    main()
