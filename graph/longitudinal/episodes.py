"""Episodes of a finding over a patient's history, as plain functions over a derivation (graph.longitudinal.events).

An episode of a finding (study level: the finding or a more specific one anywhere in the study; anatomy
level: one region) is a run of the patient's studies, in the PRIOR chain's order:

* it starts at a study where the finding is present (stated, or implied by a stated comparison:
  graph.longitudinal.events) and the patient is not in an episode of it;
* later present studies and studies that say nothing of it (``not_mentioned``, and ``uncertain``, which
  neither starts nor ends one) continue it;
* a stated absence ends it, at the last present study before the absence: the episode is ``closed``
  (resolved), ``end_study_id`` the study that stated the absence;
* a later presence starts a new episode (a recurrence, ``number`` 2, 3, ...);
* optionally, a silence longer than ``max_silence_days`` between two present studies also ends one
  (not closed; default: no limit, which is what the graph stores).

An episode that nothing ended is open. Its ``duration_days`` is whole days from its first to its last
present study (0 for one study). ``basis`` is ``derived`` (by these rules).

A source's own grouping is a **stated** episode beside them (:func:`stated_episodes`): Lunguage's
``gt_temporal_group`` within a ``gt_entity_group`` (one entity group in two temporal groups is two
episodes). Its studies are those of its present mentions, and it is closed when a later mention of the
same entity group states the finding absent.

Everything is deterministic and order-independent: it reads only the derivation, which is.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime
from typing import Any, Iterable, Mapping, NamedTuple

from graph.longitudinal.events import ABSENT, DERIVED, PRESENT, STATED, UNCERTAIN, MentionFact, PatientDerivation
from graph.vocabulary import ancestors, highest_severity

STUDY_LEVEL, ANATOMY_LEVEL = "study", "anatomy"


class PresenceEpisode(NamedTuple):
    """One episode of a finding in one patient: a course of its presence, the graph's Episode node (a named
    tuple: a patient's derivation builds dozens, and a tuple is built several times faster than a frozen
    dataclass, issue 36).

    Its extent is the studies where the finding is present (derived) or where the source's mentions of the
    group state it present or uncertain (stated); a stated absence ends it (``end_study_id``) and is never
    part of it. A Lunguage file's own episode of the same temporal group,
    :class:`graph.longitudinal.episode_agreement.AnnotatedEpisode`, spans every row the annotators put in the
    group instead (negative, history-section and unmapped rows included, ordered by ``sequence``), since it
    is compared with another file's annotation; so it can start earlier or end later than this one.

    Attributes:
        level: ``study`` (``anatomy`` None) or ``anatomy``.
        number: 1 for the patient's first episode of this finding (and region), 2 for a recurrence, ...
        episode_count: how many episodes of this finding (and region, and basis) the patient has: the last
            ``number``. recurrent_findings skips patients with fewer than its ``min_episodes`` by this value
            alone, from an index, before grouping episodes by patient.
        study_ids: the present studies, in time order (the first and last are its bounds).
        implied_study_ids: those of them present only by implication (graph.longitudinal.events).
        datetimes: the study datetimes of ``study_ids`` (None where a study has no date).
        end_study_id: the study whose stated absence closed it; None when open or ended by silence.
        ended_by: ``absent`` (closed), ``silence`` (max_silence_days passed) or None (open).
        max_severity / max_severity_score: the highest stated severity (1 mild .. 3 marked) in it.
        sources: the sources that state or imply its presence.
    """

    patient_id: str
    level: str
    anatomy: str | None
    finding: str
    number: int
    episode_count: int
    study_ids: tuple[str, ...]
    implied_study_ids: tuple[str, ...]
    datetimes: tuple[datetime | None, ...]
    end_study_id: str | None
    ended_by: str | None
    max_severity: str | None
    max_severity_score: int | None
    sources: tuple[str, ...]
    basis: str = DERIVED
    entity_group: str | None = None
    temporal_group: str | None = None

    @property
    def episode_id(self) -> str:
        """Unique per patient, level, place and first study (derived), or per patient, source and groups
        (stated): the Episode node's key."""
        if self.basis == STATED:
            return f"{self.patient_id}|stated|{self.sources[0]}|{self.entity_group}|{self.temporal_group}"
        return f"{self.patient_id}|{self.level}|{self.anatomy or '*'}|{self.finding}|{self.study_ids[0]}"

    @property
    def closed(self) -> bool:
        return self.ended_by == ABSENT

    @property
    def duration_days(self) -> int | None:
        first, last = self.datetimes[0], self.datetimes[-1]
        return (last - first).days if first and last else None

    def row(self) -> dict[str, Any]:
        """The Episode node's properties (None: not stored; datetimes as ISO text)."""
        first, last = self.datetimes[0], self.datetimes[-1]
        studies, implied, sources = self.study_ids, self.implied_study_ids, self.sources
        props = {"episode_id": self.episode_id, "patient_id": self.patient_id, "level": self.level,
                 "anatomy": self.anatomy, "finding": self.finding, "number": self.number,
                 "episode_count": self.episode_count,
                 "first_study_id": studies[0], "last_study_id": studies[-1],
                 "first_datetime": first.isoformat() if first else None,
                 "last_datetime": last.isoformat() if last else None,
                 "duration_days": (last - first).days if first and last else None,
                 "study_ids": list(studies), "n_studies": len(studies),
                 "implied_study_ids": list(implied) if implied else None, "end_study_id": self.end_study_id,
                 "ended_by": self.ended_by, "closed": self.ended_by == ABSENT, "max_severity": self.max_severity,
                 "max_severity_score": self.max_severity_score, "sources": list(sources) if sources else None,
                 "basis": self.basis, "entity_group": self.entity_group, "temporal_group": self.temporal_group}
        return {k: v for k, v in props.items() if v is not None}


def runs(states: Iterable[tuple[str, datetime | None, str]],
         max_silence_days: float | None = None) -> list[tuple[list[str], str | None, str | None]]:
    """Split one place's course into episodes.

    Args:
        states: (study id, datetime, state) in time order, state present / uncertain / absent /
            not_mentioned.
        max_silence_days: end an episode when the next present study is more than this many days after
            its last one (None: never).

    Returns:
        per episode: (its present study ids, the study whose stated absence ended it or None, ended_by:
        ``absent`` / ``silence`` / None).

    >>> runs([("a", None, "present"), ("b", None, "not_mentioned"), ("c", None, "absent"), ("d", None, "present")])
    [(['a'], 'c', 'absent'), (['d'], None, None)]
    """
    out: list[tuple[list[str], str | None, str | None]] = []
    current: list[str] = []
    last_when: datetime | None = None
    for study, when, state in states:
        if state == PRESENT:
            gap = (when - last_when).total_seconds() / 86400 if when and last_when else None
            if current and max_silence_days is not None and gap is not None and gap > max_silence_days:
                out.append((current, None, "silence"))
                current = []
            current.append(study)
            last_when = when
        elif state == ABSENT and current:
            out.append((current, study, ABSENT))
            current = []
    if current:
        out.append((current, None, None))
    return out


def patient_episodes(patient_id: str, d: PatientDerivation, mentions: Iterable[MentionFact],
                     parents: Mapping[str, Iterable[str]], max_silence_days: float | None = None) -> list[PresenceEpisode]:
    """Every episode of one patient at both levels, sorted by episode id.

    Args:
        patient_id: the patient.
        d: the patient's derivation (:func:`graph.longitudinal.events.derive_patient`).
        mentions: the patient's mentions (severities and sources).
        parents: finding -> its IS_A parents (study level lifts a specific finding to its ancestors).
        max_silence_days: see :func:`runs`.
    """
    by_place: dict[tuple[str | None, str], dict[str, str]] = defaultdict(dict)
    for (study, region, finding), state in d.anatomy_states.items():
        by_place[(region, finding)][study] = state
    for (study, finding), state in d.study_states.items():
        by_place[(None, finding)][study] = state
    support = _support(d, mentions, parents)
    out = []
    rank, dates = {s: n for n, s in enumerate(d.order)}, d.dates
    for (anatomy, finding), states in by_place.items():
        # only present and absent studies start, continue or end an episode (runs): the course is those of
        # the place's stated studies, in time order, not every study of the patient
        stated = sorted((s for s, state in states.items() if state == PRESENT or state == ABSENT), key=rank.__getitem__)
        course = [(s, dates.get(s), states[s]) for s in stated]
        episodes = runs(course, max_silence_days)
        for number, (studies, end, ended_by) in enumerate(episodes, start=1):
            out.append(_episode(patient_id, d, anatomy, finding, (number, len(episodes)), studies, end, ended_by,
                                support))
    out += stated_episodes(patient_id, d, mentions)
    return sorted(out, key=_EPISODE_ID)


_EPISODE_ID = PresenceEpisode.episode_id.fget  # type: ignore[attr-defined]


def stated_episodes(patient_id: str, d: PatientDerivation, mentions: Iterable[MentionFact]) -> list[PresenceEpisode]:
    """The episodes a source states (mentions with an ``entity_group`` and a ``temporal_group``, present or
    uncertain), at study level: one per (source, entity group, temporal group), numbered by first study
    within the entity group. Its finding is the most frequent one among its mentions (ties: the first by
    name); it is closed by the first later study, before the group's next episode, where a mention of the
    entity group states the finding absent. Its ``episode_count`` is the patient's number of stated episodes
    of that finding, whatever their entity group, as recurrent_findings counts them."""
    rank = {s: i for i, s in enumerate(d.order)}
    groups: dict[tuple[str, str], dict[str, list[MentionFact]]] = defaultdict(lambda: defaultdict(list))
    absences: dict[tuple[str, str], set[str]] = defaultdict(set)
    for m in mentions:
        if m.entity_group and m.study_id in rank:
            if m.temporal_group and m.polarity in (PRESENT, UNCERTAIN):
                groups[(m.source, m.entity_group)][m.temporal_group].append(m)
            elif m.polarity == ABSENT:
                absences[(m.source, m.entity_group)].add(m.study_id)
    out = []
    for (source, entity_group), episodes in groups.items():
        ordered = sorted(episodes.items(), key=lambda kv: (min(rank[m.study_id] for m in kv[1]), kv[0]))
        starts = [min(rank[m.study_id] for m in ms) for _, ms in ordered] + [len(rank)]
        for number, (temporal_group, ms) in enumerate(ordered, start=1):
            studies = sorted({m.study_id for m in ms}, key=rank.__getitem__)
            later = sorted((s for s in absences[(source, entity_group)]
                            if rank[studies[-1]] < rank[s] < starts[number]), key=rank.__getitem__)
            findings = sorted({m.finding for m in ms}, key=lambda f: (-sum(m.finding == f for m in ms), f))
            top = highest_severity((m.severity_score, m.severity) for m in ms)
            out.append(PresenceEpisode(patient_id, STUDY_LEVEL, None, findings[0], number, 0, tuple(studies), (),
                               tuple(d.dates.get(s) for s in studies), later[0] if later else None,
                               ABSENT if later else None, top[1], top[0], (source,), STATED, entity_group,
                               temporal_group))
    # recurrent_findings counts a patient's stated episodes by finding, across entity groups
    per_finding = Counter(e.finding for e in out)
    return [e._replace(episode_count=per_finding[e.finding]) for e in out]


def _support(d: PatientDerivation, mentions: Iterable[MentionFact], parents: Mapping[str, Iterable[str]]
             ) -> dict[tuple[str, str | None, str], list[tuple[str, int | None, str | None]]]:
    """(study, anatomy or None, finding) -> (source, severity score, severity word) of what states or
    implies the finding present there; study level lifts each to the finding's ancestors."""
    out: dict[tuple[str, str | None, str], list[tuple[str, int | None, str | None]]] = defaultdict(list)
    items = [((m.study_id, m.anatomy, m.finding), (m.source, m.severity_score, m.severity))
             for m in mentions if m.polarity == PRESENT]
    items += [(place, (by.split(":", 1)[0], None, None)) for place, bys in d.implied.items() for by in bys]
    lineage: dict[str, set[str]] = {}  # finding -> itself and its ancestors
    for (study, anatomy, finding), value in items:
        out[(study, anatomy, finding)].append(value)
        if (line := lineage.get(finding)) is None:
            line = lineage[finding] = {finding} | ancestors(finding, parents)
        for f in line:
            out[(study, None, f)].append(value)
    return out


def _episode(patient_id: str, d: PatientDerivation, anatomy: str | None, finding: str, numbered: tuple[int, int],
             studies: list[str], end: str | None, ended_by: str | None, support: Mapping) -> PresenceEpisode:
    said = [v for s in studies for v in support.get((s, anatomy, finding), [])]
    top = highest_severity((score, word) for _, score, word in said)
    if anatomy is not None:
        implied = tuple(s for s in studies if (s, anatomy, finding) in d.implied) if d.implied else ()
    else:
        implied = tuple(s for s in studies if (s, finding) in d.study_implied) if d.study_implied else ()
    return PresenceEpisode(patient_id, ANATOMY_LEVEL if anatomy is not None else STUDY_LEVEL, anatomy, finding, *numbered,
                   tuple(studies), implied, tuple(map(d.dates.get, studies)), end, ended_by, top[1], top[0],
                   tuple(sorted({source for source, _, _ in said})))
