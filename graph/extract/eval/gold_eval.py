"""Score report-text extraction on the hand-annotated IU sentences (``graph/extract/eval/gold/iu_sentences.json``,
written against ``graph/extract/eval/gold/ANNOTATION_GUIDE.md``), the rules extractor beside a keyword baseline.

Gold: per sentence (report id, section, character offsets; the text is read from the torchxrayvision wheel,
never stored) the findings a reader marks, each with an assertion (present / absent / uncertain), a
laterality (left / right / bilateral / none) and a RadGraph2 change class or none. Each sentence belongs to
``dev`` (rules may be tuned on it) or ``held-out`` (scored only at the end). ``iu_sentences.json`` was split
once by report into both; its held-out half, scored three times, was retired into ``dev`` (its sentences
keep ``first_split: held-out``). ``iu_sentences_2.json``, drawn from other reports and annotated blind
against the same guide, replaced it and was retired into ``dev`` the same way after one score;
``iu_sentences_3.json`` adds development sentences; ``iu_sentences_4.json``, drawn and annotated blind
after them, and ``iu_sentences_5.json`` after it, were each held out and retired into ``dev`` after one score
in turn; ``iu_sentences_6.json``, drawn and annotated blind after them all, is the held-out set now
(:data:`GOLD_FILES`).

Rules predictions: each report is extracted whole (context matters for refer-backs), read back with the
ingestion parser (:func:`graph.formats.radgraph.doc_to_records`, so what is scored is what the graph
stores; relations outside RadGraph's schema are dropped first, so a side counts only where a reader that follows
the schema finds it: a ``located_at`` target and the anatomy words that modify it) and each mention is attributed to the gold sentence its RadGraph sentence overlaps. Per sentence
and finding: the assertion is the mention's polarity (present over uncertain over absent when mentions
disagree), the laterality the side its mentions state, else the sides of their regions (left and right:
bilateral; side-less: none; a heart chamber's side is no side of the body, as the guide's §5 says), the change the RadGraph2 labels of its mentions. A change cue that modifies an
observation of an earlier sentence (a refer-back, "These are stable." after "Left-sided pacemaker.")
attributes that observation to the cue's sentence too, as the guide's §8 labels the sentence that refers
back.

Baseline: the vocabulary's surface forms matched in the sentence (longest first), absent when a negation
word precedes the form in the sentence, else present; laterality from the side words of the sentence;
change from change words of the sentence (:data:`BASELINE_CHANGE_WORDS`), given to every finding of it.

Matching: a predicted finding matches a gold finding of the same sentence with the same name, or else one
related to it through the vocabulary's IS_A links (either way round); a gold ``other:<name>`` (a finding
outside the Chest ImaGenome list) matches a predicted finding whose name or a synonym is ``<name>``. Figures: finding precision and
recall; assertion accuracy over matched findings; laterality accuracy over matched findings whose gold
laterality is stated (left, right, bilateral: a side-less finding has no side to get right); change-class
micro-F1 at finding level (sentence, gold finding, class) and at sentence level (sentence, class).
"""

from __future__ import annotations

import json
import re
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from graph.datasets.iu import IUReport
from graph.errors import CxrkgError
from graph.extract.eval.evaluate import CHANGE_CLASSES, NEGATION_WORDS, sentence_tokens
from graph.terms import POLARITIES, State
from graph.vocabulary import Vocabulary, ancestors, normalise_phrase, vocabulary

GOLD_DIR = Path(__file__).resolve().parent / "gold"
#: The gold files, read together: the first five sets (all ``dev`` now) and the sixth, blind ``held-out`` set.
GOLD_FILES: tuple[Path, ...] = tuple(GOLD_DIR / f"iu_sentences{n}.json" for n in ("", "_2", "_3", "_4", "_5", "_6"))
SPLITS = ("dev", "held-out")
ASSERTIONS = (State.PRESENT, State.ABSENT, State.UNCERTAIN)
LATERALITIES = ("left", "right", "bilateral", "none")

#: The baseline's change words (lower-case, whole words) -> RadGraph2 change class.
BASELINE_CHANGE_WORDS = {
    "unchanged": "CHAN-NC", "stable": "CHAN-NC", "persistent": "CHAN-NC", "again": "CHAN-NC",
    "increased": "CHAN-CON-WOR", "increasing": "CHAN-CON-WOR", "worse": "CHAN-CON-WOR",
    "worsened": "CHAN-CON-WOR", "worsening": "CHAN-CON-WOR", "enlarging": "CHAN-CON-WOR",
    "improved": "CHAN-CON-IMP", "improving": "CHAN-CON-IMP", "decreased": "CHAN-CON-IMP",
    "decreasing": "CHAN-CON-IMP", "new": "CHAN-CON-AP", "resolved": "CHAN-CON-RES",
}
_WORD = re.compile(r"[a-z0-9/'-]+")


class GoldError(CxrkgError, ValueError):
    """The gold file is malformed: names the file, the sentence and the field."""


@dataclass(frozen=True)
class GoldFinding:
    """One finding of a sentence: Chest ImaGenome attribute name (or ``other:<name>``), assertion,
    laterality and RadGraph2 change class (None when no change is stated)."""

    finding: str
    assertion: str
    laterality: str
    change: str | None


@dataclass(frozen=True)
class GoldSentence:
    """An annotated sentence: ``getattr(report, section)[start:end]`` of IU report ``report_id``."""

    report_id: str
    section: str
    start: int
    end: int
    split: str
    stratum: str
    findings: tuple[GoldFinding, ...]

    @property
    def key(self) -> tuple[str, str, int]:
        return self.report_id, self.section, self.start


def _paths(paths: Path | Sequence[Path] | None) -> tuple[Path, ...]:
    if paths is None:
        return GOLD_FILES
    return (Path(paths),) if isinstance(paths, (str, Path)) else tuple(Path(p) for p in paths)


def load_gold(paths: Path | Sequence[Path] | None = None, split: str | None = None) -> list[GoldSentence]:
    """The annotated sentences of ``split`` (``dev``, ``held-out``, or None for both) of the gold files
    ``paths`` (default :data:`GOLD_FILES`), in file order.

    Raises:
        GoldError: a sentence lacks a field or has a value outside the guide's sets.
        OSError: a file cannot be read.
    """
    out = []
    for path in _paths(paths):
        rows = json.loads(path.read_text(encoding="utf-8"))["sentences"]
        for n, row in enumerate(rows):
            sentence = _gold_sentence(row, f"{path}: sentence {n} (report {row.get('report_id')})")
            if split is None or sentence.split == split:
                out.append(sentence)
    return out


def _gold_sentence(row: dict, where: str) -> GoldSentence:
    try:
        findings = tuple(_gold_finding(f, where) for f in row["findings"])
        sentence = GoldSentence(str(row["report_id"]), row["section"], int(row["start"]), int(row["end"]),
                                row["split"], row.get("stratum", ""), findings)
    except KeyError as exc:
        raise GoldError(f"{where}: field {exc.args[0]!r} missing") from exc
    if sentence.split not in SPLITS or not 0 <= sentence.start < sentence.end:
        raise GoldError(f"{where}: split {sentence.split!r} or offsets {sentence.start}..{sentence.end} invalid")
    return sentence


def gold_report_ids(split: str, paths: Path | Sequence[Path] | None = None) -> frozenset[str]:
    """The IU report ids of one split of the gold files (default :data:`GOLD_FILES`), reading nothing else of
    their sentences, so that a corpus analysis (``cxrkg eval extract --unmapped --exclude-gold held-out``) can
    leave the held-out reports out without looking at their labels.

    Raises:
        GoldError: ``split`` is not a split of the files, or a sentence lacks its report id or split.
        OSError: a file cannot be read.
    """
    ids: set[str] = set()
    for path in _paths(paths):
        if split not in SPLITS:
            raise GoldError(f"{path}: no split {split!r} (splits: {', '.join(SPLITS)})")
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))["sentences"]
            ids |= {str(row["report_id"]) for row in rows if row["split"] == split}
        except KeyError as exc:
            raise GoldError(f"{path}: a sentence lacks the field {exc.args[0]!r}") from exc
    return frozenset(ids)


def dev_fold(report_id: str) -> str:
    """``"A"`` or ``"B"``: the fold of the development half a report falls in (CRC-32 of its id, even or odd),
    so that a rule change can be checked on two halves of ``dev`` before it is kept (it should help on both;
    ``benchmarks/gold_folds.py``). Fixed, and independent of the held-out half."""
    return "AB"[zlib.crc32(report_id.encode("utf-8")) % 2]


def _gold_finding(f: dict, where: str) -> GoldFinding:
    g = GoldFinding(f["finding"], f["assertion"], f["laterality"], f.get("change"))
    if g.assertion not in ASSERTIONS or g.laterality not in LATERALITIES or (
            g.change is not None and g.change not in CHANGE_CLASSES):
        raise GoldError(f"{where}: finding {g.finding!r}: assertion, laterality or change outside the guide's sets")
    return g


@dataclass(frozen=True)
class Predicted:
    """One finding a system states in a sentence."""

    finding: str
    assertion: str
    laterality: str
    changes: frozenset[str] = frozenset()


# --- the rules extractor ------------------------------------------------------------------------------

def rules_predictions(reports: Mapping[str, IUReport], gold: list[GoldSentence],
                      v: Vocabulary) -> dict[tuple, list[Predicted]]:
    """Gold sentence key -> what the rules extractor states there (module docstring)."""
    from graph.extract.rules import build_pipeline, compose_text, doc_to_radgraph
    from graph.formats.radgraph import DocStudy, doc_to_records, parse_entities, sentence_index
    from graph.formats.radgraph.schema import drop_out_of_schema

    nlp = build_pipeline(v)
    by_report: dict[str, list[GoldSentence]] = defaultdict(list)
    for g in gold:
        by_report[g.report_id].append(g)
    out: dict[tuple, list[Predicted]] = {}
    for rid, sentences in by_report.items():
        text = compose_text(reports[rid].sections())
        doc = nlp(text)
        radgraph = doc_to_radgraph(doc, v)
        ents = parse_entities(rid, drop_out_of_schema(radgraph["entities"]), "gold", v)
        _, mentions = doc_to_records(rid, radgraph["text"], ents, DocStudy("gold", rid), "gold", v)
        sent_of = sentence_index(radgraph["text"].split(" "))
        kept = [t.i for t in doc if not t.is_space]  # RadGraph token n is spaCy token kept[n]
        referred = _referred(rid, ents, mentions, sent_of)
        for g in sentences:
            first, last = sentence_tokens(doc, text, reports[rid], g.section, g.start, g.end)
            covered = {sent_of[n] for n, i in enumerate(kept) if first <= i < last}
            inside = [m for m in mentions if int(str(m.sentence_id).rsplit("|", 1)[1]) in covered]
            inside += [m for n in covered for m in referred.get(n, []) if m not in inside]
            out[g.key] = _aggregate(inside, v)
    return out


def _referred(doc_key: str, ents: Mapping, mentions: list, sent_of: list[int]) -> dict[int, list]:
    """Sentence number -> the mentions of earlier sentences that a change cue in it modifies (a refer-back:
    "These are stable." after "Left-sided pacemaker."). A mention is tied to its observation entity through
    its id, which ingestion derives from the entity id (:func:`graph.records.stable_id`)."""
    from graph.records import stable_id
    from graph.terms import Source

    last = len(sent_of) - 1
    out: dict[int, list] = defaultdict(list)
    for chan in (e for e in ents.values() if e.kind == "CHAN"):
        n = sent_of[min(chan.start, last)]
        for _, target in chan.relations:
            obs = ents[target]
            if obs.kind != "OBS" or sent_of[min(obs.start, last)] == n:
                continue
            out[n] += [m for m in mentions if m.mention_id == stable_id(
                Source.RADGRAPH, m.study_id, doc_key, m.anatomy, m.finding, obs.eid)]
    return out


_ASSERTION_RANK: dict[str, int] = {s: n for n, s in enumerate(POLARITIES)}
#: regions whose side names a heart chamber, not a side of the body (the guide's §5: "leads ending in the
#: right atrium" state no laterality)
_CHAMBERS = {"right atrium"}


def _aggregate(mentions: list, v: Vocabulary) -> list[Predicted]:
    by_finding: dict[str, list] = defaultdict(list)
    for m in mentions:
        by_finding[m.finding].append(m)
    out = []
    for finding, ms in by_finding.items():
        assertion = min((m.polarity or "present" for m in ms), key=_ASSERTION_RANK.__getitem__)
        stated = {x for m in ms if m.side and not _chamber_side(m, v)
                  for x in (("left", "right") if m.side == "bilateral" else (m.side,))}
        sides: set[str] = stated or {side for m in ms if m.anatomy in v.regions and m.anatomy not in _CHAMBERS
                                     and (side := v.regions[m.anatomy].side) in ("left", "right")}
        changes = frozenset(m.change_label for m in ms if m.change_label)
        out.append(Predicted(finding, assertion, _laterality(sides), changes))
    return out


def _chamber_side(m, v: Vocabulary) -> bool:
    """The mention's stated side is only its heart chamber's ("leads in the right atrium")."""
    return m.anatomy in _CHAMBERS and m.side == v.regions[m.anatomy].side


def _laterality(sides: set[str]) -> str:
    if sides == {"left", "right"}:
        return "bilateral"
    return next(iter(sides)) if sides else "none"


# --- the keyword baseline -----------------------------------------------------------------------------

def baseline_predictions(reports: Mapping[str, IUReport], gold: list[GoldSentence],
                         v: Vocabulary) -> dict[tuple, list[Predicted]]:
    """Gold sentence key -> what the keyword baseline states there (module docstring)."""
    forms = _finding_forms(v)
    longest = max(len(f.split()) for f in forms)
    out: dict[tuple, list[Predicted]] = {}
    for g in gold:
        words = _WORD.findall(getattr(reports[g.report_id], g.section)[g.start:g.end].lower())
        changes = frozenset(BASELINE_CHANGE_WORDS[w] for w in words if w in BASELINE_CHANGE_WORDS)
        sides = {w for w in words if w in ("left", "right")} | ({"left", "right"} if {"bilateral", "both"} & set(words)
                                                                else set())
        found: dict[str, Predicted] = {}
        i = 0
        while i < len(words):
            for n in range(longest, 0, -1):
                finding = forms.get(" ".join(words[i:i + n]))
                if finding:
                    negated = bool(set(words[:i]) & set(NEGATION_WORDS))
                    found.setdefault(finding, Predicted(finding, "absent" if negated else "present",
                                                        _laterality(sides), changes))
                    i += n - 1
                    break
            i += 1
        out[g.key] = list(found.values())
    return out


def _finding_forms(v: Vocabulary) -> dict[str, str]:
    forms: dict[str, str] = {}
    for f in v.findings.values():
        for form in (f.name, *f.synonyms):
            forms.setdefault(normalise_phrase(form), f.name)
    return forms


# --- scoring ------------------------------------------------------------------------------------------

@dataclass
class GoldScores:
    """Counts behind every figure of the module docstring; the figures are properties (0.0 when empty)."""

    sentences: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    assertion: list[int] = field(default_factory=lambda: [0, 0])  # correct, scored
    laterality: list[int] = field(default_factory=lambda: [0, 0])
    change_findings: list[int] = field(default_factory=lambda: [0, 0, 0])  # tp, fp, fn
    change_sentences: list[int] = field(default_factory=lambda: [0, 0, 0])
    misses: list[tuple[tuple, str]] = field(default_factory=list)  # (sentence key, gold finding)

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def assertion_accuracy(self) -> float:
        return _ratio(self.assertion)

    @property
    def laterality_accuracy(self) -> float:
        return _ratio(self.laterality)

    @property
    def change_f1_findings(self) -> float:
        return _f1(self.change_findings)

    @property
    def change_f1_sentences(self) -> float:
        return _f1(self.change_sentences)

    def as_dict(self) -> dict:
        return {"sentences": self.sentences, "findings": self.tp + self.fn, "precision": self.precision,
                "recall": self.recall, "assertion_accuracy": self.assertion_accuracy,
                "assertion_scored": self.assertion[1], "laterality_accuracy": self.laterality_accuracy,
                "laterality_scored": self.laterality[1], "change_micro_f1_findings": self.change_f1_findings,
                "change_micro_f1_sentences": self.change_f1_sentences}


def _ratio(c: list[int]) -> float:
    return c[0] / c[1] if c[1] else 0.0


def _f1(c: list[int]) -> float:
    tp, fp, fn = c
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _add(counts: list[int], gold: set, pred: set) -> None:
    counts[0] += len(gold & pred)
    counts[1] += len(pred - gold)
    counts[2] += len(gold - pred)


def _related(v: Vocabulary) -> dict[str, set[str]]:
    """finding -> itself, its IS_A ancestors and its descendants; ``other:<form>`` -> the finding with that
    name or synonym."""
    parents = {f.name: f.parents for f in v.findings.values()}
    related = {name: {name} | ancestors(name, parents) for name in v.findings}
    for name, anc in list(related.items()):
        for a in anc:
            related[a].add(name)
    for f in v.findings.values():
        for form in (f.name, *f.synonyms):
            related.setdefault(f"other:{normalise_phrase(form)}", set()).add(f.name)
    return related


def _key(finding: str) -> str:
    return f"other:{normalise_phrase(finding[6:])}" if finding.startswith("other:") else finding


def score(gold: list[GoldSentence], predicted: Mapping[tuple, list[Predicted]], v: Vocabulary) -> GoldScores:
    """Compare ``predicted`` (sentence key -> findings) with the gold sentences (module docstring)."""
    related = _related(v)
    s = GoldScores()
    for g in gold:
        s.sentences += 1
        preds = list(predicted.get(g.key, []))
        gold_changes, pred_changes = set(), set()
        for gf in g.findings:
            match = next((p for p in preds if p.finding == gf.finding), None) or next(
                (p for p in preds if p.finding in related.get(_key(gf.finding), ())), None)
            if gf.change:
                gold_changes.add((gf.finding, gf.change))
            if match is None:
                s.fn += 1
                s.misses.append((g.key, gf.finding))
                continue
            preds.remove(match)
            s.tp += 1
            s.assertion[0] += match.assertion == gf.assertion
            s.assertion[1] += 1
            if gf.laterality != "none":
                s.laterality[0] += match.laterality == gf.laterality
                s.laterality[1] += 1
            pred_changes |= {(gf.finding, c) for c in match.changes}
        s.fp += len(preds)
        pred_changes |= {(p.finding, c) for p in preds for c in p.changes}
        _add(s.change_findings, gold_changes, pred_changes)
        _add(s.change_sentences, {c for _, c in gold_changes}, {c for _, c in pred_changes})
    return s


def evaluate_gold(reports: Iterable[IUReport], split: str, paths: Path | Sequence[Path] | None = None,
                  v: Vocabulary | None = None) -> dict[str, GoldScores]:
    """``{"rules": ..., "baseline": ...}`` on one split of the gold files (default :data:`GOLD_FILES`).

    Raises:
        GoldError: the gold file is malformed.
        KeyError: a gold report id is not among ``reports``.
    """
    v = v or vocabulary()
    gold = load_gold(paths, split)
    by_id = {r.report_id: r for r in reports}
    return {"rules": score(gold, rules_predictions(by_id, gold, v), v),
            "baseline": score(gold, baseline_predictions(by_id, gold, v), v)}


#: (row label, :class:`GoldScores` property) of every printed figure, in order
GOLD_FIGURES = (("finding precision", "precision"), ("finding recall", "recall"),
                ("assertion accuracy", "assertion_accuracy"), ("laterality accuracy", "laterality_accuracy"),
                ("change micro-F1, findings", "change_f1_findings"),
                ("change micro-F1, sentences", "change_f1_sentences"))


def gold_rows(scores: Mapping[str, GoldScores]) -> list[dict[str, Any]]:
    """One row per system: its :meth:`GoldScores.as_dict` (``cxrkg eval extract --gold SPLIT --format csv``)."""
    return [{"system": name, **s.as_dict()} for name, s in scores.items()]


def format_gold_table(split: str, scores: Mapping[str, GoldScores]) -> str:
    """A figure per row, a system per column (fits 80 columns)."""
    first = next(iter(scores.values()))
    rows = [f"annotated IU sentences ({split}): {first.sentences} sentences, {first.tp + first.fn} findings",
            f"{'':28}" + "".join(f"{name:>10}" for name in scores)]
    for label, attr in GOLD_FIGURES:
        rows.append(f"{label:28}" + "".join(f"{getattr(s, attr):>10.3f}" for s in scores.values()))
    return "\n".join(rows)
