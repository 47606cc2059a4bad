"""The rows the link step writes for derived states and events (graph.events), one list per statement.

Kept apart from the store so that any writer (the transactional link step, a bulk import) writes the
same graph from the same derivation.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from graph.events import DERIVED, NEW, NOT_MENTIONED, Event, MentionFact, PatientDerivation
from graph.records import observation_id


@dataclass
class DerivedRows:
    """Rows for ``WRITE_STUDY_ORDER``, ``WRITE_OBSERVATION_STATES``, ``WRITE_STUDY_FINDINGS`` and the two
    ``progressions_statement`` writes (anatomy level between Observations, study level between
    StudyFindings)."""

    studies: list[dict[str, Any]] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    study_findings: list[dict[str, Any]] = field(default_factory=list)
    anatomy_events: list[dict[str, Any]] = field(default_factory=list)
    study_events: list[dict[str, Any]] = field(default_factory=list)


def study_finding_id(study_id: str, finding: str) -> str:
    """The natural key of a StudyFinding: one finding's state in one study."""
    return f"{study_id}|{finding}"


def _onset(events: list[Event]) -> dict[str, Any]:
    """Onset properties of one place from the events that start there: any ``new`` event, stated or
    derived; ``onset_prior_state`` is the derived rule's prior state (absent / uncertain / not_mentioned)."""
    news = [e for e in events if e.change == NEW]
    derived = [e.prior_state for e in news if e.basis == DERIVED]
    return {"onset": bool(news),
            "onset_bases": sorted({e.basis for e in news}) or None,
            "onset_sources": sorted({e.source for e in news}) or None,
            "onset_prior_state": derived[0] if derived else None}


def _edge(e: Event, current: str, prior: str) -> dict[str, Any]:
    props = {"progression_id": e.event_id, "change": e.change, "basis": e.basis, "source": e.source,
             "rule": e.rule, "prior_state": e.prior_state, "current_state": e.current_state,
             "evidence": list(e.evidence), "files": list(e.files), "change_labels": list(e.change_labels)}
    return {"current": current, "prior": prior, "props": {k: v for k, v in props.items() if v is not None}}


def derived_rows(derivations: Iterable[PatientDerivation],
                 mentions: Mapping[str, Iterable[MentionFact]] | None = None) -> DerivedRows:
    """All rows for the given patients' derivations.

    Args:
        derivations: one per patient.
        mentions: the same patients' mentions (by patient, any key); observations that hold only stated
            changes (no polarity) get a row too, so their state and flags are reset.
    """
    rows = DerivedRows()
    for d in derivations:
        _add_patient(rows, d)
    places = {(r["study_id"], r["anatomy"], r["finding"]) for r in rows.observations}
    for ms in (mentions or {}).values():
        for m in ms:
            if (m.study_id, m.anatomy, m.finding) not in places:
                places.add((m.study_id, m.anatomy, m.finding))
                rows.observations.append(_observation_row(m.study_id, m.anatomy, m.finding, NOT_MENTIONED, [], []))
    return rows


def _conflict_kinds(place: tuple[str, str, str], d: PatientDerivation, change_conflicts: set) -> list[str]:
    return [kind for kind, places in (("change", change_conflicts), ("polarity", d.polarity_conflicts))
            if place in places]


def _observation_row(study: str, anatomy: str, finding: str, state: str, events: list[Event],
                     conflict_kinds: list[str]) -> dict[str, Any]:
    return {"observation_id": observation_id(study, anatomy, finding), "study_id": study, "anatomy": anatomy,
            "finding": finding, "state": state, "polarity": None if state == NOT_MENTIONED else state,
            "conflict": True if conflict_kinds else None, "conflict_kinds": conflict_kinds or None,
            **_onset(events)}


def _add_patient(rows: DerivedRows, d: PatientDerivation) -> None:
    for n, study in enumerate(d.order, start=1):
        prior, days = d.prior.get(study, (None, None))
        rows.studies.append({"study_id": study, "order": n, "prior_id": prior, "days": days})

    starting: dict[tuple, list[Event]] = defaultdict(list)
    for e in d.events:
        starting[(e.study_id, e.anatomy, e.finding)].append(e)
    change_conflicts = d.change_conflicts()

    anatomy_places = set(d.anatomy_states)
    study_places = set(d.study_states)
    for e in d.events:
        if e.anatomy is None:
            study_places |= {(e.study_id, e.finding), (e.prior_study_id, e.finding)}
            rows.study_events.append(_edge(e, study_finding_id(e.study_id, e.finding),
                                           study_finding_id(e.prior_study_id, e.finding)))
        else:
            anatomy_places |= {(e.study_id, e.anatomy, e.finding), (e.prior_study_id, e.anatomy, e.finding)}
            rows.anatomy_events.append(_edge(e, observation_id(e.study_id, e.anatomy, e.finding),
                                             observation_id(e.prior_study_id, e.anatomy, e.finding)))
    for study, anatomy, finding in sorted(anatomy_places):
        rows.observations.append(_observation_row(study, anatomy, finding, d.anatomy_state(study, anatomy, finding),
                                                  starting.get((study, anatomy, finding), []),
                                                  _conflict_kinds((study, anatomy, finding), d, change_conflicts)))
    for study, finding in sorted(study_places):
        rows.study_findings.append({"study_finding_id": study_finding_id(study, finding), "study_id": study,
                                    "finding": finding, "state": d.study_state(study, finding),
                                    **_onset(starting.get((study, None, finding), []))})
