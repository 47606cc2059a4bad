"""A RadGraph document's entities, validated: labels in every supported spelling, token spans, relations.

Labels: RadGraph v1's ``ANAT-DP``, ``OBS-DP``, ``OBS-U``, ``OBS-DA``; RadGraph2's change labels (``CHAN-*``
and the code aliases of its repository, as the vocabulary lists them); the ``radgraph`` package's /
RadGraph-XL's ``Anatomy::definitely present``, ``Observation::measurement::definitely absent`` ...
(docs/formats.md §2-§3).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from graph.formats.radgraph.schema import V1_LABELS, XL_ASSERTIONS, XL_KINDS
from graph.records import InputError
from graph.vocabulary import Vocabulary


class Entity(NamedTuple):
    """One entity: id, its text, kind (ANAT, OBS or CHAN), polarity or change label, inclusive token
    span and outgoing relations as (type, target id). A named tuple: a document has dozens, made several
    times faster than a frozen dataclass's."""

    eid: str
    tokens: str
    kind: str  # ANAT, OBS or CHAN
    polarity: str | None
    change_label: str | None
    start: int
    end: int
    relations: tuple[tuple[str, str], ...]


def _label(label: Any, vocab: Vocabulary) -> tuple[str, str | None, str | None] | None:
    """(kind, polarity, change label) for an entity label in any supported spelling, or None if unknown."""
    if not isinstance(label, str):
        return None
    if label in V1_LABELS:
        kind, pol = V1_LABELS[label]
        return kind, pol, None
    if label in vocab.change_labels:
        return "CHAN", None, label
    parts = label.split("::")
    if len(parts) in (2, 3) and parts[0] in XL_KINDS and parts[-1] in XL_ASSERTIONS:
        return XL_KINDS[parts[0]], XL_ASSERTIONS[parts[-1]], None
    return None


def entity_label(label: Any, vocab: Vocabulary) -> tuple[str, str | None, str | None] | None:
    """(kind, polarity, change label) of an entity label in any supported spelling (ANAT, OBS or CHAN;
    present, absent or uncertain for ANAT and OBS; the label itself for CHAN), or None if unknown; looked up
    once per label and vocabulary."""
    if not isinstance(label, str):
        return None
    table = vocab.memo("radgraph entity label")
    if label not in table:
        table[label] = _label(label, vocab)
    return table[label]


def document_entities(doc_key: str, doc: Any, file: str, vocab: Vocabulary) -> tuple[str, dict[str, Entity]]:
    """The text and the entities of one RadGraph document (``{"text", "entities"}``), with every check a
    document's content has: those of :func:`parse_entities`, and no span past the last token of the text
    (``text.split(" ")``, RadGraph's tokens).

    Raises:
        InputError: the document is not an object, its text is missing or not text (field ``text``), a fault
            of :func:`parse_entities`, or an ``end_ix`` past the last token (field ``entities.<id>.end_ix``).
    """
    if not isinstance(doc, dict):
        raise InputError(file, doc_key, None, f"document is {type(doc).__name__}, expected an object")
    text = doc.get("text")
    if not isinstance(text, str):
        raise InputError(file, doc_key, "text", "missing or not text")
    entities = parse_entities(doc_key, doc.get("entities"), file, vocab)
    n_tokens = text.count(" ") + 1  # len(text.split(" "))
    for ent in entities.values():
        if ent.end >= n_tokens:
            raise InputError(file, doc_key, f"entities.{ent.eid}.end_ix", f"{ent.end} is past the last token ({n_tokens - 1})")
    return text, entities


def parse_entities(doc_key: str, raw: Any, file: str, vocab: Vocabulary) -> dict[str, Entity]:
    """The ``entities`` object of document ``doc_key`` as :class:`Entity` by id.

    Raises:
        InputError: not an object, an entity that is not an object, an unknown label, a bad token span
            (not ints, negative, end before start), tokens that are not text, relations that are not
            ``[type, target_id]`` pairs or that target a missing entity.
    """
    if not isinstance(raw, dict):
        raise InputError(file, doc_key, "entities", f"is {type(raw).__name__}, expected an object")
    out: dict[str, Entity] = {}
    for eid, ent in raw.items():
        where = f"entities.{eid}"
        if not isinstance(ent, dict):
            raise InputError(file, doc_key, where, "expected an object")
        parsed = entity_label(ent.get("label"), vocab)
        if parsed is None:
            raise InputError(file, doc_key, f"{where}.label", f"unknown entity label {ent.get('label')!r}")
        start, end, tokens = ent.get("start_ix"), ent.get("end_ix"), ent.get("tokens")
        if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start <= end:
            raise InputError(file, doc_key, f"{where}.start_ix", f"bad token span {start!r}..{end!r}")
        if not isinstance(tokens, str):
            raise InputError(file, doc_key, f"{where}.tokens", f"is {type(tokens).__name__}, expected text")
        rels = ent.get("relations", [])
        if not isinstance(rels, list) or not all(isinstance(r, (list, tuple)) and len(r) == 2 for r in rels):
            raise InputError(file, doc_key, f"{where}.relations", "expected a list of [type, target_id] pairs")
        out[str(eid)] = Entity(str(eid), tokens, parsed[0], parsed[1], parsed[2], start, end,
                               tuple((str(t), str(target)) for t, target in rels))
    for ent in out.values():
        for rtype, target in ent.relations:
            if target not in out:
                raise InputError(file, doc_key, f"entities.{ent.eid}.relations",
                                 f"{rtype} relation targets entity {target!r}, which does not exist")
    return out

