"""The rules extractor on wordings of the third development set's kind (issue 17, fourth round: finding recall,
precision and assertion accuracy on sentences the rules were never tuned on).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

pytest.importorskip("medspacy")

from tests.unit.test_extract_rules import _found  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("Patchy alveolar opacities at both lung bases.", {("airspace opacity", "present")}),
    ("A right-sided Mediport catheter is seen.", {("chest port", "present")}),
    ("A left pleural drainage catheter is unchanged.", {("chest tube", "present")}),
    ("Overlying monitoring devices.", {("support devices", "present")}),
], ids=["alveolar-opacities", "mediport-catheter", "pleural-drainage-catheter", "monitoring-devices"])
def test_vocabulary_2026_11_26_3(tmp_path, text, expected):
    """Wordings vocabulary 2026.11.26.3 reads: alveolar opacities are airspace opacities (the annotation guide's
    §2), a Mediport catheter one chest port (not also a bare catheter's support devices), a pleural drainage
    catheter a chest tube and monitoring devices support devices (§7)."""
    assert _found(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Sternotomy wires and surgical clips consistent with prior CABG.",
     {("sternotomy wires", "present"), ("cabg grafts", "present")}),
    ("Median sternotomy wires, CABG clips.", {("sternotomy wires", "present"), ("cabg grafts", "present")}),
    ("Coronary bypass clips are unchanged.", {("cabg grafts", "present")}),
    ("Surgical clips in the right axilla.", {("surgical clips", "present")}),
], ids=["clips-consistent-with-cabg", "cabg-clips", "coronary-bypass-clips", "axillary-clips"])
def test_clips_of_a_bypass_graft(tmp_path, text, expected):
    """Surgical clips said to be a bypass graft's are the graft's markers, no finding of their own (the annotation
    guide's §7: `other:surgical clips` are clips not said to be CABG's)."""
    assert _found(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("No suspicious bony opacities.", {("bone lesion", "absent")}),
    ("A bony opacity overlies the right upper lung.", set()),
    ("Patchy opacities in the left lung base.", {("lung opacity", "present")}),
], ids=["bony-opacities", "bony-opacity", "lung-opacities"])
def test_bony_opacity_is_no_lung_opacity(tmp_path, text, expected):
    """An opacity of a bone is no lung opacity, as a bone density is none (the annotation guide's §2); a suspicious
    one is a bone lesion (vocabulary 2026.11.26.4)."""
    assert _found(tmp_path, text) == expected
