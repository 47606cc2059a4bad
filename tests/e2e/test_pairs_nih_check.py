"""``cxrkg export pairs`` from the graph of an NIH ChestX-ray14 slice agrees with the independent check (plain pandas
over the NIH tables, apart from the graph code) on every pair and finding, in three and five classes and
stated only.

The whole cohort is checked by benchmarks/pairs_nih_check.py; this is the same check on the lowest patient
ids, so that a change of the pairs or of the conversion shows here first.
"""

from __future__ import annotations

import pytest

from tests.fixtures.loading import load_into

pytestmark = pytest.mark.network  # the NIH tables come from the torchxrayvision wheel on PyPI

PATIENTS = 40


def test_exported_pairs_match_the_nih_tables_on_every_pair(store, tmp_path):
    from graph.checks.nih.pairs import check_pairs
    from graph.checks.nih.reference import load_tables, reference_states
    from graph.datasets.nih.convert import convert_nih
    from graph.formats.mscxrt import read_pairs
    from graph.temporal.pairs import export_pairs

    convert_nih(tmp_path / "nih", limit_patients=PATIENTS)
    load_into(store, tmp_path / "nih")
    tables = load_tables(limit_patients=PATIENTS)
    states = reference_states(tables)

    for classes, stated_only in ((3, False), (5, False), (3, True)):
        out = tmp_path / f"pairs-{classes}-{stated_only}.csv"
        summary = export_pairs(store, out, classes=classes, stated_only=stated_only)
        result = check_pairs(out, tables, classes, stated_only, states=states)

        assert result.mismatches.empty, (classes, stated_only, result.mismatches.head(10).to_string())
        assert summary.rows == result.pairs > 0 and not summary.left_out
        assert read_pairs(out).rejections == []
        assert {k: v for k, v in summary.labels.items() if v} == result.labels
    assert sum(check_pairs(tmp_path / "pairs-3-False.csv", tables, 3, False, states).labels.values()) >= 20
    # the check sees a changed label and a lost pair
    lines = (tmp_path / "pairs-3-False.csv").read_text().splitlines()
    labelled = next(i for i, line in enumerate(lines) if ",worsening," in line)
    lines[labelled] = lines[labelled].replace(",worsening,", ",stable,", 1)
    del lines[1 if labelled != 1 else 2]
    (tmp_path / "broken.csv").write_text("\n".join(lines) + "\n")
    broken = check_pairs(tmp_path / "broken.csv", tables, 3, False, states).mismatches
    assert broken["problem"].value_counts().to_dict() == {"missing": 5, "progression": 1}, broken.to_string()
    studies = tables.data_entry["Image Index"].nunique()
    patients = tables.data_entry["Patient ID"].nunique()
    assert result.pairs == studies - patients
