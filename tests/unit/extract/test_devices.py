"""Device and procedure changes on IU wordings, read as graph/extract/eval/gold/ANNOTATION_GUIDE.md's §6 and §7 say
(issue 17, sixth round): a device placed in the interval is CHAN-DEV-AP.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    # the level's "spinal" form is one name with the fusion: "interval" reaches it over "performance of"
    ("Interval performance of posterior cervical spinal fusion, hardware intact.",
     ("spinal fusion hardware", "present", "new")),
    ("Interval performance of anterior thoracic spinal fusion.", ("spinal fusion hardware", "present", "new")),
    # fixation hardware of a fracture is a device of its own (§7 `other:fracture fixation`)
    ("There is the interval fixation of the left clavicle fracture.", ("fracture fixation", "present", "new")),
    ("Internal fixation hardware of the right humerus is unchanged.",
     ("fracture fixation", "present", "no change")),
], ids=["cervical-fusion", "thoracic-fusion", "fixation-placed", "fixation-unchanged"])
def test_a_procedure_done_in_the_interval_is_a_device_placed(tmp_path, text, expected):
    """The guide's §6 (CHAN-DEV-AP: device placed in the interval) and §7 (post-surgical states are findings)."""
    assert expected in changes_of(tmp_path, text)


def test_spinal_fixation_is_the_fusion_not_a_fracture_fixation(tmp_path):
    """§7: spinal hardware is `other:spinal fusion`."""
    got = {f for f, _, _ in changes_of(tmp_path, "Lower thoracic spinal fixation hardware.")}
    assert "spinal fusion hardware" in got and "fracture fixation" not in got
