"""Score report-level finding extraction against the IU reports' MeSH major tags (written by IU annotators).

A report is positive for a target when one of its MeSH major tags starts with the target's MeSH term
(``"Pleural Effusion/left/small"`` -> pleural effusion). The rules extractor predicts positive when its
output (findings + impression sections) holds an OBS-DP entity whose span names one of the target's
vocabulary findings. The baseline predicts positive when a surface form of the same vocabulary findings
occurs in a sentence with no negation word before it in that sentence. Same lexicon, so the difference is
the pipeline (ConText scope, uncertainty, section handling), not the word list.

Laterality: for every report where both the MeSH tags and the rules extractor name a target and the
tags give a side (``left`` / ``right`` / ``bilateral`` as a tag part, e.g. ``Opacity/lung/base/left``), the
sides of the extractor's present mentions of that target, as the ingestion parser places them
(``graph.formats.radgraph.doc_to_records``: stated side, else the finding's default regions on both sides),
must equal the tagged sides (bilateral = left and right). Scoliosis, whose MeSH side is the direction of
its curve ("Scoliosis/right" for a dextroscoliosis) and which ingestion places on the side-less spine, is
scored on the direction the extractor states (the word, or its direction modifier: :func:`curve_sides`).

Change cues: :func:`evaluate_change_cues` scores the CHAN entities of the rules extractor on hand-labelled
IU sentences (``graph/extract/eval/gold/iu_change_cues.json``: report id, section, character offsets and labels only;
the text is read from the wheel) per change class, precision and recall over (sentence, class) pairs. Each
labelled report is extracted whole, so that a sentence that refers back ("Unchanged.") has its context.

Shapes: :func:`evaluate` returns ``{"rules": Scores, "baseline": Scores}``; :class:`Scores` has per-target
(tp, fp, fn) counts and the derived precision / recall / F1, micro and macro F1; :func:`evaluate_all`
returns an :class:`EvalResult` with the laterality and change-cue scores as well.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from graph.datasets.iu import IUReport
from graph.terms import State
from graph.vocabulary import Vocabulary, normalise_phrase, vocabulary

#: target -> (MeSH major terms, cxrkg vocabulary findings, required substring of the span or None)
TARGETS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {
    "pleural effusion": (("pleural effusion",), ("pleural effusion",), None),
    "cardiomegaly": (("cardiomegaly",), ("enlarged cardiac silhouette",), None),
    "atelectasis": (("pulmonary atelectasis",), ("atelectasis", "linear/patchy atelectasis", "lobar/segmental collapse"), None),
    "pneumothorax": (("pneumothorax",), ("pneumothorax",), None),
    "emphysema": (("emphysema", "pulmonary emphysema"), ("copd/emphysema",), "emphysem"),
    "nodule": (("nodule",), ("mass/nodule (not otherwise specified)", "multiple masses/nodules", "calcified nodule"), "nodule"),
    "pulmonary edema": (("pulmonary edema",), ("pulmonary edema/hazy opacity",), "edema"),
    "calcified granuloma": (("calcified granuloma",), ("calcified nodule",), "granulom"),
    "consolidation": (("consolidation",), ("consolidation",), None),
    "scoliosis": (("scoliosis",), ("scoliosis",), None),
    "airspace disease": (("airspace disease",), ("airspace opacity",), "disease"),
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


def _phrases(eid: str, ents: dict) -> list[str]:
    """The phrases ingestion looks an observation up by, in its order: modifier + span, anatomy + span, span
    (``graph.formats.radgraph.doc_to_records``; "heart" + "large" -> "heart large")."""
    e = ents[eid]
    mods = [x["tokens"] for x in ents.values() if x["label"].startswith("OBS") and ["modify", eid] in x["relations"]]
    anat = [ents[t]["tokens"] for r, t in e["relations"] if r == "located_at" and ents[t]["label"].startswith("ANAT")]
    return [f"{m} {e['tokens']}" for m in mods] + [f"{a} {e['tokens']}" for a in anat] + [e["tokens"]]


def rules_targets(doc: dict, v: Vocabulary, label: str = "OBS-DP") -> set[str]:
    """Targets with a present (``label`` OBS-DP; OBS-U: uncertain), non-modifier observation in a RadGraph
    document; the span is read as ingestion reads it (the first of :func:`_phrases` that names a finding)."""
    ents = doc["entities"]
    out: set[str] = set()
    for eid, e in ents.items():
        if e["label"] != label or any(r == "modify" for r, _ in e["relations"]):
            continue
        phrase = next((p for p in _phrases(eid, ents) if v.finding_for(p)), e["tokens"])
        out |= _target_of(phrase, v)
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


def gold_sides(report: IUReport, target: str) -> set[str]:
    """Sides the MeSH major tags of ``target`` give (``{"left"}``, ``{"left", "right"}`` for bilateral)."""
    mesh = TARGETS[target][0]
    out: set[str] = set()
    for tag in report.mesh_major:
        parts = [p.strip().lower() for p in tag.split("/")]
        if parts[0] in mesh:
            for p in parts[1:]:
                out |= {"left", "right"} if p == "bilateral" else {p} if p in ("left", "right") else set()
    return out


def curve_sides(doc: dict, target: str, v: Vocabulary) -> set[str]:
    """Directions of the present curve mentions of ``target`` (scoliosis): the direction in the word
    ("dextroscoliosis" -> right) or of the direction word it is ``located_at`` ("dextro", "rightward", "convex
    to the right"), as a reader that follows RadGraph's schema finds it."""
    from graph.extract.rules import curve_side

    findings = set(TARGETS[target][1])
    ents = doc["entities"]
    out: set[str] = set()
    for eid, e in ents.items():
        if e["label"] != "OBS-DP" or any(r == "modify" for r, _ in e["relations"]):
            continue
        if not any(v.finding_for(p) in findings for p in _phrases(eid, ents)):
            continue
        words = [e["tokens"]] + [ents[t]["tokens"] for r, t in e["relations"]
                                 if r == "located_at" and not v.regions_for(ents[t]["tokens"])]
        out |= {s for s in map(curve_side, words) if s}
    return out


def predicted_sides(doc: dict, target: str, v: Vocabulary) -> set[str]:
    """Sides of the present mentions of ``target`` after ingestion parsing (regions' sides); for a curve
    (scoliosis, which ingestion places on the side-less spine) the directions of :func:`curve_sides`. Relations
    outside RadGraph's schema are dropped first: the sides are those a reader that follows the schema finds."""
    from graph.extract.rules import CURVE_FINDINGS
    from graph.formats.radgraph import DocStudy, doc_to_records, parse_entities
    from graph.formats.radgraph.schema import drop_out_of_schema

    findings = set(TARGETS[target][1])
    if findings <= CURVE_FINDINGS:
        return curve_sides(doc, target, v)
    ents = parse_entities("doc", drop_out_of_schema(doc["entities"]), "eval", v)
    _, mentions = doc_to_records("doc", doc["text"], ents, DocStudy("p", "s"), "eval", v)
    out: set[str] = set()
    for m in mentions:
        if m.polarity == State.PRESENT and m.finding in findings:
            side = v.regions[m.anatomy].side if m.anatomy in v.regions else None
            if side in ("left", "right"):
                out.add(side)
    return out


#: MeSH gives scoliosis a side that is the curvature's direction (dextro- / levo-), not a body side: it is
#: scored on the direction the extractor states (:func:`curve_sides`); the body-side figure leaves it out
NOT_A_BODY_SIDE = ("scoliosis",)


@dataclass
class Laterality:
    """Per target: [correct, scored] over matched (true positive) findings whose MeSH tag gives a side."""

    counts: dict[str, list[int]] = field(default_factory=lambda: {t: [0, 0] for t in TARGETS})
    errors: list[tuple[str, str, list[str], list[str]]] = field(default_factory=list)  # report, target, gold, pred

    def add(self, report: IUReport, doc: dict, gold: set[str], pred: set[str], v: Vocabulary) -> None:
        for t in gold & pred:
            want = gold_sides(report, t)
            if not want:
                continue
            got = predicted_sides(doc, t, v)
            self.counts[t][1] += 1
            if got == want:
                self.counts[t][0] += 1
            else:
                self.errors.append((report.report_id, t, sorted(want), sorted(got)))

    def accuracy_body_side(self) -> float:
        """Accuracy without :data:`NOT_A_BODY_SIDE` targets."""
        keep = [c for t, c in self.counts.items() if t not in NOT_A_BODY_SIDE]
        scored = sum(c[1] for c in keep)
        return sum(c[0] for c in keep) / scored if scored else 0.0

    def accuracy(self, target: str | None = None) -> float:
        c = self.counts[target] if target else [sum(x[0] for x in self.counts.values()),
                                                 sum(x[1] for x in self.counts.values())]
        return c[0] / c[1] if c[1] else 0.0

    @property
    def scored(self) -> int:
        return sum(x[1] for x in self.counts.values())


def evaluate(reports: Iterable[IUReport], v: Vocabulary | None = None,
             laterality: Laterality | None = None) -> dict[str, Scores]:
    """Score the rules extractor and the baseline on the same reports (findings + impression text);
    laterality of the rules extractor's matched findings goes into ``laterality`` when given."""
    from graph.extract.rules import extract

    v = v or vocabulary()
    rules, base = Scores(), Scores()
    reports = list(reports)
    items = [(r.report_id, {"findings": r.findings, "impression": r.impression}) for r in reports]
    for report, (_, doc) in zip(reports, extract(items, v), strict=True):
        gold = gold_targets(report)
        pred = rules_targets(doc, v)
        rules.add(gold, pred)
        base.add(gold, baseline_targets(f"{report.findings} {report.impression}", v))
        if laterality is not None:
            laterality.add(report, doc, gold, pred, v)
    return {"rules": rules, "baseline": base}


# --- change cues ---------------------------------------------------------------------------------

#: the classes scored (RadGraph2 labels); a sentence label set may hold several
CHANGE_CLASSES = ("CHAN-NC", "CHAN-CON-WOR", "CHAN-CON-IMP", "CHAN-CON-AP", "CHAN-CON-RES",
                  "CHAN-DEV-AP", "CHAN-DEV-PLACE", "CHAN-DEV-DISA")


@dataclass
class ChangeCueScores:
    """Per change class: [tp, fp, fn] over (sentence, class) pairs; ``n_sentences`` labelled sentences."""

    counts: dict[str, list[int]] = field(default_factory=lambda: {c: [0, 0, 0] for c in CHANGE_CLASSES})
    n_sentences: int = 0
    errors: list[tuple[str, int, list[str], list[str]]] = field(default_factory=list)

    def add(self, gold: set[str], pred: set[str]) -> None:
        self.n_sentences += 1
        for c in CHANGE_CLASSES:
            self.counts[c][0] += c in gold and c in pred
            self.counts[c][1] += c not in gold and c in pred
            self.counts[c][2] += c in gold and c not in pred

    def prf(self, c: str) -> tuple[float, float, float]:
        return Scores._prf(*self.counts[c])

    def support(self, c: str) -> int:
        return self.counts[c][0] + self.counts[c][2]


def load_change_labels(path: Path) -> list[dict]:
    """The hand-labelled sentences: ``[{"report_id", "section", "start", "end", "labels": [class, ...]}]``.

    Raises:
        ValueError: a label that is not a change class, or a bad offset.
    """
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["sentences"]
    for r in rows:
        if not set(r["labels"]) <= set(CHANGE_CLASSES):
            raise ValueError(f"{path}: report {r['report_id']}: unknown label in {r['labels']}")
        if not 0 <= r["start"] < r["end"]:
            raise ValueError(f"{path}: report {r['report_id']}: bad offsets {r['start']}..{r['end']}")
    return rows


def sentence_text(report: IUReport, section: str, start: int, end: int) -> str:
    """The labelled sentence: ``report.<section>[start:end]`` (sections as parsed, whitespace-normalised)."""
    return getattr(report, section)[start:end]


def sentence_tokens(doc, composed: str, report: IUReport, section: str, start: int, end: int) -> tuple[int, int]:
    """Token range ``[first, last)`` of a labelled sentence in the spaCy ``doc`` of its whole report
    (``composed`` = :func:`graph.extract.rules.compose_text` of the report's sections).

    Raises:
        ValueError: the sentence is not found where its offsets put it.
    """
    text = getattr(report, section)
    sentence = " ".join(text[start:end].split())
    prefix = " ".join(text[:start].split())
    if prefix and text[start - 1].isspace():
        prefix += " "
    header = f"{section.upper()}: "
    at = composed.index(header) + len(header) + len(prefix)
    if composed[at:at + len(sentence)] != sentence:
        raise ValueError(f"report {report.report_id}: sentence at {section}[{start}:{end}] not found in the report")
    span = doc.char_span(at, at + len(sentence), alignment_mode="expand")
    return span.start, span.end


def evaluate_change_cues(reports: Mapping[str, IUReport], labels: list[dict],
                         v: Vocabulary | None = None) -> ChangeCueScores:
    """Extract each labelled report whole (all its sections, as ``cxrkg extract`` does) and compare, per
    labelled sentence, the classes of the linked CHAN entities inside the sentence with its labels. The
    context matters for sentences that refer back ("Unchanged.", "Increased since the previous study."),
    whose change links to a finding of an earlier sentence; every other cue links within its sentence.

    Raises:
        KeyError: a labelled report id is not among ``reports``.
    """
    from graph.extract.rules import build_pipeline, compose_text, doc_to_radgraph

    v = v or vocabulary()
    nlp = build_pipeline(v)
    ids = list(dict.fromkeys(r["report_id"] for r in labels))
    texts = {rid: compose_text(reports[rid].sections()) for rid in ids}
    docs = dict(zip(ids, nlp.pipe(texts[rid] for rid in ids), strict=True))
    extracted = {rid: doc_to_radgraph(docs[rid], v) for rid in ids}
    scores = ChangeCueScores()
    for row in labels:
        rid = row["report_id"]
        first, last = sentence_tokens(docs[rid], texts[rid], reports[rid], row["section"], row["start"], row["end"])
        # entity token indices are whitespace-token indices: the spaCy indices without whitespace tokens
        kept = [t.i for t in docs[rid] if not t.is_space]
        inside = {n for n, i in enumerate(kept) if first <= i < last}
        pred = {e["label"] for e in extracted[rid]["entities"].values()
                if e["label"].startswith("CHAN-") and e["relations"] and e["start_ix"] in inside}
        gold = set(row["labels"])
        scores.add(gold, pred)
        if gold != pred:
            scores.errors.append((rid, row["start"], sorted(gold), sorted(pred)))
    return scores


DEFAULT_CHANGE_LABELS = Path(__file__).resolve().parent / "gold" / "iu_change_cues.json"


@dataclass
class EvalResult:
    """Everything ``cxrkg eval extract`` prints."""

    scores: dict[str, Scores]
    laterality: Laterality
    change_cues: ChangeCueScores | None
    n_reports: int

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"reports": self.n_reports, "findings": {}, "laterality": {}, "change_cues": None}
        for name, sc in self.scores.items():
            out["findings"][name] = {"per_finding": {t: dict(zip(("precision", "recall", "f1"), sc.prf(t), strict=True),
                                                             tp=sc.counts[t][0], fp=sc.counts[t][1], fn=sc.counts[t][2])
                                                     for t in TARGETS},
                                     "micro_f1": sc.micro_f1(), "macro_f1": sc.macro_f1()}
        out["laterality"] = {"accuracy": self.laterality.accuracy(), "scored": self.laterality.scored,
                             "accuracy_body_side": self.laterality.accuracy_body_side(),
                             "per_finding": {t: {"correct": c[0], "scored": c[1]}
                                             for t, c in self.laterality.counts.items() if c[1]}}
        if self.change_cues:
            cc = self.change_cues
            out["change_cues"] = {"sentences": cc.n_sentences,
                                  "per_class": {c: dict(zip(("precision", "recall", "f1"), cc.prf(c), strict=True), support=cc.support(c))
                                                for c in CHANGE_CLASSES if cc.support(c) or cc.counts[c][1]}}
        return out


def evaluate_all(reports: Iterable[IUReport], labels_path: Path | None = DEFAULT_CHANGE_LABELS,
                 v: Vocabulary | None = None) -> EvalResult:
    """Findings (rules vs baseline), laterality, and change cues when the labels file exists."""
    v = v or vocabulary()
    reports = list(reports)
    lat = Laterality()
    scores = evaluate(reports, v, lat)
    cues = None
    if labels_path and Path(labels_path).exists():
        cues = evaluate_change_cues({r.report_id: r for r in reports}, load_change_labels(labels_path), v)
    return EvalResult(scores, lat, cues, len(reports))


def finding_rows(result: EvalResult) -> list[dict[str, Any]]:
    """One row per (system, finding): precision, recall, F1 and the confusion counts (``cxrkg eval extract
    --format csv``; the laterality and change-cue figures are in :meth:`EvalResult.as_dict`)."""
    rows = []
    for system, sc in result.scores.items():
        for t in TARGETS:
            p, r, f = sc.prf(t)
            tp, fp, fn = sc.counts[t]
            rows.append({"system": system, "finding": t, "precision": round(p, 4), "recall": round(r, 4),
                         "f1": round(f, 4), "tp": tp, "fp": fp, "fn": fn})
    return rows


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


def format_report(result: EvalResult) -> str:
    """All tables: findings (rules vs baseline), laterality, change cues."""
    lines = [f"IU reports: {result.n_reports}; gold = MeSH major tags", format_table(result.scores), ""]
    lat = result.laterality
    lines.append(f"laterality of matched findings whose MeSH tag gives a side: {lat.accuracy():.3f} "
                 f"({sum(c[0] for c in lat.counts.values())} of {lat.scored})")
    lines.append(f"  body sides only (scoliosis, whose side is its curve's, left out): {lat.accuracy_body_side():.3f}")
    lines += [f"  {t:<22}{c[0]:>5} of {c[1]:<5}{c[0] / c[1]:.3f}" for t, c in lat.counts.items() if c[1]]
    if result.change_cues:
        cc = result.change_cues
        lines += ["", f"change cues, {cc.n_sentences} hand-labelled IU sentences, per (sentence, class):",
                  f"  {'class':<16}{'n':>5}{'P':>8}{'R':>8}{'F1':>8}"]
        for c in CHANGE_CLASSES:
            if cc.support(c) or cc.counts[c][1]:
                p, r, f = cc.prf(c)
                lines.append(f"  {c:<16}{cc.support(c):>5}{p:>8.3f}{r:>8.3f}{f:>8.3f}")
    else:
        lines += ["", "change cues: no labels file (graph/extract/eval/gold/iu_change_cues.json) in this install"]
    return "\n".join(lines)


def main() -> None:  # pragma: no cover - exercised by the command line
    """``python -m graph.extract.eval.evaluate``: download (or reuse) the IU reports and print the tables."""
    from graph.datasets.iu import load_reports

    print(format_report(evaluate_all(load_reports())))


if __name__ == "__main__":  # pragma: no cover
    main()
