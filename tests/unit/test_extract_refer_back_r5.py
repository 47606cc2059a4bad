"""Refer-backs on IU wordings, read as graph/extract/gold/ANNOTATION_GUIDE.md's §8 says (issue 17, fifth
round): a sentence whose subject is an anaphor is labelled with the findings it refers to, with their side and
what it says about them.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

pytest.importorskip("medspacy")

from tests.unit.test_extract_rules import _sided  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    # the sentence between states nothing: the reading is of the opacity before it
    ("Patchy opacity in the left upper lobe. Please correlate with symptoms. Findings may reflect pneumonia.", {("lung opacity", "left", "present", None), ("pneumonia", "left", "uncertain", None)}),
    # the sign with a side, not the side-less state beside it
    ("Hypoinflated lungs with streaky airspace disease at the right base. It may represent pneumonia.",
     {("low lung volumes", None, "present", None), ("airspace opacity", "right", "present", None),
      ("pneumonia", "right", "uncertain", None)}),
], ids=["skips-a-sentence-that-states-nothing", "sided-sign-first"])
def test_a_reading_that_points_back_takes_the_side_of_the_sign_it_reads(tmp_path, text, expected):
    """The guide's §5 and §8: a reading takes the side of the sign it reads, found as a refer-back finds it."""
    assert _sided(tmp_path, text) == expected
