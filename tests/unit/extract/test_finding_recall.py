"""The rules extractor's finding recall on wordings of the second development set's kind (issue 17, fifth round:
the sentences the fourth round was scored on blind, by readings of the annotation guide that the IU reports use
often; vocabulary 2026.11.26.4), and of the third's (fourth round: finding recall, precision and assertion
accuracy on sentences the rules were never tuned on).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import findings_of, sided_findings_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("An old fracture is seen in a midthoracic vertebra.", {("spinal fracture", None, "present")}),
    ("Healed fracture of an upper lumbar vertebral body.", {("spinal fracture", None, "present")}),
    ("Old healed fracture of the left 6th rib.", {("rib fracture", "left", "present")}),
], ids=["fracture-in-a-vertebra", "fracture-of-a-vertebral-body", "fracture-of-a-rib"])
def test_fracture_of_a_vertebra(tmp_path, text, expected):
    """A fracture placed at a vertebra is a spinal fracture (the guide's §2), not the rib fracture that a bare
    "fracture" is (2026.11.26.4: vertebra and vertebral body are the spine's names)."""
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("No suspicious bony opacities.", {("bone lesion", "absent")}),
    ("A suspicious bony opacity projects over the right 4th rib.", {("bone lesion", "present")}),
    ("A bony opacity overlies the right upper lung.", set()),
], ids=["no-suspicious-bony-opacities", "suspicious-bony-opacity", "bony-opacity"])
def test_suspicious_bony_opacity(tmp_path, text, expected):
    """A bony opacity called suspicious is a bone lesion (the guide's §2: a sclerotic focus of a bone); without
    "suspicious" it is the bone itself, no finding (2026.11.26.4)."""
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Inferior sternotomy wire is disrupted.", {("sternotomy wires", "present"), ("sternotomy wire fracture", "present")}),
    ("Two broken sternal wires.", {("sternotomy wires", "present"), ("sternotomy wire fracture", "present")}),
    ("The lateral screw is broken.", set()),
], ids=["disrupted-sternotomy-wire", "broken-sternal-wires", "broken-screw"])
def test_broken_sternotomy_wires(tmp_path, text, expected):
    """Broken sternotomy wires add `other:sternotomy wire fracture` to the wires (the guide's §7); a bare "broken",
    "fractured" or "disrupted" names it only with a sternotomy in its sentence."""
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Biliary stent in the right upper quadrant.", {("stent", "right", "present")}),
    ("TIPS shunt is noted.", {("stent", None, "present")}),
    ("Limited view of the aorto iliac stent.", {("aortic graft/repair", None, "present")}),
    ("An atrial septal occluder projects over the heart.", {("closure device", None, "present")}),
], ids=["biliary-stent", "tips-shunt", "aorto-iliac-stent", "septal-occluder"])
def test_stents_and_closure_devices(tmp_path, text, expected):
    """Devices are findings (the guide's §7): a stent that is no coronary or aortic one (`other:<name>`; a TIPS shunt is
    no ventriculoperitoneal shunt), an aorto-iliac stent (aortic graft/repair) and a septal closure device."""
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Rib changes suggest a previous right thoracotomy.", {("postsurgical changes", "right", "uncertain")}),
    ("Postoperative appearance of the left lower lobe.", {("postsurgical changes", "left", "present")}),
], ids=["thoracotomy", "postoperative"])
def test_thoracotomy_and_postoperative(tmp_path, text, expected):
    """A thoracotomy and a bare "postoperative" (as "postsurgical" already was) are post-surgical states (the guide's
    §7: `other:thoracotomy`, `other:postsurgical changes`)."""
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The lungs are clear of focal airspace disease, pneumothorax, or pleural effusion.",
     {("airspace opacity", "absent"), ("pneumothorax", "absent"), ("pleural effusion", "absent")}),
    ("Lungs are clear of any focal infiltrates.", {("infiltration", "absent")}),
    ("The lungs are clear of acute disease.", {("lung opacity", "absent")}),
    ("The lungs are clear.", {("lung opacity", "absent")}),
], ids=["clear-of-a-list", "clear-of-infiltrates", "clear-of-acute-disease", "clear"])
def test_clear_of_named_findings(tmp_path, text, expected):
    """Lungs "clear of" named findings deny those findings, not a lung opacity (the guide's §4: the absences of the
    words used); clear of no named finding, they are clear."""
    assert findings_of(tmp_path, text) == expected


def test_air_trapping_beside_hyperinflation(tmp_path):
    """Air trapping offered as the reading of hyperinflated lungs is a finding of its own, a kind of hyperaeration
    (the guide's §2: sign and reading are two findings; §3: "versus" hedges it)."""
    assert findings_of(tmp_path, "Hyperinflated lungs, air trapping versus poor inspiratory effort.") == {
        ("hyperaeration", "present"), ("air trapping", "uncertain")}


def test_sarcoidosis_is_a_granulomatous_disease():
    """Sarcoidosis is a granulomatous disease, as histoplasmosis is (vocabulary 2026.11.26.4): a query for the
    attribute Chest ImaGenome names finds it, and a reading of the guide that names it so matches it."""
    from graph.vocabulary import vocabulary

    assert "granulomatous disease" in vocabulary().findings["sarcoidosis"].parents


@pytest.mark.parametrize("text,expected", [
    ("Mild fullness of the left hilum.", {("enlarged hilum", "left", "present")}),
    ("Fullness of the left atrial appendage.", set()),
], ids=["fullness-of-a-hilum", "fullness-of-an-appendage"])
def test_fullness_of_a_hilum(tmp_path, text, expected):
    """Fullness of a hilum is hilar fullness, an enlarged hilum (the guide's §2); a bare "fullness" names it only with
    a hilum in its sentence."""
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Right upper lobe opacity, cannot exclude a mass lesion.",
     {("lung opacity", "present"), ("mass/nodule (not otherwise specified)", "uncertain")}),
    ("No pulmonary nodules or mass lesions.", {("multiple masses/nodules", "absent")}),
], ids=["mass-lesion", "mass-lesions"])
def test_mass_lesion(tmp_path, text, expected):
    """A mass lesion is a mass (the guide's §2), not a mass and a lung lesion besides."""
    assert findings_of(tmp_path, text) == expected


def test_kyphotic_curvature_is_no_scoliosis(tmp_path):
    """A kyphotic curvature is a kyphosis (`other:kyphosis`), not the scoliosis a bare "curvature" is."""
    assert findings_of(tmp_path, "Increased kyphotic curvature of the thoracic spine.") == {("kyphosis", "present")}


@pytest.mark.parametrize("text,expected", [
    ("Heart size is within normal limits.Lungs are clear.",
     {("enlarged cardiac silhouette", "absent"), ("lung opacity", "absent")}),
    ("No pleural effusion.There is a small left apical pneumothorax.",
     {("pleural effusion", "absent"), ("pneumothorax", "present")}),
    ("A 1.5 cm nodule.", {("mass/nodule (not otherwise specified)", "present")}),
], ids=["normal-run-on", "negation-ends-at-the-period", "decimal"])
def test_a_period_without_a_space_ends_its_sentence(tmp_path, text, expected):
    """A period between a word and the capitalised word after it ends the sentence though the space after it is
    missing ("within normal limits.Lungs are clear"): the second sentence is read (before, "limits.Lungs" was one
    word) and a cue of the first does not reach into it; a decimal point stays inside its number."""
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Chronic changes with flattening of the left hemidiaphragm.", {("hyperaeration", "left", "present")}),
    ("Flattening of the thoracic vertebral bodies.", set()),
    ("The mediastinal silhouette is widened.", {("mediastinal widening", None, "present")}),
    ("The acromioclavicular joints are widened.", set()),
], ids=["flattening-of-a-hemidiaphragm", "flattening-of-vertebrae", "widened-mediastinum", "widened-joints"])
def test_flattening_and_widened_with_their_subject(tmp_path, text, expected):
    """A bare "flattening" of a (hemi)diaphragm is hyperaeration and a bare "widened" of the mediastinum mediastinal
    widening (the guide's §2: flattened hemidiaphragms, a widened mediastinum); of anything else they name nothing
    (vocabulary 2026.11.26.5)."""
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Small calcification in the left lower lobe.", {("calcified nodule", "left", "present")}),
    ("Stable calcifications right lung base.", {("calcified nodule", "right", "present")}),
    ("Right hilar calcifications.", {("calcification", "right", "present")}),
    ("Calcifications along the left pleural surface.", {("calcification", "left", "present")}),
    ("Nodule in the right lower lobe.", {("mass/nodule (not otherwise specified)", "right", "present")}),
], ids=["calcification-in-a-lobe", "calcifications-of-a-lung-base", "hilar", "pleural", "nodule-in-a-lobe"])
def test_calcification_in_lung_tissue(tmp_path, text, expected):
    """A calcification placed in a lung, a lobe or a zone of it is a calcified nodule (the guide's §2: calcifications in
    the lung): ingestion also looks the span up as the lung's ("lung calcification"); at a hilum or the pleura it stays
    a calcification, and a finding whose own name already says it is unchanged."""
    assert sided_findings_of(tmp_path, text) == expected


def test_splenic_calcification_is_named():
    """A splenic calcification is a calcification named by its place (vocabulary 2026.11.26.5), so that the guide's
    `other:splenic calcification` matches it."""
    from graph.vocabulary import vocabulary

    assert vocabulary().finding_for("splenic calcifications") == "calcification"


@pytest.mark.parametrize("text,expected", [
    ("Status post resection of the left upper lobe.", {("lobectomy", "left", "present")}),
    ("Prior resection of the distal left clavicle.", set()),
    ("Hilar distortion, postsurgical versus neoplastic.",
     {("postsurgical changes", None, "uncertain"), ("lung cancer", None, "uncertain")}),
], ids=["resection-of-a-lobe", "resection-of-a-clavicle", "neoplastic"])
def test_resection_of_a_lobe_and_neoplastic(tmp_path, text, expected):
    """A resection of a lobe is a lobectomy (the guide's §7: `other:lobectomy`; a bare "resection" names it only with a
    lobe or lung in its sentence), and a bare "neoplastic" is a neoplastic process, lung cancer (§2)."""
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Prominent left hilum.", {("enlarged hilum", "left", "present")}),
    ("The right hilar contour is mildly prominent.", {("enlarged hilum", "right", "present")}),
    ("Prominence of the left hilum which may represent adenopathy.",
     {("enlarged hilum", "left", "present"), ("enlarged hilum", "left", "uncertain")}),
    ("The ascending aorta is prominent.", set()),
], ids=["prominent-left-hilum", "hilar-contour-is-prominent", "prominence-offering-adenopathy", "prominent-aorta"])
def test_prominent_hilum(tmp_path, text, expected):
    """A prominent hilum is an enlarged hilum (the guide's §2: "enlarged or prominent hila"), the sign present beside
    the reading it offers of the same name (which §2 names once, present); a bare "prominent" names it only with a
    hilum in its sentence (vocabulary 2026.11.26.5)."""
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text", ["Chronic, coarse interstitial lung markings.",
                                  "Increased interstitial lung markings, possibly due to volume overload."],
                         ids=["coarse", "increased"])
def test_interstitial_lung_markings(tmp_path, text):
    """Interstitial lung markings are interstitial markings (the guide's §2: increased reticular markings/ild pattern;
    vocabulary 2026.11.26.5)."""
    assert ("increased reticular markings/ild pattern", "present") in findings_of(tmp_path, text)


@pytest.mark.parametrize("text,expected", [
    ("This could represent loculated fluid or atelectasis.",
     {("pleural effusion", "uncertain"), ("atelectasis", "uncertain")}),
    ("Pleural densities which may represent thickening or localized fluid.",
     {("lung opacity", "present"), ("pleural/parenchymal scarring", "uncertain"), ("pleural effusion", "uncertain")}),
], ids=["loculated-fluid", "localized-fluid"])
def test_loculated_fluid(tmp_path, text, expected):
    """Loculated or localized fluid is pleural fluid, a pleural effusion (vocabulary 2026.11.26.5)."""
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Sternotomy wires, mediastinal clips and a prosthetic valve.",
     {("sternotomy wires", "present"), ("surgical clips", "present"), ("prosthetic valve", "present")}),
    ("Mediastinal clips and markers from prior CABG.", {("cabg grafts", "present")}),
], ids=["mediastinal-clips", "mediastinal-clips-of-a-cabg"])
def test_mediastinal_clips(tmp_path, text, expected):
    """Mediastinal clips are surgical clips unless the sentence says they are a bypass graft's (the guide's §7:
    `other:surgical clips` are clips not said to be CABG's), as mediastinal surgical clips were (2026.11.26.5)."""
    assert findings_of(tmp_path, text) == expected


# --- wordings of the third development set's kind: finding recall, precision and assertion accuracy on
# sentences the rules were never tuned on

@pytest.mark.parametrize("text,expected", [
    ("Patchy alveolar opacities at both lung bases.", {("airspace opacity", "present")}),
    ("A right-sided Mediport catheter is seen.", {("chest port", "present")}),
    ("A left pleural drainage catheter is unchanged.", {("chest tube", "present")}),
    ("Overlying monitoring devices.", {("support devices", "present")}),
], ids=["alveolar-opacities", "mediport-catheter", "pleural-drainage-catheter", "monitoring-devices"])
def test_vocabulary_2026_11_26_3(tmp_path, text, expected):
    """Wordings vocabulary 2026.11.26.3 reads: alveolar opacities are airspace opacities (the annotation guide's
    §2), a Mediport catheter one chest port (not also a bare catheter's support devices), a pleural drainage
    catheter a chest tube and monitoring devices support devices (§7)."""
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Sternotomy wires and surgical clips consistent with prior CABG.",
     {("sternotomy wires", "present"), ("cabg grafts", "present")}),
    ("Median sternotomy wires, CABG clips.", {("sternotomy wires", "present"), ("cabg grafts", "present")}),
    ("Coronary bypass clips are unchanged.", {("cabg grafts", "present")}),
    ("Surgical clips in the right axilla.", {("surgical clips", "present")}),
], ids=["clips-consistent-with-cabg", "cabg-clips", "coronary-bypass-clips", "axillary-clips"])
def test_clips_of_a_bypass_graft(tmp_path, text, expected):
    """Surgical clips said to be a bypass graft's are the graft's markers, no finding of their own (the annotation
    guide's §7: `other:surgical clips` are clips not said to be CABG's)."""
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("No suspicious bony opacities.", {("bone lesion", "absent")}),
    ("A bony opacity overlies the right upper lung.", set()),
    ("Patchy opacities in the left lung base.", {("lung opacity", "present")}),
], ids=["bony-opacities", "bony-opacity", "lung-opacities"])
def test_bony_opacity_is_no_lung_opacity(tmp_path, text, expected):
    """An opacity of a bone is no lung opacity, as a bone density is none (the annotation guide's §2); a suspicious
    one is a bone lesion (vocabulary 2026.11.26.4)."""
    assert findings_of(tmp_path, text) == expected
