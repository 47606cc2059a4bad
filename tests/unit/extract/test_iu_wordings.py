"""The rules extractor on wordings frequent in IU reports (issue 17, third round): vocabulary 2026.11.10's
findings outside Chest ImaGenome's list and its synonyms, normal statements, predicates and hedges.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of, findings_of, roundtrip, sided_changes_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("There are atherosclerotic changes of the thoracic aorta.", {("vascular calcification", "present")}),
    ("The aorta is atherosclerotic.", {("vascular calcification", "present")}),
    ("The thoracic aorta is calcified and tortuous.", {("vascular calcification", "present"),
                                                       ("tortuous aorta", "present")}),
    ("Mild ectasia of the aorta.", {("tortuous aorta", "present")}),
    ("Arthritic changes of the spine with endplate spurring.", {("spinal degenerative changes", "present")}),
    ("Hyperexpanded lungs with flattened diaphragms.", {("hyperaeration", "present")}),
    ("The lungs are hypoventilated.", {("low lung volumes", "present")}),
    ("Interstitial prominence throughout the lungs.", {("increased reticular markings/ild pattern", "present")}),
    ("Pleural parenchymal scar at the apex.", {("pleural/parenchymal scarring", "present")}),
    ("A sclerotic focus in a thoracic vertebral body.", {("bone lesion", "present")}),
    ("Sclerotic density over the glenoid.", {("bone lesion", "present")}),
    ("Findings of diffuse idiopathic skeletal hyperostosis.", {("spinal degenerative changes", "present")}),
    ("Stable chronic compression fractures of two vertebral bodies.", {("spinal fracture", "present")}),
    ("Status post coronary artery bypass grafting.", {("cabg grafts", "present")}),
    ("Prosthetic aortic valve.", {("prosthetic valve", "present")}),
    ("Cavitation in the left upper lobe.", {("lung lesion", "present")}),
    ("Widening of the mediastinum.", {("mediastinal widening", "present")}),
    ("External monitoring leads overlie the chest.", {("support devices", "present")}),
    ("Gastrostomy tube in the left upper quadrant.", {("enteric tube", "present")}),
    ("Tunneled dialysis catheter.", {("ij line", "present")}),
    ("Stable postop changes of the mediastinum.", {("postsurgical changes", "present")}),
    ("Scattered calcified granulomata.", {("calcified nodule", "present")}),
    ("There is no focal air space opacity to suggest a pneumonia.",
     {("airspace opacity", "absent"), ("pneumonia", "absent")}),
], ids=["atherosclerotic-changes", "atherosclerotic", "aorta-is-calcified", "ectasia", "arthritic", "flattened",
        "hypoventilated", "interstitial-prominence", "pleural-scar", "sclerotic-focus", "sclerotic-density", "dish",
        "compression-fractures", "cabg", "valve", "cavitation", "widening", "monitoring-leads", "gastrostomy",
        "tunneled", "postop", "granulomata", "air-space-opacity"])
def test_synonyms_of_listed_findings(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Mild bronchovascular crowding at the bases.", {("bronchovascular crowding", "present")}),
    ("No evidence of active tuberculosis.", {("tuberculosis", "absent")}),
    ("Hilar adenopathy in keeping with known sarcoidosis.",
     {("enlarged hilum", "present"), ("sarcoidosis", "present")}),
    ("Metastatic disease cannot be excluded.", {("metastatic disease", "uncertain")}),
    ("Exaggerated thoracic kyphosis and diffuse osteopenia.", {("kyphosis", "present"), ("osteopenia", "present")}),
    ("Mild pectus excavatum.", {("pectus deformity", "present")}),
    ("No fracture or dislocation.", {("rib fracture", "absent"), ("dislocation", "absent")}),
    ("Two bullet fragments overlie the soft tissues.", {("foreign body", "present")}),
    ("Ascending aortic aneurysm.", {("aortic aneurysm", "present")}),
    ("No radiographic evidence of tuberculous disease.", {("tuberculosis", "absent")}),
    ("Enlarged pulmonary arteries suggesting pulmonary hypertension.",
     {("enlarged pulmonary arteries", "present"), ("pulmonary arterial hypertension", "uncertain")}),
    ("Coronary artery stents and sutures in the left upper lobe.",
     {("coronary stent", "present"), ("surgical sutures", "present")}),
    ("Prior vertebroplasty and right shoulder prosthesis.",
     {("vertebroplasty", "present"), ("shoulder arthroplasty", "present")}),
    ("The generator overlies the left chest.", {("cardiac pacer and wires", "present")}),
    ("Cardiomegaly with an enlarged left atrium.",
     {("enlarged cardiac silhouette", "present"), ("left atrial enlargement", "present")}),
], ids=["crowding", "tuberculosis", "sarcoidosis", "metastatic", "kyphosis-osteopenia", "pectus", "dislocation",
        "bullet", "aneurysm", "tuberculous", "pulmonary-hypertension", "stents-sutures", "vertebroplasty-shoulder",
        "generator", "left-atrium"])
def test_findings_outside_the_chest_imagenome_list(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


def test_volume_loss_stays_unknown(tmp_path):
    # the synthetic cohort's unknown word for atelectasis (graph/synth/tables.py)
    from graph.vocabulary import vocabulary

    assert vocabulary().finding_for("volume loss") is None
    assert not roundtrip(tmp_path, {"findings": "Left basilar volume loss."}).mentions


@pytest.mark.parametrize("text,expected", [
    ("Cardio mediastinal silhouette is unremarkable.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent")}),
    ("Cardiomediastinal size is within normal limits.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent")}),
    ("The views show normal size and configuration of the cardiac silhouette.",
     {("enlarged cardiac silhouette", "absent")}),
    ("Costophrenic XXXX are sharp.", {("costophrenic angle blunting", "absent")}),
    ("The thoracic spine appears intact.", {("spinal fracture", "absent")}),
    ("Borderline heart size.", {("enlarged cardiac silhouette", "uncertain")}),
    ("The heart is borderline in size.", {("enlarged cardiac silhouette", "uncertain")}),
    ("The lung volumes are low.", {("low lung volumes", "present")}),
    ("Low volume study.", {("low lung volumes", "present")}),
    ("Both lungs are clear and expanded.", {("lung opacity", "absent"), ("low lung volumes", "absent")}),
    # a comma after a subject lists subjects ...
    ("Heart size, mediastinal contour, and pulmonary vascularity are within normal limits.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent"),
      ("vascular congestion", "absent")}),
    ("The heart, pulmonary XXXX and mediastinum are within normal limits.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent")}),
    # a predicate before its subject speaks for the subjects coordinated with it
    ("Normal heart size and mediastinal contours.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent")}),
    ("Normal heart size and a small left pleural effusion.",
     {("enlarged cardiac silhouette", "absent"), ("pleural effusion", "present")}),
    # a finding coordinated with a subject: ConText denies it, the table the subject
    ("Heart size and pulmonary vascular engorgement appear within limits of normal.",
     {("enlarged cardiac silhouette", "absent"), ("vascular congestion", "absent")}),
    ("The hilar and mediastinal contours are normal.",
     {("enlarged hilum", "absent"), ("mediastinal widening", "absent")}),
    ("Cardiac and mediastinal silhouettes are normal.",
     {("enlarged cardiac silhouette", "absent"), ("mediastinal widening", "absent")}),
    # ... other commas end the clause: "is normal" denies nothing before them
    ("Heart size is enlarged, the mediastinum is normal.",
     {("enlarged cardiac silhouette", "present"), ("mediastinal widening", "absent")}),
    ("Small left effusion, heart size is normal.",
     {("pleural effusion", "present"), ("enlarged cardiac silhouette", "absent")}),
], ids=["cardio-mediastinal", "cardiomediastinal-size", "normal-size-and-configuration", "costophrenic-xxxx",
        "spine-intact", "borderline-heart-size", "borderline-in-size", "volumes-are-low", "low-volume-study",
        "clear-and-expanded", "comma-list", "comma-list-xxxx", "normal-before-list", "normal-before-finding",
        "subject-and-finding", "hilar-and-mediastinal", "silhouettes",
        "comma-clause", "comma-clause-finding"])
def test_normal_statements_and_predicates(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # "versus" offers two readings of one feature: both uncertain, the sign before them still present
    ("Right basilar opacity, scarring versus atelectasis.",
     {("lung opacity", "present"), ("pleural/parenchymal scarring", "uncertain"), ("atelectasis", "uncertain")}),
    ("Small left effusion vs pleural thickening.",
     {("pleural effusion", "uncertain"), ("pleural/parenchymal scarring", "uncertain")}),
    ("Atelectasis and a small effusion versus consolidation.",
     {("atelectasis", "present"), ("pleural effusion", "uncertain"), ("consolidation", "uncertain")}),
    ("Nodular opacity concerning for malignancy.",
     {("mass/nodule (not otherwise specified)", "present"), ("lung cancer", "uncertain")}),
    ("Presumed granulomatous disease.", {("granulomatous disease", "uncertain")}),
    ("There is suggestion of a small right effusion.", {("pleural effusion", "uncertain")}),
    ("Equivocal right basilar opacity.", {("lung opacity", "uncertain")}),
    # a finding denied after it is absent; "not seen on the prior study" stays new
    ("A pneumothorax is not seen.", {("pneumothorax", "absent")}),
    ("Pleural effusions are not identified.", {("pleural effusion", "absent")}),
    ("The left lower lobe nodule was not seen on the prior study.",
     {("mass/nodule (not otherwise specified)", "present")}),
    # "free" inside a finding's name does not end the scope of "no"
    ("There is no visible free intraperitoneal air under the diaphragm.", {("sub-diaphragmatic air", "absent")}),
    # "suspected" before its finding hedges it as after it does
    ("Suspected right lower lobe pneumonia.", {("pneumonia", "uncertain")}),
    ("Pneumonia is suspected.", {("pneumonia", "uncertain")}),
    # "secondary to" no longer ends the hedge's scope
    ("Patchy opacity which may be secondary to atelectasis.",
     {("lung opacity", "present"), ("atelectasis", "uncertain")}),
    ("Effusion secondary to heart failure.",
     {("pleural effusion", "present"), ("fluid overload/heart failure", "present")}),
    # IU's redacted "likely" (the guide's §9)
    ("Blunting of the left costophrenic angle XXXX secondary to a small effusion.",
     {("costophrenic angle blunting", "present"), ("pleural effusion", "uncertain")}),
    ("Right upper lobe opacity XXXX reflecting pneumonia.", {("lung opacity", "present"), ("pneumonia", "uncertain")}),
    ("Basilar airspace disease, either atelectasis or infiltrate.",
     {("airspace opacity", "present"), ("atelectasis", "uncertain"), ("infiltration", "uncertain")}),
], ids=["versus", "vs", "versus-nearest-only", "concerning-for", "presumed", "suggestion-of", "equivocal",
        "is-not-seen", "are-not-identified", "not-seen-on-prior", "no-visible-free-air", "suspected-before",
        "suspected-after",
        "may-be-secondary-to", "secondary-to", "xxxx-secondary-to", "xxxx-reflecting", "either-or"])
def test_hedges(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # a cue that names two readings of one feature applies to both ...
    ("Unchanged right apical pleural thickening versus scarring.",
     {("pleural/parenchymal scarring", "uncertain", "no change")}),
    ("Stable left basilar atelectasis vs consolidation.",
     {("atelectasis", "uncertain", "no change"), ("consolidation", "uncertain", "no change")}),
    # ... not to several readings offered after a comma; the one reading of a changed sign has its change
    # (change_cues.reading_changes)
    ("Stable blunting of the left costophrenic angle, scarring versus effusion.",
     {("costophrenic angle blunting", "present", "no change"), ("pleural/parenchymal scarring", "uncertain", None),
      ("pleural effusion", "uncertain", None)}),
    ("Stable right hilar nodule, possibly a granuloma.",
     {("mass/nodule (not otherwise specified)", "present", "no change"),
      ("calcified nodule", "uncertain", "no change")}),
], ids=["same-finding", "two-readings", "after-comma", "possible-diagnosis"])
def test_change_cues_and_readings(tmp_path, text, expected):
    assert changes_of(tmp_path, text) == expected


def test_a_heart_chamber_gives_no_side(tmp_path):
    assert sided_changes_of(tmp_path, "Enlarged right atrium.") == {("right atrial enlargement", None, "present", None)}


@pytest.mark.parametrize("text,change", [
    ("Small left pleural effusion. Stable appearance of the chest.", None),  # the whole study: no refer-back
    ("Small left pleural effusion. The appearance is similar to the prior radiograph.", None),
    ("Small left pleural effusion. This appearance is unchanged.", "no change"),  # an anaphor refers back
    ("Small left pleural effusion. Unchanged.", None),  # a bare no-change cue: the whole study (§6)
], ids=["stable-chest", "appearance-similar", "this-appearance", "bare-cue"])
def test_whole_study_statements_do_not_refer_back(tmp_path, text, change):
    assert changes_of(tmp_path, text) == {("pleural effusion", "present", change)}


@pytest.mark.parametrize("text,expected", [
    ("Degenerative changes of the right shoulder.", {("shoulder osteoarthritis", "right", "present", None)}),
    ("Arthritic changes in both shoulders.", {("shoulder osteoarthritis", "bilateral", "present", None)}),
    ("Degenerative changes of the thoracic spine.", {("spinal degenerative changes", None, "present", None)}),
], ids=["right-shoulder", "both-shoulders", "spine"])
def test_degenerative_changes_are_named_by_their_place(tmp_path, text, expected):
    assert sided_changes_of(tmp_path, text) == expected


def test_a_heart_chamber_gives_a_device_no_side(tmp_path):
    # the leads' chamber is no side of the body (the guide's §5) ...
    sides = {side for _, side, _, _ in sided_changes_of(tmp_path, "Left subclavian AICD with its lead in the right ventricle.")}
    assert "left" in sides and "right" not in sides and "bilateral" not in sides
    # ... while a lung finding by a chamber takes its side
    assert sided_changes_of(tmp_path, "Subsegmental atelectasis overlying the left ventricle.") == {
        ("linear/patchy atelectasis", "left", "present", None)}


@pytest.mark.parametrize("text,expected", [
    ("Right chest port with catheter tip in the right atrium.", {("chest port", "present")}),
    ("Left chest wall mediport with its catheter tip in the SVC.", {("chest port", "present")}),
    ("Right PICC and a left-sided catheter.", {("picc", "present"), ("support devices", "present")}),
], ids=["port-with-catheter", "mediport", "two-devices"])
def test_a_devices_own_catheter_is_no_other_device(tmp_path, text, expected):
    assert findings_of(tmp_path, text) == expected
