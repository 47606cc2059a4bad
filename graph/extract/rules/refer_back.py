"""Refer-backs: a change cue alone in its sentence ("Increased since the prior study.", "This is unchanged.")
changes findings of an earlier sentence (rule 4 of :func:`graph.extract.rules.document.doc_to_radgraph`); a
bare no-change cue ("Unchanged.", "No interval change.") speaks of the whole study and changes none."""

from __future__ import annotations

from graph.extract.rules.changes.cues import CHANGE_CUES
from graph.extract.rules.draft import Draft
from graph.extract.rules.mentions import DEVICE_CATEGORIES, Mention
from graph.extract.rules.sections import SECTION_ORDER
from graph.vocabulary import Vocabulary, ancestors

#: the only words of a sentence that refers back ("Unchanged.", "This is increased since the previous study.")
_REFER_WORDS = {"this", "it", "these", "they", "that", "there", "which", "finding", "findings", "appearance",
                "abnormality", "abnormalities", "change", "changes", "process", "is", "are", "was", "were", "has",
                "have", "had", "been", "be", "does", "do", "did", "appear", "appears", "appeared", "seem", "seems",
                "to", "of", "the", "a", "an", "since", "from", "compared", "comparison", "with", "than", "as", "prior",
                "previous", "previously", "study", "studies", "exam", "exams", "examination", "examinations",
                "radiograph", "radiographs", "film", "films", "image", "images", "xxxx", "slightly", "mildly",
                "minimally", "somewhat", "considerably", "significantly", "markedly", "substantially", "further",
                "overall", "also", "however", "in", "size", "interval", "last", "earlier", "essentially",
                "grossly", "relatively", "again", "and", "on", "date", "dated", "recent", "one", "all", "both",
                "imaging", "chest", "ct", "radiographically", "well", "position", "positioning"}
#: words that make a refer-back speak of a device's place ("No interval change in XXXX position."): it refers
#: to the devices of the sentence before only
_POSITION = {"position", "positioning"}


#: words that make a sentence without an anaphor a statement about the whole study ("Stable appearance of the
#: chest.", "The appearance is similar to the prior radiograph."): it names no finding (the annotation guide's §6)
_WHOLE_STUDY = {"appearance", "chest"}
#: the anaphors a refer-back's subject is (§8: "this", "these", "it", "they", "the findings", "the above")
_ANAPHORS = {"this", "these", "it", "they", "that", "those", "finding", "findings", "above", "abnormality",
             "abnormalities"}


def refer_back(d: Draft, m: Mention) -> list[tuple[Mention, dict]]:
    """What a change cue alone in its sentence refers to (rule 4 of the change cues).

    The sentence must hold no finding, anatomy or side and no word outside :data:`_REFER_WORDS` (besides
    the cue): "Decreased from prior radiograph.", "However, it has decreased considerably since the previous
    examination." (or have the cue as the predicate of its anaphor subject: :func:`anaphor_subject`); and it
    must not speak of the whole study (the guide's §6): :data:`_WHOLE_STUDY` without one of
    :data:`_ANAPHORS` ("Stable appearance of the chest."), or a no-change cue without an anaphor or a
    position ("Unchanged.", "No interval change."; "No interval change in XXXX position." speaks of a
    device). Then: the present (OBS-DP) findings of the previous sentence of the same section (list numbers
    such as "2." skipped; only its devices when the sentence speaks of a position; for an anaphor, the
    nearest sentence that names a finding or a place: :func:`stating_sentence`); none when that sentence
    states only absent findings ("No acute disease. Increased."), unless the sentence says "findings" ("No
    effusion. Findings are unchanged."): then the present findings of its section before it that carry no
    change yet. A section that opens with it: the present findings of the earlier findings / impression
    sections that carry no change yet."""
    sent_of, sections = d.sent_of, d.sections
    n = sent_of[m.start]
    sent = d.sentence(n)
    words = set(d.lower[sent.start:sent.end])
    if not (_alone(d, m, n, sent) or anaphor_subject(d, m)) or (words & _WHOLE_STUDY and not words & _ANAPHORS):
        return []

    if not words & (_ANAPHORS | _POSITION) and CHANGE_CUES[m.value][0] == "CHAN-NC":
        return []  # "Unchanged.", "No interval change.": the whole study (the guide's §6)
    section = sections[m.start]
    k = previous_content_sentence(d, n, section)
    if words & _ANAPHORS:
        k = stating_sentence(d, k, section)
    if k >= 0:
        previous = [(o, it) for o, it in d.obs_items if sent_of[o.start] == k and it["label"] == "OBS-DP"
                    and (not words & _POSITION or d.v.findings[o.value].category in DEVICE_CATEGORIES)]
        if previous or "findings" not in d.lower[sent.start:sent.end]:
            return previous
        # "Findings are unchanged." after absences: the findings named earlier in the section
        return [(o, it) for o, it in d.obs_items if o.start < sent.start and sections[o.start] == section
                and it["label"] == "OBS-DP" and id(it) not in d.changed]
    return [(o, it) for o, it in d.obs_items if o.start < sent.start and sections[o.start] in ("findings", "impression")
            and sections[o.start] != section and it["label"] == "OBS-DP" and id(it) not in d.changed]


def anaphor_subject(d: Draft, m: Mention) -> bool:
    """Cue ``m`` is the predicate of an anaphor that opens its sentence, whatever follows it ("These were not
    present on the prior study and may represent ...", "These are increased from prior, with the largest in
    the left base"): the words before the cue are refer-back words, one of them an anaphor (the guide's §8
    labels such a sentence with the findings the anaphor refers to); or the sentence opens with a pronoun
    (:data:`_OPENING_ANAPHORS`), names no finding or place and holds no hedge before the cue ("This has
    shown definite interval increase.", "This is smoothly marginated, and is stable since the CT.")."""
    start, end = d.sentence_of(m.start)
    before = [w for w in d.lower[start:m.start] if w.isalpha()]
    if any(start <= i < m.start for i in d.obs_tokens):
        return False
    if bool(set(before) & _ANAPHORS) and all(w in _REFER_WORDS for w in before):
        return True
    return (bool(before) and before[0] in _OPENING_ANAPHORS and _SPECULATION.isdisjoint(before)
            and _names_nothing(d, d.sent_of[m.start], end))


#: pronouns that, opening a sentence that names no finding or place, are the subject of its change cue
#: wherever it stands ("This has shown definite interval increase.", "This is smoothly marginated, and is
#: stable since the CT.")
_OPENING_ANAPHORS = {"this", "these", "it", "they"}
#: hedges (the guide's §3) before such a cue make it speculation, no change (§6: "This could have
#: resolved")
_SPECULATION = {"may", "might", "could", "would", "possible", "possibly", "probable", "probably", "likely",
                "presumably", "if", "whether"}


def _names_nothing(d: Draft, n: int, end: int) -> bool:
    """Sentence ``n`` (ending at token ``end``) names no finding and no place or side other than refer-back
    words."""
    start = d.sent_bounds[n][0]
    return not any(start <= i < end for i in d.obs_tokens) and not any(
        x.kind in ("ANAT", "SIDE") and d.sent_of[x.start] == n and not set(d.lower[x.start:x.end]) <= _REFER_WORDS
        for x in d.mods)


def _alone(d: Draft, m: Mention, n: int, sent) -> bool:
    """Sentence ``n`` (tokens ``sent``) holds cue ``m`` and refer-back words only (an anatomy phrase of
    refer-back words, the "chest" of "compared with prior chest CT", is no place of a finding)."""
    if any(d.sent_of[o.start] == n for o, _ in d.obs_items) or any(
            x.kind in ("ANAT", "SIDE") and d.sent_of[x.start] == n
            and not set(d.lower[x.start:x.end]) <= _REFER_WORDS for x in d.mods):
        return False
    cue_tokens = set(range(m.start, m.end))
    return not any(t.is_alpha and t.i not in cue_tokens and t.lower_ not in _REFER_WORDS for t in sent)


#: words that end the name of a heart chamber: the place of a device's tip, which states no finding (§7)
_CHAMBER_WORDS = {"atrium", "ventricle", "atria", "ventricles"}


def stating_sentence(d: Draft, k: int, section: str | None) -> int:
    """Sentence ``k`` or, when it names neither a finding nor a place (other than the heart chamber of a
    device's tip: "Correlate clinically.", "On the lateral view the lead is in the right ventricle."), the
    nearest sentence before it in its section that does: an anaphor refers to a finding (the guide's §8)."""
    stating = {d.sent_of[e["_start"]] for e in d.entities if e["label"].startswith("OBS")}
    stating |= {d.sent_of[x.start] for x in d.mods if x.kind in ("ANAT", "SIDE")
                and d.lower[x.end - 1] not in _CHAMBER_WORDS and not (x.kind == "SIDE" and x.end < len(d.lower)
                                                                     and d.lower[x.end] in _CHAMBER_WORDS)}
    while k >= 0 and k not in stating:
        k = previous_content_sentence(d, k, section)
    return k


#: demonstratives that make the finding they open a sentence with the one an earlier sentence stated ("These nodules
#: are densely calcified, ..."); at most :data:`_DEMONSTRATIVE_REACH` words between
_DEMONSTRATIVES = {"this", "these", "that", "those"}
_DEMONSTRATIVE_REACH = 2


def drop_repeated_antecedents(d: Draft) -> None:
    """A present finding that a demonstrative opens its sentence with ("These nodules are densely calcified, in
    keeping with granulomatous disease." after "Two tiny nodules in the right upper lobe.") names
    the finding of the sentence it points to (:func:`stating_sentence`) again, when that sentence states the
    same finding or one related to it through IS_A present: it belongs to the sentence that states it and is
    not repeated (the annotation guide's §8), unless the sentence says how it changed ("These opacities have
    increased."). Runs after the change cues are linked."""
    dropped = set()
    for o, it in d.obs_items:
        start = d.sentence_of(o.start)[0]
        if (it["label"] != "OBS-DP" or id(it) in d.changed or d.lower[start] not in _DEMONSTRATIVES
                or o.start - start - 1 > _DEMONSTRATIVE_REACH or any(i in d.obs_tokens for i in range(start, o.start))):
            continue
        section = d.sections[o.start]
        k = stating_sentence(d, previous_content_sentence(d, d.sent_of[o.start], section), section)
        related = _related(d.v, o.value)
        if k >= 0 and any(d.sent_of[o2.start] == k and it2["label"] == "OBS-DP" and o2.value in related
                          for o2, it2 in d.obs_items):
            dropped.add(id(it))
    d.drop(dropped)


def _related(v: Vocabulary, finding: str) -> set[str]:
    """``finding``, its IS_A ancestors and its descendants (computed once per vocabulary)."""
    key = id(v)
    if key not in _RELATED:
        parents = {f.name: f.parents for f in v.findings.values()}
        related = {name: {name} | ancestors(name, parents) for name in v.findings}
        for name, anc in list(related.items()):
            for a in anc:
                related[a].add(name)
        _RELATED[key] = related
    return _RELATED[key].get(finding, {finding})


#: id of a vocabulary -> finding -> :func:`_related`
_RELATED: dict[int, dict[str, set[str]]] = {}


def previous_content_sentence(d: Draft, n: int, section: str | None) -> int:
    """The number of the nearest sentence before ``n`` in the same section with a word other than a section
    header (list numbers such as "2." are skipped); -1 when there is none."""
    headers = {s.upper() for s in SECTION_ORDER}

    def content(k: int) -> bool:
        start, end = d.sent_bounds[k]
        return any(w.isalpha() and w.rstrip(":").upper() not in headers for w in d.texts[start:end])

    k = n - 1
    while k >= 0:
        start, end = d.sent_bounds[k]
        if start == end or d.sections[start] != section:
            return -1
        if content(k):
            return k
        k -= 1
    return -1


#: regions of the heart that a no-change cue may call stable ("Stable cardiomediastinal silhouette", "heart size
#: is unchanged"); the finding that makes them abnormal
_HEART_REGIONS = {"heart", "cardiac silhouette"}
_ENLARGED_HEART = "enlarged cardiac silhouette"


def stable_abnormal_heart(d: Draft, m: Mention) -> list[tuple[Mention, dict]]:
    """What a no-change cue left without a finding refers to when it calls the heart stable ("Unchanged
    cardiomediastinal silhouette."): the enlarged heart of another sentence of the report that is itself called
    unchanged ("The cardiac silhouette remains enlarged."). The guide's §6 labels such a stable sentence with
    `enlarged cardiac silhouette` present, CHAN-NC, and with nothing when the report calls the heart abnormal
    nowhere. None when the sentence states the heart's size itself, normal statements included ("Heart size
    upper limits normal, but stable"), and none for an enlarged heart without a no-change cue of its own: the
    sentence that states it keeps its class."""

    n = d.sent_of[m.start]
    if CHANGE_CUES[m.value][0] != "CHAN-NC" or any(
            e["label"].startswith("OBS") and not e.get("_mod") and d.sent_of[e["_start"]] == n
            and e.get("_finding", _ENLARGED_HEART) == _ENLARGED_HEART for e in d.entities) or not any(
            x.kind == "ANAT" and d.sent_of[x.start] == n and _HEART_REGIONS & set(d.v.regions_for(x.text))
            for x in d.mods):
        return []
    no_change = {id(t) for e in d.entities if e["label"] == "CHAN-NC" for _, t in e["rel"]}
    return [(o, it) for o, it in d.obs_items if o.value == _ENLARGED_HEART and it["label"] == "OBS-DP"
            and id(it) in no_change and d.sections[o.start] in ("findings", "impression")]
