"""RadGraph's schema as data: the entity labels, and which relation may join which kinds of entity.

RadGraph (Jain et al., "RadGraph: Extracting Clinical Entities and Relations from Radiology Reports", NeurIPS
Datasets and Benchmarks 2021, §3 and the PhysioNet ``radgraph/1.0.0`` files) has two entity kinds, anatomy
(``ANAT-DP``) and observation (``OBS-DP``, ``OBS-U``, ``OBS-DA``), and three relations stored on their source
entity: ``suggestive_of`` (observation -> observation), ``located_at`` (observation -> anatomy) and ``modify``
(observation -> observation, or anatomy -> anatomy). RadGraph2 (Khanna, Dejl et al., MLHC 2023) adds change
entities (``CHAN-*``, with the aliases of its repository sameerkhanna786/RadGraph2) and keeps the three
relations; a change entity ``modify`` s the observation (a finding or a device) whose change it names.
RadGraph-XL and the ``radgraph`` package spell the labels ``Anatomy::definitely present``,
``Observation::measurement::uncertain`` ... with the same relations.

:func:`schema_violations` counts the relations outside :data:`ALLOWED` by name (``"ANAT modify OBS"``); the
extractor checks every document it writes with it, the loader every document it reads (the ingest summary
names the counts) and the scorer drops them (:func:`drop_out_of_schema`) to read an extraction as a reader
that follows the schema does.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any, Iterator, Mapping

from graph.terms import State

#: RadGraph v1's entity labels -> (kind, polarity): anatomy definitely present, observation definitely present,
#: uncertain, definitely absent
V1_LABELS = {"ANAT-DP": ("ANAT", State.PRESENT), "OBS-DP": ("OBS", State.PRESENT), "OBS-U": ("OBS", State.UNCERTAIN),
             "OBS-DA": ("OBS", State.ABSENT)}
#: the ``radgraph`` package's / RadGraph-XL's spelling (``Observation::measurement::definitely absent``): its
#: first part -> kind, and its last part, the assertion -> polarity
XL_KINDS = {"Anatomy": "ANAT", "Observation": "OBS"}
XL_ASSERTIONS = {"definitely present": State.PRESENT, "definitely absent": State.ABSENT, "uncertain": State.UNCERTAIN}
#: RadGraph2's change labels: the eight change leaves of its label taxonomy (Khanna, Dejl et al. 2023)
CHANGE_LABELS = frozenset({"CHAN-NC", "CHAN-CON-AP", "CHAN-CON-WOR", "CHAN-CON-IMP", "CHAN-CON-RES",
                           "CHAN-DEV-AP", "CHAN-DEV-PLACE", "CHAN-DEV-DISA"})
#: (source kind, relation, target kind) pairs the schema has: RadGraph's four, and RadGraph2's change entity
#: modifying an observation
ALLOWED = frozenset({("OBS", "suggestive_of", "OBS"), ("OBS", "located_at", "ANAT"), ("OBS", "modify", "OBS"),
                     ("ANAT", "modify", "ANAT"), ("CHAN", "modify", "OBS")})
RELATIONS = frozenset(r for _, r, _ in ALLOWED)


def label_kind(label: Any) -> str | None:
    """The kind of an entity label in any supported spelling.

    Args:
        label: ``ANAT-DP``, ``Observation::definitely absent``, ``CHAN-CON-WOR``, a repository alias such as
            ``CHAN-WOR``, or anything else.

    Returns:
        ``ANAT``, ``OBS`` or ``CHAN``; None for anything else (not text included).
    """
    return _text_label_kind(label) if isinstance(label, str) else None


@lru_cache(maxsize=1 << 12)  # asked per entity of every document read, of a few dozen labels
def _text_label_kind(label: str) -> str | None:
    """:func:`label_kind` of a label that is text."""
    if label in V1_LABELS:
        return V1_LABELS[label][0]
    if label.startswith("CHAN-"):
        return "CHAN"
    return XL_KINDS.get(label.split("::", 1)[0]) if "::" in label else None


def relation_name(source_kind: str | None, relation: str, target_kind: str | None) -> str:
    """``"ANAT modify OBS"``: how the summaries name a kind of relation."""
    return f"{source_kind or '?'} {relation} {target_kind or '?'}"


def _kinds(entities: Mapping[str, Mapping]) -> dict[str, str | None]:
    """Entity id (as text) -> :func:`label_kind` of its label."""
    return {str(eid): label_kind(e.get("label")) for eid, e in entities.items()}


def _outside_schema(entities: Mapping[str, Mapping],
                    kinds: dict[str, str | None]) -> Iterator[tuple[str, int, tuple[str | None, str, str | None]]]:
    """Each relation the schema does not have: (source id, its index in the source's relations, (source kind,
    relation, target kind)); ``kinds``: entity id -> :func:`label_kind` of its label (:func:`_kinds`), a kind None
    for an unknown label or a missing target."""
    for eid, e in entities.items():
        for n, (relation, target) in enumerate(e.get("relations") or ()):
            if (pair := (kinds[str(eid)], relation, kinds.get(str(target)))) not in ALLOWED:
                yield str(eid), n, pair


def schema_violations(entities: Mapping[str, Mapping]) -> Counter:
    """The relations of one document's entities that the schema does not have.

    Args:
        entities: ``{id: {"label", "relations": [[type, target_id], ...]}}`` as a RadGraph document holds them.

    Returns:
        a Counter by :func:`relation_name` (a relation to a missing entity has target kind ``?``; an entity
        label outside the schema counts as ``"label <label>"``), empty for a document that follows the schema.
    """
    out: Counter = Counter()
    kinds = _kinds(entities)
    for eid, e in entities.items():
        if kinds[str(eid)] is None:
            out[f"label {e.get('label')!r}"] += 1
    for _, _, pair in _outside_schema(entities, kinds):
        out[relation_name(*pair)] += 1
    return out


def written_violations(doc: Mapping) -> Counter:
    """:func:`schema_violations` of a document cxrkg writes, which must also spell its labels as RadGraph v1
    and RadGraph2 do (``ANAT-DP``, ``OBS-U``, ``CHAN-CON-WOR``; not an alias nor a RadGraph-XL spelling).

    Args:
        doc: a RadGraph document (``{"text", "entities", ...}``).

    Returns:
        a Counter by name, empty when the document follows the schema.
    """
    entities = doc.get("entities") or {}
    out = schema_violations(entities)
    for e in entities.values():
        label = e.get("label")
        if label_kind(label) is not None and label not in V1_LABELS and label not in CHANGE_LABELS:
            out[f"label {label!r}"] += 1
    return out


def drop_out_of_schema(entities: Mapping[str, Mapping]) -> dict[str, dict]:
    """What a reader that follows the schema reads of a document's entities.

    Args:
        entities: as for :func:`schema_violations`; left unchanged.

    Returns:
        a copy (each entity a new dict) without the relations outside :data:`ALLOWED`.
    """
    outside = {(eid, n) for eid, n, _ in _outside_schema(entities, _kinds(entities))}
    return {eid: {**e, "relations": [[r, t] for n, (r, t) in enumerate(e.get("relations") or ())
                                     if (str(eid), n) not in outside]}
            for eid, e in entities.items()}
