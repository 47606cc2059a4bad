"""The independent check of ``cxrkg export pairs`` (graph.checks.nih.pairs) on hand-made NIH tables (synthetic rows in
the tables' columns; no Neo4j, no wheel): the labels it expects, a right file passes, and each kind of fault is
found."""

from __future__ import annotations

import pandas as pd

from graph.checks.nih.pairs import check_pairs, expected_pairs
from graph.datasets.nih.tables import BBOX_COLUMNS, GOOGLE_COLUMNS, NIHTables

P = "90000001"
IDS = "dicom_id,previous_dicom_id,study_id,previous_study_id,subject_id"


def _tables():
    # effusion: absent (No Finding), present, present, not mentioned (an Atelectasis image), absent
    rows = [("No Finding", "0"), ("Effusion", "1"), ("Effusion|Edema", "2"), ("Atelectasis", "3"), ("No Finding", "4")]
    entry = pd.DataFrame([{"Image Index": f"{P}_00{fu}.png", "Finding Labels": labels, "Follow-up #": fu,
                           "Patient ID": P, "Patient Age": "50", "Patient Gender": "F", "View Position": "PA"}
                          for labels, fu in rows])
    return NIHTables(entry, pd.DataFrame(columns=list(BBOX_COLUMNS)), pd.DataFrame(columns=list(GOOGLE_COLUMNS)))


def test_the_labels_the_tables_give():
    want = expected_pairs(_tables(), classes=5)
    effusion = want[want["finding"] == "pleural_effusion"]
    assert effusion["progression"].tolist() == ["new", "stable", "", ""]  # onset, persistence, no longer mentioned
    edema = want[want["finding"] == "edema"]
    assert edema["progression"].tolist() == ["", "new", "", ""] and set(want["finding"]) == {
        "consolidation", "edema", "pleural_effusion", "pneumonia", "pneumothorax"}
    assert set(effusion.loc[effusion["progression"] != "", "label_source"]) == {"presence"}
    assert expected_pairs(_tables(), 3)["progression"].value_counts().to_dict() == {"": 17, "worsening": 2, "stable": 1}
    assert set(expected_pairs(_tables(), 3, stated_only=True)["progression"]) == {""}


def _file(path, cells: dict[int, tuple[str, str, str]], drop: int | None = None):
    """The export's file of the five pairs but ``drop``: pleural effusion's (label, source, basis) by later follow-up."""
    head = IDS + "," + ",".join(f"{f}_progression,{f}_label_source,{f}_label_basis" for f in
                                ("consolidation", "edema", "pleural_effusion", "pneumonia", "pneumothorax"))
    lines = [head]
    for fu in range(1, 5):
        if fu == drop:
            continue
        edema = ("worsening", "presence", "derived") if fu == 2 else ("", "", "")
        effusion = cells.get(fu, ("", "", ""))
        lines.append(f"{P}_00{fu},{P}_00{fu - 1},{P}_00{fu},{P}_00{fu - 1},{P},,,," + ",".join(edema) + ","
                     + ",".join(effusion) + ",,,,,,")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_right_file_passes_and_faults_are_found(tmp_path):
    right = {1: ("worsening", "presence", "derived"), 2: ("stable", "presence", "derived")}
    result = check_pairs(_file(tmp_path / "ok.csv", right), _tables())
    assert result.mismatches.empty, result.mismatches.to_string()
    assert result.pairs == 4 and result.labels == {"worsening": 2, "stable": 1}

    wrong = {1: ("stable", "presence", "stated"), 2: ("stable", "presence", "derived"), 4: ("improving", "presence", "derived")}
    bad = check_pairs(_file(tmp_path / "bad.csv", wrong, drop=3), _tables()).mismatches
    assert sorted(bad["problem"].tolist()) == ["label_basis", "label_basis", "label_source", "missing", "missing",
                                               "missing", "missing", "missing", "progression", "progression"]
