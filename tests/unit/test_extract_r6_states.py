"""The rules extractor's change classes where a change word states a state, read as
graph/extract/gold/ANNOTATION_GUIDE.md's §6 says (issue 17, sixth round).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

pytest.importorskip("medspacy")

from tests.unit.test_extract_rules import _roundtrip  # noqa: E402


def _changes(tmp_path, text):
    return {(m.finding, m.polarity, m.change) for m in _roundtrip(tmp_path, {"findings": text}).mentions}


@pytest.mark.parametrize("text,expected", [
    ("Mildly increased thoracic kyphosis, unchanged from the prior exam.",
     {("kyphosis", "present", "no change")}),
    ("Increased kyphosis of the thoracic spine, similar to the prior radiograph.",
     {("kyphosis", "present", "no change")}),
    # a comparison of its own makes it a change again
    ("Increased kyphosis of the thoracic spine since the prior radiograph.",
     {("kyphosis", "present", "worsened")}),
], ids=["unchanged-from", "similar-to", "own-comparison"])
def test_the_comparison_of_another_cue_leaves_a_state_word_a_state(tmp_path, text, expected):
    """The guide's §6: "increased kyphosis" is a state unless the sentence compares with a prior; a comparison
    that another cue makes ("similar to the prior") says the state is unchanged."""
    assert _changes(tmp_path, text) == expected
