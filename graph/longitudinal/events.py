"""Mention states and longitudinal events of one patient, as plain functions over records.

Real reports mention a finding only when the radiologist says something about it: in Chest ImaGenome an
attribute is ``yes`` or ``no`` when stated and simply missing otherwise (docs/formats.md §1.4), and the
NIH ChestX-ray14 labels list only what was found. So every (study, anatomy, finding) is in one of four
states, and the same holds at study level (the finding anywhere in the study):

* ``present`` / ``uncertain`` / ``absent``: stated by at least one source (present > uncertain > absent);
* ``not_mentioned``: no source says anything (the default; materialised only where an event needs it).

Presence implied by a stated comparison: a stated "no change", "improved" or "resolved" (or
"repositioned", which only devices take: RadGraph2's CHAN-DEV-PLACE) against a prior study says the
finding was there in that prior study, even where its report said nothing. Such a place is ``present``
with basis ``implied`` (:attr:`PatientDerivation.implied` names the source and mention that imply it), so
the current study derives ``persistent`` rather than ``new`` and an episode goes on. A stated absence
wins over an implied presence (that is a disagreement, not an implication); a stated uncertain state
yields to it, since uncertain is not absent and the later comparison settles the doubt. The strict
reading (stated states only) is ``derive_patient(..., implied_presence=False)``, and in the graph one
filter away: nodes carry ``state_basis`` and the derived edges that rest on an implied state carry
``implied`` (which of their two sides is implied).

Events compare a study with the patient's immediately prior study (by datetime, then study id), at both
levels, each with its basis:

* ``stated``: a Chest ImaGenome comparison relation or a RadGraph2 change entity (improved, worsened,
  no change, new, resolved, repositioned), kept with its source and evidence;
* ``derived`` by a named rule of this module (:data:`RULES`): ``new`` (present now, not present before,
  with the prior state recorded: absent, uncertain or not_mentioned), ``resolved`` (present before,
  stated absent now), ``no longer mentioned`` (present before, nothing said now: a weaker kind that is
  never counted as resolved), ``persistent`` (present in both).

Study level is hierarchy-aware through IS_A: a study has a finding when it has the finding or a more
specific one at any anatomy; it is absent when the finding itself (or a more general one) is stated
absent and nothing more specific is present or uncertain. Stated changes count at study level when they
compare with the immediately prior study.

Everything here is deterministic and order-independent: the same records, loaded in any order or by any
loader, give the same states and events.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from operator import itemgetter
from typing import Iterable, Mapping, NamedTuple

from graph.terms import Change, Source, State
from graph.vocabulary import ancestors

# module names for the states (graph.terms), as the loops over every mention look them up often
PRESENT, UNCERTAIN, ABSENT, NOT_MENTIONED = State.PRESENT, State.UNCERTAIN, State.ABSENT, State.NOT_MENTIONED
_RANK: dict[str, int] = {PRESENT: 3, UNCERTAIN: 2, ABSENT: 1}

#: the derived changes: two of the stated ones, and two that only the event rules give
NEW, RESOLVED, NO_LONGER_MENTIONED, PERSISTENT = Change.NEW, Change.RESOLVED, "no longer mentioned", "persistent"
STATED, DERIVED, IMPLIED = "stated", "derived", "implied"
DERIVED_SOURCE = Source.PRESENCE  # the source name derived edges carry (as earlier graphs did)

#: The derivation rules, by name: what a derived event's ``rule`` property says.
RULES = {
    "onset_after_absent": "present now, stated absent in the prior study",
    "onset_after_uncertain": "present now, uncertain in the prior study",
    "onset_after_not_mentioned": "present now, not mentioned in the prior study",
    "resolution": "present in the prior study, stated absent now",
    "no_longer_mentioned": "present in the prior study, not mentioned now",
    "persistence": "present in the prior study and now",
}

#: Stated changes that say the finding was present in the prior study they compare with.
IMPLYING_CHANGES = frozenset({Change.NO_CHANGE, Change.IMPROVED, Change.RESOLVED, Change.REPOSITIONED})

# Which stated changes agree with a derived one (Chest ImaGenome calls a finding that appears
# "worsened", README "Graph model"); anything else stated against the same pair is a disagreement.
_COMPATIBLE = {NEW: {NEW, Change.WORSENED}, RESOLVED: {RESOLVED, Change.IMPROVED},
               PERSISTENT: {Change.NO_CHANGE, Change.IMPROVED, Change.WORSENED}, NO_LONGER_MENTIONED: set()}
# Pairs of distinct stated changes that say the same thing: an appearing finding "worsened" in Chest
# ImaGenome's convention is RadGraph2's "new", a disappearing one "improved" is "resolved".
_STATED_SYNONYMS = {frozenset({NEW, Change.WORSENED}), frozenset({RESOLVED, Change.IMPROVED})}


def changes_agree(changes: Iterable[str]) -> bool:
    """Whether stated changes of one study pair and place agree: all equal, or only synonyms under the
    event rules' compatibility (new with worsened, resolved with improved).

    >>> changes_agree(["new", "worsened"]), changes_agree(["improved", "worsened"])
    (True, False)
    """
    distinct = set(changes)
    return len(distinct) <= 1 or (len(distinct) == 2 and frozenset(distinct) in _STATED_SYNONYMS)


class StudyFact(NamedTuple):
    """One study of the patient: ``image_ids`` are the images it holds (stated changes name them)."""

    study_id: str
    study_datetime: datetime | None
    image_ids: tuple[str, ...] = ()


class MentionFact(NamedTuple):
    """What derivation needs of one Mention: its place, its stated polarity or change, and provenance.

    ``polarity`` is present / absent / uncertain or None (a change-only statement); ``change`` a stated
    progression class or None; ``prior_image_id`` the image a Chest ImaGenome comparison names, else the
    change refers to the study's immediately prior study. ``severity`` / ``severity_score`` are the
    stated severity word and its ordinal (1 mild .. 3 marked), when any. ``entity_group`` /
    ``temporal_group``: the source's own grouping (Lunguage), which stated episodes come from. A named
    tuple: derivation builds one per mention, and a tuple is built several times faster than a frozen
    dataclass (issue 36).
    """

    study_id: str
    anatomy: str
    finding: str
    source: str
    polarity: str | None = None
    change: str | None = None
    change_label: str | None = None
    prior_image_id: str | None = None
    evidence: str = ""
    file: str = ""
    mention_id: str = ""
    severity: str | None = None
    severity_score: int | None = None
    entity_group: str | None = None
    temporal_group: str | None = None


class Event(NamedTuple):
    """One event between a current and a prior study, at anatomy level (``anatomy`` set) or study level
    (``anatomy`` None).

    Attributes:
        change: new / resolved / no longer mentioned / persistent (derived) or a stated class.
        basis: ``stated`` or ``derived``; ``source`` the stating dataset, or ``presence`` when derived.
        rule: the :data:`RULES` name of a derived event, None when stated.
        prior_state / current_state: the states the event was derived from (stated events: the states
            of the two observations as the graph knows them).
        implied: which sides of a derived event (``prior``, ``current``) are present by implication only.
    """

    study_id: str
    prior_study_id: str
    anatomy: str | None
    finding: str
    change: str
    basis: str
    source: str
    rule: str | None
    prior_state: str
    current_state: str
    evidence: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    change_labels: tuple[str, ...] = ()
    implied: tuple[str, ...] = ()

    @property
    def event_id(self) -> str:
        """Unique per (level, studies, place, source, change): the PROGRESSION edge's ``progression_id``."""
        place = self.anatomy if self.anatomy is not None else "*"
        return (f"{self.study_id}|{place}|{self.finding}>{self.prior_study_id}|{place}|{self.finding}"
                f"|{self.source}|{self.change}")


@dataclass
class PatientDerivation:
    """Everything derived for one patient.

    Attributes:
        order: study ids in time order; ``dates`` their datetimes (None: undated); ``prior`` maps a study
            to (prior study id, interval in whole days).
        anatomy_states: (study, anatomy, finding) -> stated state, for every stated observation.
        study_states: (study, finding) -> state at study level (present / uncertain / absent), for every
            finding stated anywhere in the study and each of its IS_A ancestors.
        polarity_conflicts: (study, anatomy, finding) of observations whose sources state both present
            and absent.
        implied: (study, anatomy, finding) -> the ``source:mention_id`` of the stated changes that make it
            present by implication (see the module docstring); those places are ``present`` in
            ``anatomy_states``.
        study_implied: (study, finding) whose study-level presence rests on implied places only.
        implied_over: implied places whose stated state was uncertain -> that stated state.
        events: anatomy- and study-level events, in a deterministic order.
    """

    order: list[str] = field(default_factory=list)
    dates: dict[str, datetime | None] = field(default_factory=dict)
    prior: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    anatomy_states: dict[tuple[str, str, str], str] = field(default_factory=dict)
    study_states: dict[tuple[str, str], str] = field(default_factory=dict)
    polarity_conflicts: set[tuple[str, str, str]] = field(default_factory=set)
    implied: dict[tuple[str, str, str], tuple[str, ...]] = field(default_factory=dict)
    study_implied: set[tuple[str, str]] = field(default_factory=set)
    implied_over: dict[tuple[str, str, str], str] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

    def anatomy_state(self, study_id: str, anatomy: str, finding: str) -> str:
        return self.anatomy_states.get((study_id, anatomy, finding), NOT_MENTIONED)

    def study_state(self, study_id: str, finding: str) -> str:
        return self.study_states.get((study_id, finding), NOT_MENTIONED)

    def change_conflicts(self) -> dict[tuple[str, str, str], list[str]]:
        """(study, anatomy, finding) of anatomy-level pairs on which the events disagree -> the prior
        studies of those pairs (sorted): two stated changes disagree (:func:`changes_agree`), or a stated
        change contradicts a derived new / resolved / persistent (the compatibility of :data:`RULES`:
        "worsened" agrees with a derived new, "improved" with a derived resolved)."""
        # only a pair with a stated change can disagree
        stated_pairs = {(e.study_id, e.prior_study_id, e.anatomy, e.finding) for e in self.events
                        if e.basis == STATED and e.anatomy is not None}
        if not stated_pairs:
            return {}
        by_pair: dict[tuple[str, str, str, str], list[Event]] = defaultdict(list)
        for e in self.events:
            if e.anatomy is not None and (pair := (e.study_id, e.prior_study_id, e.anatomy, e.finding)) in stated_pairs:
                by_pair[pair].append(e)
        out: dict[tuple[str, str, str], list[str]] = defaultdict(list)
        for (study, prior, anatomy, finding), events in sorted(by_pair.items()):
            stated = {e.change for e in events if e.basis == STATED}
            derived = [e.change for e in events if e.basis == DERIVED]
            if not changes_agree(stated) or any(stated - _COMPATIBLE[d] for d in derived if stated):
                out[(study, anatomy, finding)].append(prior)
        return dict(out)


def stated_state(polarities: Iterable[str | None]) -> str:
    """The strongest stated polarity (present > uncertain > absent), ``not_mentioned`` when none."""
    best = max((p for p in polarities if p in _RANK), key=_RANK.__getitem__, default=None)
    return best or NOT_MENTIONED


def order_studies(studies: Iterable[StudyFact]) -> list[StudyFact]:
    """Studies by (datetime, study id), undated ones last: the PRIOR chain's order (EHRXQA's dense rank
    of (StudyDateTime, study_id), docs/formats.md §1.8)."""
    return sorted(studies, key=lambda s: (s.study_datetime is None, s.study_datetime or datetime.min, s.study_id))


def derive_patient(studies: Iterable[StudyFact], mentions: Iterable[MentionFact],
                   finding_parents: Mapping[str, Iterable[str]], implied_presence: bool = True) -> PatientDerivation:
    """States and events of one patient.

    Args:
        studies: the patient's studies (any order).
        mentions: the patient's mentions (any order); those of studies not in ``studies`` are ignored.
        finding_parents: finding -> its IS_A parents (the vocabulary's hierarchy).
        implied_presence: make places present that a stated comparison implies (module docstring);
            False gives the strict reading, stated states only.

    Returns:
        a :class:`PatientDerivation`.
    """
    out = PatientDerivation()
    ordered = order_studies(studies)
    out.order = [s.study_id for s in ordered]
    out.dates = {s.study_id: s.study_datetime for s in ordered}
    for prev, cur in pairwise(ordered):
        days = (cur.study_datetime - prev.study_datetime).days if cur.study_datetime and prev.study_datetime else None
        out.prior[cur.study_id] = (prev.study_id, days)
    known = set(out.order)
    mentions = sorted((m for m in mentions if m.study_id in known), key=_mention_key)

    stated: dict[tuple[str, str, str], set[str]] = {}  # place -> its stated polarities
    sources: dict[tuple[str, str, str], set[str]] = {}  # place -> the sources that state one
    for m in mentions:
        if m.polarity in _RANK:
            key = (m.study_id, m.anatomy, m.finding)
            if key in stated:
                stated[key].add(m.polarity)
                sources[key].add(m.source)
            else:
                stated[key], sources[key] = {m.polarity}, {m.source}
    for key, polarities in stated.items():
        out.anatomy_states[key] = max(polarities, key=_RANK.__getitem__)
        if PRESENT in polarities and ABSENT in polarities and len(sources[key]) > 1:
            out.polarity_conflicts.add(key)
    changes = _stated_changes(mentions, ordered, out)
    if implied_presence:
        out.implied = _implied_places(changes, out)
        out.implied_over = {p: out.anatomy_states[p] for p in out.implied if p in out.anatomy_states}
        out.anatomy_states.update(dict.fromkeys(out.implied, PRESENT))
    out.study_states, out.study_implied = _study_states(out.anatomy_states, finding_parents, set(out.implied))

    out.events += _stated_events(changes, out)
    out.events += _derived_events(out, anatomy_level=True)
    out.events += _derived_events(out, anatomy_level=False)
    out.events.sort(key=_EVENT_ID)
    return out


_EVENT_ID = Event.event_id.fget  # type: ignore[attr-defined]

# a mention's sort key: (study_id, anatomy, finding, source, mention_id), MentionFact's fields 0-3 and 10
_mention_key = itemgetter(0, 1, 2, 3, 10)


def _prior_of(m: MentionFact, image_study: Mapping[str, str], d: PatientDerivation) -> str | None:
    """The study a mention's stated change compares with: the one holding the image it names, else the
    study's immediately prior study; None when that study is not loaded (or is the study itself)."""
    prior = image_study.get(m.prior_image_id) if m.prior_image_id else d.prior.get(m.study_id, (None,))[0]
    return None if prior is None or prior == m.study_id else prior


def _stated_changes(mentions: list[MentionFact], ordered: list[StudyFact],
                    d: PatientDerivation) -> list[tuple[MentionFact, str]]:
    """(mention, the study it compares with) of the mentions that state a change against a loaded study, in
    the mentions' order: what implied places and stated events are made of (found once for both)."""
    image_study = {i: s.study_id for s in ordered for i in s.image_ids}
    return [(m, prior) for m in mentions
            if m.change is not None and (prior := _prior_of(m, image_study, d)) is not None]


def _implied_places(changes: list[tuple[MentionFact, str]],
                    d: PatientDerivation) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """Prior places that nothing or only an uncertain state was stated about but that a stated
    :data:`IMPLYING_CHANGES` change compares with -> the ``source:mention_id`` of those statements (sorted).
    Uncertain is not absent: the later comparison settles the doubt (docs/episodes.md)."""
    out: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for m, prior in changes:
        if m.change in IMPLYING_CHANGES:
            if d.anatomy_states.get((prior, m.anatomy, m.finding), UNCERTAIN) == UNCERTAIN:
                out[(prior, m.anatomy, m.finding)].add(f"{m.source}:{m.mention_id}")
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _study_states(anatomy_states: Mapping[tuple[str, str, str], str], parents: Mapping[str, Iterable[str]],
                  implied: set[tuple[str, str, str]]) -> tuple[dict[tuple[str, str], str], set[tuple[str, str]]]:
    """Study-level states: a present or uncertain finding lifts itself and its ancestors; a stated
    absence covers the finding itself only (no effusion says nothing about other opacities). Also the
    (study, finding) whose presence rests only on ``implied`` places."""
    up: dict[tuple[str, str], str] = {}
    absent: set[tuple[str, str]] = set()
    stated_present: set[tuple[str, str]] = set()
    lineage: dict[str, set[str]] = {}  # finding -> itself and its ancestors
    for place, state in anatomy_states.items():
        study, _, finding = place
        if state == ABSENT:
            absent.add((study, finding))
            continue
        if (line := lineage.get(finding)) is None:
            line = lineage[finding] = {finding} | ancestors(finding, parents)
        for f in line:
            key = (study, f)
            if _RANK[state] > _RANK.get(up.get(key, ""), 0):
                up[key] = state
            if state == PRESENT and place not in implied:
                stated_present.add(key)
    for key in absent:
        up.setdefault(key, ABSENT)
    only_implied = {k for k, state in up.items() if state == PRESENT and k not in stated_present}
    return up, only_implied


def _stated_events(changes: list[tuple[MentionFact, str]], d: PatientDerivation) -> list[Event]:
    """Stated changes against the prior they name (an image) or the immediately prior study; one event
    per (pair, place, source, change) with all its mentions' evidence. A change whose prior study is not
    loaded stays on its mention only. Study level: those against the immediately prior study, lifted
    to the finding and its ancestors."""
    grouped: dict[tuple[str, str, str, str, str, str], list[MentionFact]] = defaultdict(list)
    for m, prior in changes:
        grouped[(m.study_id, prior, m.anatomy, m.finding, m.source, m.change or "")].append(m)  # a change: not None
    events = []
    study_level: dict[tuple[str, str, str, str, str], list[MentionFact]] = defaultdict(list)
    for (study, prior, anatomy, finding, source, change), ms in grouped.items():
        events.append(Event(study, prior, anatomy, finding, change, STATED, source, None,
                            d.anatomy_state(prior, anatomy, finding), d.anatomy_state(study, anatomy, finding),
                            tuple(m.evidence for m in ms), tuple(m.file for m in ms),
                            tuple(m.change_label or "" for m in ms)))
        if d.prior.get(study, (None,))[0] == prior:
            study_level[(study, prior, finding, source, change)] += ms
    for (study, prior, finding, source, change), ms in study_level.items():
        events.append(Event(study, prior, None, finding, change, STATED, source, None,
                            d.study_state(prior, finding), d.study_state(study, finding),
                            tuple(m.evidence for m in ms), tuple(m.file for m in ms),
                            tuple(m.change_label or "" for m in ms)))
    return events


def derive_change(prior_state: str, current_state: str) -> tuple[str, str] | None:
    """The derived (change, rule) between two consecutive states, or None when no rule applies.

    >>> derive_change("not_mentioned", "present")
    ('new', 'onset_after_not_mentioned')
    >>> derive_change("present", "not_mentioned")
    ('no longer mentioned', 'no_longer_mentioned')
    """
    if current_state == PRESENT:
        return (PERSISTENT, "persistence") if prior_state == PRESENT else (NEW, f"onset_after_{prior_state}")
    if prior_state == PRESENT and current_state == ABSENT:
        return RESOLVED, "resolution"
    if prior_state == PRESENT and current_state == NOT_MENTIONED:
        return NO_LONGER_MENTIONED, "no_longer_mentioned"
    return None


def _derived_events(d: PatientDerivation, anatomy_level: bool) -> list[Event]:
    """Derived events between each study and its prior, over the places stated in either of them (a
    place stated in neither has no event)."""
    by_study: dict[str, dict[tuple[str | None, str], str]] = defaultdict(dict)
    implied: set[tuple[str, str | None, str]] = set()
    if anatomy_level:
        for (study, region, finding), state in d.anatomy_states.items():
            by_study[study][(region, finding)] = state
        implied = set(d.implied)
    else:
        for (study, finding), state in d.study_states.items():
            by_study[study][(None, finding)] = state
        implied = {(study, None, finding) for study, finding in d.study_implied}
    events = []
    table, empty = _CHANGES, dict[tuple[str | None, str], str]()
    for study, (prior, _) in d.prior.items():
        now_states, before_states = by_study.get(study, empty), by_study.get(prior, empty)
        for place in now_states.keys() | before_states.keys():
            before = before_states.get(place, NOT_MENTIONED)
            now = now_states.get(place, NOT_MENTIONED)
            if (derived := table.get((before, now))) is not None:
                anatomy, finding = place
                sides = tuple(side for side, at in (("prior", prior), ("current", study))
                              if (at, anatomy, finding) in implied) if implied else ()
                events.append(Event(study, prior, anatomy, finding, derived[0], DERIVED, DERIVED_SOURCE,
                                    derived[1], before, now, (), (), (), sides))
    return events


# derive_change of every pair of states that derives an event, looked up once per place and study pair
_STATES: tuple[str, ...] = (PRESENT, UNCERTAIN, ABSENT, NOT_MENTIONED)
_CHANGES = {(b, n): c for b in _STATES for n in _STATES if (c := derive_change(b, n)) is not None}
