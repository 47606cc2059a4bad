"""Answers in Medical-Diff-VQA's grammar: finding lists, the difference caption, level and location words.

Source of every wording: repository Holipori/MIMIC-Diff-VQA, ``code/question_gen.py`` (``abnormality_ques``:
names joined by ", "; ``get_caption`` and ``diff_ques``: the difference sentences, each ending in ". ", the added
and missing ones those of :func:`graph.formats.diffvqa.difference_caption`; ``location_ques``: location words
plus " area", "left side" / "right side"; ``view_ques``: "PA view" / "AP view"). The generator lists a pair's added and missing findings in a random order; cxrkg lists them in
the disease library's order, so the same graph always gives the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graph.formats.diffvqa import difference_caption
from graph.questions.mapping import Place
from graph.questions.templates import NOTHING_CHANGED

__all__ = ["NOTHING_CHANGED", "ZONE_PHRASES", "area", "difference_answer", "difference_caption", "finding_list",
           "level_change", "location_words"]

ZONE_PHRASES = {"upper": "upper lung", "middle": "middle lung", "lower": "lower lung", "apical": "apical"}
"""Zone -> the words after the side ("left lower lobe" reads "left lower lung" after position_change.csv)."""


def finding_list(names: Sequence[str]) -> str:
    """Names joined as ``abnormality_ques`` joins them: ``"pleural effusion, edema"``."""
    return ", ".join(names)


def level_change(name: str, before: str, after: str) -> str:
    """``"the level of X has changed from A to B. "`` (``diff_ques``)."""
    return f"the level of {name} has changed from {before} to {after}. "


def difference_answer(levels: Iterable[str], added: Sequence[str], missing: Sequence[str]) -> str:
    """The whole difference answer: level sentences, then the caption; ``"nothing has changed."`` when empty."""
    return "".join(levels) + difference_caption(added, missing) or NOTHING_CHANGED


def location_words(places: Iterable[Place]) -> str | None:
    """Where a finding is, in the location library's words, or None when no place has a side.

    Both sides: ``"bibasilar"`` when every sided place is a lower one, else ``"bilateral"``. One side: the side
    and the zone when all its places share one zone (``"left lower lung"``), else the side alone.
    """
    sided = [p for p in places if p.side]
    sides = {p.side for p in sided}
    if not sides:
        return None
    if len(sides) > 1:
        return "bibasilar" if all(p.zone in ("lower", "base") for p in sided) else "bilateral"
    zones = {p.zone for p in sided if p.zone in ZONE_PHRASES}
    side = sides.pop()
    return f"{side} {ZONE_PHRASES[zones.pop()]}" if len(zones) == 1 else side


def area(words: str) -> str:
    """A location answer: the words plus ``" area"`` (``location_ques``)."""
    return f"{words} area"
