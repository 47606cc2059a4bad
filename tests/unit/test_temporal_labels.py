"""The one mapping of the graph's change words to CheXTemporal's five and MS-CXR-T's three classes, and the pair
rules of ``cxrkg export pairs`` over hand-made rows of the store's query (no Neo4j)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest

from graph.temporal import labels
from graph.temporal.labels import Classes, label, to_three
from graph.temporal.pairs import (
    DISAGREE,
    NO_IMAGE,
    OTHER_PATIENT,
    REVERSED,
    SAME_DATE,
    SEVERAL_NEXT,
    SEVERAL_PRIORS,
    UNDATED,
    PairsSummary,
    UnknownFinding,
    build_rows,
    finding_label,
    pick_image,
    resolve_findings,
)
from graph.terms import Change


@pytest.mark.parametrize("change, five, three", [
    ("new", "new", "worsening"), ("worsened", "worsened", "worsening"), ("no change", "stable", "stable"),
    ("persistent", "stable", "stable"), ("improved", "improved", "improving"), ("resolved", "resolved", "improving"),
])
def test_every_labelled_word_in_both_sets(change, five, three):
    assert label(change, 5) == five and label(change, Classes.FIVE) == five
    assert label(change, 3) == three and to_three(five) == three


def test_words_without_a_label_and_unknown_ones():
    assert label("no longer mentioned", 5) is None and label(Change.REPOSITIONED, 3) is None
    with pytest.raises(ValueError, match="'better'"):
        label("better", 3)
    with pytest.raises(ValueError):
        label("new", 4)
    with pytest.raises(ValueError):
        to_three("worsening")


def test_every_change_word_of_the_schema_is_decided():
    from graph.schema import load_schema

    words = load_schema().relationships["PROGRESSION"].properties["change"].values
    for word in words:
        assert word in labels.UNLABELLED or label(word, 5) in labels.FIVE, word
    assert labels.THREE == ("worsening", "stable", "improving") and Classes(3).names == labels.THREE


def test_the_image_is_the_first_frontal_one_else_the_first():
    assert pick_image([["b", "PA"], ["a", "LATERAL"], ["c", "AP"]]) == "b"
    assert pick_image([["b", "LL"], ["a", "LATERAL"]]) == "a"
    assert pick_image([]) is None


def test_stated_first_then_derived_and_disagreement():
    seen: Counter = Counter()
    stated = [["f", "worsened", "stated", "chest_imagenome"], ["f", "new", "stated", "radgraph"]]
    derived = [["f", "persistent", "derived", "presence"]]
    assert finding_label(stated + derived, Classes.THREE, False, seen) == ("worsening", "chest_imagenome|radgraph",
                                                                           "stated")
    assert finding_label(stated + derived, Classes.FIVE, False, seen) == ("", "", "")
    assert seen == {DISAGREE: 1}
    assert finding_label(derived, Classes.FIVE, False, seen) == ("stable", "presence", "derived")
    assert finding_label(derived, Classes.FIVE, True, seen) == ("", "", "")
    assert finding_label([["f", "no longer mentioned", "derived", "presence"]], Classes.THREE, False, seen) == ("", "", "")
    assert seen["no longer mentioned"] == 1


def _fact(study, prior, when, before, patient="1", prior_patient="1", changes=()):
    return {"study_id": study, "prior_id": prior, "patient_id": patient, "prior_patient_id": prior_patient,
            "study_datetime": when, "prior_datetime": before, "images": [[f"i{study}", "PA"]],
            "prior_images": [[f"i{prior}", "PA"]], "changes": list(changes)}


def test_pairs_in_doubt_are_left_out_by_reason():
    d = [datetime(2150, 1, n) for n in range(1, 10)]
    facts = [
        _fact("s2", "s1", d[1], d[0], changes=[["pleural effusion", "new", "derived", "presence"]]),
        _fact("u2", "u1", None, d[0], patient="2", prior_patient="2"),
        _fact("t2", "t1", d[0], d[0], patient="3", prior_patient="3"),
        _fact("r2", "r1", d[0], d[1], patient="4", prior_patient="4"),
        _fact("o2", "o1", d[1], d[0], patient="5", prior_patient="6"),
        _fact("m3", "m1", d[2], d[0], patient="7", prior_patient="7"),
        _fact("m3", "m2", d[2], d[1], patient="7", prior_patient="7"),
        _fact("n2", "n1", d[1], d[0], patient="8", prior_patient="8"),
        _fact("n3", "n1", d[2], d[0], patient="8", prior_patient="8"),
        {**_fact("x2", "x1", d[1], d[0], patient="9", prior_patient="9"), "prior_images": []},
    ]
    summary = PairsSummary()
    rows = build_rows(facts, {"pleural_effusion": "pleural effusion"}, Classes.THREE, False, summary)
    assert rows == [["is2", "is1", "s2", "s1", "1", "worsening", "presence", "derived"]]
    assert summary.left_out == {UNDATED: 1, SAME_DATE: 1, REVERSED: 1, OTHER_PATIENT: 1, SEVERAL_PRIORS: 2,
                                SEVERAL_NEXT: 2, NO_IMAGE: 1}
    assert summary.rows == 1 and summary.labels == {"worsening": 1}


def test_findings_by_mscxrt_name_or_vocabulary_name():
    vocab = ["pleural effusion", "atelectasis", "pulmonary edema/hazy opacity"]
    assert list(resolve_findings(None, vocab)) == ["consolidation", "edema", "pleural_effusion", "pneumonia",
                                                   "pneumothorax"]
    assert resolve_findings(["edema", "atelectasis", "pleural effusion"], vocab) == {
        "edema": "pulmonary edema/hazy opacity", "atelectasis": "atelectasis", "pleural_effusion": "pleural effusion"}
    with pytest.raises(UnknownFinding, match="atelectasi.*close: atelectasis"):
        resolve_findings(["atelectasi"], vocab)
    with pytest.raises(UnknownFinding, match="no finding named"):
        resolve_findings([" "], vocab)
