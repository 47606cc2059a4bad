"""A device's change of position stated with a verb of motion or a place "now" held (the annotation guide's §9a):
CHAN-DEV-PLACE; a projection without a comparison states a position, not a change. Sentences are made up."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from tests.fixtures.radgraph_schema import found


@pytest.mark.parametrize("text,expected", [
    ("The ET tube tip has moved superiorly.", {("endotracheal tube", "present", None, "CHAN-DEV-PLACE")}),
    ("The right IJ catheter tip now projects over the right atrium.", {("ij line", "present", "right", "CHAN-DEV-PLACE")}),
    ("The enteric tube now terminates in the stomach.", {("enteric tube", "present", None, "CHAN-DEV-PLACE")}),
], ids=["has-moved", "now-projects", "now-terminates"])
def test_motion_of_a_device_is_a_change_of_its_place(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The right IJ catheter tip projects over the SVC.", {("ij line", "present", "right", None)}),
    ("The left PICC is unchanged in position.", {("picc", "present", "left", "CHAN-NC")}),
], ids=["projects-no-comparison", "unchanged-in-position"])
def test_a_position_without_motion_is_no_change_of_place(text, expected):
    assert found(text) == expected
