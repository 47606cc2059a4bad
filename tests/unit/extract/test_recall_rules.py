"""The rules extractor on IU wordings it missed before issue 17's fourth round (finding recall and assertion
accuracy): vocabulary 2026.11.26's findings and synonyms, and the extractor rules of that round.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import findings_of, sided_findings_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    # an image sign and the reading it suggests are two findings (the annotation guide's §2)
    ("Dilated pulmonary arteries suggestive of pulmonary hypertension.",
     {("enlarged pulmonary arteries", "present"), ("pulmonary arterial hypertension", "uncertain")}),
    ("Enlargement of the central pulmonary arteries.", {("enlarged pulmonary arteries", "present")}),
    ("Curvilinear calcific density which may represent mitral annular calcification.",
     {("calcification", "present"), ("mitral annular calcification", "uncertain")}),
], ids=["pulmonary-arteries", "central-pulmonary-arteries", "mitral-annulus"])
def test_sign_and_reading_are_two_findings(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Moderate enlargement of the cardiac silhouette.", {("enlarged cardiac silhouette", "present")}),
    ("The lungs are hyperaerated.", {("hyperaeration", "present")}),
    ("Several nodular densities in the upper lungs.", {("multiple masses/nodules", "present")}),
    ("Aortic vascular calcifications.", {("vascular calcification", "present")}),
    ("Multiple bony lesions.", {("bone lesion", "present")}),
    ("Prominence of the superior mediastinum.", {("superior mediastinal mass/enlargement", "present")}),
    # the tokenizer splits two words joined by a slash, and the vocabulary reads the entity's text as split
    ("Postsurgical/biopsy changes in the axilla.", {("postsurgical changes", "present")}),
], ids=["cardiac-silhouette", "hyperaerated", "nodular-densities", "vascular-calcifications", "bony-lesions",
        "superior-mediastinum", "slash"])
def test_synonyms(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Widespread bronchiectasis consistent with cystic fibrosis.",
     {("bronchiectasis", "present"), ("cystic fibrosis", "present")}),
    ("Expansile rib lesion consistent with multiple myeloma.",
     {("lung lesion", "present"), ("multiple myeloma", "present")}),
    ("Stable right apical chronic inflammatory changes.", {("chronic inflammatory change", "present")}),
    ("Old healed posttraumatic deformities of the left ribs.", {("posttraumatic changes", "present")}),
], ids=["cystic-fibrosis", "myeloma", "chronic-inflammatory", "posttraumatic"])
def test_conditions_the_guide_names(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


def test_histoplasmosis_is_a_granulomatous_disease():
    from graph.vocabulary import vocabulary

    v = vocabulary()
    assert v.finding_for("histoplasmoma") == "histoplasmosis"
    assert "granulomatous disease" in v.findings["histoplasmosis"].parents


def test_posttraumatic_change_takes_the_stated_side(tmp_path):
    assert sided_findings_of(tmp_path, "Widening of the right shoulder joint, possibly posttraumatic.") == {
        ("posttraumatic changes", "right", "uncertain")}


def test_widening_without_the_mediastinum_is_no_mediastinal_widening(tmp_path):
    assert findings_of(tmp_path, "Mild widening of the left acromioclavicular joint.") == set()
    assert findings_of(tmp_path, "Stable widening of the upper mediastinum.") == {("mediastinal widening", "present")}


@pytest.mark.parametrize("text,expected", [
    ("Catheter tip in the upper SVC.", {("ij line", "present")}),
    ("Dual-lumen catheter with its tip near the caval atrial junction.", {("ij line", "present")}),
    ("A catheter overlies the left upper quadrant.", {("support devices", "present")}),
], ids=["svc", "cavoatrial-junction", "elsewhere"])
def test_a_catheter_ending_centrally_is_a_central_line(tmp_path, text, expected):
    # the guide's §7: a catheter with its tip in the SVC, cavoatrial junction or right atrium is central
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Stable cardiomegaly without evidence of failure.",
     {("enlarged cardiac silhouette", "present"), ("fluid overload/heart failure", "absent")}),
    ("Intubated for respiratory failure.", set()),
], ids=["heart", "respiratory"])
def test_bare_failure_is_heart_failure(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


def test_redacted_likely_before_from(tmp_path):
    # the guide's §9: "XXXX due to / from / secondary to" is a redacted "likely"
    assert findings_of(tmp_path, "Right hilar calcifications XXXX from old granulomatous disease.") == {
        ("calcification", "present"), ("granulomatous disease", "uncertain")}


@pytest.mark.parametrize("text,expected", [
    # a list item the table does not know ("central airways") does not end the list (the guide's §4)
    ("Normal cardiac silhouette, central airways, pulmonary vasculature and lung volumes.",
     {("enlarged cardiac silhouette", "absent"), ("vascular congestion", "absent"), ("low lung volumes", "absent"),
      ("hyperaeration", "absent")}),
    # a finding in the list does
    ("Normal heart size, mild scoliosis, and pulmonary vasculature.",
     {("enlarged cardiac silhouette", "absent"), ("scoliosis", "present")}),
], ids=["unknown-item", "finding-item"])
def test_a_predicate_before_a_list_of_subjects(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


def test_prosthetic_valves_of_the_right_heart(tmp_path):
    assert findings_of(tmp_path, "The prosthetic pulmonic valve is in place.") == {("prosthetic valve", "present")}


@pytest.mark.parametrize("text,expected", [
    # a surgical state read from a device takes the device's side (the guide's §5 and §7)
    ("Suture material at the left apex suggesting prior lung surgery.",
     {("surgical sutures", "left", "present"), ("postsurgical changes", "left", "uncertain")}),
    ("Surgical clips are noted in the right upper quadrant.", {("surgical clips", "right", "present")}),
    ("Postoperative changes in the left hemithorax.", {("postsurgical changes", "left", "present")}),
], ids=["lung-surgery", "clips", "hemithorax"])
def test_surgical_states_take_their_side(tmp_path, text, expected):
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Postoperative changes consistent with prior CABG.", {("cabg grafts", "present")}),
    ("Stable postsurgical changes with midline sternotomy wires.", {("sternotomy wires", "present")}),
    # what follows "with" is no device: the generic finding stays
    ("Stable postop changes with mild cardiomegaly.",
     {("postsurgical changes", "present"), ("enlarged cardiac silhouette", "present")}),
], ids=["consistent-with", "with", "with-a-finding"])
def test_post_surgical_changes_named_by_their_device(tmp_path, text, expected):
    # the guide's §7: a post-surgical change named by its procedure or device is that device
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Hyperexpanded lungs with flattening of hemidiaphragms.", {("hyperaeration", "present")}),
    ("Flattening of the bilateral hemidiaphragms.", {("hyperaeration", "present")}),
    ("Findings consistent with obstructive lung disease.", {("copd/emphysema", "present")}),
], ids=["flattening", "flattening-bilateral", "obstructive-lung-disease"])
def test_hyperaeration_and_copd_wordings(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # located at the aorta, bare calcifications are the aorta's (ingestion's anatomy + span composition)
    ("Calcifications are seen within the aortic arch.", {("vascular calcification", "present")}),
    ("Scattered right lung base calcifications.", {("calcified nodule", "present")}),
    ("Multiple pleural calcifications from prior asbestos exposure.", {("pleural calcification", "present")}),
], ids=["aorta", "lung-base", "pleura"])
def test_calcifications_named_by_their_place(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


def test_lung_base_calcifications_keep_their_side(tmp_path):
    assert sided_findings_of(tmp_path, "Stable left lung base calcifications.") == {("calcified nodule", "left", "present")}


def test_rib_deformities(tmp_path):
    assert sided_findings_of(tmp_path, "Old right-sided rib deformities.") == {("rib deformity", "right", "present")}


@pytest.mark.parametrize("text,expected", [
    # the guide's §7: a subclavian catheter is a subclavian line, though it is also a central venous one
    ("Stable left subclavian central venous catheter.", {("subclavian line", "left", "present")}),
    ("Postsurgical clips in the right axilla.", {("surgical clips", "right", "present")}),
    ("Widening of the left acromioclavicular joint which may be postsurgical.",
     {("postsurgical changes", "left", "uncertain")}),
    ("Dual lead cardiac pacing device.", {("cardiac pacer and wires", None, "present")}),
], ids=["subclavian", "postsurgical-clips", "bare-postsurgical", "pacing-device"])
def test_devices_and_surgical_states(tmp_path, text, expected):
    assert sided_findings_of(tmp_path, text) == expected


def test_without_significant_change_negates_nothing(tmp_path):
    # the finding after "without significant interval change" is there, unchanged (the guide's §6)
    found = findings_of(tmp_path, "Redemonstration without significant interval change of mild left basilar atelectasis.")
    assert found == {("atelectasis", "present")}


@pytest.mark.parametrize("text,expected", [
    # a list item the table does not know, before the predicate, does not end the list either (the guide's §4)
    ("Heart size, mediastinum, XXXX, bony structures and lung XXXX are unremarkable.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent")}),
    # a comma right before the predicate ends the subjects before it: the predicate speaks for the one after it
    ("Normal cardiac size and contour, unremarkable mediastinal silhouette.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent")}),
], ids=["unknown-item-before", "predicate-after-comma"])
def test_a_predicate_after_a_list_of_subjects(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # "lung volumes" names a finding only with a change cue; before its predicate it is the subject (the guide's §4)
    ("The lung volumes are normal.", {("low lung volumes", "absent"), ("hyperaeration", "absent")}),
    ("Heart size and lung volumes are within normal limits.",
     {("enlarged cardiac silhouette", "absent"), ("low lung volumes", "absent"), ("hyperaeration", "absent")}),
], ids=["lung-volumes", "coordinated"])
def test_lung_volumes_before_their_predicate(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # the guide's §2: prominent hila are an enlarged hilum; interstitial prominence is an ILD pattern
    ("Prominent hilar contours bilaterally.", {("enlarged hilum", "bilateral", "present")}),
    ("Stable prominence of the pulmonary interstitium.",
     {("increased reticular markings/ild pattern", None, "present")}),
], ids=["hilar-contours", "interstitium"])
def test_prominent_structures(tmp_path, text, expected):
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # the guide's §3: "cannot be excluded" in IU's other wordings
    ("Pulmonary edema difficult to entirely exclude.", {("pulmonary edema/hazy opacity", "uncertain")}),
    ("It would be difficult to completely exclude a superimposed pneumonia.", {("pneumonia", "uncertain")}),
    ("Superimposed infection cannot be entirely excluded.", {("pneumonia", "uncertain")}),
    ("Lingular atelectasis cannot be ruled out.", {("atelectasis", "uncertain")}),
    ("Aspiration or edema are also possible.",
     {("aspiration", "uncertain"), ("pulmonary edema/hazy opacity", "uncertain")}),
], ids=["difficult-after", "difficult-before", "entirely-excluded", "ruled-out", "also-possible"])
def test_cannot_be_excluded_wordings(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # the guide's §2: a clavicle's fracture is a clavicle fracture, not the rib fracture a bare "fracture" is
    ("Old healed fracture of the left clavicle.", {("clavicle fracture", "left", "present")}),
    ("Fracture of the thoracic spine.", {("spinal fracture", None, "present")}),
    # a name composed from a side, a place and a finding keeps its side
    ("Remote left clavicle fracture.", {("clavicle fracture", "left", "present")}),
    ("Right shoulder degenerative changes.", {("shoulder osteoarthritis", "right", "present")}),
], ids=["fracture-of-the-clavicle", "fracture-of-the-spine", "left-clavicle-fracture", "right-shoulder"])
def test_fractures_and_joints_named_by_their_place(tmp_path, text, expected):
    assert sided_findings_of(tmp_path, text) == expected
