"""Heart size stated normal together with a change against the prior (the annotation guide's §9a): a heart now
normal after a decrease is an enlargement resolved; normal and increased, or normal and stable, is no change.
Sentences are made up for these tests."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extract

from tests.fixtures.radgraph_schema import found

ENLARGED = "enlarged cardiac silhouette"


@pytest.mark.parametrize("text", [
    "Heart size is normal, decreased from the prior.",
    "Heart size appears normal, improved from the prior study.",
], ids=["decreased", "improved"])
def test_a_heart_now_normal_after_a_decrease_is_a_resolved_enlargement(text):
    assert found(text) == {(ENLARGED, "absent", None, "CHAN-CON-RES")}


@pytest.mark.parametrize("text", [
    "Heart size normal, slightly increased since the prior.",
    "Heart size is normal and stable.",
    "Heart size is normal, decreased lung volumes.",
], ids=["increased", "stable", "no-comparison"])
def test_other_changes_of_a_normal_heart_are_none(text):
    assert (ENLARGED, "absent", None, None) in found(text)
    assert not any(f[0] == ENLARGED and f[3] for f in found(text))
