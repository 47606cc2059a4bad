"""What the graph says of one study, as plain values: the input of every temporal figure.

:func:`graph.store.report_facts.cohort_facts` reads them for a cohort in one query; the scoring functions
(:mod:`graph.report_scoring.score`) take them from memory, so a training loop reads the graph once.
"""

from __future__ import annotations

from typing import NamedTuple


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
