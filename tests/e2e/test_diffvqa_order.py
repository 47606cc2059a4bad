"""`cxrkg diffvqa check` on a question file made from NIH pairs with k pairs reversed and m pairs of two
patients reports exactly those k and m, and `--out` writes a file that `diffvqa score` against a fresh
`diffvqa generate` scores 1.0 on the difference questions.

The faults are planted by hand in a file generated from the graph of an NIH ChestX-ray14 slice (real
longitudinal labels); the expected counts come from the planting, not from the check's code.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.fixtures.loading import load_into

pytestmark = pytest.mark.network  # the NIH tables come from the torchxrayvision wheel on PyPI

PATIENTS = 30
REVERSED, TWO_PATIENTS = 4, 3
runner = CliRunner()


@pytest.fixture(scope="module")
def nih_folder(tmp_path_factory):
    from graph.datasets.nih.convert import convert_nih

    folder = tmp_path_factory.mktemp("nih")
    convert_nih(folder, limit_patients=PATIENTS)
    return folder


def _planted(gold: pd.DataFrame) -> pd.DataFrame:
    """The gold file with REVERSED difference pairs turned round (with a wrong answer) and TWO_PATIENTS
    difference rows added whose reference is another patient's study."""
    diff = gold.index[gold["question_type"] == "difference"]
    assert len(diff) >= REVERSED + TWO_PATIENTS + 2, len(diff)
    planted = gold.copy()
    turned = diff[:REVERSED]
    planted.loc[turned, ["study_id", "ref_id"]] = planted.loc[turned, ["ref_id", "study_id"]].to_numpy()
    planted.loc[turned, "answer"] = "the main image is missing the finding of hernia than the reference image. "
    foreign = []
    for i in diff[REVERSED:REVERSED + TWO_PATIENTS]:
        row = gold.loc[i].copy()
        other = gold[gold["subject_id"] != row["subject_id"]].iloc[0]
        row["ref_id"] = other["study_id"]
        foreign.append(row)
    return pd.concat([planted, pd.DataFrame(foreign)], ignore_index=True)


def test_check_counts_the_planted_faults_and_out_scores_one_on_difference_questions(store, nih_folder, tmp_path):
    load_into(store, nih_folder)
    gold_path, planted_path, fixed_path = tmp_path / "gold.csv", tmp_path / "planted.csv", tmp_path / "fixed.csv"
    result = runner.invoke(app, ["diffvqa", "generate", "--out", str(gold_path), "--seed", "3"])
    assert result.exit_code == 0, result.output
    gold = pd.read_csv(gold_path, dtype=str, keep_default_na=False)
    _planted(gold).to_csv(planted_path, index=False)

    result = runner.invoke(app, ["diffvqa", "check", str(planted_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    counts = {c["status"]: c["pairs"] for c in found["counts"]}
    assert counts["reversed"] == REVERSED and counts["two patients"] == TWO_PATIENTS, counts
    assert set(counts) == {"in order", "reversed", "two patients"}, counts
    assert found["other_questions"] == int((gold["question_type"] != "difference").sum())
    turned = gold.index[gold["question_type"] == "difference"][:REVERSED]
    assert sorted(r["line"] for r in found["rows"] if r["status"] == "reversed") == [i + 2 for i in turned]

    result = runner.invoke(app, ["diffvqa", "check", str(planted_path), "--out", str(fixed_path)])
    assert result.exit_code == 0, result.output
    listed = [line for line in result.output.splitlines() if re.match(r"│ \d+ +│ reversed", line)]
    assert len(listed) == REVERSED and all(f"│ {i + 2} " in line for i, line in zip(turned, listed, strict=True)), result.output
    assert f"{REVERSED} re-oriented" in result.output and f"two patients {TWO_PATIENTS}" in result.output
    fixed = pd.read_csv(fixed_path, dtype=str, keep_default_na=False)
    assert len(fixed) == len(gold)

    result = runner.invoke(app, ["diffvqa", "score", str(gold_path), str(fixed_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    scores = {r["question_type"]: r for r in json.loads(result.stdout)}
    assert scores["difference"]["n"] == int((gold["question_type"] == "difference").sum())
    for metric in ("bleu1", "meteor", "rouge_l"):
        assert scores["difference"][metric] == pytest.approx(1.0), scores["difference"]

    result = runner.invoke(app, ["diffvqa", "score", str(gold_path), str(planted_path), "--format", "json"])
    assert result.exit_code != 0  # the planted file's foreign pairs have no gold row: the check is what mends it


def test_a_pair_asked_both_ways_and_unmendable_rows_are_counted_and_left_out(store, nih_folder, tmp_path):
    load_into(store, nih_folder)
    gold_path, both_path, fixed_path = tmp_path / "gold.csv", tmp_path / "both.csv", tmp_path / "fixed.csv"
    assert runner.invoke(app, ["diffvqa", "generate", "--out", str(gold_path), "--seed", "3"]).exit_code == 0
    gold = pd.read_csv(gold_path, dtype=str, keep_default_na=False)
    copy = gold[gold["question_type"] == "difference"].iloc[[0]].copy()
    copy[["study_id", "ref_id"]] = copy[["ref_id", "study_id"]].to_numpy()
    unknown, same, subject = (gold[gold["question_type"] == "difference"].iloc[[i]].copy() for i in (1, 2, 3))
    unknown["ref_id"], same["ref_id"], subject["subject_id"] = "99999999_000", same["study_id"], "99999999"
    pd.concat([gold, copy, unknown, same, subject], ignore_index=True).to_csv(both_path, index=False)

    result = runner.invoke(app, ["diffvqa", "check", str(both_path), "--format", "json", "--out", str(fixed_path)])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    counts = {c["status"]: (c["pairs"], c["rows"]) for c in found["counts"]}
    assert counts["reversed"] == (1, 1) and counts["both orders asked"] == (1, 2), counts
    assert counts["study not in the graph"] == counts["same study"] == (1, 1), counts
    assert counts["subject_id not the main study's patient"] == (1, 1), counts
    assert [r["line"] for r in found["rows"] if r["status"] == "reversed"] == [len(gold) + 2]
    fixed = pd.read_csv(fixed_path, dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(fixed, gold)


def test_a_file_without_the_columns_names_the_missing_one(store, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("study_id,subject_id,question\n1,2,what has changed compared to the reference image?\n")
    result = runner.invoke(app, ["diffvqa", "check", str(bad)])
    assert result.exit_code == 1
    assert "bad.csv" in result.output and "ref_id" in result.output
