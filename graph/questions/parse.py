"""Question text -> question type, template and slots (a disease name, a location), by the templates of
:mod:`graph.questions.templates`.

Matching ignores case and repeated spaces. A disease slot takes the official names and the report wordings
of Diff-VQA's ``disease_lib.csv`` (``infection`` is ``pneumonia``); a location slot takes the location words
the generator writes ("left lower lung area", "left lung", "bibasilar", "the left lung base").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graph.errors import CxrkgError
from graph.questions.templates import DISEASES, QUESTION_TYPE, QUESTION_TYPES, TEMPLATE, TEMPLATES, Template

# disease alias (report wording or official name, stripped) -> official name
_ALIASES: dict[str, str] = {}
for _name, _forms in DISEASES:
    for _form in (_name, *_forms):
        _ALIASES.setdefault(_form.strip(), _name)

SIDE_WORDS = {"left": {"left"}, "left-sided": {"left"}, "right": {"right"}, "right-sided": {"right"},
              "bilateral": {"left", "right"}, "bibasilar": {"left", "right"}, "bibasal": {"left", "right"}}
ZONE_WORDS = {"upper": {"upper", "apical"}, "apical": {"apical"}, "mid": {"middle"}, "middle": {"middle"},
              "lower": {"lower", "base"}, "base": {"lower", "base"}, "bases": {"lower", "base"},
              "basal": {"lower", "base"}, "basilar": {"lower", "base"}, "bibasilar": {"lower", "base"},
              "bibasal": {"lower", "base"}}


class QuestionParseError(CxrkgError, ValueError):
    """A question outside the templates, or a slot naming no Diff-VQA disease / no location."""


@dataclass(frozen=True)
class Location:
    """A location slot: the sides it names (empty: either) and the zones (empty: anywhere on them)."""

    text: str
    sides: frozenset[str]
    zones: frozenset[str]


@dataclass(frozen=True)
class ParsedQuestion:
    """A parsed question: ``question_type`` (one of QUESTION_TYPES), the ``template`` it matched (one of
    TEMPLATE's), the official ``disease`` name and the ``location`` its slots name (None where the template
    has none)."""

    question_type: str
    template: Template
    disease: str | None = None
    location: Location | None = None


def _pattern(qtype: str, template: str) -> re.Pattern[str]:
    # abnormality's "xxx" is a place ("what abnormalities are seen in the left lower lung?")
    disease = "(?P<location>.+?)" if qtype == "abnormality" else "(?P<disease>.+?)"
    text = re.escape(template).replace("lxxx", "(?P<location>.+?)").replace("xxx", disease)
    return re.compile(f"^{text}$", re.IGNORECASE)


# most specific first: "any abnormalities" before a disease slot, a location slot before "is there xxx?"
_ORDER = ("abnormality_any", "abnormality_list", "abnormality_in_place", "presence_evidence", "presence_in_place",
          "presence_bilateral", "presence", "view_which", "view_is_pa", "view_is_ap", "location_side",
          "location_in_image", "location_where", "level", "type", "difference", "difference_in_area")
_PATTERNS = [(QUESTION_TYPE[key], TEMPLATE[key], _pattern(QUESTION_TYPE[key], TEMPLATE[key].text)) for key in _ORDER]
assert sorted(_ORDER) == sorted(TEMPLATE), "every template is tried once"


def known_templates() -> list[str]:
    """Every template, by type, as one line each (what an unparseable question is told)."""
    return [f"{t}: {tpl.text}" for t in QUESTION_TYPES for tpl in TEMPLATES[t]]


def disease_name(text: str) -> str | None:
    """The official name a disease slot names (``"effusion"`` -> ``"pleural effusion"``), or None."""
    return _ALIASES.get(" ".join(text.lower().split()))


def parse_location(text: str) -> Location | None:
    """A location slot's sides and zones (``"the left lung base"`` -> left, lower), None when it names none."""
    words = " ".join(text.lower().split()).replace("mid to lower", "mid lower").split()
    sides = frozenset().union(*(SIDE_WORDS.get(w, set()) for w in words))
    zones = frozenset().union(*(ZONE_WORDS.get(w, set()) for w in words))
    known = {"the", "area", "region", "lung", "lungs", "lobe", "lobes", "zone", "hemithorax", "medial", "and",
             "probably", "also", "to"}
    if not (sides or zones) or any(w not in known and w not in SIDE_WORDS and w not in ZONE_WORDS for w in words):
        return None
    return Location(" ".join(text.split()), sides, zones)


def parse_question(question: str) -> ParsedQuestion:
    """Parse one question.

    Raises:
        QuestionParseError: no template matches, or its disease or location slot names nothing known.
    """
    text = " ".join(str(question).split())
    slot_error = None
    for qtype, template, pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        slots = match.groupdict()
        disease = location = None
        if "disease" in slots:
            disease = disease_name(slots["disease"])
            if disease is None:
                slot_error = slot_error or f"{slots['disease']!r} is not a Medical-Diff-VQA disease name"
                continue
        if "location" in slots:
            location = parse_location(slots["location"])
            if location is None:
                slot_error = slot_error or f"{slots['location']!r} is not a location the templates use"
                continue
        return ParsedQuestion(qtype, template, disease, location)
    raise QuestionParseError(slot_error or f"{text!r} matches none of the Medical-Diff-VQA templates")
