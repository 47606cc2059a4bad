"""The rows the link step writes for derived states and events (graph.events), one list per statement.

Kept apart from the store so that any writer (the transactional link step, a bulk import) writes the
same graph from the same derivation.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from graph.events import DERIVED, NEW, NOT_MENTIONED, Event, MentionFact, PatientDerivation
from graph.records import MentionRecord, observation_id


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

    def extend(self, other: "DerivedRows") -> None:
        """Append another derivation's rows (of other patients)."""
        for name in ("studies", "observations", "study_findings", "anatomy_events", "study_events"):
            getattr(self, name).extend(getattr(other, name))


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


def mention_fact(m: MentionRecord) -> MentionFact:
    """What derivation needs of a parsed mention (the same fields the link step reads back from the graph)."""
    return MentionFact(m.study_id, m.anatomy, m.finding, m.source, m.polarity, m.change, m.change_label,
                       m.prior_image_id, m.evidence or "", m.file if m.change is not None else "", m.mention_id,
                       m.severity, m.severity_score)


def observation_summary(mentions: Iterable[MentionFact]) -> dict[str, Any]:
    """What an observation's mentions say besides its state: the highest stated severity (ties: the
    alphabetically first word), the sources, the stated changes and up to five evidence phrases, each list
    distinct and sorted. Empty lists are kept (an observation with mentions always has these properties)."""
    ms = list(mentions)
    scored = [m for m in ms if m.severity_score is not None]
    top = min(scored, key=lambda m: (-m.severity_score, m.severity or "")) if scored else None
    return {"severity": top.severity if top else None, "severity_score": top.severity_score if top else None,
            "sources": sorted({m.source for m in ms}),
            "stated_changes": sorted({m.change for m in ms if m.change is not None}),
            "evidence": sorted({m.evidence for m in ms if m.evidence})[:5]}


def derived_rows(derivations: Mapping[str, PatientDerivation],
                 mentions: Mapping[str, Iterable[MentionFact]] | None = None) -> DerivedRows:
    """All rows for the given patients' derivations.

    Args:
        derivations: patient id -> its derivation.
        mentions: the same patients' mentions, by patient id. Observations that hold only stated
            changes (no polarity) get a row too, so their state and flags are reset; every observation row
            with mentions carries their :func:`observation_summary`.
    """
    rows = DerivedRows()
    for patient_id, d in derivations.items():
        _add_patient(rows, patient_id, d)
    by_place: dict[tuple[str, str, str], list[MentionFact]] = defaultdict(list)
    owner: dict[tuple[str, str, str], str] = {}
    for patient_id, ms in (mentions or {}).items():
        for m in ms:
            by_place[(m.study_id, m.anatomy, m.finding)].append(m)
            owner[(m.study_id, m.anatomy, m.finding)] = patient_id
    places = {_place(r) for r in rows.observations}
    rows.observations += [_observation_row(owner[place], *place, NOT_MENTIONED, [], [])
                          for place in by_place if place not in places]
    for r in rows.observations:
        ms = by_place.get(_place(r))
        r["props"].update(observation_summary(ms) if ms else dict.fromkeys(_SUMMARY_KEYS))
    return rows


_SUMMARY_KEYS = ("severity", "severity_score", "sources", "stated_changes", "evidence")


def _conflict_kinds(place: tuple[str, str, str], d: PatientDerivation, change_conflicts: set) -> list[str]:
    return [kind for kind, places in (("change", change_conflicts), ("polarity", d.polarity_conflicts))
            if place in places]


def _observation_row(patient_id: str, study: str, anatomy: str, finding: str, state: str, events: list[Event],
                     conflict_kinds: list[str]) -> dict[str, Any]:
    """{onset, props}: ``props`` are every property the node gets, its keys included (None: not stored);
    ``onset`` whether its ``onset_datetime`` is the study's date."""
    oid = observation_id(study, anatomy, finding)
    onset = _onset(events)
    props = {"observation_id": oid, "patient_id": patient_id, "study_id": study, "anatomy": anatomy,
             "finding": finding, "state": state,
             "polarity": None if state == NOT_MENTIONED else state,
             "source_conflict": True if conflict_kinds else None, "conflict_kinds": conflict_kinds or None,
             "onset_bases": onset["onset_bases"], "onset_sources": onset["onset_sources"],
             "onset_prior_state": onset["onset_prior_state"]}
    return {"onset": onset["onset"], "props": props}


def _place(row: dict[str, Any]) -> tuple[str, str, str]:
    p = row["props"]
    return p["study_id"], p["anatomy"], p["finding"]


def _add_patient(rows: DerivedRows, patient_id: str, d: PatientDerivation) -> None:
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
        rows.observations.append(_observation_row(patient_id, study, anatomy, finding,
                                                  d.anatomy_state(study, anatomy, finding),
                                                  starting.get((study, anatomy, finding), []),
                                                  _conflict_kinds((study, anatomy, finding), d, change_conflicts)))
    for study, finding in sorted(study_places):
        rows.study_findings.append({"study_finding_id": study_finding_id(study, finding), "patient_id": patient_id,
                                    "study_id": study,
                                    "finding": finding, "state": d.study_state(study, finding),
                                    **_onset(starting.get((study, None, finding), []))})
