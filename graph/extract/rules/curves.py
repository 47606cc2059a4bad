"""The direction of a spinal curve: a scoliosis mention takes the word that gives its direction
("dextro curvature", "convex to the right") as an ANAT-DP ``modify``, the side MeSH gives it
("Scoliosis/right" for dextroscoliosis); a direction inside the word ("dextroscoliosis") needs none."""

from __future__ import annotations

from graph.extract.rules.draft import Draft
from graph.extract.rules.mentions import Mention
from graph.vocabulary import normalise_phrase

#: findings whose side is the direction of a curve (MeSH "Scoliosis/right": dextroscoliosis), not a body side
CURVE_FINDINGS = {"scoliosis"}
_RIGHTWARD = {"dextro", "dextro-convex", "dextroconvex", "rightward", "rightwards", "right-convex"}
_LEFTWARD = {"levo", "levo-convex", "levoconvex", "leftward", "leftwards", "left-convex"}


def curve_side(text: str) -> str | None:
    """The direction a curve word states: ``dextroscoliosis`` / ``dextro`` / ``rightward`` / ``right`` -> right,
    ``levo...`` / ``leftward`` / ``left`` -> left, else None (both -> None)."""
    sides = set()
    for w in normalise_phrase(text).split():
        if w.startswith("dextro") or w in _RIGHTWARD or w in ("right", "right-sided"):
            sides.add("right")
        elif w.startswith("levo") or w in _LEFTWARD or w in ("left", "left-sided"):
            sides.add("left")
    return sides.pop() if len(sides) == 1 else None


def curve_sides(d: Draft) -> None:
    """A curve finding (scoliosis) takes the direction word near it as an ANAT-DP ``modify`` and drops a
    ``located_at`` to a sided anatomy phrase that only held that word ("right apex curvature" is a curve
    with a right-sided apex, not scoliosis of the right lung apex)."""
    for o, it in d.obs_items:
        if o.value not in CURVE_FINDINGS or curve_side(o.text):
            continue
        i = _curve_direction(o, d.doc, d.sent_of, d.obs_tokens)
        if i is None:
            continue
        it["rel"] = [(r, tgt) for r, tgt in it["rel"]
                     if not (r == "located_at" and tgt["_start"] <= i < tgt["_end"])]
        d.entities.append({"_start": i, "_end": i + 1, "label": "ANAT-DP", "rel": [("modify", it)], "_mod": True})
        located = {id(tgt) for _, x in d.obs_items for r, tgt in x["rel"] if r == "located_at"}
        d.entities[:] = [e for e in d.entities if not (e.get("_mod") and e["label"] == "ANAT-DP" and not e["rel"]
                                                       and id(e) not in located and e["_start"] <= i < e["_end"]
                                                       and e["_end"] - e["_start"] > 1)]


def _curve_direction(o: Mention, doc, sent_of: list[int], obs_tokens: set[int]) -> int | None:
    """Token index of the word that gives a curve's direction: before it ("dextro curvature", "rightward
    curvature", "right apex curvature", "mild left curvature") or after it ("convex to the right")."""
    n = sent_of[o.start]
    for i in range(o.start - 1, max(o.start - 4, -1), -1):
        if sent_of[i] != n or doc[i].is_punct or i in obs_tokens:
            break
        low = doc[i].lower_
        if low in _RIGHTWARD or low in _LEFTWARD or low in ("right", "left", "right-sided", "left-sided"):
            return i
    for i in range(o.end, min(o.end + 6, len(doc))):
        if sent_of[i] != n or i in obs_tokens or doc[i].lower_ in (".", ";"):
            break
        low = doc[i].lower_
        if low in _RIGHTWARD or low in _LEFTWARD:
            return i
        if low in ("right", "left") and i >= 1 and doc[i - 1].lower_ in ("convex", "the", "toward", "towards"):
            if doc[i - 1].lower_ == "convex" or any(doc[j].lower_ in ("convex", "to", "toward", "towards")
                                                    for j in range(max(i - 3, 0), i - 1)):
                return i
    return None
