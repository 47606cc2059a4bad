"""The rows every writer stores: the records of parsed files, and derived states and events
(graph.longitudinal.events), one list per statement.

Kept apart from the store so that any writer (the transactional load and link step, the bulk import)
writes the same graph from the same derivation. Neo4j stores no nulls, and ``neo4j-admin database
import`` cannot store an empty list, so neither is ever written: an absent list property means empty.
Every node and relationship row is checked against the graph schema (graph/schema.yaml): a property it
does not declare is an error (:class:`graph.schema.SchemaError`), not a property stored by one loader only.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any, Iterable, Mapping

from graph.longitudinal.episodes import patient_episodes
from graph.longitudinal.events import (
    DERIVED,
    IMPLIED,
    NEW,
    NOT_MENTIONED,
    STATED,
    Event,
    MentionFact,
    PatientDerivation,
    StudyFact,
    derive_patient,
)
from graph.records import BoundingBoxRecord, MentionRecord, ParsedFile, file_key, observation_id
from graph.schema import LOCALDATETIME, graph_schema
from graph.vocabulary import highest_severity, vocabulary


@dataclass
class DerivedRows:
    """Rows for the link step's statements (graph.store.statements): study order and PRIOR links,
    observation states, study findings, the two ``progressions_statement`` writes (anatomy level between
    Observations, study level between StudyFindings) and episodes (:meth:`graph.longitudinal.episodes.PresenceEpisode.row`)."""

    studies: list[dict[str, Any]] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    study_findings: list[dict[str, Any]] = field(default_factory=list)
    anatomy_events: list[dict[str, Any]] = field(default_factory=list)
    study_events: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[dict[str, Any]] = field(default_factory=list)

    def extend(self, other: "DerivedRows") -> None:
        """Append another derivation's rows (of other patients)."""
        for name in ("studies", "observations", "study_findings", "anatomy_events", "study_events", "episodes"):
            getattr(self, name).extend(getattr(other, name))


def study_finding_id(study_id: str, finding: str) -> str:
    """The natural key of a StudyFinding: one finding's state in one study."""
    return f"{study_id}|{finding}"


def _onset(events: Iterable[Event]) -> dict[str, Any]:
    """Onset properties of one place from the events that start there: any ``new`` event, stated or
    derived; ``onset_prior_state`` is the derived rule's prior state (absent / uncertain / not_mentioned)."""
    news = [e for e in events if e.change == NEW]
    if not news:
        return _NO_ONSET  # read, never changed, by the callers
    derived = [e.prior_state for e in news if e.basis == DERIVED]
    return {"onset": True,
            "onset_bases": sorted({e.basis for e in news}) or None,
            "onset_sources": sorted({e.source for e in news}) or None,
            "onset_prior_state": derived[0] if derived else None}


_NO_ONSET = {"onset": False, "onset_bases": None, "onset_sources": None, "onset_prior_state": None}


def _edge(e: Event, current: str, prior: str) -> dict[str, Any]:
    props: dict[str, Any] = {"progression_id": e.event_id, "change": e.change, "basis": e.basis, "source": e.source}
    if e.rule is not None:
        props["rule"] = e.rule
    props["prior_state"], props["current_state"] = e.prior_state, e.current_state
    if e.evidence:  # an empty list is never stored (unrolled: one test each, per event)
        props["evidence"] = list(e.evidence)
    if e.files:
        props["files"] = list(e.files)
    if e.change_labels:
        props["change_labels"] = list(e.change_labels)
    if e.implied:
        props["implied"] = list(e.implied)
    return {"current": current, "prior": prior, "props": props}


def mention_fact(m: MentionRecord) -> MentionFact:
    """What derivation needs of a parsed mention (the same fields the link step reads back from the graph)."""
    return MentionFact(m.study_id, m.anatomy, m.finding, m.source, m.polarity, m.change, m.change_label,
                       m.prior_image_id, m.evidence or "", m.file if m.change is not None else "", m.mention_id,
                       m.severity, m.severity_score, m.entity_group, m.temporal_group)


def observation_summary(mentions: Iterable[MentionFact]) -> dict[str, Any]:
    """What an observation's mentions say besides its state: the highest stated severity
    (:func:`graph.vocabulary.highest_severity`), the sources, the stated changes and up to five evidence phrases, each list
    distinct and sorted; an empty list is None (not stored)."""
    ms = mentions if isinstance(mentions, list) else list(mentions)
    if len(ms) == 1:  # the common case, without sets and sorts
        m = ms[0]
        return {"severity": m.severity if m.severity_score is not None else None,
                "severity_score": m.severity_score, "sources": [m.source],
                "stated_changes": [m.change] if m.change is not None else None,
                "evidence": [m.evidence] if m.evidence else None}
    score, word = highest_severity((m.severity_score, m.severity) for m in ms)
    return {"severity": word, "severity_score": score,
            "sources": sorted({m.source for m in ms}) or None,
            "stated_changes": sorted({m.change for m in ms if m.change is not None}) or None,
            "evidence": sorted({m.evidence for m in ms if m.evidence})[:5] or None}


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
    parents = finding_parents()
    mentions = mentions or {}
    unplaced: list[dict[str, Any]] = []  # places only stated changes name: after every patient's own rows
    for patient_id, d in derivations.items():
        ms = mentions.get(patient_id, [])
        _add_patient(rows, patient_id, d, _by_place(ms), unplaced)
        rows.episodes += [e.row() for e in patient_episodes(patient_id, d, ms, parents)]
    for patient_id, ms in mentions.items():
        if patient_id not in derivations:
            unplaced += [_observation_row(patient_id, place, _NO_DERIVATION, (), {}, stated)
                         for place, stated in _by_place(ms).items()]
    rows.observations += unplaced
    check_keys("Observation", (r["props"] for r in rows.observations))
    check_keys("StudyFinding", rows.study_findings, also=_STUDY_FINDING_FLAGS)
    check_keys("PROGRESSION", (e["props"] for e in [*rows.anatomy_events, *rows.study_events]))
    return rows


_STUDY_FINDING_FLAGS = frozenset({"onset"})  # whether onset_datetime is the study's date (set by the writer)


def check_keys(name: str, rows: Iterable[Mapping[str, Any]], also: frozenset[str] = frozenset()) -> None:
    """Check that rows of label or relationship type ``name`` hold only properties the graph schema declares
    for it (or the writer's own fields in ``also``) and, in its enumerated properties, only their values: one
    union of the rows' keys and one set of values per enumerated property, compared once.

    Args:
        name: a label or relationship type of graph/schema.yaml.
        rows: the rows (property -> value).
        also: row fields that are not stored properties (flags the statements read).

    Raises:
        graph.schema.SchemaError: a row with an undeclared property or a value outside a property's
            ``values``; names ``name``, the row's key and the property.
    """
    schema = graph_schema()
    rows = rows if isinstance(rows, list) else list(rows)
    if set().union(*rows) <= schema.row_keys(name) | also and \
            _within_values(rows, schema.enumerated(name), schema.loaded_properties(name)):
        return
    for row in rows:
        schema.check_row(name, {k: v for k, v in row.items() if k not in also})


def _within_values(rows: list[Mapping[str, Any]], enumerated: Mapping[str, frozenset[str]],
                   types: Mapping[str, str]) -> bool:
    """Whether every enumerated property of the rows holds only its values (each element of an array; None:
    absent); False too for a value of the wrong type, which :meth:`graph.schema.GraphSchema.check_row` names."""
    try:
        for prop, allowed in enumerated.items():
            if types.get(prop) == "string[]":
                seen = {v for row in rows if (values := row.get(prop)) for v in values}
            else:
                seen = {row.get(prop) for row in rows}
                seen.discard(None)
            if not seen <= allowed:
                return False
    except TypeError:  # an unhashable value where a string belongs
        return False
    return True


_SUMMARY_KEYS = ("severity", "severity_score", "sources", "stated_changes", "evidence")
_NO_SUMMARY = dict.fromkeys(_SUMMARY_KEYS)


def _conflict_kinds(place: tuple[str, str, str], d: PatientDerivation,
                    change_conflicts: Mapping[tuple[str, str, str], list[str]]) -> list[str]:
    if not change_conflicts and not d.polarity_conflicts:
        return []
    return [kind for kind, places in (("change", change_conflicts), ("polarity", d.polarity_conflicts))
            if place in places]


def _by_place(mentions: Iterable[MentionFact]) -> dict[tuple[str, str, str], list[MentionFact]]:
    """A patient's mentions by place (study, anatomy, finding), in their order."""
    out: dict[tuple[str, str, str], list[MentionFact]] = {}
    for m in mentions:
        if (place := (m.study_id, m.anatomy, m.finding)) in out:
            out[place].append(m)
        else:
            out[place] = [m]
    return out


def _observation_row(patient_id: str, place: tuple[str, str, str], d: PatientDerivation, events: Iterable[Event],
                     change_conflicts: Mapping[tuple[str, str, str], list[str]],
                     stated: list[MentionFact] | None) -> dict[str, Any]:
    """{onset, props}: ``props`` are every property the node gets, its keys included (None: not stored);
    ``onset`` whether its ``onset_datetime`` is the study's date. ``state_basis`` is ``implied`` where the
    state is present by implication only (``implied_by``: the ``source:mention_id`` that imply it; the
    stated reading there is ``polarity``: uncertain, or not_mentioned when unset); ``conflict_priors`` the
    prior studies of disagreeing pairs; then the :func:`observation_summary` of its mentions (``stated``)."""
    study, anatomy, finding = place
    state = d.anatomy_states.get(place, NOT_MENTIONED)
    kinds = _conflict_kinds(place, d, change_conflicts) if change_conflicts or d.polarity_conflicts else None
    implied = d.implied.get(place) if d.implied else None
    onset = _onset(events) if events else _NO_ONSET
    props = {"observation_id": observation_id(study, anatomy, finding), "patient_id": patient_id, "study_id": study,
             "anatomy": anatomy, "finding": finding, "state": state,
             "polarity": None if state == NOT_MENTIONED else d.implied_over.get(place) if implied else state,
             "state_basis": None if state == NOT_MENTIONED else IMPLIED if implied else STATED,
             "implied_by": list(implied) if implied else None,
             "source_conflict": True if kinds else None, "conflict_kinds": kinds or None,
             "conflict_priors": change_conflicts.get(place),
             "onset_bases": onset["onset_bases"], "onset_sources": onset["onset_sources"],
             "onset_prior_state": onset["onset_prior_state"],
             **(observation_summary(stated) if stated else _NO_SUMMARY)}
    return {"onset": onset["onset"], "props": props}


_NO_DERIVATION = PatientDerivation()  # read only: the derivation of a place nothing but a change names


def _add_patient(rows: DerivedRows, patient_id: str, d: PatientDerivation,
                 stated: dict[tuple[str, str, str], list[MentionFact]], unplaced: list[dict[str, Any]]) -> None:
    """Add one patient's rows to ``rows``; the rows of places that only ``stated`` holds to ``unplaced``."""
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
            study_places.add((e.study_id, e.finding))
            study_places.add((e.prior_study_id, e.finding))
            rows.study_events.append(_edge(e, f"{e.study_id}|{e.finding}", f"{e.prior_study_id}|{e.finding}"))
        else:
            anatomy_places.add((e.study_id, e.anatomy, e.finding))
            anatomy_places.add((e.prior_study_id, e.anatomy, e.finding))
            rows.anatomy_events.append(_edge(e, f"{e.study_id}|{e.anatomy}|{e.finding}",
                                             f"{e.prior_study_id}|{e.anatomy}|{e.finding}"))
    for place in sorted(anatomy_places):
        rows.observations.append(_observation_row(patient_id, place, d, starting.get(place, ()), change_conflicts,
                                                  stated.get(place)))
    unplaced += [_observation_row(patient_id, place, _NO_DERIVATION, (), {}, ms)
                 for place, ms in stated.items() if place not in anatomy_places]
    states, only_implied, add = d.study_states, d.study_implied, rows.study_findings.append
    for found in sorted(study_places):
        study, finding = found
        state = states.get(found, NOT_MENTIONED)
        basis = None if state == NOT_MENTIONED else IMPLIED if found in only_implied else STATED
        events = starting.get((study, None, finding))
        add({"study_finding_id": study_finding_id(study, finding), "patient_id": patient_id,
             "study_id": study, "finding": finding, "state": state, "state_basis": basis,
             **(_onset(events) if events else _NO_ONSET)})


def finding_parents() -> dict[str, tuple[str, ...]]:
    """Finding name -> its IS_A parents, from the packaged vocabulary."""
    return {f.name: f.parents for f in vocabulary().findings.values()}


def fresh_patient_rows(studies: list[dict[str, Any]], images: list[dict[str, Any]], files: list[ParsedFile],
                         observations: dict[str, dict[str, Any]], patients: set[str]) -> dict[str, DerivedRows]:
    """Derivation rows per patient from a batch's own rows (:func:`batch_rows`) and parsed records, for
    patients new to the graph (the batch holds all there is of them). Observation rows carry their
    Mention properties, taken from ``observations`` (``mentions``: a list of :func:`mention_props`)."""
    facts: dict[str, list[StudyFact]] = defaultdict(list)
    image_ids: dict[str, list[str]] = defaultdict(list)
    for i in images:
        image_ids[i["study_id"]].append(i["image_id"])
    owner = {}
    for s in studies:
        if s["patient_id"] in patients:
            owner[s["study_id"]] = s["patient_id"]
            when = datetime.fromisoformat(s["study_datetime"]) if s["study_datetime"] else None
            facts[s["patient_id"]].append(StudyFact(s["study_id"], when, tuple(image_ids[s["study_id"]])))
    mentions: dict[str, list[MentionFact]] = defaultdict(list)
    for pf in files:
        for m in pf.mentions:
            if m.study_id in owner:
                mentions[owner[m.study_id]].append(mention_fact(m))
    parents = finding_parents()
    out = {}
    for p in patients & set(facts):
        rows = derived_rows({p: derive_patient(facts[p], mentions[p], parents)}, {p: mentions[p]})
        for r in rows.observations:
            stated = observations.get(r["props"]["observation_id"])
            r["mentions"] = stated["mentions"] if stated else []
        out[p] = rows
    return out


def mention_props(m: MentionRecord) -> dict[str, Any]:
    """A Mention's stored properties; absent values and empty cue lists are left out (Neo4j stores no
    nulls, and each property sent costs the server time). The study is the observation's, so it is not
    repeated. Cues are lists of the labels as written (``["temporal|yes|acute"]``)."""
    return {k: v for k, v in mention_row(m).items() if v is not None}


def mention_row(m: MentionRecord) -> dict[str, Any]:
    """:func:`mention_props` with every property, None where it is absent (an empty cue list too): the
    bulk load's row, which an import file writes as an empty field, built without a test per property
    (issue 36)."""
    row = dict(zip(_MENTION_FIELDS, _read_mention(m), strict=True))
    row["file_key"] = file_key(m.file)
    row["temporal_cues"] = list(m.temporal_cues) if m.temporal_cues else None
    row["texture_cues"] = list(m.texture_cues) if m.texture_cues else None
    row["comparison_cues"] = list(m.comparison_cues) if m.comparison_cues else None
    return row


# the MentionRecord fields a Mention stores as they are (besides file_key and the cue lists)
_MENTION_FIELDS = ("mention_id", "polarity", "severity", "severity_score", "change", "change_label",
                   "prior_image_id", "evidence", "source", "file", "record", "section", "sentence_id", "side",
                   "term", "entity_group", "temporal_group")
_read_mention = attrgetter(*_MENTION_FIELDS)


def batch_rows(files: list[ParsedFile], records: bool = False) -> tuple[
        dict[str, dict[str, Any]], list[dict], list, list[dict], dict[str, dict[str, Any]]]:
    """The rows of a batch's parsed files: studies by id (a study's attributes merged over its files), images,
    bounding boxes, reports, and observations by id with their mentions' properties. ``records``: for the
    bulk load's import files, bounding boxes are the :class:`~graph.records.BoundingBoxRecord` objects
    themselves (the writer reads their fields) and mentions are :func:`mention_row` rows."""
    studies: dict[str, dict[str, Any]] = {}
    images: list[dict[str, Any]] = []
    boxes: list[Any] = []  # dicts, or the BoundingBoxRecords themselves (records)
    reports: list[dict[str, Any]] = []
    observations: dict[str, dict[str, Any]] = {}
    for pf in files:
        for s in pf.studies:  # a study's properties and its patient's: the first non-null over the batch's files
            row = studies.get(s.study_id)
            if row is None:
                row = studies[s.study_id] = record_row(s, ("Study", "Patient"))
            else:
                for key, value in record_row(s, ("Study", "Patient")).items():
                    row[key] = row[key] or value
        images += [record_row(i, ("Image",), file=pf.path) for i in pf.images]
        boxes += [b if records else {k: v for k, v in vars(b).items() if v is not None}
                  for i in pf.images for b in i.objects]
        reports += [record_row(r, ("Report",), file=pf.path) for r in pf.reports]
        for m in pf.mentions:
            oid = observation_id(m.study_id, m.anatomy, m.finding)
            if (o := observations.get(oid)) is None:
                o = observations[oid] = {"observation_id": oid, "study_id": m.study_id, "anatomy": m.anatomy,
                                         "finding": m.finding, "mentions": []}
            o["mentions"].append(mention_row(m) if records else mention_props(m))
    _check_batch_rows(studies, images, boxes, reports, observations)
    return studies, images, boxes, reports, observations


_BOX_RECORD_KEYS = {f.name: None for f in dataclasses.fields(BoundingBoxRecord)}


def record_row(record: Any, labels: tuple[str, ...], **given: Any) -> dict[str, Any]:
    """The row both loaders write for a parsed record (a dataclass of graph.records): every key and loaded
    property of ``labels`` (graph/schema.yaml, in order) the schema declares, from the record's field of
    that name (None where it has none), else from ``given``. A date-time becomes ISO text (parsed by
    Cypher, or written as is to an import file: the driver's packing of datetimes cost more Python time
    than the rest of a batch's rows); a list property a list, an empty one None (never stored)."""
    row = {}
    for name, kind in _record_fields(type(record), labels):
        value = given[name] if name in given else getattr(record, name, None)
        if value is not None:
            if kind == LOCALDATETIME and isinstance(value, datetime):
                value = value.isoformat()
            elif kind.endswith("[]"):
                value = list(value) or None
        row[name] = value
    return row


def _record_fields(cls: type, labels: tuple[str, ...]) -> list[tuple[str, str]]:
    """(property, type) of the keys and loaded properties of ``labels``; cached per record class and schema."""
    schema = graph_schema()
    cached = _RECORD_FIELDS.get((cls, labels))
    if cached is not None and cached[0] is schema:
        return cached[1]
    fields: dict[str, str] = {}
    for label in labels:
        fields.update({schema.nodes[label].key: "string", **schema.loaded_properties(label)})
    _RECORD_FIELDS[(cls, labels)] = (schema, list(fields.items()))
    return list(fields.items())


_RECORD_FIELDS: dict[tuple[type, tuple[str, ...]], tuple[Any, list[tuple[str, str]]]] = {}


def _check_batch_rows(studies: dict[str, dict[str, Any]], images: list[dict], boxes: list[Any], reports: list[dict],
                      observations: dict[str, dict[str, Any]]) -> None:
    """:func:`check_keys` over the rows of :func:`batch_rows`."""
    # a study's row carries its patient's properties too (merged there by both loaders)
    check_keys("Study", studies.values(), also=frozenset(graph_schema().loaded_properties("Patient")))
    check_keys("Image", images)
    box_rows = [b for b in boxes if isinstance(b, dict)]
    # a BoundingBoxRecord holds its dataclass fields: one check of those stands for every record
    check_keys("BoundingBox", box_rows + ([_BOX_RECORD_KEYS] if len(box_rows) < len(boxes) else []))
    check_keys("Report", reports)
    check_keys("Mention", (props for o in observations.values() for props in o["mentions"]))
