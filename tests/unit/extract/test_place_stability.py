"""Stability stated about a place or about the whole chest (the annotation guide's §9a): a place refers back to
the findings earlier in the report at that place; the whole chest and a normal structure name none. Sentences
are made up for these tests."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from tests.fixtures.radgraph_schema import found


def test_a_stable_place_refers_back_to_its_findings():
    assert found("Left basilar atelectasis. The left base is unchanged.") == {
        ("atelectasis", "present", "left", "CHAN-NC")}


@pytest.mark.parametrize("text,expected", [
    ("Right basilar atelectasis. The left base is unchanged.", {("atelectasis", "present", "right", None)}),
    ("Left basilar atelectasis. The chest is unchanged.", {("atelectasis", "present", "left", None)}),
    ("Status post CABG. The mediastinal silhouette is stable.", {("cabg grafts", "present", None, None)}),
], ids=["other-place", "whole-chest", "normal-structure"])
def test_no_finding_at_the_place_is_no_change(text, expected):
    assert found(text) == expected


def test_a_place_that_is_not_the_subject_refers_back_to_nothing():
    assert found("Mild degenerative changes of the thoracic spine. The XXXX deformity in the thoracic spine is "
                 "again seen.") == {("spinal degenerative changes", "present", None, None)}
