"""CXRTrek-format stages 2, 5 and 6 written from the graph of an NIH ChestX-ray14 slice agree with the
independent check (plain pandas over the NIH tables, apart from the graph code) on every study.

The whole cohort is checked by benchmarks/cxrtrek_nih_check.py; this is the same check on the lowest patient
ids, so that a change of the graph's answers or of the conversion shows here first.
"""

from __future__ import annotations

import pytest

from tests.fixtures.loading import load_into

pytestmark = pytest.mark.network  # the NIH tables come from the torchxrayvision wheel on PyPI

PATIENTS = 40


def test_generated_stages_2_5_6_match_the_nih_tables_on_every_study(store, tmp_path):
    from graph.checks.nih.cxrtrek import check_samples, read_file
    from graph.checks.nih.reference import load_tables
    from graph.formats.cxrtrek import read_samples
    from graph.cxrtrek.generate import generate
    from graph.datasets.nih.convert import convert_nih

    convert_nih(tmp_path / "nih", limit_patients=PATIENTS)
    load_into(store, tmp_path / "nih")
    summary = generate(store, tmp_path / "q.json", seed=11)
    tables = load_tables(limit_patients=PATIENTS)

    result = check_samples(read_file(tmp_path / "q.json"), tables)

    studies = tables.data_entry["Image Index"].nunique()
    assert summary.samples == result.samples == studies, (summary, studies)
    assert read_samples(tmp_path / "q.json").rejections == []
    assert result.checked["presence"] >= 5 * studies, result.checked
    assert min(result.checked["change"], result.checked["next_choice"], result.checked["next_yes_no"]) >= 20, result
    assert result.mismatches.empty, (result.checked, result.mismatches.head(10).to_string())
