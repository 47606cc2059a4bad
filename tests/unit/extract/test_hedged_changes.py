"""A hedge over a change (the annotation guide's §9a): "possibly increased effusion" doubts the increase, not the
effusion, which stays present with the hedged change. Sentences are made up for these tests."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from tests.fixtures.radgraph_schema import found


@pytest.mark.parametrize("text,expected", [
    ("Possibly slightly increased left pleural effusion.", {("pleural effusion", "present", "left", "CHAN-CON-WOR")}),
    ("Probably mildly decreased right basilar atelectasis.", {("atelectasis", "present", "right", "CHAN-CON-IMP")}),
    ("Left pleural effusion may be minimally improved.", {("pleural effusion", "present", "left", "CHAN-CON-IMP")}),
], ids=["possibly-increased", "probably-decreased", "may-be-improved"])
def test_the_hedge_is_the_changes(text, expected):
    assert found(text) == expected


def test_a_hedge_over_the_finding_still_makes_it_uncertain():
    assert found("Possibly a small left pleural effusion.") == {("pleural effusion", "uncertain", "left", None)}
