"""Answers to parsed questions from the facts of a main study and its reference study.

Every answer is in the dataset's grammar (:mod:`graph.questions.grammar`) with its ``basis``: ``stated`` (what
the main study's own statements or image say), ``derived`` (a comparison of the two studies' statements) or
``both`` (a comparison that stated changes between exactly these two studies also support), and its
``evidence`` (the phrases behind it). Questions whose finding is not in a study are still answered: ``no``
for closed questions, ``none`` where the finding has no place, level or type to name.
"""

from __future__ import annotations

from dataclasses import dataclass

from graph.questions import grammar as g
from graph.questions.facts import Observation, StudyFacts, type_words
from graph.questions.mapping import DiffVqaMapping, mapping
from graph.questions.parse import Location, ParsedQuestion
from graph.questions.templates import NO, VIEWS, YES
from graph.vocabulary import highest_severity, vocabulary

NONE = "none"
STATED, DERIVED, BOTH = "stated", "derived", "both"
#: stated change -> the part of a difference answer it supports
_SUPPORTS = {"new": "added", "resolved": "missing", "worsened": "level", "improved": "level"}


@dataclass(frozen=True)
class Answer:
    """An answer: ``text`` in the dataset's grammar, ``basis`` (stated / derived / both), ``evidence``."""

    text: str
    basis: str
    evidence: tuple[str, ...] = ()


def level_of(observations: list[Observation], m: DiffVqaMapping | None = None) -> str | None:
    """The level word of the highest mapped severity among the observations (ties: alphabetical), or None."""
    m, scores = m or mapping(), vocabulary().severity_scores
    words = [o.severity for o in observations if o.severity and m.level(o.severity)]
    if not words:
        return None
    return m.level(highest_severity((scores.get(w, 0), w) for w in words)[1])


def matches(location: Location | None, observations: list[Observation], m: DiffVqaMapping | None = None) -> bool:
    """Whether the finding's observations lie in ``location`` (every side it names, and one of its zones); a
    template without a location slot (None) asks about anywhere."""
    m = m or mapping()
    if location is None:
        return bool(observations)
    places = [p for p in (m.place(o.anatomy) for o in observations)
              if (not location.zones or p.zone in location.zones) and (p.side or not location.sides)]
    sides = {p.side for p in places}
    if location.sides:
        return location.sides <= sides
    return bool(places) and bool(location.zones)


def _evidence(observations: list[Observation], prefix: str = "") -> tuple[str, ...]:
    return tuple(dict.fromkeys(prefix + e for o in observations for e in o.evidence))


def answer(q: ParsedQuestion, main: StudyFacts, ref: StudyFacts | None = None, strict: bool = False,
           m: DiffVqaMapping | None = None) -> Answer:
    """Answer one parsed question about ``main`` (and ``ref`` for difference questions).

    Raises:
        ValueError: a difference question without a reference study.
    """
    m = m or mapping()
    present = main.present(m, strict)
    if q.question_type == "difference":
        if ref is None:
            raise ValueError("a difference question needs a reference study")
        return _difference(q, main, ref, strict, m)
    if q.question_type == "view":
        return _view(q, main)
    if q.question_type == "abnormality":
        return _abnormality(q, present, m)
    obs = present.get(q.disease or "", [])
    if q.question_type == "presence":
        return _presence(q, obs, main.negated(m, strict).get(q.disease or "", []), m)
    if q.question_type == "location":
        return _location(q, obs, m)
    word = level_of(obs, m) if q.question_type == "level" else " ".join(type_words(obs, m)) or None
    return Answer(word or NONE, STATED, _evidence(obs))


def _view(q: ParsedQuestion, main: StudyFacts) -> Answer:
    if q.template.key == "view_which":
        return Answer(VIEWS.get(main.view or "", f"{main.view} view" if main.view else NONE), STATED)
    wanted = "PA" if q.template.key == "view_is_pa" else "AP"
    return Answer(YES if main.view == wanted else NO, STATED)


def _abnormality(q: ParsedQuestion, present: dict[str, list[Observation]], m: DiffVqaMapping) -> Answer:
    evidence = _evidence([o for obs in present.values() for o in obs])
    if q.template.key == "abnormality_any":
        return Answer(YES if present else NO, STATED, evidence)
    if q.template.key == "abnormality_in_place":
        present = {k: v for k, v in present.items() if matches(q.location, v, m)}
        evidence = _evidence([o for obs in present.values() for o in obs])
    return Answer(g.finding_list(list(present)) or NONE, STATED, evidence)


def _presence(q: ParsedQuestion, obs: list[Observation], negated: list[Observation], m: DiffVqaMapping) -> Answer:
    if q.template.key == "presence_in_place":
        yes = matches(q.location, obs, m)
    elif q.template.key == "presence_bilateral":
        yes = {m.place(o.anatomy).side for o in obs} >= {"left", "right"}
    else:
        yes = bool(obs)
    return Answer(YES if yes else NO, STATED, _evidence(obs if obs else negated))


def _location(q: ParsedQuestion, obs: list[Observation], m: DiffVqaMapping) -> Answer:
    words = g.location_words(m.place(o.anatomy) for o in obs)
    if words is None:
        return Answer(NONE, STATED, _evidence(obs))
    if q.template.key == "location_side":  # "left side" / "right side"; "bilateral" when both
        first = words.split()[0]
        return Answer(f"{first} side" if first in ("left", "right") else words, STATED, _evidence(obs))
    return Answer(g.area(words), STATED, _evidence(obs))


def _difference(q: ParsedQuestion, main: StudyFacts, ref: StudyFacts, strict: bool, m: DiffVqaMapping) -> Answer:
    now, before = main.present(m, strict), ref.present(m, strict)
    if q.location is not None:  # "what has changed in the left lung area?": level changes there only
        now = {k: v for k, v in now.items() if matches(q.location, v, m)}
        before = {k: v for k, v in before.items() if matches(q.location, v, m)}
    levels, parts = [], []
    for name, obs in now.items():
        a, b = level_of(before.get(name, []), m), level_of(obs, m)
        if name in before and a and b and a != b:
            levels.append(g.level_change(name, a, b))
            parts.append(("level", name))
    added = [] if q.location else [n for n in now if n not in before]
    missing = [] if q.location else [n for n in before if n not in now]
    parts += [("added", n) for n in added] + [("missing", n) for n in missing]
    # a stated change is named at its anatomy, as its observations are: a by-anatomy name must match
    stated = {(_SUPPORTS.get(c), m.disease(f, a)) for prior, a, f, c in main.stated if prior == ref.study_id}
    basis = BOTH if any(p in stated for p in parts) else DERIVED
    evidence = _evidence([o for kind, k in parts if kind != "missing" for o in now[k]], "main: ")
    evidence += _evidence([o for kind, k in parts if kind != "added" for o in before[k]], "reference: ")
    return Answer(g.difference_answer(levels, added, missing), basis, evidence)
