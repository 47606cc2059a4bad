"""What the graph says of one study, as plain values: the input of every temporal figure.

:func:`cohort_facts` reads them for a cohort in one query (:data:`graph.store.report_statements.STUDY_FACTS`);
the scoring functions (:mod:`graph.report_scoring.score`) take them from memory, so a training loop reads the
graph once.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from graph.store.reads import Reader
from graph.store.report_statements import STUDY_FACTS


class GraphChange(NamedTuple):
    """One study-level PROGRESSION edge between the study and its prior (``gnn`` predictions left out):
    ``change`` (new, worsened, improved, no change, resolved, repositioned; derived edges also persistent
    and no longer mentioned), ``basis`` (stated or derived) and ``source`` (chest_imagenome, radgraph, ...;
    for derived edges the rule's source, ``derived``) and ``evidence``, the phrases of the report that state it
    (empty for derived edges)."""

    change: str
    basis: str
    source: str
    evidence: tuple[str, ...] = ()


class StudyFacts(NamedTuple):
    """One study as the graph holds it.

    Attributes:
        study_id: the study.
        patient_id: its patient.
        prior_study_id: the patient's previous study (the PRIOR link), None for a first study.
        report: the text of its stored report (the first by report id), None when it has none.
        prior_report: the text of the prior study's stored report, None when there is none.
        states: finding -> state at this study (StudyFinding: present, uncertain, absent; a finding the graph
            holds nothing of is missing, i.e. not mentioned).
        prior_states: the same at the prior study.
        changes: finding -> the study-level changes the graph holds between this study and its prior.
    """

    study_id: str
    patient_id: str
    prior_study_id: str | None
    report: str | None
    prior_report: str | None
    states: dict[str, str]
    prior_states: dict[str, str]
    changes: dict[str, tuple[GraphChange, ...]]

    @property
    def has_prior(self) -> bool:
        """Whether the patient has an earlier study in the graph."""
        return self.prior_study_id is not None


def cohort_facts(reader: Reader, study_ids: Iterable[str] | None = None) -> dict[str, StudyFacts]:
    """The graph's facts of these studies (every study when None), by study id, in one read; ids the graph
    does not hold are absent from the result. A change's source is its basis where the edge names none.

    Raises:
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    ids = None if study_ids is None else sorted(set(study_ids))
    out: dict[str, StudyFacts] = {}
    for row in reader.read(STUDY_FACTS, study_ids=ids):
        changes: dict[str, list[GraphChange]] = {}
        for finding, change, basis, source, evidence in row["changes"]:
            changes.setdefault(finding, []).append(GraphChange(change, basis, source or basis, tuple(evidence or ())))
        out[row["study_id"]] = StudyFacts(
            row["study_id"], row["patient_id"], row["prior_study_id"],
            row["report"][0] if row["report"] else None,
            row["prior_report"][0] if row["prior_report"] else None,
            {f: s for f, s in row["states"]}, {f: s for f, s in row["prior_states"]},
            {f: tuple(sorted(set(c))) for f, c in changes.items()})
    return out
