"""A sign's change passed to the one reading offered for it (:func:`reading_changes`)."""

from __future__ import annotations

from graph.extract.rules.changes.cues import RESOLUTIONS
from graph.extract.rules.draft import Draft
from graph.extract.rules.mentions import Mention

#: words between a sign, its comma and the one reading offered for it ("nodule, presumably a granuloma")
_APPOSITIVE_HEDGES = {"possibly", "presumably", "probably", "likely", "most", "a", "an", "xxxx"}
#: words that offer a reading as one of several ("scarring or infiltrate", "scarring alternatively effusion")
_OTHER_READINGS = {"or", "versus", "vs", "vs.", "and/or", "alternatively"}


def reading_changes(d: Draft) -> None:
    """A sign that a change cue before it modifies passes the cue's class to the one reading offered for it,
    by a link word ("Unchanged left basilar density which may represent atelectasis", "Stable blunting
    likely due to pleural thickening": :func:`graph.extract.rules.observations.link_suggestive`) or after a
    comma ("Stable right apical opacity, probably scarring", "Enlarging hilar mass, presumably adenopathy"):
    the cue names the feature, whichever finding it is, as for two readings joined by "versus" (the guide's
    §6). Not a reading among several ("Stable basilar opacity, atelectasis or scarring": the sign is stable,
    the differential states no change), nor a reading after a predicate cue ("opacity, stable since the
    prior study and may represent atelectasis": a clause of its own), nor a resolved sign's. Runs after every
    cue and link word of the document is linked, before the refer-back."""
    readings_of = _readings(d)
    for e in [e for e in d.entities if e["label"].startswith("CHAN") and e["label"] not in RESOLUTIONS]:
        for _, sign in list(e["rel"]):
            sign_start, readings = readings_of.get(id(sign), (0, ()))
            for o, it in readings:
                if e["_start"] < sign_start and id(it) not in d.changed and it["label"] != "OBS-DA" \
                        and not _offers_others(d, o):
                    d.entities.append({"_start": e["_start"], "_end": e["_end"], "label": e["label"],
                                       "rel": [("modify", it)]})
                    d.changed.add(id(it))


def _readings(d: Draft) -> dict[int, tuple[int, list[tuple[Mention, dict]]]]:
    """``id()`` of a sign's entity -> its first token and the readings offered for it: through a link word
    (``suggestive_of``), or the next finding of its sentence after a comma and hedges only ("opacity,
    possibly atelectasis")."""
    mention_of = {id(it): (o, it) for o, it in d.obs_items}
    out: dict[int, tuple[int, list[tuple[Mention, dict]]]] = {}
    for n, (o, it) in enumerate(d.obs_items):
        readings = [mention_of[id(r)] for rel, r in it["rel"] if rel == "suggestive_of" and id(r) in mention_of]
        nxt = d.obs_items[n + 1] if n + 1 < len(d.obs_items) else None
        if nxt and d.sent_of[nxt[0].start] == d.sent_of[o.start] and nxt[0].start > o.end + 1 \
                and d.lower[o.end] == "," and _APPOSITIVE_HEDGES.issuperset(d.lower[o.end + 1:nxt[0].start]):
            readings.append(nxt)
        if readings:
            out[id(it)] = (o.start, readings)
    return out


def _offers_others(d: Draft, o: Mention) -> bool:
    """The reading is joined to another by "or", "versus" ... (within three tokens either side)."""
    start, end = d.sentence_of(o.start)
    return not _OTHER_READINGS.isdisjoint(d.lower[max(o.start - 3, start):o.start] + d.lower[o.end:min(o.end + 3, end)])
