"""Score report-level finding extraction against the IU reports' MeSH major tags (written by IU annotators).

A report is positive for a target when one of its MeSH major tags starts with the target's MeSH term
(``"Pleural Effusion/left/small"`` -> pleural effusion). The rules extractor predicts positive when its
output (findings + impression sections) holds an OBS-DP entity whose span names one of the target's
vocabulary findings. The baseline predicts positive when a surface form of the same vocabulary findings
occurs in a sentence with no negation word before it in that sentence. Same lexicon, so the difference is
the pipeline (ConText scope, uncertainty, section handling), not the word list.

Shapes: :func:`evaluate` returns ``{"rules": Scores, "baseline": Scores}``; :class:`Scores` has per-target
(tp, fp, fn) counts and the derived precision / recall / F1, micro and macro F1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from graph.extract.iu import IUReport
from graph.vocabulary import Vocabulary, normalise_phrase, vocabulary

#: target -> (MeSH major terms, cxrkg vocabulary findings, required substring of the span or None)
TARGETS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {
    "pleural effusion": (("pleural effusion",), ("pleural effusion",), None),
    "cardiomegaly": (("cardiomegaly",), ("enlarged cardiac silhouette",), None),
    "atelectasis": (("pulmonary atelectasis",), ("atelectasis", "linear/patchy atelectasis", "lobar/segmental collapse"), None),
    "pneumothorax": (("pneumothorax",), ("pneumothorax", "hydropneumothorax"), None),
    "emphysema": (("emphysema", "pulmonary emphysema"), ("copd/emphysema",), "emphysem"),
    "nodule": (("nodule",), ("mass/nodule (not otherwise specified)", "multiple masses/nodules"), "nodule"),
    "pulmonary edema": (("pulmonary edema",), ("pulmonary edema/hazy opacity",), "edema"),
    "calcified granuloma": (("calcified granuloma",), ("calcified nodule",), None),
    "consolidation": (("consolidation",), ("consolidation",), None),
    "scoliosis": (("scoliosis",), ("scoliosis",), None),
    "airspace disease": (("airspace disease",), ("airspace opacity",), None),
    "pulmonary congestion": (("pulmonary congestion",), ("vascular congestion",), None),
    "bone fractures": (("fractures, bone",), ("rib fracture", "clavicle fracture", "spinal fracture"), None),
    "hiatal hernia": (("hernia, hiatal",), ("hernia",), None),
}
NEGATION_WORDS = ("no", "not", "without", "negative", "free", "clear", "resolved", "absent", "none")


@dataclass
class Scores:
    """Per-target confusion counts; precision / recall / F1 derived."""

    counts: dict[str, list[int]] = field(default_factory=lambda: {t: [0, 0, 0] for t in TARGETS})  # tp, fp, fn

    def add(self, gold: set[str], pred: set[str]) -> None:
        for t in TARGETS:
            c = self.counts[t]
            c[0] += t in gold and t in pred
            c[1] += t not in gold and t in pred
            c[2] += t in gold and t not in pred

    @staticmethod
    def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    def prf(self, target: str) -> tuple[float, float, float]:
        return self._prf(*self.counts[target])

    def micro_f1(self) -> float:
        return self._prf(*(sum(c[i] for c in self.counts.values()) for i in range(3)))[2]

    def macro_f1(self) -> float:
        return sum(self.prf(t)[2] for t in TARGETS) / len(TARGETS)


def gold_targets(report: IUReport) -> set[str]:
    """Targets named by the report's MeSH major tags."""
    heads = {m.split("/")[0].strip().lower() for m in report.mesh_major}
    return {t for t, (mesh, _, _) in TARGETS.items() if heads & set(mesh)}


def _target_of(span: str, v: Vocabulary) -> set[str]:
    finding = v.finding_for(span)
    low = span.lower()
    return {t for t, (_, findings, must) in TARGETS.items() if finding in findings and (must is None or must in low)}


def rules_targets(doc: dict, v: Vocabulary) -> set[str]:
    """Targets with a present (OBS-DP), non-modifier observation in a RadGraph document."""
    ents = doc["entities"]
    out: set[str] = set()
    for e in ents.values():
        if e["label"] != "OBS-DP" or any(r == "modify" for r, _ in e["relations"]):
            continue
        out |= _target_of(e["tokens"], v)
    return out


_SENT = re.compile(r"(?<=[.?!])\s+")
_WORD = re.compile(r"[a-z0-9/'-]+")


def baseline_targets(text: str, v: Vocabulary) -> set[str]:
    """Keyword match (the vocabulary's surface forms) unless a negation word precedes it in the sentence."""
    forms = _baseline_forms(v)
    out: set[str] = set()
    for sent in _SENT.split(text.lower()):
        words = _WORD.findall(sent)
        for i in range(len(words)):
            for n in (4, 3, 2, 1):
                phrase = " ".join(words[i:i + n])
                if phrase in forms and not set(words[:i]) & set(NEGATION_WORDS):
                    out |= forms[phrase]
    return out


_FORMS: dict[int, dict[str, set[str]]] = {}


def _baseline_forms(v: Vocabulary) -> dict[str, set[str]]:
    if id(v) not in _FORMS:
        forms: dict[str, set[str]] = {}
        for f in v.findings.values():
            for form in (f.name, *f.synonyms):
                form = normalise_phrase(form)
                if hits := _target_of(form, v):
                    forms.setdefault(form, set()).update(hits)
        _FORMS[id(v)] = forms
    return _FORMS[id(v)]


def evaluate(reports: Iterable[IUReport], v: Vocabulary | None = None) -> dict[str, Scores]:
    """Score the rules extractor and the baseline on the same reports (findings + impression text)."""
    from graph.extract.rules import extract

    v = v or vocabulary()
    rules, base = Scores(), Scores()
    reports = list(reports)
    items = [(r.report_id, {"findings": r.findings, "impression": r.impression}) for r in reports]
    for report, (_, doc) in zip(reports, extract(items, v)):
        gold = gold_targets(report)
        rules.add(gold, rules_targets(doc, v))
        base.add(gold, baseline_targets(f"{report.findings} {report.impression}", v))
    return {"rules": rules, "baseline": base}


def format_table(scores: dict[str, Scores]) -> str:
    """A plain-text table: per target P / R / F1 for each system, then micro and macro F1."""
    names = list(scores)
    head = f"{'finding':<22}{'n':>5}" + "".join(f"{n + ' P':>12}{'R':>7}{'F1':>7}" for n in names)
    lines = [head, "-" * len(head)]
    for t in TARGETS:
        c = scores[names[0]].counts[t]
        row = f"{t:<22}{c[0] + c[2]:>5}"
        for n in names:
            p, r, f = scores[n].prf(t)
            row += f"{p:>12.3f}{r:>7.3f}{f:>7.3f}"
        lines.append(row)
    lines.append("-" * len(head))
    lines.append("micro F1: " + "   ".join(f"{n} {scores[n].micro_f1():.3f}" for n in names))
    lines.append("macro F1: " + "   ".join(f"{n} {scores[n].macro_f1():.3f}" for n in names))
    return "\n".join(lines)


def main() -> None:  # pragma: no cover - exercised by the command line
    """``python -m graph.extract.evaluate``: download (or reuse) the IU reports and print the tables."""
    from graph.extract.iu import load_reports

    print(format_table(evaluate(load_reports())))


if __name__ == "__main__":  # pragma: no cover
    main()
