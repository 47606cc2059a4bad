"""Patients' timelines as the five-visit questions read them (:mod:`graph.temporal.multivisit`).

One read per :data:`BATCH_PATIENTS` patients (:data:`graph.store.multivisit_statements.STUDY_TIMELINE`).

Order. A patient's studies are ordered by (``study_datetime``, ``study_order``, ``study_id``); two consecutive
studies are one interval only when their order is beyond doubt, else the timeline is cut there and the link
counted by reason (:data:`DOUBTS`): a study without a date (left out itself), two studies with the same
date, a later study whose PRIOR link is not the earlier one, or a PRIOR link to another patient's study.

Labels. The label of a finding over an interval comes from the study-level PROGRESSION edges from the later
study's StudyFinding to the earlier one's (graph/schema.yaml): the stated edges (basis ``stated``) when
there are any, else the derived one (basis ``derived``, source ``presence``); the progression model's edges
(source ``gnn``) never. Change words map to CheXTemporal's five by :func:`graph.temporal.labels.label` (``no
change`` and ``persistent`` are ``stable``). An interval is *in doubt* for a finding, and counted, when its stated edges
disagree, when its word is ``repositioned`` or ``no longer mentioned`` (not a resolution: the finding was
not stated absent), when the derived edge has a side present by implication only (a stated comparison
implies it), or when a side is present only through narrower findings (a study stating consolidation has
lung opacity present; questions ask about the findings the sources state, as the CXRTrek questions do). No
edge means the finding is present on neither side.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graph.sequences import cut_runs
from graph.store import multivisit_statements as ms
from graph.store.reads import Reader, read_by_patients
from graph.temporal.labels import FIVE, UNLABELLED, label
from graph.temporal.pairs import pick_image
from graph.terms import POSITIVE_STATES

BATCH_PATIENTS = 1000
"""Patients per read."""

NEW, WORSENED, STABLE, IMPROVED, RESOLVED = FIVE
"""CheXTemporal's five classes, cxrkg's own label set (:data:`graph.temporal.labels.FIVE`)."""

DOUBT_NO_DATE = "study without a date"
DOUBT_SAME_DATE = "two studies with the same study_datetime"
DOUBT_PRIOR = "PRIOR link not the previous study by date"
DOUBT_OTHER_PATIENT = "PRIOR link to another patient's study"
DOUBTS = (DOUBT_NO_DATE, DOUBT_SAME_DATE, DOUBT_PRIOR, DOUBT_OTHER_PATIENT)
"""Why a link between two studies is not used (the timeline is cut there)."""
LABEL_DOUBT_DISAGREE = "stated sources disagree"
LABEL_DOUBT_IMPLIED = "present by implication only"
LABEL_DOUBT_NARROWER = "present through narrower findings only"


@dataclass(frozen=True)
class Edge:
    """One study-level PROGRESSION edge to the previous study: finding, change word, basis, source, edge id,
    the sides present by implication only, the current and prior StudyFinding ids and states, and whether
    each side's study states the finding itself present (an Observation of this finding, not a narrower one)."""

    finding: str
    change: str
    basis: str
    source: str
    progression_id: str
    implied: tuple[str, ...]
    study_finding_id: str
    prior_study_finding_id: str
    state: str | None = None
    prior_state: str | None = None
    own: bool = True
    prior_own: bool = True

    @property
    def narrower_only(self) -> bool:
        """A side present only through narrower findings (the finding itself stated on neither)."""
        return (self.state in POSITIVE_STATES and not self.own) or (self.prior_state in POSITIVE_STATES
                                                                   and not self.prior_own)


@dataclass(frozen=True)
class Interval:
    """A finding's label between two consecutive visits: ``label`` one of :data:`FIVE`, or None with
    ``doubt`` the reason it is in doubt (None and no doubt: no edge, the finding present on neither side)."""

    label: str | None
    doubt: str | None = None
    basis: str | None = None
    edges: tuple[Edge, ...] = ()

    def basis_row(self) -> dict[str, Any]:
        """The interval's basis as written in a question: label, basis, sources, edge ids, StudyFinding ids."""
        return {"label": self.label, "basis": self.basis, "sources": sorted({e.source for e in self.edges}),
                "edges": [e.progression_id for e in self.edges],
                "study_findings": sorted({i for e in self.edges for i in (e.study_finding_id, e.prior_study_finding_id)})}


@dataclass
class Study:
    """One study as the timelines see it: ``image`` the visit's image (:func:`graph.temporal.pairs.pick_image`, as the
    pairs choose it; None without one), ``edges`` its edges to the PRIOR study, sorted."""

    study_id: str
    patient_id: str
    study_datetime: str | None
    order: int | None
    prior_id: str | None
    prior_patient_id: str | None
    image: str | None
    edges: list[Edge] = field(default_factory=list)


def interval(edges: list[Edge]) -> Interval:
    """One finding's :class:`Interval` from its edges between two visits (the module's label rules)."""
    if not edges:
        return Interval(None)
    stated = [e for e in edges if e.basis == "stated"]
    used = stated or [e for e in edges if e.basis == "derived"]
    if not used:
        return Interval(None)
    basis = "stated" if stated else "derived"
    words = {e.change for e in used}
    unmapped = sorted(w for w in words if w in UNLABELLED)
    if unmapped:
        return Interval(None, unmapped[0], basis, tuple(used))
    labels = {label(w) for w in words}
    if len(labels) > 1:
        return Interval(None, LABEL_DOUBT_DISAGREE, basis, tuple(used))
    if not stated and any(e.implied for e in used):
        return Interval(None, LABEL_DOUBT_IMPLIED, basis, tuple(used))
    if any(e.narrower_only for e in used):
        return Interval(None, LABEL_DOUBT_NARROWER, basis, tuple(used))
    return Interval(labels.pop(), None, basis, tuple(used))


def _study(row: dict[str, Any]) -> Study:
    edges = sorted((Edge(str(f), str(c), str(b), str(s), str(p), tuple(i or ()), str(n), str(pn), st, pst,
                         bool(own), bool(pown))
                    for f, c, b, s, p, i, n, pn, st, pst, own, pown in row["changes"]),
                   key=lambda e: (e.finding, e.basis, e.source, e.progression_id))
    return Study(str(row["study_id"]), str(row["patient_id"]), row["study_datetime"], row["study_order"],
                 row["prior_id"], row["prior_patient_id"], pick_image(row["images"]), edges)


def runs(studies: list[Study], doubts: Counter) -> list[list[Study]]:
    """A patient's studies cut into runs of studies whose consecutive order is beyond doubt (module
    docstring); each cut is counted in ``doubts`` by reason (:data:`DOUBTS`)."""
    dated = [s for s in studies if s.study_datetime]
    doubts[DOUBT_NO_DATE] += len(studies) - len(dated)
    dated.sort(key=lambda s: (s.study_datetime, s.order if s.order is not None else -1, s.study_id))

    def doubtful(run: list[Study], study: Study) -> bool:
        reason = _link_doubt(run[-1], study)
        if reason is not None:
            doubts[reason] += 1
        return reason is not None

    return cut_runs(dated, doubtful)


def _link_doubt(before: Study, after: Study) -> str | None:
    if after.prior_patient_id is not None and after.prior_patient_id != after.patient_id:
        return DOUBT_OTHER_PATIENT
    if before.study_datetime == after.study_datetime:
        return DOUBT_SAME_DATE
    if after.prior_id != before.study_id:
        return DOUBT_PRIOR
    return None


def iter_patients(reader: Reader, patient_ids: list[str]) -> Iterator[list[list[Study]]]:
    """Each patient's studies (one list per patient, in patient id order), read :data:`BATCH_PATIENTS`
    patients at a time, the next batch while the caller works on this one."""
    for rows in read_by_patients(reader, ms.STUDY_TIMELINE, patient_ids, BATCH_PATIENTS):
        by_patient: dict[str, list[Study]] = {}
        for row in rows:
            study = _study(row)
            by_patient.setdefault(study.patient_id, []).append(study)
        yield [by_patient[p] for p in sorted(by_patient)]


def patient_ids_with(reader: Reader, visits: int) -> list[str]:
    """The ids of the patients with at least ``visits`` studies (the others cannot have a window), sorted."""
    return [str(r["patient_id"]) for r in reader.read(ms.PATIENTS_WITH_VISITS, visits=visits)]
