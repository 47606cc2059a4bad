"""The rules extractor's change classes and sides on IU wordings (issue 17, fourth round): refer-backs, change
cues and the places of findings, read as graph/extract/eval/gold/ANNOTATION_GUIDE.md's §5, §6 and §8 say; with the wordings of the
development set iu_sentences_3.json.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of, roundtrip

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("Bilateral pulmonary nodules. These were not present on the prior study and may represent infection.",
     {("multiple masses/nodules", "present", "new"), ("pneumonia", "uncertain", None)}),
    ("Multiple bilateral pulmonary nodules. These are increased from the prior radiograph, with the largest in "
     "the left base.", {("multiple masses/nodules", "present", "worsened")}),
    # a cue that describes the finding after it is not the anaphor's
    ("Small left pleural effusion. This is new right basilar atelectasis.",
     {("pleural effusion", "present", None), ("atelectasis", "present", "new")}),
    # a reading after the cue ("likely represents") is not what the cue describes
    ("Right lower lobe opacity. This is unchanged in appearance and likely represents scarring.",
     {("lung opacity", "present", "no change"), ("pleural/parenchymal scarring", "uncertain", None)}),
], ids=["reading-after-the-cue", "place-after-the-cue", "attributive-cue", "close-reading"])
def test_an_anaphor_that_opens_its_sentence_refers_back(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Small left pleural effusion, without significant change.", {("pleural effusion", "present", "no change")}),
    ("Left basilar atelectasis. This is without interval change.", {("atelectasis", "present", "no change")}),
], ids=["after-the-finding", "refer-back"])
def test_without_change_is_no_change(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Left-sided pacemaker. No interval change in the position.",
     {("cardiac pacer and wires", "present", "no change")}),
    # a change of position speaks of the devices of the sentence before, not of its other findings
    ("Right PICC and a small left effusion. No change in position.",
     {("picc", "present", "no change"), ("pleural effusion", "present", None)}),
], ids=["device", "devices-only"])
def test_a_change_of_position_refers_back_to_devices(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Right upper lobe opacity, recommend follow-up radiograph to document resolution.",
     {("lung opacity", "present", None)}),
    ("Left basilar consolidation, follow-up is advised to ensure clearing.", {("consolidation", "present", None)}),
    ("Right upper lobe opacity, which has resolved.", {("lung opacity", "absent", "resolved")}),
], ids=["document-resolution", "ensure-clearing", "resolved"])
def test_a_recommended_resolution_is_no_change(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


def _places(tmp_path, text):
    return {(m.finding, m.anatomy, m.side) for m in roundtrip(tmp_path, {"findings": text}).mentions}


@pytest.mark.parametrize("text,expected", [
    ("Right internal jugular central venous catheter with its tip over the right atrium.",
     {("ij line", "svc", "right")}),
    ("Left PICC with the tip in the right atrium.", {("picc", "svc", "left")}),
], ids=["ij-right", "picc-left"])
def test_a_device_is_not_at_the_heart_chamber_of_its_tip(tmp_path, text, expected):
    assert _places(tmp_path, text) == expected


def _sides(tmp_path, text):
    return {(m.finding, m.side) for m in roundtrip(tmp_path, {"findings": text}).mentions}


@pytest.mark.parametrize("text,expected", [
    ("Vague right upper/mid lung densities versus scarring.",
     {("lung opacity", "right"), ("pleural/parenchymal scarring", "right")}),
    ("Right mid lung opacity.", {("lung opacity", "right")}),
], ids=["zone-words-and-a-reading", "adjacent"])
def test_a_side_before_a_place_sides_all_that_is_there(tmp_path, text, expected):
    assert _sides(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Cholecystectomy clips are noted in the right upper quadrant.", {("surgical clips", "right")}),
    ("Nodular opacity in the right midlung. This may be artifact.",
     {("mass/nodule (not otherwise specified)", "right"), ("artifact", "right")}),
    ("Surgical clips in the lower neck.", {("surgical clips", None)}),
], ids=["side-after", "refer-back", "no-side"])
def test_a_finding_anywhere_in_the_chest_takes_the_side_of_its_sentence(tmp_path, text, expected):
    assert _sides(tmp_path, text) == expected


def test_a_finding_placed_by_a_coordinated_one_shares_its_whole_place(tmp_path):
    # the nearest place phrase ("pulmonary") is one of the opacities' places: the atelectasis takes all of them
    assert _sides(tmp_path, "Bibasilar and right midlung pulmonary opacities, possibly atelectatic changes.") == {
        ("lung opacity", "bilateral"), ("atelectasis", "bilateral")}


@pytest.mark.parametrize("text,expected", [
    ("At the right lung apex there is a focal lucency. This could indicate cavitation.", {("lung lesion", "right")}),
    ("Lobulated contour of the right paratracheal stripe. This may represent an enlarged lymph node and could be "
     "evaluated further with chest CT.", {("enlarged hilum", "right")}),
], ids=["lucency", "contour-and-chest-ct"])
def test_a_reading_of_a_sign_that_is_no_finding_takes_its_place(tmp_path, text, expected):
    assert _sides(tmp_path, text) == expected


def test_chest_ct_is_no_place(tmp_path):
    places = _places(tmp_path, "Small pulmonary nodule, which could be evaluated with chest CT.")
    assert places and all(anatomy != "chest" for _, anatomy, _ in places)


@pytest.mark.parametrize("text,expected", [
    ("Calcified granuloma in the right lung base. This was seen well on prior exam.",
     {("calcified nodule", "present", "no change")}),
    ("Left basilar atelectasis, also identified on the comparison study.", {("atelectasis", "present", "no change")}),
    # not seen there: new, and not negated
    ("Small left lung nodule, not visualized on the previous study.",
     {("mass/nodule (not otherwise specified)", "present", "new")}),
], ids=["seen-well", "also-identified", "not-visualized"])
def test_seen_on_the_prior_study_with_other_verbs_and_adverbs(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Left chest wall pacemaker. Correlate clinically. This is without significant change.",
     {("cardiac pacer and wires", "present", "no change")}),
    # a sentence that names a place may hold a finding the extractor does not know: the anaphor stops there
    ("Left chest wall pacemaker. Multiple pleural plaques along the right hemithorax. These are unchanged.",
     {("cardiac pacer and wires", "present", None)}),
], ids=["over-a-recommendation", "not-over-a-place"])
def test_an_anaphor_reaches_back_over_sentences_that_state_nothing(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


def _anatomies(tmp_path, text):
    return {(m.finding, m.anatomy) for m in roundtrip(tmp_path, {"findings": text}).mentions}


@pytest.mark.parametrize("text,expected", [
    ("Atelectasis at the left lung base and in the right upper lobe.",
     {("atelectasis", "left lower lung zone"), ("atelectasis", "right upper lung zone")}),
    ("Surgical clips are identified in the right neck and left mediastinum.",
     {("surgical clips", "neck"), ("surgical clips", "mediastinum")}),
], ids=["two-lobes", "neck-and-mediastinum"])
def test_coordinated_places_are_all_the_findings_places(tmp_path, text, expected):
    assert _anatomies(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # the clause after the comma has its own subject, a normal structure called stable (the guide's §6)
    ("Given patient rotation, heart size and mediastinal contours are grossly unchanged.",
     {("rotated", "present", None)}),
    # a clause without a subject of its own speaks of the finding before the comma
    ("Small left pleural effusion, unchanged.", {("pleural effusion", "present", "no change")}),
], ids=["own-subject", "no-subject"])
def test_a_predicative_cue_speaks_of_its_clauses_subject(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


def test_a_finding_shown_to_change_is_no_hypothetical(tmp_path):
    # "demonstrate" reports what the films show ("Radiographs demonstrate ..."), not what a follow-up should
    assert changes_of(tmp_path, "Frontal and lateral radiographs demonstrate new right basilar consolidation.") == {
        ("consolidation", "present", "new")}


@pytest.mark.parametrize("report,change", [
    # a bare no-change cue speaks of the whole study (the guide's §6: "no interval change", "unchanged") ...
    ({"findings": "Small left pleural effusion. No interval change."}, None),
    ({"findings": "Small left pleural effusion.", "impression": "Unchanged."}, None),
    # ... a bare change of direction has a finding for its elided subject, and an anaphor refers back
    ({"findings": "Small left pleural effusion. Slightly increased since the prior study."}, "worsened"),
    ({"findings": "Small left pleural effusion. This is unchanged."}, "no change"),
], ids=["no-interval-change", "impression-unchanged", "increased", "anaphor"])
def test_a_bare_no_change_cue_is_the_whole_study(tmp_path, report, change):
    assert {(m.finding, m.change) for m in roundtrip(tmp_path, report).mentions} == {("pleural effusion", change)}


@pytest.mark.parametrize("text,expected", [
    # the guide's §6: "lung volumes are decreased" is a state, the finding present without a change
    ("Lung volumes are decreased.", {("low lung volumes", "present", None)}),
    ("The lung volumes are mildly reduced.", {("low lung volumes", "present", None)}),
    ("Lung volumes are decreased compared to the prior study.", {("low lung volumes", "present", "worsened")}),
    ("Lung volumes are increased.", set()),
], ids=["decreased", "reduced", "compared", "increased"])
def test_lung_volumes_called_less_are_low(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


# --- wordings of the development set iu_sentences_3.json: the prior study seen or not, cues over lists,
# sides of readings and joined zones

@pytest.mark.parametrize("text,expected", [
    ("Right upper lobe opacity, not well seen on the prior study, may represent pneumonia.",
     {("lung opacity", "present", "new"), ("pneumonia", "uncertain", None)}),
    ("Small left pleural effusion, not clearly seen on prior.", {("pleural effusion", "present", "new")}),
    ("Small left pleural effusion, well seen on the previous study.",
     {("pleural effusion", "present", "no change")}),
    ("Left basilar atelectasis. This was present previously.", {("atelectasis", "present", "no change")}),
    ("Small left pleural effusion, not seen previously.", {("pleural effusion", "present", "new")}),
], ids=["not-well-seen", "not-clearly-seen", "well-seen", "present-previously", "not-seen-previously"])
def test_seen_on_the_prior_with_an_adverb_before_the_verb(tmp_path, text, expected):
    """The guide's §6: "seen / present on the prior study" is no change, "not seen on the prior study" new,
    also with the adverb before the verb and with "previously" for the prior study."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The mediastinal contours are normal with unchanged atherosclerosis and tortuosity of the aorta.",
     {("mediastinal widening", "absent", None), ("vascular calcification", "present", "no change"),
      ("tortuous aorta", "present", "no change")}),
    ("Since the prior study there has been removal of the central line and enteric tube.",
     {("ij line", "absent", "resolved"), ("enteric tube", "absent", "resolved")}),
    # another cue or an absence ends the list
    ("Heart size is normal with new right atelectasis and stable left effusion.",
     {("enlarged cardiac silhouette", "absent", None), ("atelectasis", "present", "new"),
      ("pleural effusion", "present", "no change")}),
], ids=["no-change", "removal", "next-cue"])
def test_a_cue_before_a_list_applies_to_the_list(tmp_path, text, expected):
    """The guide's §6: a cue that opens a list of findings applies to the list, also where the list does not
    open its sentence."""
    assert changes_of(tmp_path, text) == expected


def _sides_with_polarity(tmp_path, text):
    return {(m.finding, m.polarity, m.side) for m in roundtrip(tmp_path, {"findings": text}).mentions}


@pytest.mark.parametrize("text,expected", [
    ("Opacification of the left upper lobe suggestive of hilar mass.",
     {("lung opacity", "present", "left"), ("mass/nodule (not otherwise specified)", "uncertain", "left")}),
    # a reading with a side of its own keeps it
    ("Right lower lobe opacity which may represent atelectasis in the left base.",
     {("lung opacity", "present", "right"), ("atelectasis", "uncertain", "left")}),
], ids=["hilar", "own-side"])
def test_a_reading_without_a_side_takes_the_side_of_its_sign(tmp_path, text, expected):
    """The guide's §5: a reading takes the side of the sign it reads, also where the reading names a place
    of either side ("hilar")."""
    assert _sides_with_polarity(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("There is scarring in the right mid and upper lung zone with surgical clips.",
     {("pleural/parenchymal scarring", "present", "right"), ("surgical clips", "present", "right")}),
    ("Calcified granulomas are seen in the left mid to lower lung.", {("calcified nodule", "present", "left")}),
], ids=["and", "to"])
def test_a_side_before_joined_zones_sides_the_place(tmp_path, text, expected):
    """The guide's §5: the side the sentence states for the findings' location, also before two zones that
    "and" / "to" join."""
    assert _sides_with_polarity(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # the device is left, its leads state no side
    ("There is a cardiac pacemaker overlying the left chest wall with leads in the right heart.",
     {("cardiac pacer and wires", "present", "left"), ("cardiac pacer and wires", "present", None)}),
    ("Pacemaker leads terminate in the right heart.", {("cardiac pacer and wires", "present", None)}),
], ids=["left-device", "leads-only"])
def test_the_right_heart_is_no_side_of_a_device(tmp_path, text, expected):
    """The guide's §5: sides naming heart chambers are no laterality ("leads ending in the right atrium and
    right ventricle"); "the right heart" names the right chambers."""
    assert _sides_with_polarity(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The heart is again enlarged.", {("enlarged cardiac silhouette", "present", "no change")}),
    ("Small bilateral pleural effusions are again present.", {("pleural effusion", "present", "no change")}),
], ids=["is-again", "are-again"])
def test_a_finding_that_is_again_so_is_unchanged(tmp_path, text, expected):
    """The guide's §6: "again seen / noted" is no change, and so is a finding that "is again" what it was."""
    assert changes_of(tmp_path, text) == expected


def test_a_reading_of_the_appearance_takes_the_place_of_the_sign_before(tmp_path):
    """The guide's §5 and §8: "Appearance suggests atelectasis." reads the sign of the sentence before and
    takes its side."""
    text = "Bandlike opacities are present in the right lung. Appearance suggests atelectasis."
    assert _sides_with_polarity(tmp_path, text) == {("lung opacity", "present", "right"), ("atelectasis", "uncertain", "right")}
