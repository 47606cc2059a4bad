"""A RadGraph v1 / RadGraph2 / ``radgraph``-package file decoded in one pass from its bytes into a strict
msgspec twin of what :mod:`~graph.formats.radgraph.documents` and :mod:`~graph.formats.radgraph.entities` accept.

The twin is the plain shape every accepted document of the ``{doc_key: {"text", "entities"}}`` spelling has:
``text`` a string, ``entities`` an object of entities with ``tokens`` and ``label`` strings, ``start_ix`` and
``end_ix`` integers (not booleans, not floats) and ``relations`` a list of ``[type, target_id]`` string pairs
(absent: none). Unknown keys are ignored, as the checked path ignores them. msgspec refuses whatever is off
that shape (a wrong type, a missing key, a file that is a list, JSONL, invalid JSON, a ``test.json`` document
with ``labeler_1`` in place of ``entities``, JSON's ``NaN``), and the file then goes through ``json.loads`` and
the checks of the other modules, whose rejections name the record and the field as before. The checks a
shape cannot state (a known label, ``end_ix`` not before ``start_ix`` nor past the last token, relation
targets that exist) are made by :func:`twin_entities`; a document that fails one goes through the checked
path too, so every rejection keeps its message. msgspec: https://jcristharif.com/msgspec/ (Jim Crist-Harif).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

import msgspec

from graph.formats.radgraph.entities import Entity, entity_label
from graph.formats.radgraph.schema import ALLOWED, label_kind, relation_name, schema_violations
from graph.formats.typed_json import TwinRejected
from graph.vocabulary import Vocabulary


class EntityTwin(msgspec.Struct, gc=False):
    """One entity of a document as the twin decodes it (RadGraph v1's keys)."""

    tokens: str
    label: str
    start_ix: int
    end_ix: int
    relations: list[tuple[str, str]] = []

    def get(self, key: str, default: Any = None) -> Any:
        """``entity.get("label")``, as :func:`~graph.formats.radgraph.schema.schema_violations` reads a decoded
        JSON entity."""
        return getattr(self, key, default)


class DocumentTwin(msgspec.Struct, gc=False):
    """One document as the twin decodes it: its text and its entities by id."""

    text: str
    entities: dict[str, EntityTwin]


_FILE_DECODER = msgspec.json.Decoder(dict[str, DocumentTwin])
new_tuple = tuple.__new__  # Entity(*values) without the named tuple's own __new__ in Python: a document has dozens


def twin_violations(doc: DocumentTwin, entities: dict[str, Entity], vocab: Vocabulary) -> Mapping[str, int]:
    """:func:`~graph.formats.radgraph.schema.schema_violations` of a document the twin decoded, from the kinds
    :func:`twin_entities` found: the relations outside the schema by name, an empty mapping for a document
    that follows it (most do). Where a label's schema kind is not the kind its entity was read as (a change
    label of a user's vocabulary that does not start with ``CHAN-``) it counts as schema_violations does.

    Args:
        doc: the decoded document.
        entities: its entities as :func:`twin_entities` read them.
        vocab: the vocabulary they were read with.

    Returns:
        relation name (``"ANAT modify OBS"``) -> count.
    """
    agrees = vocab.memo("radgraph label kind agrees")  # label -> label_kind(label) == its entity kind
    out: Counter | None = None
    for eid, ent in entities.items():
        label = doc.entities[eid].label
        if (agree := agrees.get(label)) is None:
            agree = agrees[label] = label_kind(label) == ent.kind
        if not agree:
            return schema_violations(doc.entities)  # type: ignore[arg-type]  # a twin entity has the .get() it reads
        for relation, target in ent.relations:
            pair = (ent.kind, relation, entities[target].kind)
            if pair not in ALLOWED:
                out = out if out is not None else Counter()
                out[relation_name(*pair)] += 1
    return out if out is not None else {}


def decode_documents(data: bytes) -> dict[str, DocumentTwin] | None:
    """The documents of a RadGraph JSON file's bytes by doc_key, or None when the twin refuses the file (any
    document off the twin's shape, not a JSON object, not valid JSON): then read it with
    :func:`~graph.formats.radgraph.documents.iter_documents`. Duplicate keys: the last wins, as in ``json``."""
    try:
        return _FILE_DECODER.decode(data)
    except TwinRejected:
        return None


def twin_entities(doc: DocumentTwin, vocab: Vocabulary) -> dict[str, Entity] | None:
    """The document's entities as :func:`~graph.formats.radgraph.entities.parse_entities` reads them, with the
    checks of it and of the document's token count; None when one fails (the checked path then rejects the
    document with its message).

    Args:
        doc: a decoded document.
        vocab: the vocabulary whose change labels are known.

    Returns:
        entity id -> Entity, in the document's order; None for an unknown label, ``end_ix`` before
        ``start_ix`` or past the last token, or a relation to a missing entity.
    """
    n_tokens = doc.text.count(" ") + 1  # len(text.split(" "))
    out: dict[str, Entity] = {}
    known = vocab.memo("radgraph entity label")  # entity_label's table: label -> (kind, polarity, change label)
    for eid, ent in doc.entities.items():
        parsed = known.get(ent.label) or entity_label(ent.label, vocab)
        if parsed is None or ent.end_ix < ent.start_ix or ent.end_ix >= n_tokens:
            return None
        out[eid] = new_tuple(Entity, (eid, ent.tokens, parsed[0], parsed[1], parsed[2], ent.start_ix, ent.end_ix,
                                      tuple(ent.relations)))
    for ent_ in out.values():
        for _, target in ent_.relations:
            if target not in out:
                return None
    return out


def to_json_document(doc: DocumentTwin) -> dict[str, Any]:
    """The document as ``json.loads`` gives the keys the checked path reads (``relations`` pairs as lists)."""
    return msgspec.to_builtins(doc)
