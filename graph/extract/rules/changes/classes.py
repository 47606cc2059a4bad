"""Change statements of four sentence classes an independent gold set found wrong (issue 33), read as the
annotation guide's §9a writes them down:

* two change cues joined by a slash ("stable/improved", "unchanged/slightly decreased"): the cue that states a
  change, not the no-change one; two of opposite direction ("increased/decreased") state none
  (:func:`join_slashed_cues`);
* a hedge over a change ("possibly slightly increased effusion"): the hedge doubts the change's size, not the
  finding, which keeps the assertion the rest of the sentence gives it (:func:`hedged_changes`);
* heart size stated normal together with a change against the prior ("Heart size is normal, decreased from
  the prior"): the enlargement of the prior study resolved (:func:`normal_heart_resolution`);
* stability stated about a place ("Left basilar atelectasis. The left base is unchanged."): a refer-back to the
  present findings earlier in the report at that place (:func:`stable_place`); about the whole chest ("The
  chest is unchanged") it names no finding, as before.
"""

from __future__ import annotations

import itertools

from graph.extract.rules.changes.cues import CHANGE_CUES
from graph.extract.rules.draft import Draft
from graph.extract.rules.mentions import DEVICE_CATEGORIES, Mention

#: words between a slash and the cue after it, or between a hedge and its cue ("slightly decreased")
_DEGREE_WORDS = {"slightly", "mildly", "minimally", "somewhat", "mild", "minimal", "slight"}
#: RadGraph2 classes of opposite direction: joined by a slash they state no change at all
_OPPOSITES = {frozenset({"CHAN-CON-WOR", "CHAN-CON-IMP"})}


def _cue_class(m: Mention) -> str | None:
    cond, dev = CHANGE_CUES[m.value]
    return cond or dev


def join_slashed_cues(d: Draft) -> None:
    """Drop from ``d.mods`` the no-change cue of a slashed pair ("stable/improved": improved), or both cues of
    a pair of opposite direction ("increased/decreased"), so that the linking rules see one cue or none."""
    changes = [m for m in d.mods if m.kind == "CHANGE"]
    dropped: set[int] = set()
    for m1, m2 in itertools.pairwise(changes):
        i = m1.end
        if i >= len(d.lower) or d.lower[i] != "/":
            continue
        i += 1
        while i < m2.start and d.lower[i] in _DEGREE_WORDS:
            i += 1
        if i != m2.start:
            continue
        c1, c2 = _cue_class(m1), _cue_class(m2)
        if frozenset({c1, c2}) in _OPPOSITES:
            dropped |= {id(m1), id(m2)}
        elif c1 == "CHAN-NC" and c2 not in (None, "CHAN-NC"):
            dropped.add(id(m1))
        elif c2 == "CHAN-NC" and c1 not in (None, "CHAN-NC"):
            dropped.add(id(m2))
    d.mods = [m for m in d.mods if id(m) not in dropped]


#: hedge words that, right before a change cue (degree words between), doubt the change ("possibly increased")
_HEDGES = {"possibly", "possible", "probably", "probable", "likely", "questionable", "questionably", "perhaps",
           "suspected", "?"}
#: words that offer another reading: a finding followed by one is uncertain for that reason (the guide's §3)
_OTHER_READINGS = {"or", "versus", "vs", "vs.", "and/or"}


def hedged_changes(d: Draft) -> None:
    """A finding that a change cue opens ("increased left pleural effusion"), with a hedge right before the cue
    ("Possibly slightly increased ..."), is not made uncertain by that hedge: its entity turns OBS-DP again
    (unless the sentence offers another reading after it), so that the cue links to it (the guide's §9a)."""
    for m in (x for x in d.mods if x.kind == "CHANGE"):
        i = m.start - 1
        while i >= 0 and d.lower[i] in _DEGREE_WORDS:
            i -= 1
        if i < 0 or d.lower[i] not in _HEDGES or d.sent_of[i] != d.sent_of[m.start]:
            continue
        hit = d.nearest(m, 3, only_after=True)
        if hit is None or hit[1]["label"] != "OBS-U":
            continue
        o, item = hit
        sent_end = d.sentence_of(o.start)[1]
        between = d.lower[m.end:o.start]
        if any(w in _HEDGES for w in between) or any(w in _OTHER_READINGS for w in d.lower[o.end:sent_end]):
            continue
        item["label"] = "OBS-DP"


#: words of a normal structure called stable: no refer-back of a place (the guide's §6: "The mediastinal
#: silhouette is stable" names no finding unless the report calls it abnormal, which other rules read)
_STRUCTURE_WORDS = {"contour", "contours", "silhouette", "silhouettes", "mediastinum", "mediastinal", "heart",
                    "cardiac", "cardiomediastinal", "hilar", "hila", "hilum", "aorta", "aortic"}


#: words that may open a sentence before the place that is its subject
_BEFORE_SUBJECT = {"the", "a", "an", "both"}


def stable_place(d: Draft, m: Mention) -> list[tuple[Mention, dict]]:
    """Targets of a change cue left without one whose sentence names a place and no finding ("The left base is
    unchanged."), the place its subject: the present conditions (not devices) of earlier sentences of the report
    located at that place (their anatomy phrase names a region the place names); [] otherwise: the whole chest ("The chest is
    unchanged."), or a normal structure (:data:`_STRUCTURE_WORDS`)."""
    start, end = d.sentence_of(m.start)
    if any(start <= o.start < end for o, _ in d.obs_items) or _STRUCTURE_WORDS.intersection(d.lower[start:end]):
        return []
    places = [x for x in d.mods if x.kind == "ANAT" and start <= x.start < m.start]
    if not places or any(w not in _BEFORE_SUBJECT for w in d.lower[start:places[0].start]):
        return []  # the place is not the sentence's subject ("The XXXX deformity in the spine is again seen")
    regions = {r for x in places for r in d.v.regions_for(x.text)}
    if not regions:
        return []
    out = []
    for o, it in d.obs_items:
        if o.start >= start or it["label"] != "OBS-DP" or d.v.findings[o.value].category in DEVICE_CATEGORIES:
            continue
        at = {r for rel, a in it["rel"] if rel == "located_at"
              for r in d.v.regions_for(" ".join(d.texts[a["_start"]:a["_end"]]))}
        if at & regions:
            out.append((o, it))
    return out


#: regions a normal statement of the heart's size is located at
_HEART_PLACES = {"heart", "cardiac silhouette"}
#: words that compare with a prior study: a heart "now" normal, or normal and "decreased from the prior"
_PRIOR_WORDS = {"prior", "previous", "previously", "since", "now", "interval", "compared", "comparison"}


def normal_heart_resolution(d: Draft, m: Mention) -> bool:
    """A cue of improvement or resolution left without a finding, in a sentence that calls the heart's size
    normal and compares with a prior ("Heart size is normal, decreased from the prior."): the enlargement of the
    prior study has gone, a CHAN-CON-RES of the normal statement (the guide's §9a), which ingestion gives the
    absent enlarged heart. True when it linked one."""
    if CHANGE_CUES[m.value][0] not in ("CHAN-CON-IMP", "CHAN-CON-RES"):
        return False
    start, end = d.sentence_of(m.start)
    if not _PRIOR_WORDS.intersection(d.lower[start:end]):
        return False
    for e in d.entities:
        if (e["label"] == "OBS-DP" and "_finding" not in e and not e.get("_mod") and start <= e["_start"] < end
                and any(r == "located_at" and _HEART_PLACES & set(d.v.regions_for(" ".join(d.texts[a["_start"]:a["_end"]])))
                        for r, a in e["rel"])):
            d.entities.append({"_start": m.start, "_end": m.end, "label": "CHAN-CON-RES", "rel": [("modify", e)]})
            return True
    return False
