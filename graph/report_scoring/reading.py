"""What one annotated report says, for scoring: its findings, its stated changes, whether it refers to a
prior study, and the change-like words no change entity covers.

An annotation is a RadGraph document (``{"text", "entities"}``) as either extractor writes it; it is read
exactly as ``cxrkg ingest`` reads RadGraph (:func:`graph.formats.radgraph.doc_to_records`), so a change
the graph would store from the report is the change scored here.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Mapping, NamedTuple

from graph.formats.radgraph import doc_to_records, parse_entities
from graph.formats.radgraph.doc_mapping import DocStudy
from graph.records import InputError
from graph.terms import POSITIVE_STATES, Change
from graph.vocabulary import Vocabulary

#: the changes scored (cxrkg's progression classes, and RadGraph2's device repositioning)
SCORED_CHANGES = tuple(Change)

#: Words and phrases that refer to a prior study or an interval (cxrkg's list, after the issue's examples:
#: "compared with the prior", "again seen", "interval", "unchanged", "new"); any stated change counts too.
#: A ``COMPARISON:`` section that names something other than none is a reference as well.
PRIOR_CUES = ("prior", "previous", "previously", "compared", "comparison with", "again", "interval", "unchanged",
              "stable", "new", "newly", "since", "redemonstrated", "redemonstration", "persistent", "persists",
              "no longer", "as before", "earlier", "recurrent", "recurrence")
_PRIOR_CUE = re.compile(r"\b(" + "|".join(re.escape(c) for c in PRIOR_CUES) + r")\b")
_COMPARISON_SECTION = re.compile(r"\bcomparison\s*:\s*(?!none\b|no\b|n/?a\b|\.|$)\S")

#: Single words that usually state a change; those outside every change entity are listed by the summary,
#: so a user sees what the extractor left unread (cxrkg's list, after RadGraph2's change cues).
CHANGE_WORDS = frozenset({
    "increased", "increasing", "decreased", "decreasing", "worse", "worsened", "worsening", "improved", "improving",
    "improvement", "new", "newly", "resolved", "resolution", "resolving", "unchanged", "stable", "persistent",
    "persists", "larger", "smaller", "progression", "progressed", "interval", "cleared", "removed", "developed",
    "redemonstrated", "recurrent", "enlarging", "diminished", "reduced"})
_WORD = re.compile(r"[a-z]+")


class StatedChange(NamedTuple):
    """One change a report states: the vocabulary finding, the change class and the sentence stating it."""

    finding: str
    change: str
    sentence: str


class ReportReading(NamedTuple):
    """One report as scored.

    Attributes:
        positive: the vocabulary findings stated present or uncertain.
        changes: the stated changes, one per (finding, change), in report order.
        prior_cue: the first cue that refers to a prior study (``"again"``, ``"comparison section"``, or
            ``"stated change"``), None when the report refers to none.
        unread_change_words: change-like words (:data:`CHANGE_WORDS`) outside every change entity -> count.
    """

    positive: frozenset[str]
    changes: tuple[StatedChange, ...]
    prior_cue: str | None
    unread_change_words: Counter


def read_annotation(doc: Mapping[str, Any], vocab: Vocabulary, key: str = "report") -> ReportReading:
    """Read one RadGraph document (``key`` names it in errors).

    Raises:
        graph.records.InputError: the document's entities are malformed (naming ``key`` and the field).
    """
    text = doc.get("text")
    if not isinstance(text, str):
        raise InputError("annotation", key, "text", "missing or not text")
    entities = parse_entities(key, doc.get("entities"), "annotation", vocab)
    _, mentions = doc_to_records(key, text, entities, DocStudy("scored", "scored"), "annotation", vocab)
    positive = frozenset(m.finding for m in mentions if m.polarity in POSITIVE_STATES)
    seen: dict[tuple[str, str], StatedChange] = {}
    for m in mentions:
        if m.change in SCORED_CHANGES and (m.finding, m.change) not in seen:
            seen[(m.finding, m.change)] = StatedChange(m.finding, m.change, m.evidence)
    changes = tuple(seen.values())
    tokens = text.split(" ")
    covered = {i for e in entities.values() if e.kind == "CHAN" for i in range(e.start, e.end + 1)}
    unread = Counter(w for i, tok in enumerate(tokens) if i not in covered
                     for w in _WORD.findall(tok.lower()) if w in CHANGE_WORDS)
    return ReportReading(positive, changes, prior_cue(text, bool(changes) or bool(covered)), unread)


def prior_cue(text: str, states_change: bool = False) -> str | None:
    """The first cue in ``text`` that refers to a prior study (:data:`PRIOR_CUES`, lowercased), else
    ``"comparison section"`` for a ``COMPARISON:`` section naming a study, else ``"stated change"`` when
    ``states_change``, else None."""
    lowered = text.lower()
    if (m := _PRIOR_CUE.search(lowered)) is not None:
        return m.group(1)
    if _COMPARISON_SECTION.search(lowered):
        return "comparison section"
    return "stated change" if states_change else None
