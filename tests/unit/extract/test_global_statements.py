"""Global statements of no acute abnormality (the annotation guide's §4 and §9a) name no finding, also when they
close a report that names chronic findings. Sentences are made up for these tests."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from tests.fixtures.radgraph_schema import found


@pytest.mark.parametrize("text", [
    "No acute cardiopulmonary abnormality.",
    "No acute findings in the chest.",
    "No evidence of active disease.",
    "No acute disease.",
], ids=["cardiopulmonary", "findings-in-chest", "active-disease", "acute-disease"])
def test_a_global_statement_names_no_finding(text):
    assert found(text, "impression") == set()


def test_a_global_statement_after_chronic_findings_leaves_them_as_they_are():
    assert found("Stable left basilar scarring. No acute cardiopulmonary abnormality.", "impression") == {
        ("pleural/parenchymal scarring", "present", "left", "CHAN-NC")}
