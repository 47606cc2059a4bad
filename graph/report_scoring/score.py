"""Score generated reports against their references and the patient's graph: one row per study.

Pure functions over plain inputs: RadGraph annotations (or texts and an extractor to annotate them) and the
graph's facts (:class:`graph.report_scoring.facts.StudyFacts`, read once). :class:`ReportScorer` is the same
scoring as a reward over a batch, for a training loop.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Iterator, Mapping, Sequence

from graph.records import InputError, Rejection
from graph.report_scoring.chexpert import chexpert_map
from graph.report_scoring.facts import StudyFacts
from graph.report_scoring.radgraph_reward import f1radgraph
from graph.report_scoring.reading import ReportReading, read_annotation
from graph.report_scoring.temporal import (
    CONTRADICTED,
    SUPPORTED,
    UNVERIFIABLE,
    TemporalFigures,
    stated_reference_changes,
    temporal_figures,
)
from graph.vocabulary import Vocabulary, vocabulary

#: an annotator: ``[(key, text)] -> (key, RadGraph document or Rejection)`` (graph.extract.pipeline.Extractor)
Annotator = Callable[[list[Any]], Iterator[tuple[str, Any]]]


@dataclass(frozen=True)
class StudyScore:
    """One study's figures, in SCORES.csv's column order: the temporal ones from the graph, F1RadGraph at
    three levels and finding F1 (set F1 of the positive vocabulary findings; 1.0 when neither report states
    any) against the reference."""

    study_id: str
    has_prior: bool
    prior_reference: bool
    hallucinated_prior: bool
    changes_stated: int
    changes_supported: int
    changes_contradicted: int
    changes_unverifiable: int
    changes_omitted: int
    f1radgraph_simple: float
    f1radgraph_partial: float
    f1radgraph_complete: float
    finding_f1: float

    @classmethod
    def columns(cls) -> list[str]:
        """SCORES.csv's header."""
        return [f.name for f in fields(cls)]


@dataclass(frozen=True)
class StudyResult:
    """A :class:`StudyScore` with what the corpus summary needs: both readings and the temporal verdicts."""

    score: StudyScore
    generated: ReportReading
    reference: ReportReading
    temporal: TemporalFigures
    #: whether either annotation has no entity: F1RadGraph is then 0 at every level by the package's rule
    no_entity: bool = False


def finding_f1(generated: frozenset[str], reference: frozenset[str]) -> float:
    """Set F1 of two reports' positive findings; 1.0 when both are empty (both state no finding)."""
    if not generated and not reference:
        return 1.0
    both = len(generated & reference)
    return 2 * both / (len(generated) + len(reference))


def score_annotations(study_id: str, generated: Mapping[str, Any], reference: Mapping[str, Any],
                      facts: StudyFacts, vocab: Vocabulary | None = None, stored_reference: bool = True
                      ) -> StudyResult:
    """Score one generated annotation against its reference annotation and the graph's facts of the study.

    ``stored_reference``: the reference is the study's report stored in the graph, so the changes it states
    (recall and ``changes_omitted``) are the graph's stated changes of the study
    (:func:`graph.report_scoring.temporal.stated_reference_changes`); else (a reference from a file) they are
    the extractor's reading of the reference annotation.

    Raises:
        graph.records.InputError: an annotation is malformed.
        graph.report_scoring.radgraph_reward.RewardsUnavailable: radgraph's reward functions are missing.
    """
    v = vocab or vocabulary()
    gen, ref = read_annotation(generated, v, f"{study_id} generated"), read_annotation(reference, v, f"{study_id} reference")
    t = temporal_figures(gen, stated_reference_changes(facts) if stored_reference else ref.changes, facts)
    simple, partial, complete = f1radgraph(generated, reference)
    score = StudyScore(study_id, t.has_prior, t.prior_reference, t.hallucinated_prior, len(t.verdicts),
                       t.count(SUPPORTED), t.count(CONTRADICTED), t.count(UNVERIFIABLE), len(t.omitted_changes),
                       simple, partial, complete, finding_f1(gen.positive, ref.positive))
    return StudyResult(score, gen, ref, t, not generated.get("entities") or not reference.get("entities"))


def score_aligned(items: Sequence[tuple[str, str, str]], facts: Mapping[str, StudyFacts], annotate: Annotator,
                  vocab: Vocabulary | None = None, file: str = "generated") -> list[StudyResult | Rejection]:
    """Annotate all distinct texts in one call of ``annotate``, then score each ``(study_id, generated text, reference
    text)``; one result per item, in order (a study may come several times: samples of one study). A reference
    text equal to the study's stored report is scored as that report (``stored_reference``).

    A study without facts, or a text the annotator rejects or that reads as malformed, gives a Rejection
    (``file``, the study id, the field: study_id, report or reference).
    """
    v = vocab or vocabulary()
    key_of: dict[str, str] = {}  # each distinct text annotated once (copy-prior's texts are also references)
    for sid, gen_text, ref_text in items:
        if sid in facts:
            key_of.setdefault(gen_text, f"t{len(key_of)}")
            key_of.setdefault(ref_text, f"t{len(key_of)}")
    annotated = dict(annotate([(key, text) for text, key in key_of.items()]))
    out: list[StudyResult | Rejection] = []
    for sid, gen_text, ref_text in items:
        if sid not in facts:
            out.append(Rejection(file, sid, "study_id", "the graph holds no such study"))
            continue
        gen, ref = annotated.get(key_of[gen_text]), annotated.get(key_of[ref_text])
        if not isinstance(gen, dict) or not isinstance(ref, dict):
            field, bad = ("report", gen) if not isinstance(gen, dict) else ("reference", ref)
            reason = bad.reason if isinstance(bad, Rejection) else "the extractor returned no annotation"
            out.append(Rejection(file, sid, field, reason))
            continue
        try:
            out.append(score_annotations(sid, gen, ref, facts[sid], v, stored_reference=ref_text == facts[sid].report))
        except InputError as exc:
            field = "reference" if (exc.record or "").endswith("reference") else "report"
            out.append(Rejection(file, sid, field, f"its annotation's {exc.field}: {exc.reason}"))
    return out


class ReportScorer:
    """The figures as a reward: the graph's facts of a cohort held in memory, a batch scored per call.

    >>> scorer = ReportScorer(cohort_facts(store), EXTRACTORS["rules"]())  # doctest: +SKIP
    >>> [s.changes_contradicted for s in scorer(["50414267"], ["New left effusion."])]  # doctest: +SKIP
    [1]

    The reference of each study is its report stored in the graph (``facts.report``); each is annotated the
    first time its study is scored and kept, so a batch annotates its generated texts and new references only.
    """

    def __init__(self, facts: Mapping[str, StudyFacts], annotate: Annotator, vocab: Vocabulary | None = None):
        self.facts = facts
        self.annotate = annotate
        self.vocab = vocab or vocabulary()
        self._references: dict[str, Any] = {}  # study id -> its reference's annotation (or Rejection)
        chexpert_map()  # read the table now, not inside the first batch

    def __call__(self, study_ids: Sequence[str], texts: Sequence[str]) -> list[StudyScore | None]:
        """Scores of each (study id, generated text), in order (a study may come several times); None for a
        study the facts lack or without a stored report, or a text the annotator rejects or reads as malformed.

        Raises:
            ValueError: the two sequences differ in length.
        """
        if len(study_ids) != len(texts):
            raise ValueError(f"{len(study_ids)} study ids, {len(texts)} texts")
        scorable = [i for i, sid in enumerate(study_ids) if (f := self.facts.get(sid)) is not None and f.report]
        new_refs = sorted({study_ids[i] for i in scorable} - self._references.keys())
        docs = dict(self.annotate([(f"g{i}", texts[i]) for i in scorable]
                                  + [(f"r{sid}", self.facts[sid].report) for sid in new_refs]))
        self._references.update((sid, docs.get(f"r{sid}")) for sid in new_refs)
        out: list[StudyScore | None] = [None] * len(study_ids)
        for i in scorable:
            gen, ref = docs.get(f"g{i}"), self._references[study_ids[i]]
            if isinstance(gen, dict) and isinstance(ref, dict):
                try:
                    out[i] = score_annotations(study_ids[i], gen, ref, self.facts[study_ids[i]], self.vocab).score
                except InputError:
                    pass  # a malformed annotation scores nothing; the command names such texts
        return out
