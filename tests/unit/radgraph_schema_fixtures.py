"""Helpers of the RadGraph-schema tests: a made-up report through the rules extractor, the form sides had in
files written before the RadGraph-schema output, and what ingestion reads from a document."""

from __future__ import annotations

import copy

from graph.formats.radgraph import DocStudy, doc_to_records, parse_entities
from graph.vocabulary import vocabulary

#: one-word sides and curve directions as the rules write them
SIDE_WORDS = {"left", "right", "bilateral", "bilaterally", "both", "left-sided", "right-sided", "dextro", "levo",
              "rightward", "leftward"}


def extracted(text: str, section: str = "findings") -> dict:
    """The rules extractor's RadGraph document for one made-up section."""
    from graph.extract.rules import extract

    [(_, doc)] = list(extract([("r1", {section: text})]))
    return doc


def legacy_form(doc: dict) -> dict:
    """``doc`` as the rules extractor wrote it before the RadGraph-schema output: a side is an ANAT-DP ``modify``
    of each observation it sides, not a ``located_at`` target nor a ``modify`` of a region."""
    old = copy.deepcopy(doc)
    ents = old["entities"]
    is_side = {eid for eid, e in ents.items() if e["label"] == "ANAT-DP" and e["tokens"].lower() in SIDE_WORDS}
    located = {eid: [o for o, e in ents.items() if ["located_at", eid] in e["relations"]] for eid in ents}
    for eid in is_side:
        side = ents[eid]
        sided = [o for o in located[eid]]
        for region in [t for r, t in side["relations"] if r == "modify" and ents[t]["label"] == "ANAT-DP"]:
            sided += located[region]
        side["relations"] = [[r, t] for r, t in side["relations"] if ents[t]["label"] != "ANAT-DP"]
        side["relations"] += [["modify", o] for o in dict.fromkeys(sided)]
        for o in located[eid]:
            ents[o]["relations"].remove(["located_at", eid])
    return old


def mentions(doc: dict, key: str = "r1") -> set[tuple]:
    """(finding, region, polarity, side, change label, severity, sentence) of every mention ingestion reads."""
    v = vocabulary()
    ents = parse_entities(key, doc["entities"], "test", v)
    _, ms = doc_to_records(key, doc["text"], ents, DocStudy("p1", "s1"), "test", v)
    return {(m.finding, m.anatomy, m.polarity, m.side, m.change_label, m.severity, m.sentence_id) for m in ms}


def relation(doc: dict, source: str, kind: str) -> list[str]:
    """The tokens of the targets of ``source``'s (the entity whose tokens are ``source``) ``kind`` relations."""
    ents = doc["entities"]
    return [ents[t]["tokens"] for e in ents.values() if e["tokens"] == source for r, t in e["relations"] if r == kind]


def found(text: str, section: str = "findings") -> set[tuple]:
    """(finding, polarity, side, change label) of every mention ingestion reads from a made-up section."""
    return {(m[0], m[2], m[3], m[4]) for m in mentions(extracted(text, section))}
