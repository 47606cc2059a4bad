"""The rules extractor's change classes on patterns found by auditing unlabelled IU sentences with change cues
against graph/extract/eval/gold/ANNOTATION_GUIDE.md's §6 and §8 (issue 17, sixth round).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

pytest.importorskip("medspacy")

from graph.extract.rules import extract_text  # noqa: E402
from tests.unit.test_extract_rules import changes_of  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("Faint nodular opacities in the left upper zone. These are more prominent than on the prior exam.",
     {("multiple masses/nodules", "present", "worsened")}),
    ("Patchy right basilar opacity is less prominent than on the prior study.",
     {("lung opacity", "present", "improved")}),
    # "prominent" names an enlarged hilum beside a hilum: the finding keeps it, the cue its head
    ("The right hilum is more prominent than on the prior exam.",
     {("enlarged hilum", "present", "worsened")}),
    ("Less prominent left hilum since the previous radiograph.",
     {("enlarged hilum", "present", "improved")}),
], ids=["refer-back", "predicate", "hilum-predicate", "hilum-attributive"])
def test_more_or_less_prominent_is_a_change_cue(tmp_path, text, expected):
    """The guide's §6: "more prominent" is a worsening (and "less prominent" an improvement), also where its
    last word could name an enlarged hilum."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Cardiac XXXX unchanged in position since the last exam.", {("cardiac pacer and wires", "present", "no change")}),
    ("A cardiac XXXX overlies the left chest with its tip in the right ventricle.",
     {("cardiac pacer and wires", "present", None)}),
    # after a side it is a heart border
    ("The right cardiac XXXX is partly obscured by overlying soft tissue.", set()),
], ids=["stable", "tip", "border"])
def test_a_redacted_cardiac_device_is_the_pacemaker(tmp_path, text, expected):
    """The guide's §7: the pacemaker, its generator or its leads are `cardiac pacer and wires`; IU redacts the
    device's name after "cardiac"."""
    assert changes_of(tmp_path, text) == expected


def _refers_back(text, cue):
    """The targets of the no-change entity of ``cue`` (a word that occurs once in ``text``)."""
    doc = extract_text({"findings": text}, "k")["k"]
    ents = doc["entities"]
    return {ents[t]["tokens"] for e in ents.values() if e["label"] == "CHAN-NC" and e["tokens"] == cue
            for _, t in e["relations"]}


@pytest.mark.parametrize("text,cue,expected", [
    ("The cardiomediastinal silhouette is unchanged. The heart remains mildly enlarged.",
     "unchanged", {"enlarged"}),
    ("Stable cardiomegaly since the prior exam. The heart size is unchanged.", "unchanged", {"cardiomegaly"}),
    # the heart called abnormal nowhere, or without a no-change cue of its own: nothing
    ("No effusion. Unchanged cardiomediastinal silhouette.", "Unchanged", set()),
    ("Cardiomegaly. Unchanged cardiomediastinal silhouette.", "Unchanged", set()),
    # a size stated in the stable sentence is its own
    ("Unchanged cardiomegaly. Heart size upper limits of normal but stable.", "stable", set()),
], ids=["remains-enlarged-after", "stable-cardiomegaly-before", "normal-heart", "no-cue-of-its-own", "size-stated"])
def test_a_stable_heart_refers_back_to_the_unchanged_enlarged_heart(text, cue, expected):
    """The guide's §6: a stable heart is a refer-back to the enlarged heart of its report (when that heart is
    called unchanged where it is stated, so that its own sentence keeps its class)."""
    assert _refers_back(text, cue) == expected


@pytest.mark.parametrize("text,expected", [
    ("Chronic left apical scarring, not significantly XXXX from prior.",
     {("pleural/parenchymal scarring", "present", "no change")}),
    ("Coarse interstitial markings in both lungs. This is not significantly XXXX since the last exam.",
     {("increased reticular markings/ild pattern", "present", "no change")}),
], ids=["predicate", "refer-back"])
def test_not_significantly_redacted_is_no_change(tmp_path, text, expected):
    """The guide's §6 (no significant change): IU redacts "changed" after "not significantly"."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Dual-lead pacemaker over the right chest with stable intact XXXX placement.",
     {("cardiac pacer and wires", "present", "no change")}),
    ("An AICD is seen in the right chest wall with unchanged placement.",
     {("cardiac pacer and wires", "present", "no change")}),
], ids=["intact", "placement"])
def test_a_stable_placement_after_a_device_is_the_devices(tmp_path, text, expected):
    """The guide's §7: "stable position of the pacemaker" is the device's no change, also where the place comes
    after the device ("with stable intact lead placement")."""
    assert changes_of(tmp_path, text) == expected
