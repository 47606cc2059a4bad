"""One processed spaCy Doc -> one RadGraph v1 / RadGraph2 document: the rules of the sibling modules applied
in order, then the entities merged, numbered and indexed by whitespace token.

Four sentence classes have rules of their own (:mod:`graph.extract.rules.changes.classes`, the annotation
guide's §9a): a slashed pair of cues ("stable/improved") is read as its change before linking, a hedge right
before a change cue ("possibly increased effusion") leaves the finding present, and a cue left without a
finding may speak of a place its sentence calls stable ("The left base is unchanged.") or of a heart called
normal after a decrease (a resolved enlargement).

Last, every side word that modifies an observation is rewritten into RadGraph's schema
(:func:`graph.extract.rules.side_places.sides_as_places`): a ``located_at`` target of the observation, or a
``modify`` of the region written with it. Then the global statements of no acute abnormality ("No acute
cardiopulmonary process.") get their RadGraph entities (:mod:`graph.extract.rules.global_statements`): they name
no finding, yet a RadGraph-level metric (F1RadGraph) should see them.
"""

from __future__ import annotations

from graph.extract.rules.changes.classes import hedged_changes, join_slashed_cues, normal_heart_resolution, stable_place
from graph.extract.rules.changes.linking import drop_unchanged_subjects, link_change, link_change_cue
from graph.extract.rules.changes.readings import reading_changes
from graph.extract.rules.curves import curve_sides
from graph.extract.rules.draft import Draft
from graph.extract.rules.global_statements import add_global_statements
from graph.extract.rules.laterality import link_anatomy, link_side, place_unanchored, reading_sides, side_anatomy
from graph.extract.rules.mentions import Mention, has_subject, mention_spans
from graph.extract.rules.normals import add_normal_statements
from graph.extract.rules.observations import add_observations, drop_named_generics, link_severity, link_suggestive
from graph.extract.rules.refer_back import drop_repeated_antecedents, refer_back, stable_abnormal_heart
from graph.extract.rules.side_places import sides_as_places
from graph.vocabulary import Vocabulary, vocabulary

DATA_SOURCE = "cxrkg-rules"


def doc_to_radgraph(doc, v: Vocabulary | None = None, data_source: str = DATA_SOURCE) -> dict:
    """Turn one processed spaCy Doc into a RadGraph v1 / RadGraph2 document (see :mod:`graph.extract.rules`).

    Change cues link to their observation in this order:

    1. attributive: the next finding after the cue, with at most two other words between ("improved right
       basilar consolidation", "unchanged appearance of ... granuloma"), and the present findings "and" or a
       comma joins to it ("unchanged atherosclerosis and tortuosity of the aorta");
    2. predicative: the findings before it in the sentence that carry no change yet ("effusions are
       unchanged"; only those after a comma whose clause has a place of its own as the cue's subject:
       "Given patient rotation, heart size is unchanged"), unless the cue is an adjective that describes
       the word after it ("increased AP diameter", "stable mediastinal contours");
    3. a finding just after it (at most four tokens); a cue that opens its sentence ("Stable appearance of
       ...", "There is again ...") also modifies the present findings after it, up to the next cue or
       clause break ("Stable appearance of the enteric tube and left PICC"); a sign whose cue stands before
       it passes the cue's class to the one reading offered for it ("Stable apical opacity, probably
       scarring": :func:`graph.extract.rules.changes.readings.reading_changes`); "previously seen / noted" before
       a finding its sentence negates ("the previously noted pneumothorax is not seen now") is a resolution;
    4. refer-back (:func:`graph.extract.rules.refer_back.refer_back`): a sentence with nothing but the cue
       and words that point back ("Increased since the prior study.", "This is unchanged."), or whose
       anaphor subject the cue is the predicate of, whatever follows ("These were not present on the prior
       study and may represent ..."), changes the present findings of the previous sentence of its section;
       a section that opens with such a sentence ("IMPRESSION: Increased.") changes the report's earlier
       present findings that carry no change yet. A bare no-change cue ("Unchanged.", "No interval
       change.") speaks of the whole study, and a cue after "to document", "if", "until" ... is
       hypothetical: they change nothing.

    Change subjects ("lung volumes", "aeration"; the vocabulary's, "heart size", only beside a quantity word)
    are kept only when a cue links to them, the quantity cues of "lung volumes" and "aeration" read inversely
    ("decreasing lung volumes" -> CHAN-CON-WOR), and a state word ("decreased") changes them only in a sentence
    that names a comparison ("decreased from the prior study") or as a verb or noun of change ("have decreased",
    "increase in heart size"). A scoliosis
    mention gets the direction of its curve ("dextro", "rightward", "convex to the right") as an ANAT-DP
    ``modify`` (the side MeSH gives it); the direction inside the word ("dextroscoliosis") needs none.

    The sentence classes with rules of their own, the schema rewrite of side words and the entities of global
    statements ("No acute cardiopulmonary process.", which names no finding): the module's docstring.
    """
    v = v or vocabulary()
    d = Draft.start(doc, v)
    obs_spans, d.mods = mention_spans(doc, v, keep=lambda o: has_subject(o, d.lower, d.sentence_of(o.start), v),
                                      text=d.text)
    d.obs_tokens = {i for o in obs_spans for i in range(o.start, o.end)}
    add_observations(d, obs_spans)
    drop_named_generics(d)
    add_normal_statements(d)
    join_slashed_cues(d)
    hedged_changes(d)
    unlinked = _link_modifiers(d)
    reading_changes(d)
    _link_unlinked(d, unlinked)
    drop_repeated_antecedents(d)
    drop_unchanged_subjects(d)
    curve_sides(d)
    place_unanchored(d)
    side_anatomy(d)
    reading_sides(d)
    sides_as_places(d)
    add_global_statements(d)
    return radgraph_document(d.entities, d.texts, data_source)


def _link_modifiers(d: Draft) -> list[Mention]:
    """Link every modifier mention in text order (the order decides which entity of a span is kept when
    spans merge); returns the change cues left without a target, for the refer-back."""
    unlinked: list[Mention] = []
    covered = {i for m in d.mods if m.kind in ("ANAT", "SIDE", "SEV") for i in range(m.start, m.end)}
    for m in d.mods:
        if m.kind == "ANAT":
            link_anatomy(d, m)
        elif m.kind == "SIDE":
            link_side(d, m)
        elif m.kind == "SEV":
            link_severity(d, m)
        elif m.kind == "CHANGE":
            if not link_change_cue(d, m, covered):
                unlinked.append(m)
        elif m.kind == "SUGG":
            link_suggestive(d, m)
    return unlinked


def _link_unlinked(d: Draft, unlinked: list[Mention]) -> None:
    """The change cues left without a finding of their sentence: a refer-back, the enlarged heart of another
    sentence, the findings at a place the sentence calls stable, or a normal heart whose enlargement resolved."""
    for m in unlinked:
        targets = refer_back(d, m) or stable_abnormal_heart(d, m) or stable_place(d, m)
        if targets:
            link_change(d, m, targets)
        else:
            normal_heart_resolution(d, m)


def radgraph_document(entities: list[dict], texts: list[str], data_source: str) -> dict:
    """The RadGraph document: entities that share a span merged (one cue modifying several findings),
    numbered in text order, spaCy token indexes turned into whitespace-token indexes."""
    merged: dict[tuple[int, int, str], dict] = {}
    for e in entities:
        first = merged.setdefault((e["_start"], e["_end"], e["label"]), e)
        if first is not e:
            first["rel"].extend(e["rel"])
            e["_alias"] = first
    ordered = sorted(merged.values(), key=lambda e: (e["_start"], e["_end"], e["label"]))
    ids = {id(e): str(n) for n, e in enumerate(ordered, start=1)}
    for e in entities:
        if "_alias" in e:
            ids[id(e)] = ids[id(e["_alias"])]
    index: dict[int, int] = {}  # spaCy token -> RadGraph token; whitespace-only tokens are dropped
    words: list[str] = []
    for i, text in enumerate(texts):
        if not text.isspace():
            index[i] = len(words)
            words.append(_written(text))
    out = {}
    for e in ordered:
        s, last = index[e["_start"]], index[e["_end"] - 1]
        rels = dict.fromkeys((r, ids[id(t)]) for r, t in e["rel"])
        out[ids[id(e)]] = {"tokens": " ".join(words[s:last + 1]), "label": e["label"],
                           "start_ix": s, "end_ix": last, "relations": [list(r) for r in rels]}
    return {"text": " ".join(words), "entities": out, "data_source": data_source, "data_split": "inference"}


def _written(text: str) -> str:
    """A token's text as the RadGraph text writes it: a run of periods ("opacities..") is one ".", which ends
    the sentence for a RadGraph reader as it does for the sentencizer."""
    return "." if text[:2] == ".." and not text.strip(".") else text
