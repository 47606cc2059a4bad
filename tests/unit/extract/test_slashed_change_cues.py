"""Two change cues joined by a slash (the annotation guide's §9a): the one that states a change wins over
"stable" / "unchanged"; two of opposite direction state none. Sentences are made up for these tests."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from tests.fixtures.radgraph_schema import found


@pytest.mark.parametrize("text,expected", [
    ("Left pleural effusion, stable/improved.", {("pleural effusion", "present", "left", "CHAN-CON-IMP")}),
    ("Bibasilar atelectasis, unchanged/slightly decreased.", {("atelectasis", "present", "bilateral", "CHAN-CON-IMP")}),
    ("Right pleural effusion, increased/unchanged.", {("pleural effusion", "present", "right", "CHAN-CON-WOR")}),
    ("Left basilar atelectasis, increased/decreased.", {("atelectasis", "present", "left", None)}),
], ids=["stable-improved", "unchanged-slightly-decreased", "increased-unchanged", "opposite-directions"])
def test_a_slashed_pair_states_the_change(text, expected):
    assert found(text) == expected


def test_a_single_cue_is_read_as_before():
    assert found("Left pleural effusion, stable.") == {("pleural effusion", "present", "left", "CHAN-NC")}
