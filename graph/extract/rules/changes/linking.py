"""RadGraph2 change entities: how a change cue (:mod:`graph.extract.rules.changes.cues`) finds the observation it
modifies (rules 1-3 of :func:`graph.extract.rules.document.doc_to_radgraph`; rule 4, the refer-back, is
:mod:`graph.extract.rules.refer_back`). Change subjects ("lung volumes", "aeration", the
vocabulary's "heart size") are kept only when a cue links to them (:func:`drop_unchanged_subjects`)."""

from __future__ import annotations

from graph.extract.rules.changes.cues import CHANGE_CUES, RESOLUTIONS, SEEN_EARLIER
from graph.extract.rules.draft import Draft, is_alternative
from graph.extract.rules.mentions import DEVICE_CATEGORIES, Mention, is_change_subject
from graph.extract.rules.refer_back import anaphor_subject
from graph.extract.rules.sections import SECTION_ORDER
from graph.vocabulary import normalise_phrase

#: words between a change cue and its finding that do not break the link ("improved right basilar consolidation")
_LINK_WORDS = {"of", "the", "in", "and", ",", "a", "an", "both", "bilateral", "bilaterally", "mild", "small", "patchy",
               "streaky", "focal", "XXXX", "lung", "lobe", "base", "basilar", "interstitial", "airspace", "pulmonary",
               "appearance", "previously", "zone"}
#: findings whose own name uses a change word as a state ("increased interstitial markings")
_STATE_FINDINGS = {"increased reticular markings/ild pattern"}
_STATE_WORDS = {"increased", "increase", "decreased", "decrease", "increasing", "decreasing"}
#: shapes whose degree a participle before them gives ("increased kyphosis", "increased tortuosity of the
#: aorta": exaggerated, the guide's §6 states; "the kyphosis has increased", "increasing tortuosity" change)
_SHAPES = {"kyphosis", "scoliosis", "tortuous aorta"}
_DEGREE_WORDS = {"increased", "decreased"}
_SIDE_WORDS_ONLY = {"left", "right"}
#: words that make a cue shortly after them hypothetical ("to document resolution", "if it does not resolve")
_HYPOTHETICAL_WORDS = {"document", "ensure", "confirm", "assess", "until", "if"}
_HYPOTHETICAL_REACH = 4
#: words that open a list of possible diagnoses: the cues after them in the sentence are its items
_DIFFERENTIAL_WORDS = {"differential"}
#: words that may stand before a cue that opens its sentence; words that end the list it opens
_OPENERS = {"there", "is", "are", "again"}
_LIST_BREAKS = {"but", ";", "however", "which", "although", "while", "otherwise", "though"}

#: forms that name a finding only as the subject of a stated change ("decreasing lung volumes" -> low lung
#: volumes worsened, "improved aeration" -> atelectasis improved); without a change cue they are dropped
#: ("normal lung volumes", "aeration of the lungs") and their quantity cues read inversely. The vocabulary's
#: change subjects ("heart size has increased" -> enlarged cardiac silhouette worsened) are such forms read directly
_INVERSE_SUBJECTS = {"lung volumes", "lung volume", "aeration"}
_MORE = {"increased", "increasing", "increase", "enlarging", "larger", "more prominent", "interval increase"}
_LESS = {"decreased", "decreasing", "decrease", "smaller", "less prominent", "diminished", "reduced",
         "interval decrease"}
#: cues that also state a state ("decreased lung volumes", "lung volumes are decreased"): they change a change
#: subject only in a sentence that names a comparison ("decreased from the prior study")
_STATE_FORMS = {"increased", "decreased", "increase", "decrease", "reduced", "diminished"}
_COMPARISON_WORDS = {"prior", "previous", "previously", "since", "compared", "comparison", "interval", "earlier",
                     "before", "last", "from", "preceding", "recent"}
#: cues that can stand before a noun ("stable cardiomediastinal contours"); verbs and phrases ("remain low",
#: "again seen overlying", "similar to prior exams") cannot
_ATTRIBUTIVE_CUES = {"stable", "unchanged", "grossly unchanged", "increased", "decreased", "improved", "worsened",
                     "increasing", "decreasing", "improving", "worsening", "persistent", "new", "enlarging",
                     "progressive", "resolving", "resolved", "diminished", "reduced", "larger", "smaller", "worse",
                     "more prominent", "less prominent", "redemonstrated", "re-demonstrated", "developing",
                     "recurrent"}
#: words after a cue that do not make it attributive ("effusion, increased in size", "stable since"; "pacemaker
#: with stable intact lead placement": the place of the device before it)
_FUNCTION_AFTER = {"from", "since", "in", "compared", "comparison", "to", "with", "when", "as", "and", "on", "at", "by",
                   "than", "relative", "over", "of", "the", "or", "but", "which", "versus", "vs", "now", "there",
                   "this", "is", "are", "was", "were", "has", "have", "been", "be", "appears", "appear", "position",
                   "placement", "intact", "positioning", "size", "appearance", "configuration", "extent", "degree",
                   "xxxx", "without", "for"}


def link_change_cue(d: Draft, m: Mention, covered: set[int]) -> bool:
    """Link a CHANGE mention by rules 1-3; False when it found no target (a refer-back candidate).

    ``covered``: token indices of anatomy, side and severity mentions (free between a cue and its finding).
    """
    if _side_comparison(m, d.doc):
        return True  # "right larger than left" compares sides, not studies
    if _hypothetical(m, d):
        return True  # "follow-up to document resolution" states no change
    if _alternative_courses(m, d):
        return True  # "developing or resolving pneumonia" offers two courses, states neither
    # a possible diagnosis carries no change (link_change): after a verb cue ("again noted ... suggesting a
    # granulomatous process") the change is the earlier finding's; an adjective ("resolving pneumonia") is
    # the speculation's own
    if m.value in _BEFORE_A_DEVICE_ONLY:
        return _link_interval(d, m, covered)
    structure_end = _structure_end(d, m, d.sentence_of(m.start)[1])
    following = [(o, it) for o, it in d.same_sentence(m) if m.end <= o.start < structure_end
                 and (it["label"] != "OBS-U" or m.value in _ATTRIBUTIVE_CUES)
                 and (it["label"] != "OBS-DA" or not RESOLUTIONS.isdisjoint(CHANGE_CUES[m.value]))
                 and _free_gap(m, o, d.doc, covered) <= (0 if _change_subject(d, o) else 2)]
    after = min(following, key=lambda p: p[0].start) if following else None
    if after and _closes_clause(m, d):
        after = None  # "opacities in the lung bases unchanged, probably atelectasis": the cue is the opacities'
    if anaphor_subject(d, m) and (after is None or after[1]["label"] == "OBS-U" and not is_alternative(d, after[0])):
        return False  # "These were not present on the prior study and may represent ...": a refer-back (rule 4)
    # attributive cue ("new effusion", "improved right basilar consolidation") -> the next finding;
    # predicative ("effusions are unchanged") -> the findings before it in the sentence that carry no change
    # yet, unless the cue describes the word after it ("increased AP diameter")
    if after is None and CHANGE_CUES[m.value][0] in _QUANTITIES and _describes_other(d, m, covered):
        return True  # "decreased vascular markings with hyperexpansion": the markings are less, not the rest
    targets = [after, *_coordinated_after(d, after, covered)] if after else []
    if not targets and not _attributive(m, d.doc, d.sent_of, d.obs_tokens):
        first = _clause_start(d, m)
        targets = [(o, it) for o, it in d.same_sentence(m)
                   if first <= o.start and o.end <= m.start and id(it) not in d.changed]
    if not targets:
        hit = d.nearest(m, 4, only_after=True)
        targets = [hit] if hit and hit[0].start < structure_end else []
    if _opens_sentence(m, d) and (targets or m.value in _ATTRIBUTIVE_CUES):
        targets += [t for t in _list_after(d, m) if t not in targets]
    return link_change(d, m, targets) or bool(targets)


def _closes_clause(m: Mention, d: Draft) -> bool:
    """Cue ``m`` stands after its finding and before a comma ("opacities in the bases unchanged, ..."): it
    ends the finding's clause, so it says nothing of the findings after the comma; not a cue that opens its
    clause ("There is stable, mild cardiomegaly"), nor a change subject's ("heart size has decreased, though
    the heart remains enlarged": the change is the finding's that the sentence names)."""
    if m.end >= len(d.lower) or d.lower[m.end] != "," or _opens_sentence(m, d):
        return False
    before = [o for o, _ in d.same_sentence(m) if o.end <= m.start]
    return bool(before) and not _change_subject(d, max(before, key=lambda o: o.end))


#: cues that state a change only before the device or post-surgical state they describe ("interval CABG",
#: "interval postsurgical changes of sternotomy": placed in the interval, the guide's §6 and §7); elsewhere
#: ("unchanged in the interval") the other cues of the sentence say what changed
_BEFORE_A_DEVICE_ONLY = {"interval"}


def _link_interval(d: Draft, m: Mention, covered: set[int]) -> bool:
    """Link a device-only cue to the device right after it (at most two free words between, "interval
    performance of CABG") and the devices coordinated with it; True: it is never a refer-back."""
    nxt = next(((o, it) for o, it in d.same_sentence(m) if o.start >= m.end), None)
    if nxt and nxt[1]["label"] == "OBS-DP" and _free_gap(m, nxt[0], d.doc, covered) <= 2 and not any(
            x.kind == "CHANGE" and m.end <= x.start < nxt[0].start for x in d.mods):  # "interval removal of"
        link_change(d, m, [nxt, *_coordinated_after(d, nxt, covered)])
    return True


#: classes that say how much a finding changed (a cue of them describes the word after it: its quantity)
_QUANTITIES = {"CHAN-CON-WOR", "CHAN-CON-IMP"}


def _describes_other(d: Draft, m: Mention, covered: set[int]) -> bool:
    """The cue is an adjective of a word that names no finding ("decreased vascular markings", "increased
    lucencies", "increased retrosternal clear space"), places and sides between skipped."""
    if m.value not in _ATTRIBUTIVE_CUES:
        return False
    end = d.sentence_of(m.start)[1]
    i = m.end
    while i < end and (i in covered or d.lower[i].endswith("ly")):
        i += 1
    return i < end and i not in d.obs_tokens and d.lower[i].isalpha() and d.lower[i] not in _FUNCTION_AFTER \
        and d.lower[i] not in _LINK_WORDS


#: words that join a cue's finding to the findings coordinated with it ("unchanged atherosclerosis and tortuosity
#: of the aorta", "removal of the central line and enteric tube")
_COORDINATORS = {"and", ","}
_IN_COORDINATION = {"the", "a", "an", "of", "in", "at", "mild", "small", "patchy", "streaky", "focal", "lung", "lobe",
                    "base", "basilar", "interstitial", "airspace", "pulmonary", "zone"}


def _coordinated_after(d: Draft, first: tuple[Mention, dict], covered: set[int]) -> list[tuple[Mention, dict]]:
    """The present findings that "and" or a comma joins to a cue's finding ``first``, each to the one before
    it with only articles, places and sizes between: a cue before a list of findings applies to the list (the
    guide's §6: "Stable appearance of scarring and granulomas"), wherever the list stands in its sentence
    ("... within normal limits with unchanged atherosclerosis and tortuosity of the aorta"). A word of its
    own (another cue, "no", a verb) ends the list."""
    out: list[tuple[Mention, dict]] = []
    prev = first[0]
    for o, it in sorted(d.same_sentence(prev), key=lambda p: p[0].start):
        if o.start < prev.end:
            continue
        between = [i for i in range(prev.end, o.start) if i not in covered]
        words = {d.lower[i] for i in between}
        if it["label"] != "OBS-DP" or not words & _COORDINATORS or not words <= _COORDINATORS | _IN_COORDINATION:
            break
        out.append((o, it))
        prev = o
    return out


def _clause_start(d: Draft, m: Mention) -> int:
    """Where the findings a predicative cue speaks of may start: after the comma before it when the clause
    between holds a place of its own, the cue's subject ("Given patient rotation, heart size and mediastinal
    contours are unchanged": the structures are unchanged, not the rotation; the guide's §6), else at the
    start of the sentence."""
    start = d.sentence_of(m.start)[0]
    comma = next((i for i in range(m.start - 1, start - 1, -1) if d.lower[i] == ","), None)
    if comma is None or any(i in d.obs_tokens for i in range(comma, m.start)):
        return start
    own_subject = any(x.kind == "ANAT" and comma < x.start < m.start for x in d.mods)
    return comma if own_subject else start


def _opens_sentence(m: Mention, d: Draft) -> bool:
    """The cue opens its sentence or a clause of it after a comma ("Stable ...", "There is again ...",
    "Heart size is normal, stable mediastinal contours with aortic tortuosity")."""
    start = d.sentence_of(m.start)[0]
    for i in range(m.start - 1, start - 1, -1):
        if d.lower[i] in (",", ";"):
            start = i + 1
            break
    return all(w in _OPENERS for w in d.lower[start:m.start])


def _list_after(d: Draft, m: Mention) -> list[tuple[Mention, dict]]:
    """The present findings after a cue that opens its sentence, up to the next cue or clause break: a cue
    that opens a list applies to the list ("Stable appearance of the enteric tube and left PICC", "stable
    mediastinal contours with aortic tortuosity"; the annotation guide's §6), and to two readings of one
    feature that it names ("Stable atelectasis versus scarring"), not to readings offered after a comma
    ("Unchanged blunting, scarring versus effusion")."""
    sent_end = d.sentence_of(m.start)[1]
    stop = min([x.start for x in d.mods if x.kind == "CHANGE" and m.end <= x.start < sent_end
                and x.value not in _BEFORE_A_DEVICE_ONLY]
               + [i for i in range(m.end, sent_end) if d.lower[i] in _LIST_BREAKS] + [sent_end]
               + [_structure_end(d, m, sent_end)])
    return [(o, it) for o, it in d.same_sentence(m) if m.end <= o.start < stop
            and (it["label"] == "OBS-DP" or it["label"] == "OBS-U" and is_alternative(d, o)
                 and "," not in d.lower[m.end:o.start])]


#: nouns of the normal structures that a cue may call stable (the guide's §6: "stable mediastinal contours")
_STRUCTURES = {"contour", "contours", "silhouette", "silhouettes"}


def _structure_end(d: Draft, m: Mention, sent_end: int) -> int:
    """The comma that ends the normal structure a cue describes ("stable mediastinal and hilar contours,
    surgical clips and CABG markers"): the guide's §6 gives the cue to the abnormalities inside the structure
    ("stable mediastinal contours with aortic tortuosity"), not to the items listed after it; ``sent_end``
    when the cue describes no structure."""
    for i in range(m.end, sent_end):
        if i in d.obs_tokens:
            return sent_end
        if d.lower[i] == ",":
            return i if _STRUCTURES & set(d.lower[m.end:i]) else sent_end
    return sent_end


def link_change(d: Draft, m: Mention, targets: list[tuple[Mention, dict]]) -> bool:
    """Add the change entity of cue ``m`` to each target that can carry its class; True if any did.

    A resolution (CHAN-CON-RES, CHAN-DEV-DISA) turns its observation absent (OBS-DA)."""
    cond_label, dev_label = CHANGE_CUES[m.value]
    linked = False
    for o, it in targets:
        if _quantity_state(d, m, o):
            it["_state"] = True  # "lung volumes are decreased": low lung volumes, a state (the guide's §6)
        label = _change_class(d, m, o, cond_label, dev_label)
        if label is None or (it["label"] == "OBS-DA" and label not in RESOLUTIONS):
            continue
        # a possible diagnosis has no stated change of its own (two readings of a seen feature have its
        # change; the one reading of a changed sign has the sign's: reading_changes); "increased markings",
        # "increased kyphosis" are states
        if (it["label"] == "OBS-U" and not is_alternative(d, o)) or (
                _state(m, o) and (id(it) in d.changed or not _comparison_in(d, m.start))):
            continue
        if label in ("CHAN-CON-RES", "CHAN-DEV-DISA"):
            it["label"] = "OBS-DA"
        d.entities.append({"_start": m.start, "_end": m.end, "label": label, "rel": [("modify", it)]})
        d.changed.add(id(it))
        linked = True
    return linked


def _state(m: Mention, o: Mention) -> bool:
    """Cue ``m`` states a state of finding ``o`` (:data:`_STATE_FINDINGS`, :data:`_SHAPES`)."""
    return (o.value in _STATE_FINDINGS and m.value in _STATE_WORDS
            or o.value in _SHAPES and m.value in _DEGREE_WORDS and m.end <= o.start)


def _change_class(d: Draft, m: Mention, o: Mention, cond_label: str | None, dev_label: str | None) -> str | None:
    """The class cue ``m`` gives observation ``o``: the device class for a device, the condition class
    otherwise, read inversely for a change subject; None when it states no change of ``o``."""
    if _change_subject(d, o) and m.value in _STATE_FORMS and not _compared(d, m):
        return None  # "decreased lung volumes" is a state
    if m.value in SEEN_EARLIER and (o.start < m.end or not any(x is o and it["label"] == "OBS-DA"
                                                               for x, it in d.obs_items)):
        return None  # "the previously seen nodule has increased": "increased" is the change
    if m.value in _STATE_FORMS and m.end <= o.start and (
            _put_down_to_outside(d, m) and not _comparison_in(d, m.start) or _sides_compared(d, m)):
        return None  # "subtle increased opacity related to soft tissues", "... of the right base than the left"
    if m.value in _WHERE_MORE and _says_where(d, m) and not _comparison_in(d, m.start):
        return None  # "opacities, worse at the left base": where it is worse
    is_device = d.v.findings[o.value].category in DEVICE_CATEGORIES
    label = dev_label if is_device else cond_label
    if normalise_phrase(o.text) in _INVERSE_SUBJECTS and label in ("CHAN-CON-WOR", "CHAN-CON-IMP"):
        label = "CHAN-CON-IMP" if m.value in _MORE else "CHAN-CON-WOR" if m.value in _LESS else label
    return label


#: what an increased density may be put down to outside the lungs (the guide's §6: a state, not a change)
_OUTSIDE_CAUSES = {"soft", "breast", "breasts", "clothing", "technique", "artifact", "nipple", "nipples"}
#: words that compare the two sides of the chest ("compared to the left"; "than" is its comparative's: "left
#: greater than right"); a prior named besides ("... and to the prior study") makes it a change again
_SIDE_COMPARERS = {"compared", "relative"}


#: comparatives that may say where a finding is worse ("worse in the right lung base") rather than that it
#: grew; the words that then open the place
_WHERE_MORE = {"worse", "larger", "more prominent"}
_PLACE_OPENERS = {"in", "at", "on", "within", "toward", "towards"}


def _says_where(d: Draft, m: Mention) -> bool:
    """Cue ``m`` is followed by a place ("worse in the right lung base", "more prominent on the left"): it says
    where a finding is more marked, a state like "left worse than right" (the guide's §6)."""
    i = m.end
    if i >= len(d.lower) or d.lower[i] not in _PLACE_OPENERS:
        return False
    i += 2 if i + 1 < len(d.lower) and d.lower[i + 1] == "the" else 1
    return i < len(d.lower) and (d.lower[i] in _SIDE_WORDS_ONLY or any(
        x.kind in ("ANAT", "SIDE") and x.start == i for x in d.mods))


def _put_down_to_outside(d: Draft, m: Mention) -> bool:
    """The sentence of cue ``m`` puts the density down to something outside the lungs ("subtle increased
    opacity related to superimposed soft tissues", "mild increased density ... overlying clothing"): the
    cue states how dense it looks, not a change (the guide's §6)."""
    start, end = d.sentence_of(m.start)
    return any(w in _OUTSIDE_CAUSES for w in d.lower[start:end])


def _sides_compared(d: Draft, m: Mention) -> bool:
    """After cue ``m`` its sentence compares two sides ("slightly increased opacity of the right base
    compared to the left"): more on one side, not more than before (the guide's §6: "left worse than
    right")."""
    start, end = d.sentence_of(m.start)
    words = d.lower[m.end:end]
    return any(w in _SIDE_COMPARERS and _SIDE_WORDS_ONLY & set(words[n + 1:n + 4]) for n, w in enumerate(words)) \
        and not any(w in _COMPARISON_WORDS - _SIDE_COMPARERS for w in d.lower[start:end])


def drop_unchanged_subjects(d: Draft) -> None:
    """Change subjects without a change are not findings ("normal lung volumes"): they go, with the
    relations to them and the modifiers left without a target; not those a state word calls what their finding
    is ("lung volumes are decreased": low lung volumes, "increased heart size": an enlarged cardiac silhouette,
    present, no change; the guide's §6). A subject whose sentence names its finding otherwise ("the heart is
    enlarged and has increased in size") or calls it normal now ("heart size has decreased and is now normal")
    goes too: that mention or the normal statement says what the finding is."""
    d.drop({id(it) for o, it in d.obs_items if _change_subject(d, o) and (
        id(it) not in d.changed and not it.get("_state") or _named_otherwise(d, o, it))})


def _named_otherwise(d: Draft, o: Mention, item: dict) -> bool:
    """Another mention of change subject ``o``'s finding in its sentence, or a normal statement of a structure
    that overlaps it."""
    n = d.sent_of[o.start]
    return any(x.value == o.value and it is not item and d.sent_of[x.start] == n for x, it in d.obs_items) or any(
        e["label"].startswith("OBS") and "_finding" not in e and not e.get("_mod") and any(
            r == "located_at" and t["_start"] < o.end and o.start < t["_end"] for r, t in e["rel"])
        for e in d.entities)


def _quantity_state(d: Draft, m: Mention, o: Mention) -> bool:
    """Cue ``m`` states, as a state, that change subject ``o`` is what its finding is: less for an inverse
    subject ("lung volumes are decreased"), more for another ("increased heart size"); no comparison in the
    sentence (:func:`_compared`)."""
    return (_change_subject(d, o) and m.value in _STATE_FORMS and not _compared(d, m)
            and m.value in (_LESS if normalise_phrase(o.text) in _INVERSE_SUBJECTS else _MORE))


def _change_subject(d: Draft, o: Mention) -> bool:
    """Finding mention ``o`` is a change subject: an inverse one or one of the vocabulary's."""
    return normalise_phrase(o.text) in _INVERSE_SUBJECTS or is_change_subject(o, d.v)


#: auxiliaries that make a state word a verb of change ("have decreased"); nouns that, before "in", name a change
#: ("increase in heart size")
_PERFECT = {"has", "have", "had"}
_CHANGE_NOUNS = {"increase", "decrease"}


def _compared(d: Draft, m: Mention) -> bool:
    """Cue ``m`` states a change: its sentence compares with a prior (:func:`_comparison_in`), or the cue is a
    verb of change ("heart size has increased", "lung volumes have decreased": the guide's §6) or a noun of one
    ("increase in heart size")."""
    i = m.start - 1
    while i >= 0 and d.lower[i].endswith("ly"):
        i -= 1
    return (i >= 0 and d.lower[i] in _PERFECT or m.value in _CHANGE_NOUNS and m.end < len(d.lower)
            and d.lower[m.end] == "in" or _comparison_in(d, m.start))


def _free_gap(m: Mention, o: Mention, doc, covered: set[int]) -> int:
    """Tokens between a cue and a later finding that are neither anatomy / side / severity nor link words."""
    return sum(1 for i in range(m.end, o.start) if i not in covered and doc[i].text not in _LINK_WORDS
               and doc[i].lower_ not in _LINK_WORDS)


def _side_comparison(m: Mention, doc) -> bool:
    """``larger than left``, ``left worse than right``: a comparison of sides (or of two things), not of studies."""
    if m.end < len(doc) and doc[m.end].lower_ == "than":
        nxt = doc[m.end + 1].lower_ if m.end + 1 < len(doc) else ""
        return nxt in _SIDE_WORDS_ONLY or (m.start > 0 and doc[m.start - 1].lower_ in _SIDE_WORDS_ONLY)
    return m.start > 0 and doc[m.start - 1].lower_ in _SIDE_WORDS_ONLY and m.value in ("worse", "larger", "smaller")


def _hypothetical(m: Mention, d: Draft) -> bool:
    """The cue is the object of a recommendation or a condition ("recommend follow-up to document resolution",
    "to ensure clearing", "if this does not resolve") or an item of a differential diagnosis ("differential
    includes increased volume loss, tumor progression"): a hypothetical states no change (the guide's §6:
    speculation is no change)."""
    first = d.sentence_of(m.start)[0]
    start = max(first, m.start - _HYPOTHETICAL_REACH)
    return any(w in _HYPOTHETICAL_WORDS for w in d.lower[start:m.start]) or any(
        w in _DIFFERENTIAL_WORDS for w in d.lower[first:m.start])


#: words that offer one course of a finding as an alternative to another ("residual or recurrent pneumonia")
_ALTERNATIVES = {"or", "versus", "vs", "vs.", "and/or"}
#: a course that is no change cue of its own
_COURSES = {"residual"}


def _alternative_courses(m: Mention, d: Draft) -> bool:
    """Cue ``m`` is one of two courses joined by "or" ("developing or resolving pneumonia", "residual or
    recurrent pneumonia"): speculation, no change (the guide's §6)."""
    def course_at(i: int, before: bool) -> bool:
        if not 0 <= i < len(d.lower) or d.sent_of[i] != d.sent_of[m.start]:
            return False
        return d.lower[i] in _COURSES or any(x.kind == "CHANGE" and x is not m and (
            x.end - 1 == i if before else x.start == i) for x in d.mods)
    return (m.start > 0 and d.lower[m.start - 1] in _ALTERNATIVES and course_at(m.start - 2, True)) or (
        m.end < len(d.lower) and d.lower[m.end] in _ALTERNATIVES and course_at(m.end + 1, False))


def _comparison_in(d: Draft, i: int) -> bool:
    """The sentence of the cue at token ``i`` compares with a prior in words of its own: the words of its
    other cues of a condition, and the comparison right after one, are theirs ("increased kyphosis, unchanged
    from the prior study": the comparison says the kyphosis is unchanged, and "increased" states its degree;
    the guide's §6)."""
    start, end = d.sentence_of(i)
    others: set[int] = set()
    for x in d.mods:
        if x.kind == "CHANGE" and x.start != i and start <= x.start < end and CHANGE_CUES[x.value][0]:
            j = x.start
            while j < end and (j < x.end or d.lower[j] in _COMPARISON_WORDS or d.lower[j] in _FUNCTION_AFTER):
                others.add(j)
                j += 1
    return any(w in _COMPARISON_WORDS for j, w in enumerate(d.lower[start:end], start) if j not in others)


def _attributive(m: Mention, doc, sent_of: list[int], obs_tokens: set[int]) -> bool:
    """The cue describes the unknown word after it ("increased AP diameter", "stable mediastinal contours"),
    so it says nothing about the findings before it."""
    if m.value not in _ATTRIBUTIVE_CUES:
        return False
    i = m.end
    while i < len(doc) and sent_of[i] == sent_of[m.start] and doc[i].lower_.endswith("ly"):
        i += 1
    if i >= len(doc) or sent_of[i] != sent_of[m.start] or i in obs_tokens:
        return False
    tok = doc[i]
    if tok.text.rstrip(":").lower() in SECTION_ORDER:
        return False  # a section header ("unchanged IMPRESSION:") ends the sentence
    return tok.is_alpha and tok.lower_ not in _FUNCTION_AFTER
