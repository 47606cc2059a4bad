"""Names, tables and surface forms the generator draws on, checked against the vocabulary on first use."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from graph.vocabulary import Vocabulary, vocabulary

EMBEDDING_DIM = 32
EMBEDDING_NOISE = 2.0        # sd of the independent per (image, region) noise, per dimension
EMBEDDING_IMAGE_NOISE = 2.0  # sd of the per-image shift shared by its regions, per dimension
L, R = "left", "right"
SIDES = (L, R)

SCENE_GRAPH_DIR = "scene_graphs"
RADGRAPH_DIR = "radgraph"
MALFORMED_DIR = "malformed"
METADATA_CSV = "mimic-cxr-2.0.0-metadata.csv"
GROUND_TRUTH = "ground_truth.parquet"
GEOMETRY_TRUTH = "geometry_truth.parquet"
EMBEDDINGS = "region_embeddings.parquet"
_OUTPUTS = (SCENE_GRAPH_DIR, RADGRAPH_DIR, MALFORMED_DIR, METADATA_CSV, GROUND_TRUTH, GEOMETRY_TRUTH, EMBEDDINGS)

METADATA_COLUMNS = (
    "dicom_id", "subject_id", "study_id", "PerformedProcedureStepDescription", "ViewPosition", "Rows",
    "Columns", "StudyDate", "StudyTime", "ProcedureCodeSequence_CodeMeaning", "ViewCodeSequence_CodeMeaning",
    "PatientOrientationCodeSequence_CodeMeaning",
)

MALFORMED_KINDS = (
    ("truncated_json", "scene graph cut off mid-file: invalid JSON"),
    ("wrong_types", "scene graph with wrong field types"),
    ("unknown_entity_label", "RadGraph document with an entity label outside RadGraph / RadGraph2"),
    ("dangling_relation", "RadGraph document whose relation targets an entity id that does not exist"),
    ("study_claimed_by_other_patient", "scene graph whose study_id already belongs to another patient"),
    ("no_date", "scene graph without StudyDateTime and without a metadata row: no date anywhere"),
)

# --- tracked findings -------------------------------------------------------------------------------

# (finding, region) pairs the latent process tracks; regions are the ones a report statement about the
# finding maps to (a finding's default region, or the zone its anatomy words name).
TRACKED: tuple[tuple[str, str], ...] = (
    ("pleural effusion", "left costophrenic angle"),
    ("pleural effusion", "right costophrenic angle"),
    ("pulmonary edema/hazy opacity", "left lung"),
    ("pulmonary edema/hazy opacity", "right lung"),
    ("vascular congestion", "left hilar structures"),
    ("vascular congestion", "right hilar structures"),
    ("enlarged cardiac silhouette", "cardiac silhouette"),
    *[(f, f"{s} lower lung zone") for s in SIDES for f in ("consolidation", "pneumonia", "lung opacity", "atelectasis")],
    *[("lung opacity", f"{s} mid lung zone") for s in SIDES],
    *[("pneumothorax", f"{s} apical zone") for s in SIDES],
    *[("chest tube", f"{s} lung") for s in SIDES],
    ("endotracheal tube", "trachea"),
    ("enteric tube", "abdomen"),
    ("picc", "svc"),
    ("tortuous aorta", "aortic arch"),
    *[("calcified nodule", f"{s} mid lung zone") for s in SIDES],
    ("cardiac pacer and wires", "cardiac silhouette"),
)
_IX = {key: i for i, key in enumerate(TRACKED)}
_DEVICES = ("chest tube", "endotracheal tube", "enteric tube", "picc", "cardiac pacer and wires")
_CHRONIC = ("tortuous aorta", "calcified nodule")

# --- surface forms ----------------------------------------------------------------------------------

# site kind -> anatomy phrases before the observation ("right lower lobe consolidation") and after it
# ("consolidation in the right lower lobe"); "{side}" is left / right. Checked: each maps to the site.
_SITE_PRE = {
    "lower": ["{side} lower lobe", "{side} basilar", "{side} basal", "{side} lower lung"],
    "lower-bilateral": ["bibasilar", "bibasal"],
    "mid": ["{side} mid lung", "{side} perihilar", "{side} midlung"],
    "apical": ["{side} apical"],
    "aorta": ["aortic"],
}
_SITE_POST = {
    "lower": ["in the {side} lower lobe", "at the {side} base", "at the {side} lung base", "in the {side} lower lung"],
    "lower-bilateral": ["at the lung bases", "at both bases", "at the bases"],
    "mid": ["in the {side} mid lung", "in the {side} mid zone"],
    "apical": ["at the {side} apex", "at the {side} lung apex"],
    "aorta": ["of the aorta"],
}
# anatomy the vocabulary does not know (exercises unmapped-term counting); side is still recognisable
_SITE_UNKNOWN: dict[tuple[str, str | None], str] = {("mid", R): "right middle lobe", ("mid", L): "left mid lung field"}
_LEFT_ONLY_PRE = {"lower": ["left retrocardiac"]}

# finding -> (observation spans, plural span or None, severity scale or None, count noun, OBS modifiers)
_FORMS: dict[str, tuple[list[str], str | None, str | None, bool, list[str]]] = {
    "pleural effusion": (["effusion", "effusion", "fluid"], "effusions", "size", True, []),
    "pulmonary edema/hazy opacity": (["edema", "interstitial edema", "pulmonary edema"], None, "degree", False, []),
    "vascular congestion": (["vascular congestion", "pulmonary vascular congestion", "pulmonary congestion",
                             "vascular engorgement"], None, "degree", False, []),
    "enlarged cardiac silhouette": (["cardiomegaly"], None, "degree", False, []),
    "consolidation": (["consolidation", "consolidation", "consolidative opacity"], "consolidations", "degree", False,
                      ["focal", "patchy"]),
    "pneumonia": (["pneumonia"], None, None, False, []),
    "lung opacity": (["opacity", "opacity", "opacification"], "opacities", "degree", True, ["patchy", "streaky"]),
    "atelectasis": (["atelectasis", "atelectasis", "atelectatic changes"], None, "degree", False, []),
    "pneumothorax": (["pneumothorax"], None, "size", True, []),
    "tortuous aorta": (["tortuosity"], None, "degree", False, []),
    "calcified nodule": (["granuloma"], "granulomas", None, True, ["calcified"]),
    "chest tube": (["chest tube"], None, None, True, []),
    "endotracheal tube": (["endotracheal tube", "ET tube", "ETT"], None, None, True, []),
    "enteric tube": (["enteric tube", "NG tube", "nasogastric tube", "feeding tube", "OG tube", "Dobhoff tube"],
                     None, None, True, []),
    "picc": (["PICC line", "PICC", "PICC catheter"], None, None, True, []),
    "cardiac pacer and wires": (["pacemaker", "pacer"], None, None, True, []),
}
#: observation words the vocabulary does not know, used now and then (5 %) instead of a known form: what a
#: reader of the cohort leaves unread
UNKNOWN_FORMS = {"lung opacity": "haziness", "pulmonary edema/hazy opacity": "vascular indistinctness",
                 "atelectasis": "volume loss"}

_SEVERITY_WORDS = {
    "size": {1: ["small", "small", "trace", "tiny"], 2: ["moderate", "small to moderate"], 3: ["large", "moderate to large"]},
    "degree": {1: ["mild", "mild", "minimal"], 2: ["moderate", "mild to moderate"], 3: ["severe", "marked"]},
}

# progression class -> realisations: past participle ("has increased"), state ("is unchanged"),
# prenominal adjective ("Increasing ..."), interval noun ("Interval increase in ...")
_CHANGE_WORDS = {
    "worsened": {"past": ["increased", "worsened"], "state": ["worse"], "adj": ["increasing", "worsening", "increased"],
                 "noun": ["increase in", "worsening of"]},
    "improved": {"past": ["decreased", "improved"], "state": ["improved"], "adj": ["decreasing", "improving", "decreased"],
                 "noun": ["decrease in", "improvement in"]},
    "no change": {"past": [], "state": ["unchanged", "stable"], "adj": ["unchanged", "stable", "persistent"], "noun": []},
    "new": {"past": [], "state": ["new"], "adj": ["new"], "noun": ["appearance of"]},
    "resolved": {"past": ["resolved"], "state": [], "adj": [], "noun": ["resolution of"]},
}
_CHAN = {"worsened": ("CHAN-CON-WOR", "CHAN-WOR"), "improved": ("CHAN-CON-IMP", "CHAN-IMP"),
         "no change": ("CHAN-NC", "CHAN-NC"), "new": ("CHAN-CON-AP", "CHAN-AP"),
         "resolved": ("CHAN-CON-RES", "CHAN-DISA")}
_CHAN_DEV = {"new": "CHAN-DEV-AP", "resolved": "CHAN-DEV-DISA", "repositioned": "CHAN-DEV-PLACE", "no change": "CHAN-NC"}
_IMAGENOME_CHANGE = {"worsened": "worsened", "new": "worsened", "improved": "improved", "resolved": "improved",
                     "no change": "no change"}
_PREDICATE = {"worsened": "Worsened", "improved": "Improved", "no change": "No status change"}
_CONFUSIONS = {"worsened": ["no change", "new"], "improved": ["no change", "resolved"], "no change": ["worsened", "improved"],
               "new": ["worsened"], "resolved": ["improved"]}

_TEXTURE = {"lung opacity": "opacity", "consolidation": "opacity", "pulmonary edema/hazy opacity": "interstitial",
            "calcified nodule": "calcified", "pneumothorax": "lucency"}

# bbox template in a 224 x 224 frontal frame (patient's right on the image's left): x1, y1, x2, y2
_BOX_RIGHT = {
    "lung": (35, 30, 110, 178), "upper lung zone": (40, 32, 108, 75), "mid lung zone": (36, 75, 110, 120),
    "lower lung zone": (35, 120, 110, 176), "hilar structures": (72, 70, 106, 115), "apical zone": (45, 28, 100, 52),
    "costophrenic angle": (30, 152, 62, 186), "cardiophrenic angle": (86, 150, 112, 176),
    "hemidiaphragm": (35, 152, 110, 188), "clavicle": (30, 24, 104, 50), "cardiac silhouette": (80, 95, 112, 172),
    "upper abdomen": (24, 180, 104, 222),
}
_BOX_MID = {
    "trachea": (102, 18, 122, 82), "spine": (100, 10, 124, 214), "aortic arch": (112, 55, 140, 80),
    "mediastinum": (84, 40, 146, 170), "upper mediastinum": (90, 30, 136, 86), "svc": (92, 60, 110, 102),
    "cardiac silhouette": (80, 95, 170, 176), "cavoatrial junction": (92, 100, 110, 116),
    "right atrium": (82, 110, 110, 166), "descending aorta": (114, 80, 132, 172), "carina": (104, 76, 120, 92),
    "abdomen": (24, 176, 200, 222),
}
_IMAGE_SIZES = ((3056, 2544), (2544, 3056), (3050, 2539), (2539, 3050), (2022, 2022), (2828, 2320))
_COMPLAINTS = ("shortness of breath", "dyspnea", "fever and cough", "chest pain", "hypoxia", "line placement",
               "evaluate for pneumonia", "evaluate for effusion", "evaluate for pneumothorax", "tube placement",
               "fluid overload", "weakness")


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(f"graph/synth tables disagree with the vocabulary: {what}")


@dataclass(frozen=True)
class _Tables:
    vocab: Vocabulary
    bboxes: tuple[str, ...]
    box_template: dict[str, tuple[int, int, int, int]]
    embed_regions: tuple[str, ...]


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    """Check every name and surface form against the vocabulary once; returns the derived tables.

    Raises:
        RuntimeError: the vocabulary no longer knows a region, finding, form or word used here.
    """
    v = vocabulary()
    for finding, region in TRACKED:
        _check(finding in v.findings, f"finding {finding!r}")
        _check(region in v.regions and v.regions[region].has_bbox, f"region {region!r}")
    for finding, (forms, plural, _scale, _, mods) in _FORMS.items():
        for form in forms + ([plural] if plural else []):
            # effusions are written "pleural" + observation; chest tubes "chest" / "pleural" + "tube"
            spelled = f"pleural {form}" if finding == "pleural effusion" else form
            _check(v.finding_for(spelled) == finding, f"form {spelled!r} of {finding!r}")
            for mod in mods:
                _check(v.finding_for(f"{mod} {form}") in (None, finding), f"modifier {mod!r} {form!r}")
                _check(v.finding_for(mod) is None and v.severity_of(mod) is None, f"modifier {mod!r}")
    _check(v.finding_for("chest tube") == v.finding_for("pleural tube") == "chest tube", "chest tube")
    _check(v.finding_for("aortic tortuosity") == "tortuous aorta", "aortic tortuosity")
    _check(v.finding_for("calcified granuloma") == "calcified nodule", "calcified granuloma")
    for scale in _SEVERITY_WORDS.values():
        for level, words in scale.items():
            for w in words:
                _check(v.severity_of(w) == level, f"severity word {w!r}")
    for form in UNKNOWN_FORMS.values():
        _check(v.finding_for(form) is None, f"unknown form {form!r} is known")
    checks = [(k, p, side) for table in (_SITE_PRE, _SITE_POST) for k, ps in table.items() for p in ps
              for side in (SIDES if "{side}" in p else (None,))]
    checks += [(k, p, L) for k, ps in _LEFT_ONLY_PRE.items() for p in ps]
    for kind, p, side in checks:
        words = p.split(" ")
        phrase = " ".join(words[2:] if words[0] in ("in", "at", "of") else words).format(side=side)
        _check(v.regions_for(phrase) == _site_regions(kind, side), f"anatomy {phrase!r}")
    for (_kind, side), phrase in _SITE_UNKNOWN.items():
        _check(v.regions_for(phrase) == () and v.side_of(phrase) == side, f"unknown anatomy {phrase!r}")
    for label in [*(a for pair in _CHAN.values() for a in pair), *_CHAN_DEV.values()]:
        _check(label in v.change_labels, f"change label {label!r}")
    for label in _PREDICATE:
        _check(label in v.comparison_labels, f"comparison label {label!r}")
    _check(v.regions_for("svc") == ("svc",) and v.regions_for("heart size") == ("cardiac silhouette",), "svc / heart")
    _check(v.default_regions("pleural effusion", L) == ("left costophrenic angle",), "effusion default region")

    bboxes = tuple(name for name, r in v.regions.items() if r.has_bbox)
    _check(len(bboxes) == 36, f"{len(bboxes)} bbox regions, expected 36")
    template: dict[str, tuple[int, int, int, int]] = {}
    for name in bboxes:
        side = v.regions[name].side
        base = name[len(side) + 1:] if side and name.startswith(side + " ") else name
        if name in _BOX_MID:
            template[name] = _BOX_MID[name]
        elif base in _BOX_RIGHT:
            x1, y1, x2, y2 = _BOX_RIGHT[base]
            template[name] = (x1, y1, x2, y2) if side == R else (224 - x2, y1, 224 - x1, y2)
        else:
            _check(False, f"no box template for {name!r}")
    embed_regions = tuple(sorted({region for _, region in TRACKED}))
    return _Tables(v, bboxes, template, embed_regions)


def _site_regions(kind: str, side: str | None) -> tuple[str, ...]:
    if kind == "lower-bilateral":
        return ("right lower lung zone", "left lower lung zone")
    if kind == "aorta":
        return ("aortic arch",)
    zone = {"lower": "lower lung zone", "mid": "mid lung zone", "apical": "apical zone"}[kind]
    return (f"{side} {zone}",)
