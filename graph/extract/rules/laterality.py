"""Where an observation is: an anatomy phrase near it (``located_at``), a side word next to it (ANAT-DP
``modify`` while the rules run; :mod:`graph.extract.rules.side_places` writes it in RadGraph's schema at the
end), and a place for a sided finding stated with neither, so the graph does not put it on both sides by
default."""

from __future__ import annotations

from graph.extract.rules.draft import Draft
from graph.extract.rules.mentions import DEVICE_CATEGORIES, SIDE_WORDS, Mention, gap
from graph.extract.rules.refer_back import previous_content_sentence, stating_sentence
from graph.vocabulary import Vocabulary


def link_anatomy(d: Draft, m: Mention) -> None:
    """The nearest observation of the sentence, at most six tokens away, is ``located_at`` the phrase; not a
    device at a heart chamber: its tip's place is no place of the device (the guide's §7) and the chamber's
    side no side of the body (§5: "right IJ catheter with its tip in the right atrium" is right, "leads in
    the right atrium and right ventricle" none)."""
    if names_a_study(d, m):
        return
    hit = _owner_before_preposition(d, m, d.nearest(m, 6))
    if hit and d.lower[m.end - 1] in _CHAMBERS and d.v.findings[hit[0].value].category in DEVICE_CATEGORIES:
        return
    items = [hit[1]] if hit else _coordinated_place(d, m)
    if items:
        anat = {"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": [], "_mod": True}
        d.entities.append(anat)
        for item in items:
            item["rel"].append(("located_at", anat))


#: words that open a place phrase after the finding it places ("effusion at the right base"), the articles and
#: position words between them and the place ("in the medial right base"), and the words that end the finding's
#: clause before them ("..., and atelectasis at the left base")
_LOCATIVES = {"in", "at", "within", "of", "over", "along", "overlying", "involving", "near", "throughout", "on"}
_BEFORE_PLACE = {"the", "a", "an", "both", "medial", "lateral", "anterior", "posterior", "superior", "inferior",
                 "peripheral", "central", "far"}
_CLAUSE_BREAKS = {",", "and", "or", ";", "with", "but", "while", "which"}


def _owner_before_preposition(d: Draft, m: Mention,
                              hit: tuple[Mention, dict] | None) -> tuple[Mention, dict] | None:
    """The finding that a sided place or side word opened by a preposition places: the one before the
    preposition, in its clause, rather than a nearer one after the place ("Small effusion at the right base and
    atelectasis at the left base", "an effusion on the right and a pneumothorax on the left": the effusion is
    right; the guide's §5, the side stated for the finding's location). ``hit`` (the nearest finding)
    otherwise."""
    i = m.start - 1
    while i >= 0 and d.lower[i] in _BEFORE_PLACE:
        i -= 1
    if hit is None or hit[0].start < m.start or i < 0 or d.lower[i] not in _LOCATIVES or not d.v.side_of(m.text):
        return hit
    before = [(o, it) for o, it in d.same_sentence(m) if o.end <= i and gap(o, m) <= 6]
    if not before or any(w in _CLAUSE_BREAKS for w in d.lower[before[-1][0].end:i]):
        return hit
    return before[-1]


#: words between two coordinated places ("at the left base and in the right upper lobe")
_BETWEEN_PLACES = {"the", "in", "at", "of", "within", "over", "along", "left", "right", "both"}


def _coordinated_place(d: Draft, m: Mention) -> list[dict]:
    """The observations located at a place that "and" / "or" joins to phrase ``m`` ("atelectasis at the left
    lung base and in the right upper lobe", "clips in the right neck and left mediastinum"): they are at
    ``m`` too, however far it is from them."""
    i = m.start - 1
    start = d.sentence_of(m.start)[0]
    while i > start and d.lower[i] in _BETWEEN_PLACES:
        i -= 1
    if i <= start or d.lower[i] not in ("and", "or"):
        return []
    places = {id(e) for e in d.entities if e["label"] == "ANAT-DP" and e["_end"] == i and "_mod" in e}
    return [it for _, it in d.obs_items if any(r == "located_at" and id(t) in places for r, t in it["rel"])]


#: words after an anatomy phrase that make it the name of a study ("evaluated further with chest CT")
_STUDIES = {"ct", "radiograph", "radiographs", "radiography", "x-ray", "x-rays", "x-xxxx", "film", "films",
            "fluoroscopy", "examination", "exam", "study", "studies", "imaging"}


def names_a_study(d: Draft, m: Mention) -> bool:
    """The anatomy phrase names a study, not a place ("chest CT", "chest radiograph"): it places no finding."""
    return m.end < len(d.lower) and d.lower[m.end] in _STUDIES


#: words after a side word that make it a heart chamber's side: no side of a device in it ("leads in the right
#: ventricle"; the annotation guide's §5), though a lung finding by it takes it ("atelectasis overlying the left
#: ventricle")
_CHAMBERS = {"ventricle", "ventricles", "ventricular", "atrium", "atria", "atrial"}


def _names_chamber(d: Draft, i: int) -> bool:
    """The words from token ``i`` on, after a side word, name a heart chamber: "ventricle", "atrium", or the
    heart itself ("leads in the right heart": its right chambers; not "the right heart border", a place of the
    lung)."""
    word = d.lower[i] if i < len(d.lower) else ""
    return word in _CHAMBERS or word == "heart" and (i + 1 >= len(d.lower) or d.lower[i + 1] not in _BORDERS)


_BORDERS = {"border", "borders", "margin", "silhouette"}


def link_side(d: Draft, m: Mention) -> None:
    """A side word modifies the finding it opens (:func:`_finding_it_opens`), or the one before the preposition
    that opens it (:func:`_owner_before_preposition`), else the nearest observation of its sentence, at most
    three tokens away (not a device when it names a heart chamber)."""
    hit = _finding_it_opens(d, m) or _owner_before_preposition(d, m, d.nearest(m, 3))
    if hit and _names_chamber(d, m.end) and d.v.findings[hit[0].value].category in DEVICE_CATEGORIES:
        return
    if hit:
        d.entities.append({"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": [("modify", hit[1])],
                           "_mod": True})


#: side words that stand before what they side ("right", "left-sided", "bilateral"; not "bilaterally", which
#: follows it)
_SIDE_ADJECTIVES = {"left", "right", "left-sided", "right-sided", "bilateral"}


def _finding_it_opens(d: Draft, m: Mention) -> tuple[Mention, dict] | None:
    """The finding right after a side adjective (at most three tokens, none of them ending a clause) that it
    opens, though a finding before it is nearer ("Left basilar atelectasis and right middle lobe scarring":
    the scarring is right, not the atelectasis; the guide's §5); None when there is none."""
    if d.lower[m.start] not in _SIDE_ADJECTIVES:
        return None
    after = d.nearest(m, 3, only_after=True)
    if after is None or any(w in _CLAUSE_BREAKS for w in d.lower[m.end:after[0].start]):
        return None
    return after


#: words between a side word and the anatomy phrase it sides ("right upper / mid lung"), and the words that
#: join two of them ("right mid and upper lung zone", "left mid to lower lung")
_ZONE_WORDS = {"upper", "mid", "middle", "lower", "/"}
_ZONE_JOINS = {"and", "or", "to"}


def side_anatomy(d: Draft) -> None:
    """A side word right before an anatomy phrase (zone words between, also joined: "right mid and upper lung
    zone") sides everything located at that phrase ("right upper / mid lung nodular densities versus
    scarring": both right), not only the finding next to it: the side the sentence states for the findings'
    location (the guide's §5). Runs after :func:`place_unanchored`, which gives the scarring its place. It also
    sides the predicate of a normal statement whose subject it opens ("Clear left lung."), whose absences
    ingestion then places on that side."""
    located_at = located_by_anatomy(d)
    side_at = {e["_start"]: e for e in d.entities if e["label"] == "ANAT-DP" and e["_end"] - e["_start"] == 1
               and d.lower[e["_start"]] in SIDE_WORDS}
    for anat in [e for e in d.entities if e["label"] == "ANAT-DP" and id(e) in located_at]:
        i = side_word_of(d, anat)
        if i is None:
            continue
        located = located_at[id(anat)]
        if i < anat["_start"] and _names_chamber(d, i + 1):  # "leads in the right heart": no device's side (§5)
            devices = {id(it) for o, it in d.obs_items if d.v.findings[o.value].category in DEVICE_CATEGORIES}
            located = [e for e in located if id(e) not in devices]
        if not located:
            continue  # nothing to side: no side entity of its own either
        side = side_at.get(i)
        if side is None:
            side = side_at[i] = {"_start": i, "_end": i + 1, "label": "ANAT-DP", "rel": [], "_mod": True}
            d.entities.append(side)
        for e in located:
            if not any(t is e for _, t in side["rel"]):
                side["rel"].append(("modify", e))


def located_by_anatomy(d: Draft) -> dict[int, list[dict]]:
    """``id()`` of an anatomy entity -> the observations ``located_at`` it, in entity order."""
    out: dict[int, list[dict]] = {}
    for e in d.entities:
        if e["label"].startswith("OBS"):
            for r, t in e["rel"]:
                if r == "located_at":
                    out.setdefault(id(t), []).append(e)
    return out


def side_word_of(d: Draft, anat: dict) -> int | None:
    """The side word that sides the anatomy phrase ``anat``: right before it (zone words between, also
    joined: "right mid and upper lung zone"), or "bilaterally" right after it ("opacities in the upper lungs
    bilaterally", "the lung bases bilaterally": the guide's §5); None when there is none."""
    i = anat["_start"] - 1
    while i >= 0 and (d.lower[i] in _ZONE_WORDS or d.lower[i] in _ZONE_JOINS and i > 0
                      and d.lower[i - 1] in _ZONE_WORDS and d.lower[i + 1] in _ZONE_WORDS):
        i -= 1
    if i >= 0 and d.lower[i] in SIDE_WORDS and d.sent_of[i] == d.sent_of[anat["_start"]]:
        return i
    after = anat["_end"]
    if after < len(d.lower) and d.lower[after] == "bilaterally":
        return after
    return None


#: plural paired anatomy, a side stated for both sides (the guide's §5: "bases", "apices", "hila")
_PAIRED_PLURALS = {"bases", "apices", "hila", "angles", "hemidiaphragms", "hemithoraces"}


def reading_sides(d: Draft) -> None:
    """A reading that a sign suggests ("opacities ... which may represent pleural reaction or small pulmonary
    nodules", "left upper lobe opacification suggestive of hilar mass") and whose own place states no side
    ("pulmonary", "hilar", "pleural": either side) takes the sign's place and side: the guide's §5, a
    reading takes the side of the sign it reads (not a whole-body or midline condition: :func:`_lateral`).
    Runs after :func:`side_anatomy`, which gives the sign the side written before its place. So does a reading
    placed without a side in a sentence that points back ("Blunting of the left costophrenic angle. This may be
    a trace effusion or a pleural reaction.": left, not the "pleural" of its own sentence): it takes the
    place of the first sided finding of the sentence it points to (:func:`_antecedents`)."""
    mention_of = {id(it): o for o, it in d.obs_items}
    for sign in [e for e in d.entities if e["label"].startswith("OBS") and id(e) in mention_of]:
        for r, reading in sign["rel"]:
            o = mention_of.get(id(reading))
            if (r == "suggestive_of" and o is not None and _lateral(o.value, d.v) and not _states_side(d, reading)
                    and _states_side(d, sign)):
                _copy_anchors(d, sign, reading)
    for o, it in d.obs_items:
        if it["label"] == "OBS-U" and _lateral(o.value, d.v) and _opens_pointing_back(d, o) and not _states_side(d, it):
            sided = [a for a in _antecedents(d, o) or () if _states_side(d, a)]
            if sided:
                _copy_anchors(d, sided[0], it)


def _states_side(d: Draft, item: dict) -> bool:
    """The finding's side modifiers or places state a side: a side word, a place on one side ("lingula"), or
    plural paired anatomy ("bases")."""
    located, sides = _anchors(d, item)
    if sides:
        return True
    for a in located:
        words = d.lower[a["_start"]:a["_end"]]
        phrase = " ".join(words)
        region_sides = {d.v.regions[r].side for r in d.v.regions_for(phrase)}
        if d.v.side_of(phrase) or len(region_sides) == 1 and region_sides <= {"left", "right"} or (
                words and words[-1] in _PAIRED_PLURALS):
            return True
    return False


#: the place of a finding that may lie anywhere in the chest
_ANYWHERE = ("chest",)
#: words that open a sentence about a finding of the sentence before ("Appearance suggests atelectasis.": the
#: appearance of the sign just described, as the guide's §8 "the findings")
_POINTING_BACK = {"this", "these", "it", "they", "findings", "which", "appearance"}


def place_unanchored(d: Draft) -> None:
    """Give a sided finding (or one that may lie anywhere in the chest: :func:`_lateral`) stated without
    anatomy or side a place, so the graph does not put it on both sides (or nowhere) by default:

    1. the nearest anatomy phrase or side word of its sentence ("opacity in the left base, representing
       atelectasis" -> atelectasis located_at "left base"), or, when that phrase already places another
       finding, that finding's whole place (:func:`_placed_at`);
    2. else another present mention of the same finding in the report that has one ("Left base
       atelectasis." in the impression for "... atelectasis." in the findings): the same anatomy and side;
    3. else, in a sentence that opens with a word that points back, the place of the previous sentence's
       present findings (:func:`_antecedents`);
    4. else, when that previous sentence states no present finding, the places it names
       (:func:`_anchor_to_sign`).
    """
    sided = {id(t) for e in d.entities if e["label"] == "ANAT-DP" for r, t in e["rel"] if r == "modify"}
    todo = [(o, it) for o, it in d.obs_items if _lateral(o.value, d.v) and id(it) not in sided
            and not any(r == "located_at" for r, _ in it["rel"])]
    _anchor_in_sentence(d, todo)
    for o, it in todo:
        if _anchors(d, it) != ([], []):
            continue
        same = [it2 for o2, it2 in d.obs_items if o2.value == o.value and it["label"] == it2["label"] == "OBS-DP"]
        antecedents = _antecedents(d, o)
        placed = any(it2 is not it and _copy_anchors(d, it2, it) for it2 in same + (antecedents or []))
        if not placed and antecedents == []:  # it points back to a sentence without a present finding
            _anchor_to_sign(d, o, it)


def _copy_anchors(d: Draft, source: dict, item: dict) -> bool:
    """Give ``item`` the anatomy and side of ``source``; False when ``source`` has none."""
    located, sides = _anchors(d, source)
    item["rel"].extend(("located_at", a) for a in located)
    for side in sides:
        side["rel"].append(("modify", item))
    return bool(located or sides)


def _antecedents(d: Draft, o: Mention) -> list[dict] | None:
    """Rule 3 of :func:`place_unanchored`: in a sentence that opens with a word that points back ("This
    likely represents a calcified granuloma."), the present findings of the sentence it points to, whose place
    the reading shares (the annotation guide's §5 and §8), those whose place states a side first (a reading
    takes the side of the sign it reads: "Low lung volumes and airspace disease in the left base. It may be
    pneumonia." is left, not the lungs' none); None when the sentence does not point back or has no previous
    sentence."""
    k = _pointed_sentence(d, o)
    if k < 0:
        return None
    found = [it for o2, it in d.obs_items if d.sent_of[o2.start] == k and it["label"] == "OBS-DP"]
    return sorted(found, key=lambda it: not _states_side(d, it))


def _pointed_sentence(d: Draft, o: Mention) -> int:
    """When ``o``'s sentence opens with a word that points back, the sentence it points to: the nearest before
    it in its section that names a finding or a place (:func:`graph.extract.rules.refer_back.stating_sentence`:
    "Streaky opacity in the right lower lobe. Please correlate with symptoms. Findings may reflect
    atelectasis." reads the opacity, as the refer-back of a change cue does); -1 otherwise."""
    if not _opens_pointing_back(d, o):
        return -1
    section = d.sections[o.start]
    return stating_sentence(d, previous_content_sentence(d, d.sent_of[o.start], section), section)


def _opens_pointing_back(d: Draft, o: Mention) -> bool:
    """``o``'s sentence opens with a word that points back (:data:`_POINTING_BACK`)."""
    start, end = d.sentence_of(o.start)
    return next((w for w in d.lower[start:end] if w.isalpha()), None) in _POINTING_BACK


def _anchor_to_sign(d: Draft, o: Mention, item: dict) -> None:
    """Rule 4 of :func:`place_unanchored`: a reading in a sentence that points back to a sentence stating no
    present finding ("At the right lung apex there is a focal lucency. This could indicate cavitation.")
    reads a sign that is no finding (the guide's §2: a lucency is not labelled, its reading is) and takes its
    place (§5): the anatomy phrases and side words of that sentence."""
    k = _pointed_sentence(d, o)
    for m in (x for x in d.mods if x.kind in ("ANAT", "SIDE") and d.sent_of[x.start] == k
              and not names_a_study(d, x)):
        place = {"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": []}
        d.entities.append(place)
        _attach(item, place, m.kind)


def _anchor_in_sentence(d: Draft, todo: list[tuple[Mention, dict]]) -> None:
    """Rule 1 of :func:`place_unanchored`: one ANAT-DP entity per anatomy / side span, shared by the
    findings it places."""
    by_span = {(e["_start"], e["_end"]): e for e in d.entities if e["label"] == "ANAT-DP"}
    for o, it in todo:
        near = [m for m in d.mods if m.kind in ("ANAT", "SIDE") and d.sent_of[m.start] == d.sent_of[o.start]
                and not names_a_study(d, m)]
        if not near:
            continue
        m = min(near, key=lambda m: (gap(m, o), m.start > o.start))
        owner = _placed_at(d, (m.start, m.end), it)
        if owner is not None:
            _copy_anchors(d, owner, it)  # the whole place of the finding that phrase places
            continue
        anat = by_span.get((m.start, m.end))
        if anat is None:
            anat = {"_start": m.start, "_end": m.end, "label": "ANAT-DP", "rel": []}
            d.entities.append(anat)
            by_span[(m.start, m.end)] = anat
        _attach(it, anat, m.kind)


def _attach(item: dict, place: dict, kind: str) -> None:
    """An anatomy phrase places ``item`` (``located_at``); a side word (``kind`` "SIDE") modifies it."""
    if kind == "ANAT":
        item["rel"].append(("located_at", place))
    else:
        place["rel"].append(("modify", item))


def _placed_at(d: Draft, span: tuple[int, int], item: dict) -> dict | None:
    """Another finding of the sentence that the anatomy or side phrase at ``span`` already places, whose
    whole place a finding coordinated with it shares ("Bibasilar and right midlung opacities, XXXX
    atelectatic changes": the atelectasis is bibasilar and right, not only "pulmonary"; the guide's §5)."""
    for o2, it2 in d.obs_items:
        if it2 is not item and d.sent_of[o2.start] == d.sent_of[span[0]]:
            located, sides = _anchors(d, it2)
            if any((a["_start"], a["_end"]) == span for a in located + sides):
                return it2
    return None


def _anchors(d: Draft, item: dict) -> tuple[list[dict], list[dict]]:
    """(anatomy entities ``item`` is located at, side entities that modify it)."""
    located = [t for r, t in item["rel"] if r == "located_at"]
    sides = [e for e in d.entities if e["label"] == "ANAT-DP" and any(r == "modify" and t is item for r, t in e["rel"])]
    return located, sides


def _lateral(finding: str, v: Vocabulary) -> bool:
    """The finding has a side (its place names one) or may lie anywhere in the chest (surgical clips, an
    artifact, a foreign body: its place is the whole chest), so the place the sentence gives it tells its side."""
    key = (id(v), finding)
    if key not in _LATERAL:
        patterns = v.findings[finding].region_patterns
        _LATERAL[key] = any("{side}" in p for p in patterns) or tuple(patterns) == _ANYWHERE
    return _LATERAL[key]


#: (id of a vocabulary, finding) -> :func:`_lateral`, computed once
_LATERAL: dict[tuple[int, str], bool] = {}
