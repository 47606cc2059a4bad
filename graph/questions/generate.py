"""A Medical-Diff-VQA question set for the loaded cohort, drawn by the dataset's rules, seeded.

Rules of the dataset's generator (repository Holipori/MIMIC-Diff-VQA, ``code/question_gen.py``,
``question_gen`` and the ``*_ques`` functions), restated:

* a main study is a PA or AP study; its reference is drawn among ALL earlier PA / AP studies of the same
  patient (the generator shuffles the patient's studies and takes the first earlier frontal one), one pair
  per main study; a main study without one gets no questions;
* per pair, one question per type where its template applies, in the order abnormality, presence, view,
  location, level, type, difference; the template and the finding asked about are drawn as the generator
  draws them (its probabilities: an AP main study gets a view question 5 % of the time; a presence
  question is half the time about a stated finding, half the time about a negated or a random library
  disease), and a question already asked of the pair is dropped.

Every answer is what :func:`graph.questions.answer.answer` gives for the drawn question, so a generated
file and ``cxrkg diffvqa answer`` on it agree. Draws use one ``random.Random(seed)`` over patients and
studies in sorted order: the same seed and graph give the same file.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable

import pandas as pd

from graph.formats.diffvqa import ANSWER_COLUMNS
from graph.questions import grammar as g
from graph.questions.answer import answer, level_of
from graph.questions.facts import Reader, StudyFacts, patient_ids, read_patient_facts, type_words
from graph.questions.mapping import DiffVqaMapping, mapping
from graph.questions.parse import parse_question
from graph.questions.templates import DISEASE_NAMES, TEMPLATE

Draw = Callable[[random.Random, StudyFacts, StudyFacts, DiffVqaMapping, bool], "str | None"]


def _fill(key: str, disease: str | None = None, location: str | None = None) -> str:
    """The text of template ``key`` with its slots filled."""
    text = TEMPLATE[key].text
    out = text.replace("lxxx", location) if location else text
    return out.replace("xxx", disease) if disease else out


# the generator draws a template of a type by its index (``random.randint`` over the type's table): the keys
# in the table's order, so that the same seed draws the same template
_ABNORMALITY = ("abnormality_list", "abnormality_in_place", "abnormality_any")
_PRESENCE = ("presence_evidence", "presence", "presence_in_place")
_LOCATION = ("location_in_image", "location_where", "location_side")


def _located(main: StudyFacts, m: DiffVqaMapping, strict: bool) -> list[tuple[str, str]]:
    """(disease, location words) of the main study's findings that have a place."""
    out = []
    for name, obs in main.present(m, strict).items():
        words = g.location_words(m.place(o.anatomy) for o in obs)
        if words:
            out.append((name, words))
    return out


def _abnormality(rng: random.Random, main: StudyFacts, ref: StudyFacts, m: DiffVqaMapping, strict: bool) -> str | None:
    present = main.present(m, strict)
    while True:
        key = _ABNORMALITY[rng.randrange(3)]
        if key == "abnormality_any":
            return _fill(key)
        if not present:
            if rng.random() > 0.5:
                return None
            continue
        if key == "abnormality_list":
            return _fill(key)
        located = [w for _, w in _located(main, m, strict) if w not in ("bilateral", "bibasilar")]
        if located:
            return _fill(key, rng.choice(located))


def _presence(rng: random.Random, main: StudyFacts, ref: StudyFacts, m: DiffVqaMapping, strict: bool) -> str | None:
    present, negated = list(main.present(m, strict)), list(main.negated(m, strict))
    if not present and not negated:
        return None
    while True:
        key = _PRESENCE[rng.randrange(3)]
        if key == "presence_in_place":
            located = _located(main, m, strict)
            if located:
                name, words = rng.choice(located)
                if words in ("bilateral", "bibasilar"):
                    return _fill("presence_bilateral", name)
                if rng.random() > 0.5:
                    words = _flip(words)
                return _fill(key, name, g.area(words if " " in words else f"{words} lung"))
            continue
        if rng.random() > 0.5:  # the generator's "no" branch: a negated finding or a random library disease
            name = rng.choice(negated) if negated and (rng.random() > 0.5 or not present) else rng.choice(DISEASE_NAMES)
            return _fill(key, name)
        if present:
            return _fill(key, rng.choice(present))


def _flip(words: str) -> str:
    """``sub_ques_pres_loc``'s "no" question: the other side (or the other zone) of the finding's place."""
    swap = {"left": "right", "right": "left", "upper": "lower", "lower": "upper"}
    parts = words.split()
    k = 0 if parts[0] in swap else next((i for i, w in enumerate(parts) if w in swap), None)
    if k is None:
        return words
    parts[k] = swap[parts[k]]
    return " ".join(parts)


def _view(rng: random.Random, main: StudyFacts, ref: StudyFacts, m: DiffVqaMapping, strict: bool) -> str | None:
    if main.view == "AP" and rng.random() > 0.05:
        return None
    if rng.random() > 0.5:
        return _fill("view_which")
    return _fill("view_is_pa" if rng.random() > 0.5 else "view_is_ap")


def _location(rng: random.Random, main: StudyFacts, ref: StudyFacts, m: DiffVqaMapping, strict: bool) -> str | None:
    key = _LOCATION[rng.randrange(3)]
    one_side = [(n, w) for n, w in _located(main, m, strict) if w not in ("bilateral", "bibasilar")]
    return _fill(key, rng.choice(one_side)[0]) if one_side else None


def _attribute(kind: str) -> Draw:
    def draw(rng: random.Random, main: StudyFacts, ref: StudyFacts, m: DiffVqaMapping, strict: bool) -> str | None:
        has = level_of if kind == "level" else type_words
        names = [n for n, obs in main.present(m, strict).items() if has(obs, m)]
        return _fill(kind, rng.choice(names)) if names else None  # the keys "level" and "type"
    return draw


def _difference(rng: random.Random, main: StudyFacts, ref: StudyFacts, m: DiffVqaMapping, strict: bool) -> str | None:
    now, before = main.present(m, strict), ref.present(m, strict)
    changed = [n for n in now if n in before and level_of(now[n], m) and level_of(before[n], m)
               and level_of(now[n], m) != level_of(before[n], m)]
    rng.shuffle(changed)
    for name in changed:
        here = g.location_words(m.place(o.anatomy) for o in now[name])
        there = g.location_words(m.place(o.anatomy) for o in before[name])
        if here and here == there and here not in ("bilateral", "bibasilar"):
            return _fill("difference_in_area", location=here if " " in here else f"{here} lung")
    return _fill("difference")


DRAWS: dict[str, Draw] = {"abnormality": _abnormality, "presence": _presence, "view": _view,
                          "location": _location, "level": _attribute("level"), "type": _attribute("type"),
                          "difference": _difference}


def draw_pairs(studies: dict[str, StudyFacts], rng: random.Random) -> list[tuple[StudyFacts, StudyFacts]]:
    """(main, reference) pairs: each frontal study with an earlier frontal study of its patient drawn
    uniformly among all of them; patients and studies in sorted order."""
    by_patient: dict[str, list[StudyFacts]] = defaultdict(list)
    for s in studies.values():
        by_patient[s.patient_id].append(s)
    pairs = []
    for pid in sorted(by_patient):
        timeline = sorted(by_patient[pid], key=lambda s: (s.order or 0, s.study_id))
        for main in timeline:
            earlier = [s for s in timeline if s.frontal and s.order is not None and main.order is not None
                       and s.order < main.order]
            if main.frontal and earlier:
                pairs.append((main, rng.choice(earlier)))
    return pairs


def generate_frame(studies: dict[str, StudyFacts], seed: int = 0, strict: bool = False) -> pd.DataFrame:
    """The question set for these studies (``mimic_pair_questions.csv``'s columns,
    :data:`~graph.formats.diffvqa.ANSWER_COLUMNS`), one row per question."""
    rng, m, rows = random.Random(seed), mapping(), []
    for main, ref in draw_pairs(studies, rng):
        asked: set[str] = set()
        for qtype, draw in DRAWS.items():
            question = draw(rng, main, ref, m, strict)
            if question is None or question in asked:
                continue
            asked.add(question)
            a = answer(parse_question(question), main, ref, strict, m)
            rows.append((main.study_id, main.patient_id, ref.study_id, qtype, question, a.text))
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


def generate(reader: Reader, patients: int | None = None, seed: int = 0, strict: bool = False) -> pd.DataFrame:
    """The question set for the graph's cohort, or for ``patients`` of its patients drawn with ``seed``.

    Raises:
        ValueError: ``patients`` is not positive.
    """
    if patients is not None and patients < 1:
        raise ValueError(f"--patients must be at least 1, not {patients}")
    ids = patient_ids(reader)
    if patients is not None and patients < len(ids):
        ids = sorted(random.Random(seed).sample(ids, patients))
    return generate_frame(read_patient_facts(reader, ids), seed, strict)


def example_pairs(reader: Reader, patients: list[str], n: int = 3, seed: int = 0) -> pd.DataFrame:
    """Questions of ``n`` pairs of these patients to show (the demo, the notebook): the pairs with the most
    question types among those whose difference answer names a change, ties by study id."""
    frame = generate_frame(read_patient_facts(reader, patients), seed)
    changed = frame[(frame["question_type"] == "difference") & (frame["answer"] != "nothing has changed.")]
    keys = changed[["study_id", "ref_id"]].drop_duplicates()
    sizes = frame.groupby(["study_id", "ref_id"]).size().rename("types").reset_index()
    best = keys.merge(sizes).sort_values(["types", "study_id"], ascending=[False, True]).head(n)
    return frame.merge(best[["study_id", "ref_id"]]).reset_index(drop=True)
