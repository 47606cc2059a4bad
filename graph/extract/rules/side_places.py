"""Sides in RadGraph's schema: a side word is an anatomy entity that its finding is ``located_at``, joined by an
anatomy-to-anatomy ``modify`` to the region it is written with.

The rules link a side word to the finding it sides (an ANAT-DP ``modify`` of the observation: "left" ->
"effusion"), a pair RadGraph's schema does not have (:mod:`graph.formats.radgraph.schema`: ``modify`` joins
observation to observation or anatomy to anatomy). RadGraph's own annotation writes the side as anatomy: "Mild
left basal atelectasis" has "left" ``modify`` "basal" and "atelectasis" ``located_at`` "basal" (Jain et al.
2021; the example of the PhysioNet ``radgraph/1.0.0`` release), and "left effusion", with no region written,
"effusion" ``located_at`` "left" (what the RadGraph-XL model writes for it). :func:`sides_as_places` turns the
rules' links into that form as the last step before numbering; ingestion reads both forms to the same sides
and regions (:func:`graph.formats.radgraph.records.doc_to_records`).
"""

from __future__ import annotations

from graph.extract.rules.draft import Draft
from graph.extract.rules.laterality import located_by_anatomy, side_word_of


def sides_as_places(d: Draft) -> None:
    """Rewrite every ANAT-DP ``modify`` of an observation in ``d.entities``: the side becomes a ``modify`` of
    the region it is written with (:func:`_written_region`), else a ``located_at`` target of the observation.

    Mutates the entities' ``rel`` lists in place; adds and removes no entity.
    """
    located = located_by_anatomy(d)
    sides = [e for e in d.entities if e["label"] == "ANAT-DP"]
    sided_by = [[t for r, t in e["rel"] if r == "modify" and t["label"].startswith("OBS")] for e in sides]
    for side, sided in zip(sides, sided_by, strict=True):
        if not sided:
            continue
        side["rel"] = [(r, t) for r, t in side["rel"] if not (r == "modify" and t["label"].startswith("OBS"))]
        for obs in sided:
            region = _written_region(d, side, obs, sided, located, sided_by)
            if region is not None:
                if not any(t is region for _, t in side["rel"]):
                    side["rel"].append(("modify", region))
            elif not any(r == "located_at" and t is side for r, t in obs["rel"]):
                obs["rel"].append(("located_at", side))


def _written_region(d: Draft, side: dict, obs: dict, sided: list[dict], located: dict[int, list[dict]],
                    sided_by: list[list[dict]]) -> dict | None:
    """The region ``obs`` is located at that the one-word ``side`` is written with ("left" before "basal",
    zone words between: :func:`graph.extract.rules.laterality.side_word_of`), when every observation located
    there has that side (else the side would pass to the others through the region) and ``obs`` has no other
    side (``sided_by``: the observations each side entity sides; "left greater than right lung base
    scarring" keeps both sides, not the "right" next to "lung"); None otherwise."""
    if side["_end"] - side["_start"] != 1 or sum(any(t is obs for t in s) for s in sided_by) > 1:
        return None
    for r, anat in obs["rel"]:
        if (r == "located_at" and anat is not side and side_word_of(d, anat) == side["_start"]
                and all(any(o is s for s in sided) for o in located.get(id(anat), ()))):
            return anat
    return None
