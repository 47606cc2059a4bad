"""Normal statements ("The lungs are clear.", "Heart size and pulmonary vasculature are normal.", "Normal
cardiomediastinal silhouette."): the structure as an ANAT-DP entity and what is said of it as an OBS-DP
entity located at it, as RadGraph annotates them. Ingestion reads the pair through the vocabulary's
normal-statement table as the absences it asserts (``graph.formats.radgraph.records``), so a RadGraph file
written by another extractor is read the same way.

Subjects and predicates are the phrases of that table (``cxr_normals`` span group). A predicate speaks for
the subjects before it in its sentence, back to a clause break ("but", "with", ";", a comma that does not
follow a subject) or a finding
("Heart size is enlarged but the mediastinum is normal" says nothing of the heart's size), and only for
those the table pairs it with; with none before it, for a subject right after it and the subjects coordinated
with that one ("normal heart size and mediastinal contours"). A list item the table does not know, between
commas, does not end a list of subjects ("Normal cardiomediastinal silhouette, central airways, pulmonary
vasculature and lung volumes"). A predicate right after "but" speaks for the subject of the finding before it
("The lungs are hypoinflated but clear": the lungs are clear; "but the mediastinum is normal" has its own subject).
Not a normal statement: a predicate after "otherwise" ("the lungs are otherwise clear" denies only what the
report did not name) or after a negation ("not clear"), and one that names what it is said of ("the lungs are
clear of focal airspace disease, pneumothorax or effusion" denies those findings, which ConText reads, not a lung
opacity). A hedge before the predicate ("probably normal") makes it OBS-U, as does a predicate that hedges by
itself ("borderline heart size").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graph.extract.rules.draft import Draft

if TYPE_CHECKING:  # spaCy is the optional extract extra
    from spacy.tokens import Span

_CLAUSE_BREAKS = {"but", "however", "although", "though", "with", "without", "except", ";", ",", "which", "while"}
_SKIP_AFTER = {"otherwise", "not", "no", "never"}
#: words between "otherwise" and its predicate ("otherwise grossly clear")
_ADVERBS = {"grossly", "essentially", "entirely", "completely", "largely", "relatively", "still", "again"}
#: an exception in the sentence makes its predicate an "otherwise" ("clear, aside from mild scarring")
_EXCEPTIONS = ("aside from", "apart from", "except for", "other than", "with the exception of")
_HEDGES = {"probably", "likely", "possibly", "questionably", "presumably", "may", "might", "could"}
#: a predicate followed by "of" and a finding within this many tokens names what it denies ("clear of any focal
#: infiltrates")
_NAMED_REACH = 3
#: a predicate that hedges by itself ("borderline heart size": the annotation guide's §3, uncertain)
_HEDGED_PREDICATES = {"borderline"}
_FORWARD_GAP = 2
_COORDINATORS = {"and", ",", "the"}
#: words of a list item between two subjects that the normal-statement table does not know ("central airways")
_UNKNOWN_ITEM_WORDS = 3
#: words between a subject and the finding stated of it, or between "but" and its predicate ("The lungs are mildly
#: hypoinflated but grossly clear", "The lungs demonstrate low lung volumes but are clear")
_LINKING = {"is", "are", "appear", "appears", "remain", "remains", "demonstrate", "demonstrates", "show", "shows",
            "mildly", "slightly", "minimally", "moderately", "markedly", "somewhat", "appearing"} | _ADVERBS
#: at most this many tokens of the finding and its linking words between a subject and "but"
_CONTRAST_REACH = 8
#: words that end a list item: a clause break, a negation or "otherwise", a verb
_NOT_IN_ITEM = _CLAUSE_BREAKS | _SKIP_AFTER | {"is", "are", "was", "were", "appear", "appears", "remain", "remains",
                                               "has", "have"}


def normal_rules(v) -> list:
    """medspaCy target rules: NSUBJ for each subject and NPRED for each predicate of the vocabulary's table."""
    from medspacy.target_matcher import TargetRule

    return ([TargetRule(s, "NSUBJ") for s in sorted(v.normal_subjects)]
            + [TargetRule(p, "NPRED") for p in sorted(v.normal_predicates)])


def add_normal_statements(d: Draft) -> None:
    """Add the ANAT-DP / OBS-DP entities of every normal statement of the Doc to ``d.entities``."""
    from spacy.util import filter_spans

    spans = filter_spans(list(d.doc.spans.get("cxr_normals", [])))
    subjects = [s for s in spans if s.label_ == "NSUBJ"]
    predicates = [s for s in spans if s.label_ == "NPRED"]
    said = {i for p in predicates for i in range(p.start, p.end)}
    anat: dict[tuple[int, int], dict] = {}
    for p in predicates:
        if _qualified(d, p):
            continue
        targets = [s for s in _subjects_before(d, p, subjects, said) if d.v.normal_absences(s.text, p.text)]
        if not targets:
            targets = [s for s in _subjects_after(d, p, subjects) if d.v.normal_absences(s.text, p.text)]
        if not targets:
            continue
        rel = [("located_at", anat.setdefault((s.start, s.end), {"_start": s.start, "_end": s.end,
                                                                  "label": "ANAT-DP", "rel": []}))
               for s in targets]
        d.entities.append({"_start": p.start, "_end": p.end, "label": _label(d, p), "rel": rel})
    d.entities.extend(anat.values())


def _qualified(d: Draft, p) -> bool:
    """The predicate is negated or an "otherwise": after "not" / "otherwise" (adverbs between allowed), or
    in a sentence that names an exception; or it names what it denies ("clear of focal airspace disease")."""
    i = p.start - 1
    while i >= 0 and d.lower[i] in _ADVERBS:
        i -= 1
    if i >= 0 and d.lower[i] in _SKIP_AFTER or _names_its_findings(d, p):
        return True
    start, end = d.sentence_of(p.start)
    words = " ".join(d.lower[start:end])
    return any(f" {e} " in f" {words} " for e in _EXCEPTIONS)


def _names_its_findings(d: Draft, p) -> bool:
    """"Clear of" + a finding of its sentence at most :data:`_NAMED_REACH` tokens on ("The lungs are clear of focal
    airspace disease"): the finding is what the statement denies, the structure is not called normal as a whole (the
    guide's §4: absences "in the sense of the words used")."""
    if p.end >= len(d.lower) or d.lower[p.end] != "of":
        return False
    return any(d.sent_of[k] == d.sent_of[p.start] and k in d.obs_tokens
               for k in range(p.end + 1, min(p.end + 1 + _NAMED_REACH, len(d.lower))))


def _subjects_before(d: Draft, p: Span, subjects: list[Span], said: set[int]) -> list[Span]:
    """The subjects of ``p``'s sentence before it, back to a clause break or a finding; a comma right after a
    subject lists subjects rather than breaking the clause ("Heart size, mediastinal contour, and pulmonary
    vascularity are within normal limits"), and a "but" right before the predicate leads back over the finding
    stated of a subject to that subject ("The lungs are hypoinflated but clear"). The words of a subject are the
    subject's, though they also name a change subject ("The lung volumes are normal": "lung volumes" is a finding
    only with a change cue)."""
    out: list[Span] = []
    i = p.start - 1
    while i >= 0 and d.sent_of[i] == d.sent_of[p.start]:
        if i in d.obs_tokens and not any(s.start <= i < s.end for s in subjects):
            i = _coordinated_finding_start(d, i, subjects)
            if i < 0:
                break
        elif d.lower[i] == "but" and not out and set(d.lower[i + 1:p.start]) <= _LINKING:
            i = _contrast_subject_end(d, i, subjects)
            if i < 0:
                break
        elif d.lower[i] in _CLAUSE_BREAKS and not (d.lower[i] == "," and any(s.end == i for s in subjects)):
            i = _unknown_item_start(d, i, subjects, said) if out else -1
            if i < 0:
                break
        out += [s for s in subjects if s.end == i + 1]
        i -= 1
    return out


def _contrast_subject_end(d: Draft, i: int, subjects: list) -> int:
    """At "but" (token ``i``) right before a predicate: the last token of the subject that the finding before
    "but" is stated of ("The lungs are hypoinflated but clear"), when only that finding's tokens and linking
    words (:data:`_LINKING`) lie between them; -1 otherwise."""
    k = i - 1
    finding = False
    while k >= 0 and i - k <= _CONTRAST_REACH and d.sent_of[k] == d.sent_of[i]:
        if k in d.obs_tokens:  # before the subject test: "lung volumes" ends inside "low lung volumes"
            finding = True
        elif any(s.end == k + 1 for s in subjects):
            return k if finding else -1
        elif d.lower[k] not in _LINKING:
            return -1
        k -= 1
    return -1


def _unknown_item_start(d: Draft, i: int, subjects: list, said: set[int]) -> int:
    """At a comma ``i`` inside a list of subjects that follows no subject: when the words before it are a list
    item the table does not know (at most :data:`_UNKNOWN_ITEM_WORDS`; no finding, predicate (tokens ``said``),
    verb, negation or clause break) that follows a subject ("Heart XXXX, mediastinum, XXXX, bony structures and
    lung XXXX are unremarkable"), the token where the walk goes on (the subject's last word, or the comma or
    "and" right after it); -1 otherwise."""
    if d.lower[i] != ",":
        return -1
    words = 0
    k = i - 1
    while k >= 0 and d.sent_of[k] == d.sent_of[i]:
        if any(s.end == k + 1 for s in subjects):
            return k if words else -1
        if d.lower[k] in (",", "and"):
            return k if words and any(s.end == k for s in subjects) else -1
        if k in d.obs_tokens or k in said or d.lower[k] in _NOT_IN_ITEM:
            return -1
        words += d.lower[k] not in _COORDINATORS
        if words > _UNKNOWN_ITEM_WORDS:
            return -1
        k -= 1
    return -1


def _coordinated_finding_start(d: Draft, i: int, subjects: list) -> int:
    """The token before the finding that ends at token ``i`` when the finding is coordinated with a subject
    before it ("heart size and pulmonary vascular engorgement appear within limits of normal": ConText
    denies the finding, the table the heart size); -1 otherwise (a finding ends the predicate's reach)."""
    j = i
    while j - 1 >= 0 and j - 1 in d.obs_tokens:
        j -= 1
    for k in range(j - 1, max(j - 4, 0), -1):  # "and" + at most two words of the finding's phrase ("pulmonary")
        if d.lower[k] in ("and", ",") and any(s.end == k for s in subjects):
            return k
    return -1


def _subjects_after(d: Draft, p, subjects: list) -> list:
    """The subject right after ``p`` (at most :data:`_FORWARD_GAP` tokens on) and the subjects coordinated
    with it ("Normal heart size and mediastinal contours")."""
    out: list = []
    for s in sorted(subjects, key=lambda s: s.start):
        if d.sent_of[s.start] != d.sent_of[p.start] or s.start < p.end:
            continue
        if not out and s.start - p.end <= _FORWARD_GAP:
            out.append(s)
        elif out and _coordinated(d, out[-1].end, s.start):
            out.append(s)
        elif out:
            break
    return out


def _coordinated(d: Draft, end: int, start: int) -> bool:
    """The tokens from ``end`` to ``start`` join two subjects of one list: coordinators only ("heart size and
    mediastinal contours"), or a list item the table does not know between commas ("normal cardiomediastinal
    silhouette, central airways, pulmonary vasculature and lung volumes"): at most
    :data:`_UNKNOWN_ITEM_WORDS` words, no finding, verb, negation or clause break."""
    between = d.lower[end:start]
    if len(between) <= 2 and set(between) <= _COORDINATORS:
        return True
    words = [w for w in between if w not in _COORDINATORS]
    return (0 < len(words) <= _UNKNOWN_ITEM_WORDS and between[0] == "," and between[-1] in (",", "and")
            and not set(words) & _NOT_IN_ITEM and not d.obs_tokens.intersection(range(end, start)))


def _label(d: Draft, p) -> str:
    window = {d.lower[i] for i in range(max(p.start - 3, 0), p.start) if d.sent_of[i] == d.sent_of[p.start]}
    return "OBS-U" if window & _HEDGES or d.lower[p.start] in _HEDGED_PREDICATES else "OBS-DP"
