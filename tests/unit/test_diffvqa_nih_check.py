"""The independent check of Diff-VQA answers on NIH ChestX-ray14 (graph.checks.nih.diffvqa).

No Neo4j. The grammar tests need nothing; the rest are hand-written question rows over the real NIH tables of
the torchxrayvision wheel (the package registry or a filled CXRKG_IU_CACHE), skipped when it cannot be obtained.
The labels quoted in comments are those of Data_Entry_2017_v2020 (and Google's table) for these images.
"""

from __future__ import annotations

import pandas as pd
import pytest

from graph.checks.nih import reference as ref
from graph.checks.nih.diffvqa import (
    CHECKED_NAMES,
    DISEASE_LIBRARY,
    NIH_TO_DIFFVQA,
    NOTHING,
    Q_ABNORMALITIES,
    Q_ANY,
    Q_DIFFERENCE,
    check_answers,
    difference_answer,
    nih_studies,
    parse_abnormalities,
    parse_difference,
)
from graph.datasets.nih.convert import DatasetUnavailable
from graph.datasets.wheel import WheelUnavailable
from graph.formats.diffvqa import ANSWER_COLUMNS, QuestionFileError

ADD = "the main image has an additional finding of {} than the reference image. "
ADDS = "the main image has additional findings of {} than the reference image. "
MISS = "the main image is missing the finding of {} than the reference image. "
MISSES = "the main image is missing the findings of {} than the reference image. "


# --- grammar (no tables) ---------------------------------------------------------------------------------

def test_difference_grammar_of_question_gen():
    assert difference_answer([], []) == NOTHING
    assert difference_answer(["edema"], []) == ADD.format("edema")
    assert difference_answer(["pleural effusion", "edema"], []) == ADDS.format("pleural effusion, and edema")
    assert difference_answer(["a", "b", "c"], ["d"]) == ADDS.format("a, b, and c") + MISS.format("d")
    assert difference_answer([], ["atelectasis", "edema"]) == MISSES.format("atelectasis, and edema")


def test_parse_accepts_exactly_the_grammar():
    answer = ADDS.format("atelectasis, pneumothorax, and emphysema") + MISS.format("edema")
    assert parse_difference(answer) == ([], ["atelectasis", "pneumothorax", "emphysema"], ["edema"])
    level = "the level of pleural effusion has changed from small to moderate. "
    assert parse_difference(level + ADD.format("edema")) == ([level], ["edema"], [])
    assert parse_difference(NOTHING) == ([], [], [])
    for bad in (ADDS.format("emphysema, and pneumothorax"),  # not the library's order
                ADD.format("pneumothorax, and emphysema"),  # singular head, two names
                ADD.format("effusion"),  # not an official name
                MISS.format("edema") + ADD.format("atelectasis"),  # clauses swapped
                ADD.format("edema").strip(), "", "nothing has changed"):
        assert parse_difference(bad) is None, bad
    assert parse_abnormalities("pleural effusion, pneumothorax, pneumonia") == ["pleural effusion", "pneumothorax",
                                                                                "pneumonia"]
    assert parse_abnormalities("pneumothorax, pleural effusion") is None
    assert parse_abnormalities("edema, edema") is None


def test_mapping_names_only_library_names():
    assert len(DISEASE_LIBRARY) == 30 and len(set(DISEASE_LIBRARY)) == 30
    assert all(n in DISEASE_LIBRARY for names in NIH_TO_DIFFVQA.values() for n in names if n)
    assert "cardiomegaly" not in CHECKED_NAMES and "lung opacity" in CHECKED_NAMES  # Google's airspace opacity
    assert CHECKED_NAMES == {"atelectasis", "consolidation", "edema", "pleural effusion", "emphysema", "hernia",
                             "pleural thickening", "pneumonia", "pneumothorax", "fracture", "lung opacity"}


# --- over the real NIH tables ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tables():
    try:
        return ref.load_tables(limit_patients=15)
    except (DatasetUnavailable, WheelUnavailable) as exc:
        pytest.skip(f"NIH tables unavailable: {exc}")


def _frame(rows) -> pd.DataFrame:
    """rows: (study, ref, type, question, answer); subject_id from the image id unless given as 6th item."""
    return pd.DataFrame([(s, r[5] if len(r) > 5 else str(int(s[:8])), rf, t, q, a)
                         for r in rows for s, rf, t, q, a in [r[:5]]], columns=list(ANSWER_COLUMNS))


#: Right answers. 13_005 (follow-up 30): Emphysema, Infiltration, Pleural_Thickening, Pneumothorax; 13_003
#: (28): Pleural_Thickening; 13_010 (35): Effusion, Pneumonia, Pneumothorax; 13_030 (8): Atelectasis,
#: Cardiomegaly, Emphysema, Mass, Pneumothorax; 13_024 (2): Mass; 13_008 (33): only Google's airspace opacity;
#: 13_007 (32): Infiltration; 1_000..002: Cardiomegaly, + Emphysema, + Effusion (no Emphysema).
RIGHT = [
    ("00000001_001", "00000001_000", "difference", Q_DIFFERENCE, ADD.format("emphysema")),
    ("00000001_002", "00000001_001", "difference", Q_DIFFERENCE,
     ADD.format("pleural effusion") + MISS.format("emphysema")),
    ("00000001_002", "00000001_000", "difference", Q_DIFFERENCE, ADD.format("pleural effusion")),
    ("00000013_005", "00000013_003", "difference", Q_DIFFERENCE, ADDS.format("pneumothorax, and emphysema")),
    ("00000013_010", "00000013_005", "difference", Q_DIFFERENCE,
     ADDS.format("pleural effusion, and pneumonia") + MISSES.format("emphysema, and pleural thickening")),
    # cardiomegaly has two names: naming it (or not) is not checked
    ("00000013_030", "00000013_024", "difference", Q_DIFFERENCE,
     ADDS.format("atelectasis, cardiomegaly, pneumothorax, and emphysema")),
    ("00000013_030", "00000013_022", "difference", Q_DIFFERENCE,
     ADDS.format("atelectasis, pneumothorax, and emphysema")),
    ("00000003_002", "00000003_001", "difference", Q_DIFFERENCE, NOTHING),
    # the reference's Infiltration may be named lung opacity or not: the main's lung opacity is not checked
    ("00000013_008", "00000013_007", "difference", Q_DIFFERENCE, NOTHING),
    ("00000013_010", "00000013_005", "abnormality", Q_ABNORMALITIES, "pleural effusion, pneumothorax, pneumonia"),
    ("00000013_008", "00000013_007", "abnormality", Q_ABNORMALITIES, "lung opacity"),
    ("00000001_001", "00000001_000", "abnormality", Q_ANY, "yes"),
    ("00000005_001", "00000005_000", "abnormality", Q_ANY, "no"),
]


@pytest.mark.network
def test_right_answers_agree(tables):
    result = check_answers(_frame(RIGHT), tables)
    assert result.mismatches.empty, result.mismatches.to_dict("records")
    assert (result.questions_checked, result.unchecked) == (len(RIGHT), 0)
    assert result.pairs_checked == len({(r[0], r[1]) for r in RIGHT})


@pytest.mark.network
def test_undecidable_and_other_questions_are_unchecked(tables):
    rows = [("00000008_002", "00000008_000", "abnormality", Q_ANY, "no"),  # only Nodule: no Diff-VQA name
            ("00000013_010", "00000013_005", "presence", "is there pneumothorax?", "yes"),
            ("00000013_010", "00000013_005", "view", "which view is this image taken?", "PA view")]
    result = check_answers(_frame(rows), tables)
    assert (result.questions_checked, result.unchecked, result.pairs_checked) == (0, 3, 0)


#: Wrong answers, each with the kind of mismatch it must give.
WRONG = [
    (("00000013_005", "00000013_003", "difference", Q_DIFFERENCE, ADD.format("pneumothorax")), "difference"),
    (("00000013_005", "00000013_003", "difference", Q_DIFFERENCE, ADDS.format("emphysema, and pneumothorax")),
     "grammar"),
    (("00000013_005", "00000013_003", "difference", Q_DIFFERENCE, ADD.format("pneumothorax, and emphysema")),
     "grammar"),
    (("00000001_002", "00000001_001", "difference", Q_DIFFERENCE, ADD.format("pleural effusion")), "difference"),
    (("00000003_002", "00000003_001", "difference", Q_DIFFERENCE, MISS.format("hernia")), "difference"),
    (("00000003_002", "00000003_001", "difference", Q_DIFFERENCE,
      "the level of hernia has changed from small to large. "), "level"),
    (("00000003_002", "00000003_001", "difference", "what has changed in the left lung area?", NOTHING), "level"),
    (("00000001_000", "00000001_001", "difference", Q_DIFFERENCE, MISS.format("emphysema")), "pair"),
    (("00000001_001", "00000002_000", "difference", Q_DIFFERENCE, NOTHING), "pair"),
    (("00000001_001", "00000001_000", "difference", Q_DIFFERENCE, ADD.format("emphysema"), "2"), "pair"),
    (("99999999_001", "00000001_000", "difference", Q_DIFFERENCE, NOTHING, "99999999"), "pair"),
    (("00000013_010", "00000013_005", "abnormality", Q_ABNORMALITIES, "pneumothorax, pleural effusion"), "grammar"),
    (("00000013_010", "00000013_005", "abnormality", Q_ABNORMALITIES, "pleural effusion, pneumothorax"),
     "abnormality"),
    (("00000013_010", "00000013_005", "abnormality", Q_ABNORMALITIES,
      "pleural effusion, pneumothorax, pneumonia, fracture"), "abnormality"),
    (("00000005_001", "00000005_000", "abnormality", Q_ANY, "yes"), "abnormality"),
    (("00000001_001", "00000001_000", "abnormality", Q_ANY, "maybe"), "grammar"),
]


@pytest.mark.network
def test_each_wrong_answer_is_caught_with_its_kind(tables):
    questions = _frame([row for row, _ in WRONG])
    result = check_answers(questions, tables)
    kinds = result.mismatches.groupby("line")["kind"].agg(set).to_dict()
    assert kinds == {i: {kind} for i, (_, kind) in enumerate(WRONG)}
    first = result.mismatches.iloc[0]
    assert first["expected"] == ADDS.format("pneumothorax, and emphysema")
    assert "emphysema" in first["detail"]


@pytest.mark.network
def test_missing_column_is_an_input_error(tables):
    with pytest.raises(QuestionFileError, match="ref_id"):
        check_answers(_frame(RIGHT[:1]).drop(columns=["ref_id"]), tables)


@pytest.mark.network
def test_studies_follow_the_converters_rules(tables):
    studies = nih_studies(tables)
    assert studies["00000013_008"].labels == {"google:Airspace opacity"}  # NIH: No Finding; Google: YES
    assert (studies["00000003_000"].follow_up, studies["00000003_001"].follow_up) == (7, 0)  # order by follow-up
    assert len(studies) == len(ref.reference_states(tables)[["image_id"]].drop_duplicates())
