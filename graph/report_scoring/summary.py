"""The corpus summary of a scoring run: each figure's mean with a 95 % bootstrap interval, temporal precision
and recall (overall and per finding), F1-CheXbert's micro / macro F1 over CheXpert's labels, and the
change-like words no change entity covered."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from graph.bootstrap import cluster_bootstrap
from graph.report_scoring.chexpert import chexpert_map, corpus_f1
from graph.report_scoring.score import StudyResult
from graph.report_scoring.temporal import SUPPORTED

#: the figures summarised by their mean (SCORES.csv's numeric and boolean columns)
MEAN_FIGURES = ("f1radgraph_simple", "f1radgraph_partial", "f1radgraph_complete", "finding_f1", "has_prior",
                "prior_reference", "hallucinated_prior", "changes_stated", "changes_supported",
                "changes_contradicted", "changes_unverifiable", "changes_omitted")
#: The gold sets the extractors' change recall was measured on, and when: the temporal figures are only as good
#: as the extractor's reading of change language, so the summary names both. A measurement, not a figure of
#: this run: tests/unit/test_report_scoring.py reruns :func:`graph.extract.eval.gold_eval.evaluate_gold` and
#: compares its finding-level change counts (``GoldScores.change_findings``) with :data:`EXTRACTOR_CHANGE_RECALL`.
CHANGE_RECALL_GOLD = "the IU gold sets of graph/extract/eval/gold/ (held-out: iu_sentences_6.json; dev: the other five)"
CHANGE_RECALL_MEASURED = "2026-11-29"
#: extractor -> gold split -> (gold changes found, gold changes), finding-level, on :data:`CHANGE_RECALL_GOLD`
EXTRACTOR_CHANGE_RECALL: dict[str, dict[str, tuple[int, int]]] = {"rules": {"held-out": (47, 52), "dev": (361, 418)}}


def change_recall_note(extractor: str) -> str:
    """One line: the extractor's change recall per split with its counts, the gold sets and the date measured,
    or that it was not measured."""
    measured = EXTRACTOR_CHANGE_RECALL.get(extractor)
    if measured is None:
        return f"change recall not measured on {CHANGE_RECALL_GOLD}"
    splits = ", ".join(f"{found / gold:.3f} ({found} of {gold} gold changes) {split}"
                       for split, (found, gold) in measured.items())
    return f"change recall {splits}, on {CHANGE_RECALL_GOLD}, measured {CHANGE_RECALL_MEASURED}"


def mean_interval(values: Sequence[float], seed: int = 0) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its 95 % percentile bootstrap interval over the values (one per study;
    :func:`graph.bootstrap.cluster_bootstrap`, :data:`graph.bootstrap.DRAWS` draws, seeded); the interval is the
    mean itself for fewer than two values or values all equal; (nan, nan, nan) for none."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(data.mean())
    if data.size < 2 or np.all(data == data[0]):
        return mean, mean, mean
    low, high = cluster_bootstrap(data.size, lambda w: w @ data / data.size, seed=seed).interval()
    return mean, low, high


def ratio(num: int, den: int) -> float | None:
    """num / den, None when den is 0."""
    return num / den if den else None


def ratio_interval(nums: Sequence[int], dens: Sequence[int], seed: int = 0) -> tuple[int, int, float | None, float | None, float | None]:
    """(sum of nums, sum of dens, their ratio, low, high): a corpus ratio such as temporal precision (supported
    / stated over all studies) with its 95 % percentile bootstrap interval over studies
    (:func:`graph.bootstrap.cluster_bootstrap`: studies resampled with their numerator and denominator paired; a
    draw without a denominator counts 0). The ratio and interval are None when the denominators sum to 0; the
    interval is the ratio for fewer than two studies with a denominator."""
    num, den = int(sum(nums)), int(sum(dens))
    if not den:
        return num, den, None, None, None
    value = num / den
    if sum(1 for d in dens if d) < 2:
        return num, den, value, value, value
    n, d = np.asarray(nums, dtype=float), np.asarray(dens, dtype=float)
    low, high = cluster_bootstrap(len(n), lambda w: w @ n / max(w @ d, 1e-300), seed=seed).interval()
    return num, den, value, low, high


@dataclass
class CorpusSummary:
    """What ``cxrkg eval reports`` prints: ``means`` figure -> (mean, low, high); temporal precision
    (supported / stated) and recall (reference changes covered / reference changes) as (numerator,
    denominator, ratio, low, high), and per finding; F1-CheXbert figures; the unread change words, most
    frequent first; the extractor, its change recall on the project's gold sets, and the tables' versions."""

    studies: int
    extractor: str
    means: dict[str, tuple[float, float, float]]
    temporal_precision: tuple[int, int, float | None, float | None, float | None]
    temporal_recall: tuple[int, int, float | None, float | None, float | None]
    per_finding: dict[str, dict[str, Any]]
    chexpert: dict[str, Any]
    unread_change_words: list[tuple[str, int]]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The summary as plain JSON values."""
        return {"studies": self.studies, "extractor": self.extractor,
                "truth": "the graph is the truth of each patient's history: temporal figures are judged against it",
                "means": {k: {"mean": m, "low": lo, "high": hi} for k, (m, lo, hi) in self.means.items()},
                "extractor_change_recall": change_recall_note(self.extractor),
                "temporal_precision": dict(zip(("supported", "stated", "precision", "low", "high"),
                                               self.temporal_precision, strict=True)),
                "temporal_recall": dict(zip(("covered", "reference", "recall", "low", "high"), self.temporal_recall,
                                            strict=True)),
                "per_finding": self.per_finding, "chexpert": self.chexpert,
                "unread_change_words": dict(self.unread_change_words), "notes": self.notes}


def summarise(results: Sequence[StudyResult], extractor: str, seed: int = 0) -> CorpusSummary:
    """The corpus summary of scored studies (``extractor``: the name of the extractor that read them)."""
    means = {name: mean_interval([float(getattr(r.score, name)) for r in results], seed) for name in MEAN_FIGURES}
    per: dict[str, Counter] = {}
    for r in results:
        for v in r.temporal.verdicts:
            per.setdefault(v.change.finding, Counter())["stated"] += 1
            per[v.change.finding][v.verdict] += 1
        for c in r.temporal.reference_changes:
            per.setdefault(c.finding, Counter())["reference"] += 1
        for c in r.temporal.covered:
            per[c.finding]["covered"] += 1
    t = [r.temporal for r in results]
    precision = ratio_interval([x.count(SUPPORTED) for x in t], [len(x.verdicts) for x in t], seed)
    recall = ratio_interval([len(x.covered) for x in t], [len(x.reference_changes) for x in t], seed)
    per_finding = {f: {**dict(c), "precision": ratio(c[SUPPORTED], c["stated"]),
                       "recall": ratio(c["covered"], c["reference"])} for f, c in sorted(per.items())}
    unread: Counter = Counter()
    for r in results:
        unread.update(r.generated.unread_change_words)
    notes = [f"{n} studies with no entity in one annotation or both: F1RadGraph 0 there by the radgraph package's rule"
             ] if (n := sum(r.no_entity for r in results)) else []
    return CorpusSummary(len(results), extractor, means, precision, recall, per_finding, chexpert_figures(results),
                         unread.most_common(), notes)


def chexpert_figures(results: Sequence[StudyResult]) -> dict[str, Any]:
    """F1-CheXbert's figures over CheXpert's 14 labels and its 5 most common, from each study's positive
    findings through graph/vocab/chexpert.yaml (whose versions the result names)."""
    table = chexpert_map()
    gen = [table.labels(r.generated.positive) for r in results]
    ref = [table.labels(r.reference.positive) for r in results]
    micro14, macro14, per = corpus_f1(gen, ref, table.observations)
    micro5, macro5, _ = corpus_f1(gen, ref, table.top5)
    return {"table_version": table.version, "vocabulary_version": table.vocabulary, "micro_f1_14": micro14,
            "macro_f1_14": macro14, "micro_f1_5": micro5, "macro_f1_5": macro5, "per_observation": per}
