"""An independent check of Medical-Diff-VQA difference and abnormality answers on the NIH ChestX-ray14 cohort.

Written apart from the graph code: plain pandas over the NIH tables of the torchxrayvision wheel (read with
:func:`graph.checks.nih.reference.load_tables`), its own mapping of the NIH labels to Diff-VQA disease names
and its own reading of the dataset's answer grammar (the difference caption's sentences are the format's own,
:func:`graph.formats.diffvqa.difference_caption`; which names are added or missing, and their order, the check
decides itself). It never reads Neo4j, ``graph.longitudinal.events`` or the code that answers the questions; a question file from ``cxrkg diffvqa generate`` (or ``answer``) is checked against it.

The question file is in the dataset's format (``mimic_pair_questions.csv``, Hu et al., KDD 2023): columns
study_id, subject_id, ref_id, question_type, question, answer, read by the project's one question-file reader
(:func:`graph.formats.diffvqa.read_question_file`: the file format only, no answering code). On the NIH
cohort study_id and ref_id are NIH image ids without ``.png`` (``00000013_008``), subject_id the patient id as
``str(int(Patient ID))`` (``"13"``).

Rules, from the dataset's public generator (repository Holipori/MIMIC-Diff-VQA, ``code/question_gen.py``:
``abnormality_ques``, ``diff_ques``, ``get_caption``; names from ``code/libs/disease_lib.csv``):

- a finding is present in an image when any source states it: an NIH text-mined label, or a ``YES`` of Google's
  adjudicated labels (Majkowska et al., Radiology 2020); both are converted into the graph
  (:mod:`graph.datasets.nih.convert`). NIH states no severity and no location words, so no level-change clause
  and no ``what has changed in the ... area?`` question can apply;
- "what abnormalities are seen in this image?": the Diff-VQA names of the present findings, in the disease
  library's order, joined by ``", "``; "is there evidence of any abnormalities in this image?": ``yes`` when
  any present finding has a name, else ``no``;
- "what has changed compared to the reference image?": ``the main image has an additional finding of X than
  the reference image. `` (plural ``additional findings of A, B, and C``; two: ``A, and B``) for names present
  in the main image only, then ``the main image is missing the finding(s) of ... than the reference image. ``
  for names present in the reference only, or ``nothing has changed.``; names in the library's order (the
  generator shuffles the main image's names; the project fixes the library's order);
- the pair: ref_id an earlier image (lower follow-up number) of the same patient, subject_id that patient.

Which findings are compared: only names that some NIH label has as its exactly one Diff-VQA name
(:data:`NIH_TO_DIFFVQA`). A label with several candidate names (Cardiomegaly: ``cardiomegaly`` or
``enlargement of the cardiac silhouette``) or with a name or none (Infiltration: ``lung opacity`` or nothing)
makes those candidate names unchecked in a pair where it is present; labels with no name (Mass, Nodule,
Fibrosis) state nothing. Names outside the library are grammar faults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from graph.checks.nih.reference import NIHTables
from graph.formats.diffvqa import ANSWER_COLUMNS, LINE, check_columns, difference_caption

#: Medical-Diff-VQA's 30 official disease names in its library's order (Holipori/MIMIC-Diff-VQA
#: ``code/libs/disease_lib.csv``, ids 0-29; id 12 is written there with a trailing space).
DISEASE_LIBRARY: tuple[str, ...] = (
    "pleural effusion", "atelectasis", "cardiomegaly", "enlargement of the cardiac silhouette", "edema", "hernia",
    "vascular congestion", "hilar congestion", "pneumothorax", "heart failure", "lung opacity", "pneumonia",
    "tortuosity of the descending aorta", "scoliosis", "gastric distention", "hypoxemia",
    "hypertensive heart disease", "hematoma", "tortuosity of the thoracic aorta", "contusion", "emphysema",
    "granuloma", "calcification", "pleural thickening", "thymoma", "blunting of the costophrenic angle",
    "consolidation", "fracture", "pneumomediastinum", "air collection",
)
_ORDER = {name: i for i, name in enumerate(DISEASE_LIBRARY)}

#: This check's own mapping of each NIH text-mined label (Wang et al., CVPR 2017) and each Google adjudicated
#: column (prefix ``google:``) to the Diff-VQA names it may be given; ``""`` stands for "no name". A label is
#: checked when it has exactly one name. Basis: the library's report names (``disease_lib.csv``: "effusion",
#: "atelectasis", "edema", "emphysema", "hernia", "consolidation", "pneumothorax", "pneumonia", "fracture",
#: "pleural thickening", "airspace opacity" are among them); cardiomegaly has two library entries (ids 2 and
#: 3); "infiltrate" is none, the Fleischner glossary (Hansell et al., Radiology 2008) prefers "opacity" for it;
#: mass, nodule and fibrosis have no entry.
NIH_TO_DIFFVQA: dict[str, tuple[str, ...]] = {
    "Atelectasis": ("atelectasis",),
    "Cardiomegaly": ("cardiomegaly", "enlargement of the cardiac silhouette"),
    "Consolidation": ("consolidation",),
    "Edema": ("edema",),
    "Effusion": ("pleural effusion",),
    "Emphysema": ("emphysema",),
    "Fibrosis": ("",),
    "Hernia": ("hernia",),
    "Infiltration": ("", "lung opacity"),
    "Mass": ("",),
    "Nodule": ("",),
    "Pleural_Thickening": ("pleural thickening",),
    "Pneumonia": ("pneumonia",),
    "Pneumothorax": ("pneumothorax",),
    "google:Fracture": ("fracture",),
    "google:Pneumothorax": ("pneumothorax",),
    "google:Airspace opacity": ("lung opacity",),
    "google:Nodule or mass": ("",),
}
#: Names some label has as its one name: the only names compared.
CHECKED_NAMES = frozenset(names[0] for names in NIH_TO_DIFFVQA.values() if len(names) == 1 and names[0])

Q_DIFFERENCE = "what has changed compared to the reference image?"
Q_ABNORMALITIES = "what abnormalities are seen in this image?"
Q_ANY = "is there evidence of any abnormalities in this image?"
NOTHING = "nothing has changed."

MISMATCH_COLUMNS = (LINE, "study_id", "ref_id", "question_type", "question", "answer", "kind", "expected", "detail")


@dataclass
class CheckResult:
    """What the check compared: pairs (distinct (study_id, ref_id)) and questions checked, questions left
    unchecked (other types or templates, or an answer that depends only on unchecked labels), and the
    mismatches (columns :data:`MISMATCH_COLUMNS`; ``kind`` is pair, grammar, level, difference or abnormality)."""

    pairs_checked: int = 0
    questions_checked: int = 0
    unchecked: int = 0
    mismatches: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(MISMATCH_COLUMNS)))


@dataclass(frozen=True)
class Study:
    """One NIH image: its patient, follow-up number and the labels stated present (Google ones prefixed)."""

    patient_id: str
    follow_up: int
    labels: frozenset[str]


def nih_studies(tables: NIHTables) -> dict[str, Study]:
    """Image id (Image Index without ``.png``) -> :class:`Study`, one per image the converter keeps.

    Kept as the converter keeps them (:mod:`graph.datasets.nih.convert`): Patient ID and Follow-up # must be
    non-negative integers; of two rows with one Image Index, or of one patient with one follow-up number, the
    first. Labels: the ``|``-separated ``Finding Labels`` other than ``No Finding``, plus ``google:<column>``
    for each ``YES`` of the Google table.
    """
    entry = tables.data_entry
    frame = pd.DataFrame({"image": entry["Image Index"].astype(str).str.removesuffix(".png"),
                          "pid": pd.to_numeric(entry["Patient ID"], errors="coerce"),
                          "fu": pd.to_numeric(entry["Follow-up #"], errors="coerce"),
                          "labels": entry["Finding Labels"].astype(str)})
    frame = frame.dropna(subset=["pid", "fu"])
    frame = frame[(frame["pid"] >= 0) & (frame["fu"] >= 0)]
    frame = frame.drop_duplicates("image").drop_duplicates(["pid", "fu"])
    google = tables.google.assign(image=tables.google["Image Index"].astype(str).str.removesuffix(".png"))
    said: dict[str, set[str]] = {}
    for column in ("Fracture", "Pneumothorax", "Airspace opacity", "Nodule or mass"):
        for image in google.loc[google[column].astype(str).str.strip().str.upper() == "YES", "image"]:
            said.setdefault(image, set()).add(f"google:{column}")
    out = {}
    for image, pid, fu, labels in frame.itertuples(index=False):
        text = {label.strip() for label in labels.split("|")} - {"No Finding", ""}
        out[image] = Study(str(int(pid)), int(fu), frozenset(text | said.get(image, set())))
    return out


def _names(labels: frozenset[str]) -> tuple[set[str], set[str]]:
    """(names of the checked labels present, candidate names of the unchecked labels present)."""
    named: set[str] = set()
    unsure: set[str] = set()
    for label in labels:
        names = NIH_TO_DIFFVQA.get(label, ("",))
        if len(names) == 1 and names[0]:
            named.add(names[0])
        else:
            unsure.update(n for n in names if n)
    return named, unsure


def in_library_order(names: set[str] | list[str]) -> list[str]:
    """``names`` sorted by the disease library's order. Raises KeyError for a name outside the library."""
    return sorted(set(names), key=_ORDER.__getitem__)


def difference_answer(added: list[str], missing: list[str]) -> str:
    """The dataset's answer to "what has changed compared to the reference image?" without level changes.

    Args:
        added: names present in the main image only, in the order to write (:func:`in_library_order` gives
            the project's).
        missing: names present in the reference only, in the same order.

    Returns:
        ``"the main image has an additional finding of X than the reference image. "`` (plural ``additional
        findings of A, B, and C``), then ``"the main image is missing the finding(s) of ... than the reference
        image. "``, or ``"nothing has changed."`` (``get_caption`` and ``diff_ques`` of question_gen.py).
    """
    return difference_caption(added, missing) or NOTHING


_LEVEL = re.compile(r"the level of (.+?) has changed from (.+?) to (.+?)\. ")
_ADDED = re.compile(r"the main image has (?:an additional finding|additional findings) of (.+?) than the "
                    r"reference image\. ")
_MISSING = re.compile(r"the main image is missing the findings? of (.+?) than the reference image\. ")


def _split(listed: str) -> list[str]:
    return [n for n in re.split(r", and |, ", listed) if n]


def parse_difference(answer: str) -> tuple[list[str], list[str], list[str]] | None:
    """(level-change clauses, added names, missing names) of a difference answer, or None when it is not
    in the dataset's grammar (the clauses in the generator's order, nothing else, names in the library,
    in the library's order, and the answer exactly as :func:`difference_answer` would write it)."""
    if answer == NOTHING:
        return [], [], []
    rest, levels = answer, []
    while (m := _LEVEL.match(rest)):
        levels.append(m.group(0))
        rest = rest[m.end():]
    added = missing = []
    if (m := _ADDED.match(rest)):
        added, rest = _split(m.group(1)), rest[m.end():]
    if (m := _MISSING.match(rest)):
        missing, rest = _split(m.group(1)), rest[m.end():]
    if rest or not (levels or added or missing):
        return None
    if any(n not in _ORDER for n in (*added, *missing)):
        return None
    if added != in_library_order(added) or missing != in_library_order(missing):
        return None
    if (added or missing) and not answer.endswith(difference_answer(added, missing)):
        return None
    return levels, added, missing


def parse_abnormalities(answer: str) -> list[str] | None:
    """The names of an answer to "what abnormalities are seen in this image?", or None when one is not in
    the library, a name repeats, or they are not in the library's order."""
    names = [n for n in answer.split(", ") if n] if answer else []
    if any(n not in _ORDER for n in names) or names != in_library_order(names):
        return None
    return names


Outcome = list[tuple[str, str, str]]  # (kind, expected, detail) per mismatch; [] agrees


def _compare(kind: str, got: list[str], expected: list[str], compare: frozenset[str], what: str) -> Outcome:
    got_c, exp_c = [n for n in got if n in compare], [n for n in expected if n in compare]
    if got_c == exp_c:
        return []
    return [(kind, ", ".join(exp_c), f"{what}: answer names {got_c}, the NIH labels give {exp_c}")]


def _check_difference(question: str, answer: str, main: Study, ref: Study) -> Outcome:
    """The difference question of one pair against the NIH labels (see the module docstring)."""
    if question != Q_DIFFERENCE:
        return [("level", "", "NIH states no levels or location words: only the whole-image difference "
                 "question applies")]
    (main_named, main_unsure), (ref_named, ref_unsure) = _names(main.labels), _names(ref.labels)
    added, missing = in_library_order(main_named - ref_named), in_library_order(ref_named - main_named)
    expected = difference_answer(added, missing)
    parsed = parse_difference(answer)
    if parsed is None:
        return [("grammar", expected, "not in the dataset's difference grammar (names of the library, in its "
                 "order, clauses as question_gen.py writes them)")]
    levels, got_added, got_missing = parsed
    out: Outcome = [("level", expected, f"NIH states no levels: {''.join(levels)!r}")] if levels else []
    compare = CHECKED_NAMES - main_unsure - ref_unsure
    out += _compare("difference", got_added, added, compare, "additional findings")
    out += _compare("difference", got_missing, missing, compare, "missing findings")
    return [(kind, expected, detail) for kind, _, detail in out]


def _check_abnormality(question: str, answer: str, main: Study) -> Outcome | None:
    """An abnormality question of the main image against its NIH labels; None: not decidable here."""
    named, unsure = _names(main.labels)
    if question == Q_ABNORMALITIES:
        expected = in_library_order(named)
        got = parse_abnormalities(answer)
        if got is None:
            return [("grammar", ", ".join(expected), "names outside the disease library, repeated, or not in "
                     "its order")]
        return _compare("abnormality", got, expected, CHECKED_NAMES - unsure, "abnormalities")
    if question == Q_ANY:
        if answer not in ("yes", "no"):
            return [("grammar", "", "a closed question is answered yes or no")]
        closed = "yes" if named else "no" if not main.labels else None
        if closed is None:  # only labels without exactly one name: either answer may be right
            return None
        return [] if answer == closed else [("abnormality", closed, f"labels {sorted(main.labels)}")]
    return None


def _pair_problem(study_id: str, subject_id: str, ref_id: str, studies: dict[str, Study]) -> str | None:
    main, ref = studies.get(study_id), studies.get(ref_id)
    if main is None:
        return f"study_id {study_id!r} is not an NIH image of the cohort"
    if ref is None:
        return f"ref_id {ref_id!r} is not an NIH image of the cohort"
    if subject_id != main.patient_id:
        return f"subject_id {subject_id!r}: the study's patient is {main.patient_id!r}"
    if ref.patient_id != main.patient_id:
        return f"ref_id {ref_id!r} belongs to patient {ref.patient_id!r}, not {main.patient_id!r}"
    if ref.follow_up >= main.follow_up:
        return (f"ref_id {ref_id!r} (follow-up {ref.follow_up}) is not earlier than the study "
                f"(follow-up {main.follow_up})")
    return None


def _check_row(row: dict, studies: dict[str, Study]) -> Outcome | None:
    """One question row: None when it is not checked, else its mismatches."""
    qtype = row["question_type"]
    if qtype not in ("difference", "abnormality"):
        return None
    problem = _pair_problem(row["study_id"], row["subject_id"], row["ref_id"], studies)
    if problem:
        return [("pair", "", problem)]
    main = studies[row["study_id"]]
    if qtype == "difference":
        return _check_difference(row["question"], row["answer"], main, studies[row["ref_id"]])
    return _check_abnormality(row["question"], row["answer"], main)


def check_answers(questions: pd.DataFrame, tables: NIHTables, studies: dict[str, Study] | None = None) -> CheckResult:
    """Check the difference and abnormality answers of a question file against the NIH tables.

    Args:
        questions: rows in the dataset's format, at least :data:`~graph.formats.diffvqa.ANSWER_COLUMNS`, as
            :func:`graph.formats.diffvqa.read_question_file` reads them (indexed by file line); other question
            types are counted as unchecked.
        tables: the NIH tables (:func:`graph.checks.nih.reference.load_tables`).
        studies: :func:`nih_studies` of ``tables`` when the caller has it already.

    Returns:
        A :class:`CheckResult`; a mismatch's ``line`` is the frame's index label of the question (its line in
        the file for a frame read by ``read_question_file``).

    Raises:
        QuestionFileError: a column of :data:`~graph.formats.diffvqa.ANSWER_COLUMNS` is missing.
    """
    check_columns(questions.columns, ANSWER_COLUMNS, "question frame")
    studies = nih_studies(tables) if studies is None else studies
    frame = questions[list(ANSWER_COLUMNS)].astype(str)
    result, pairs, rows = CheckResult(), set(), []
    for index, row in zip(frame.index, frame.to_dict("records"), strict=True):
        outcome = _check_row(row, studies)
        if outcome is None:
            result.unchecked += 1
            continue
        result.questions_checked += 1
        pairs.add((row["study_id"], row["ref_id"]))
        rows += [(index, row["study_id"], row["ref_id"], row["question_type"], row["question"], row["answer"], *m)
                 for m in outcome]
    result.pairs_checked = len(pairs)
    result.mismatches = pd.DataFrame(rows, columns=list(MISMATCH_COLUMNS))
    return result
