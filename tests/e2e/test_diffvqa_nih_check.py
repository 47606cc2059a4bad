"""Medical-Diff-VQA questions generated from the graph of an NIH ChestX-ray14 slice agree with the independent
check (plain pandas over the NIH tables, apart from the graph code) on every difference and abnormality answer.

The whole cohort is checked by benchmarks/diffvqa_nih_check.py; this is the same check on the lowest patient
ids, so that a change of the graph's answers or of the conversion shows here first.
"""

from __future__ import annotations

import pytest

from tests.fixtures.loading import load_into

pytestmark = pytest.mark.network  # the NIH tables come from the torchxrayvision wheel on PyPI

PATIENTS = 120


def test_generated_difference_and_abnormality_answers_match_the_nih_tables(store, tmp_path):
    from graph.checks.nih.diffvqa import check_answers
    from graph.checks.nih.reference import load_tables
    from graph.datasets.nih.convert import convert_nih
    from graph.questions.generate import generate

    convert_nih(tmp_path / "nih", limit_patients=PATIENTS)
    load_into(store, tmp_path / "nih")
    questions = generate(store, seed=11)

    result = check_answers(questions, load_tables(limit_patients=PATIENTS))

    checked_types = set(questions.loc[questions["question_type"].isin(["difference", "abnormality"]), "question_type"])
    assert checked_types == {"difference", "abnormality"}
    assert result.pairs_checked >= 100, result
    assert result.questions_checked >= result.pairs_checked
    assert result.mismatches.empty, result.mismatches.head(10).to_string()
