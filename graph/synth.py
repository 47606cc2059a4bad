"""Synthetic longitudinal chest X-ray cohorts in the released Chest ImaGenome, RadGraph and MIMIC formats.

:func:`write_cohort` simulates patients whose findings evolve under a few latent drivers, then writes two
noisy views of every study, exactly as the real datasets lay them out (docs/formats.md §1-§3):

* ``scene_graphs/p1X/<dicom_id>_SceneGraph.json``: one Chest ImaGenome scene graph per frontal image;
* ``radgraph/p1X/p1XXXXXXX/sXXXXXXXX.json``: one RadGraph v1 / RadGraph2 document per report;
* ``mimic-cxr-2.0.0-metadata.csv``: one MIMIC-CXR-JPG metadata row per image (frontal and lateral);
* ``ground_truth.parquet``: the true change of every tracked (anatomy, finding) between consecutive
  studies, with what each source stated;
* optionally ``region_embeddings.parquet`` (per image and region) and ``malformed/`` (bad files).

Everything is synthetic: ids are random in the MIMIC layouts, report text comes from templates.
All names of regions, findings, severity words and change labels come from
:func:`graph.vocabulary.vocabulary`; the tables below are checked against it on first use.

The latent process (per patient, evaluated at each study time):

* fluid status ``F`` (an Ornstein-Uhlenbeck process around a patient baseline, raised in the ICU, with
  acute decompensations) drives pleural effusion on both costophrenic angles (with a per-patient
  left/right asymmetry), pulmonary edema on both lungs, vascular congestion on both hila and, a little,
  the enlarged cardiac silhouette (mostly a chronic per-patient baseline);
* infection episodes on one side (sometimes both) drive consolidation, pneumonia, lung opacity and
  atelectasis on that lower lung zone, lung opacity on the neighbouring mid zone, and a parapneumonic
  part of the same side's effusion;
* ICU stays drive basal atelectasis, an endotracheal tube and an enteric tube; PICC lines come and go;
* pneumothorax episodes on one side, often treated with a chest tube that is removed after resolution;
* chronic findings (tortuous aorta, calcified granuloma, pacemaker) stay put.

Each tracked (finding, region) severity is an integer 0..3 (devices 0/1): the driver's value plus
Gaussian noise, rounded. Reports mention only some findings, with noisy severity words and ~10 %
comparison label noise; scene graphs are derived from the same report sentences with their own
extraction noise, so the two sources usually but not always agree.
"""

from __future__ import annotations

import csv
import json
import math
import random
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from graph.vocabulary import Vocabulary, vocabulary

__all__ = ["CohortSummary", "write_cohort", "true_change", "TRACKED", "EMBEDDING_DIM", "MALFORMED_KINDS"]

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
EMBEDDINGS = "region_embeddings.parquet"
_OUTPUTS = (SCENE_GRAPH_DIR, RADGRAPH_DIR, MALFORMED_DIR, METADATA_CSV, GROUND_TRUTH, EMBEDDINGS)

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
_SITE_UNKNOWN = {("mid", R): "right middle lobe", ("mid", L): "left mid lung field"}
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
# observation words the vocabulary does not know, used now and then instead of a known form
_UNKNOWN_FORMS = {"lung opacity": "haziness", "pulmonary edema/hazy opacity": "vascular indistinctness",
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
        raise RuntimeError(f"graph/synth.py tables disagree with the vocabulary: {what}")


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
    for finding, (forms, plural, scale, _, mods) in _FORMS.items():
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
    for form in _UNKNOWN_FORMS.values():
        _check(v.finding_for(form) is None, f"unknown form {form!r} is known")
    checks = [(k, p, side) for table in (_SITE_PRE, _SITE_POST) for k, ps in table.items() for p in ps
              for side in (SIDES if "{side}" in p else (None,))]
    checks += [(k, p, L) for k, ps in _LEFT_ONLY_PRE.items() for p in ps]
    for kind, p, side in checks:
        words = p.split(" ")
        phrase = " ".join(words[2:] if words[0] in ("in", "at", "of") else words).format(side=side)
        _check(v.regions_for(phrase) == _site_regions(kind, side), f"anatomy {phrase!r}")
    for (kind, side), phrase in _SITE_UNKNOWN.items():
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


# --- latent process -----------------------------------------------------------------------------------

@dataclass
class _Study:
    study_id: str
    when: datetime
    sev: list[int]
    icu: bool
    images: list[tuple[str, str]] = field(default_factory=list)  # (dicom_id, view) frontal, sorted by dicom
    laterals: list[str] = field(default_factory=list)
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)  # dicom -> (Rows, Columns)


def _quantise(value: float, rng: random.Random, noise: float = 0.22) -> int:
    x = value + rng.gauss(0.0, noise)
    return 0 if x < 0.5 else min(3, int(x + 0.5))


def _interval(rng: random.Random, acute: bool) -> float:
    """Days to the next study: hours to days while acutely ill (daily inpatient films), else up to months."""
    u = rng.random()
    if acute and u < 0.75:
        return rng.uniform(0.3, 4.0)
    if u < 0.08:
        return rng.uniform(0.1, 0.9)
    if u < 0.4:
        return rng.uniform(1.0, 7.0)
    if u < 0.72:
        return rng.uniform(7.0, 60.0)
    return rng.uniform(60.0, 400.0)


def _simulate(rng: random.Random, n: int) -> tuple[list[datetime], list[list[int]], list[bool]]:
    """Latent drivers -> integer severities per study, for one patient.

    Returns:
        (study datetimes, per study a list of len(TRACKED) severities 0..3, per study ICU flag).
    """
    mu_f = rng.choices((0.0, 0.8, 1.6), (0.45, 0.3, 0.25))[0]
    cardio0 = max(0, min(3, round(mu_f * 0.8 + rng.gauss(0.0, 0.6))))
    asym = {L: rng.gauss(0.0, 0.25), R: 0.0}
    asym[R] = -asym[L] + 0.1
    tortuous = rng.choices((0, 1, 2), (0.72, 0.22, 0.06))[0]
    granuloma_side = rng.choice(SIDES) if rng.random() < 0.12 else None
    pacer = 1 if rng.random() < 0.08 else 0

    start = datetime(2110, 1, 1) + timedelta(days=rng.uniform(0, 80 * 365.25), seconds=rng.uniform(0, 86400))
    times = [start.replace(microsecond=(start.microsecond // 1000) * 1000)]

    icu = rng.random() < 0.3
    f = max(0.0, mu_f + 0.8 * icu + rng.gauss(0.0, 0.5))
    inf = {L: 0.0, R: 0.0}
    inf_age = 0.0
    ptx = {L: 0.0, R: 0.0}
    tube = {L: 0, R: 0}
    ett = int(icu and rng.random() < 0.5)
    ng = int(ett and rng.random() < 0.85)
    picc = int(rng.random() < 0.15 + 0.2 * icu)

    def start_infection() -> None:
        nonlocal inf_age
        u = rng.random()
        sides = (L,) if u < 0.45 else (R,) if u < 0.9 else SIDES
        level = rng.uniform(1.2, 3.2)
        for s in sides:
            inf[s] = max(0.6, level + rng.gauss(0.0, 0.3))
        inf_age = 0.0

    if rng.random() < 0.2 + 0.15 * icu:
        start_infection()

    sevs: list[list[int]] = []
    icus: list[bool] = []
    for t in range(n):
        if t:
            acute = icu or max(inf.values()) > 0 or max(ptx.values()) > 0 or f > mu_f + 0.8
            nxt = times[-1] + timedelta(days=_interval(rng, acute))
            times.append(nxt.replace(microsecond=(nxt.microsecond // 1000) * 1000))
            dt = (times[t] - times[t - 1]).total_seconds() / 86400.0
            # ICU stay
            icu = rng.random() < math.exp(-dt / 6.0) if icu else rng.random() < 0.12
            # fluid status: Ornstein-Uhlenbeck around the patient's baseline, plus decompensations
            a = math.exp(-dt / 8.0)
            mean = mu_f + 0.8 * icu
            f = mean + (f - mean) * a + 0.55 * math.sqrt(1.0 - a * a) * rng.gauss(0.0, 1.0)
            if rng.random() < 0.1 + 0.08 * icu:
                f += rng.uniform(0.8, 1.8)
            f = min(3.6, max(0.0, f))
            # infection: onset, early worsening, decay
            if max(inf.values()) > 0:
                inf_age += dt
                for s in SIDES:
                    if inf[s] > 0:
                        bump = rng.uniform(0.5, 1.2) if inf_age < 10 and rng.random() < 0.3 else 0.0
                        inf[s] = inf[s] * math.exp(-dt / 14.0) + rng.gauss(0.0, 0.3) + bump
                        if inf[s] < 0.45:
                            inf[s] = 0.0
            elif rng.random() < 0.16 + 0.12 * icu:
                start_infection()
            # pneumothorax and chest tube
            for s in SIDES:
                if ptx[s] > 0:
                    if tube[s]:
                        ptx[s] = ptx[s] * math.exp(-dt / 1.5) - 0.3 + rng.gauss(0.0, 0.2)
                    else:
                        ptx[s] = ptx[s] * math.exp(-dt / 8.0) + rng.gauss(0.0, 0.3)
                        if ptx[s] >= 1.5 and rng.random() < 0.6:
                            tube[s] = 1
                    if ptx[s] < 0.45:
                        ptx[s] = 0.0
                elif tube[s] and rng.random() < 0.6:
                    tube[s] = 0
            if not any(ptx.values()) and rng.random() < 0.04 + 0.05 * icu:
                s = rng.choice(SIDES)
                ptx[s] = rng.uniform(0.8, 3.0)
                tube[s] = int(rng.random() < (0.75 if ptx[s] >= 1.5 else 0.2))
            # devices
            ett = int(icu and rng.random() < (0.8 if ett else 0.5))
            if ett:
                ng = int(rng.random() < (0.95 if ng else 0.8))
            elif icu:
                ng = int(rng.random() < (0.6 if ng else 0.15))
            else:
                ng = int(rng.random() < (0.3 if ng else 0.03))
            picc = int(rng.random() < (0.8 if picc else 0.1 + 0.2 * icu))
            if not pacer and rng.random() < 0.02:
                pacer = 1
        elif rng.random() < 0.05:
            s = rng.choice(SIDES)
            ptx[s] = rng.uniform(0.8, 2.5)
            tube[s] = int(rng.random() < 0.5)

        sev = [0] * len(TRACKED)
        eff_v = {}
        for s in SIDES:
            eff_v[s] = 1.1 * (f - 0.8) + 0.45 * inf[s] + asym[s]
            sev[_IX["pleural effusion", f"{s} costophrenic angle"]] = _quantise(eff_v[s], rng)
        edema = _quantise(1.15 * (f - 1.1), rng)
        cong = _quantise(1.0 * (f - 0.75), rng)
        for s in SIDES:
            sev[_IX["pulmonary edema/hazy opacity", f"{s} lung"]] = edema
            sev[_IX["vascular congestion", f"{s} hilar structures"]] = cong
        sev[_IX["enlarged cardiac silhouette", "cardiac silhouette"]] = _quantise(cardio0 + 0.3 * (f - mu_f), rng, 0.15)
        for s in SIDES:
            low = f"{s} lower lung zone"
            sev[_IX["consolidation", low]] = _quantise(inf[s] - 0.4, rng)
            sev[_IX["pneumonia", low]] = _quantise(0.9 * inf[s] - 0.2, rng)
            sev[_IX["lung opacity", low]] = _quantise(inf[s] + 0.25 * icu + 0.2 * max(0.0, f - 1.5), rng)
            sev[_IX["atelectasis", low]] = _quantise(0.45 * inf[s] + 0.7 * icu + 0.35 * max(0.0, eff_v[s]) - 0.25, rng)
            sev[_IX["lung opacity", f"{s} mid lung zone"]] = _quantise(0.6 * inf[s] - 0.2 + 0.3 * max(0.0, f - 1.5), rng)
            sev[_IX["pneumothorax", f"{s} apical zone"]] = _quantise(ptx[s], rng, 0.15) if ptx[s] else 0
            sev[_IX["chest tube", f"{s} lung"]] = tube[s]
            sev[_IX["calcified nodule", f"{s} mid lung zone"]] = int(granuloma_side == s)
        sev[_IX["endotracheal tube", "trachea"]] = ett
        sev[_IX["enteric tube", "abdomen"]] = ng
        sev[_IX["picc", "svc"]] = picc
        sev[_IX["tortuous aorta", "aortic arch"]] = tortuous
        sev[_IX["cardiac pacer and wires", "cardiac silhouette"]] = pacer
        sevs.append(sev)
        icus.append(icu)
    return times, sevs, icus


def true_change(prior: int, current: int) -> str | None:
    """The progression class between two severities (0 = absent), or None when absent in both."""
    if prior == 0 and current == 0:
        return None
    if prior == 0:
        return "new"
    if current == 0:
        return "resolved"
    return "worsened" if current > prior else "improved" if current < prior else "no change"


# --- report plan ---------------------------------------------------------------------------------------

@dataclass
class _Stmt:
    """One report statement about one finding on one site."""

    finding: str
    site: str             # "side", "none", "lower", "lower-bilateral", "mid", "apical", "aorta", "svc"
    side: str | None      # left / right / "bilateral" / None
    regions: tuple[str, ...]
    polarity: str         # present / absent / uncertain
    severity: int         # stated level (0: no severity word)
    change: str | None    # stated progression class
    imagenome: list[str] | None = None  # Chest ImaGenome comparison labels
    combo: tuple[str, ...] = ()         # uncertain findings suggested by this opacity ("may reflect ...")
    in_scene_graph: bool = True


def _noisy_change(rng: random.Random, change: str) -> str:
    return rng.choice(_CONFUSIONS[change]) if rng.random() < 0.1 else change


def _noisy_severity(rng: random.Random, level: int, scale: str | None) -> int:
    if scale is None or level == 0:
        return 0
    u = rng.random()
    if u < 0.25:
        return 0
    if u < 0.35:
        return min(3, max(1, level + rng.choice((-1, 1))))
    return level


def _units(cur: list[int], prior: list[int] | None, rng: random.Random) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    """(finding, site, side, regions) groups a report may speak about, given what is present now or before."""
    p = prior or [0] * len(TRACKED)

    def on(key: tuple[str, str]) -> bool:
        return cur[_IX[key]] > 0 or p[_IX[key]] > 0

    def chg(key: tuple[str, str]) -> str | None:
        return true_change(p[_IX[key]], cur[_IX[key]])

    out: list[tuple[str, str, str | None, tuple[str, ...]]] = []
    # both sides as one statement when both are present now with the same change
    for finding, site, region_of in (
        ("pleural effusion", "side", "{} costophrenic angle"),
        ("atelectasis", "lower", "{} lower lung zone"),
        ("consolidation", "lower", "{} lower lung zone"),
        ("lung opacity", "lower", "{} lower lung zone"),
    ):
        keys = {s: (finding, region_of.format(s)) for s in SIDES}
        both = all(cur[_IX[keys[s]]] > 0 for s in SIDES) and chg(keys[L]) == chg(keys[R])
        if both and rng.random() < 0.6:
            regions = tuple(keys[s][1] for s in (R, L)) if site == "lower" else tuple(keys[s][1] for s in SIDES)
            out.append((finding, "lower-bilateral" if site == "lower" else "side", "bilateral", regions))
            continue
        for s in SIDES:
            if on(keys[s]):
                out.append((finding, site, s, (keys[s][1],)))
    for finding, region in (("pulmonary edema/hazy opacity", "{} lung"), ("vascular congestion", "{} hilar structures")):
        if on((finding, region.format(L))) or on((finding, region.format(R))):
            out.append((finding, "none", None, tuple(region.format(s) for s in SIDES)))
    for s in SIDES:
        for finding, site, region in (("pneumonia", "lower", f"{s} lower lung zone"), ("lung opacity", "mid", f"{s} mid lung zone"),
                                      ("pneumothorax", "apical", f"{s} apical zone"), ("chest tube", "side", f"{s} lung"),
                                      ("calcified nodule", "mid", f"{s} mid lung zone")):
            if on((finding, region)):
                out.append((finding, site, s, (region,)))
    for finding, region, site in (("enlarged cardiac silhouette", "cardiac silhouette", "none"), ("endotracheal tube", "trachea", "none"),
                                  ("enteric tube", "abdomen", "none"), ("picc", "svc", "svc"), ("tortuous aorta", "aortic arch", "aorta"),
                                  ("cardiac pacer and wires", "cardiac silhouette", "none")):
        if on((finding, region)):
            out.append((finding, site, None, (region,)))
    return out


def _plan(rng: random.Random, cur: list[int], prior: list[int] | None, compare: bool,
          sparse: bool = False) -> list[_Stmt]:
    """The statements one report makes (in findings order); negations and hedges included.

    ``sparse``: every present finding is stated present and nothing else is stated (no absences, no
    hedges), as a report that lists only what it sees; stated comparisons stay.
    """
    v = _tables().vocab
    stmts: list[_Stmt] = []
    mentioned: set[str] = set()
    p = prior or [0] * len(TRACKED)
    for finding, site, side, regions in _units(cur, prior, rng):
        now = max(cur[_IX[finding, r]] for r in regions)
        before = max(p[_IX[finding, r]] for r in regions)
        change = true_change(before, now) if prior is not None else None
        device = finding in _DEVICES
        scale = _FORMS[finding][2]
        if now > 0:
            p_mention = 0.85 if device else 0.5 if finding in _CHRONIC else \
                0.7 if finding == "enlarged cardiac silhouette" else 0.92 if now >= 2 else 0.78
            if not sparse and rng.random() >= p_mention:
                continue
            stated = None
            if compare and change is not None:
                p_state = 0.75 if change == "new" else 0.4 if finding in _CHRONIC else 0.62
                if rng.random() < p_state:
                    stated = change if device else _noisy_change(rng, change)
                    if device and change == "no change" and rng.random() < 0.08:
                        stated = "repositioned"
            polarity = "present"
            if sparse:
                pass
            elif stated is None and finding in ("consolidation", "pneumonia") and rng.random() < 0.1:
                polarity = "uncertain"
            elif stated == "resolved":  # label noise on an improving finding: spoken as resolved
                polarity = "absent"
            st = _Stmt(finding, site, side, regions, polarity, _noisy_severity(rng, now, scale), stated)
        elif before > 0 and change == "resolved" and not sparse:
            if compare and rng.random() < 0.55:
                stated = "resolved" if device else _noisy_change(rng, "resolved")
                st = _Stmt(finding, site, side, regions, "absent" if stated == "resolved" else "present", 0, stated)
            else:
                continue
        else:
            continue
        mentioned.add(finding)
        stmts.append(st)

    # "opacity ... may reflect atelectasis or pneumonia": fold hedged findings into an opacity statement
    for st in [] if sparse else stmts:
        if st.finding == "lung opacity" and st.site == "lower" and st.polarity == "present" and \
                st.change in (None, "no change", "worsened", "improved", "new") and rng.random() < 0.25:
            st.combo = ("atelectasis", "pneumonia")
            stmts[:] = [o for o in stmts if not (o.finding in st.combo and o.regions == st.regions and o.change is None)]
            break

    for st in stmts:
        if st.change is not None and st.change != "repositioned" and st.finding not in _DEVICES:
            labels = [_IMAGENOME_CHANGE[st.change]]
            if rng.random() < 0.05:
                labels = [rng.choice([c for c in _PREDICATE if c != labels[0]])]
            if rng.random() < 0.04:
                labels.append(rng.choice([c for c in _PREDICATE if c != labels[0]]))
            st.imagenome = labels
        st.in_scene_graph = rng.random() < 0.9

    # negations of common findings that are absent now
    absent_now = {f: all(cur[_IX[f, r]] == 0 for ff, r in TRACKED if ff == f) for f, _ in TRACKED}
    for finding, prob in () if sparse else (("pneumothorax", 0.55), ("pleural effusion", 0.5),
                                            ("consolidation", 0.35), ("pulmonary edema/hazy opacity", 0.25)):
        if absent_now[finding] and finding not in mentioned and rng.random() < prob:
            regions = v.default_regions(finding, None)
            stmts.append(_Stmt(finding, "none", None, regions, "absent", 0, None))
    return stmts


# --- RadGraph rendering ---------------------------------------------------------------------------------

class _Sentence:
    """Words of one sentence with entity spans (local indices) and relations between them."""

    def __init__(self) -> None:
        self.words: list[str] = []
        self.ents: list[list] = []  # [start, end, label]
        self.rels: list[tuple[int, str, int]] = []

    def w(self, text: str) -> None:
        self.words.extend(text.split(" "))

    def e(self, text: str, label: str) -> int:
        start = len(self.words)
        self.words.extend(text.split(" "))
        self.ents.append([start, len(self.words) - 1, label])
        return len(self.ents) - 1

    def r(self, src: int, rtype: str, tgt: int) -> None:
        self.rels.append((src, rtype, tgt))

    def anatomy(self, phrase: str) -> int:
        """Each anatomy word an ANAT-DP entity; the earlier words modify the last (head) word."""
        words = phrase.split(" ")
        ids = [self.e(w, "ANAT-DP") for w in words]
        for i in ids[:-1]:
            self.r(i, "modify", ids[-1])
        return ids[-1]


class _Report:
    """Accumulates sentences into RadGraph text and entities."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.entities: dict[str, dict] = {}

    def add(self, s: _Sentence, capitalise: bool = True) -> str:
        if capitalise and s.words and s.words[0][:1].islower():
            s.words[0] = s.words[0][:1].upper() + s.words[0][1:]
        offset = len(self.tokens)
        self.tokens.extend(s.words)
        ids = []
        for start, end, label in s.ents:
            eid = str(len(self.entities) + 1)
            ids.append(eid)
            self.entities[eid] = {"tokens": " ".join(s.words[start:end + 1]), "label": label,
                                  "start_ix": start + offset, "end_ix": end + offset, "relations": []}
        for src, rtype, tgt in s.rels:
            self.entities[ids[src]]["relations"].append([rtype, ids[tgt]])
        return " ".join(s.words).replace(" .", ".").replace(" ,", ",").replace(" :", ":")


@lru_cache(maxsize=None)
def _usable_sites(finding: str, obs_text: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Anatomy phrases (pre, post) whose head word does not form a finding name with ``obs_text``.

    Raises:
        RuntimeError: no post-nominal phrase is left for a site.
    """
    v = _tables().vocab

    def ok(phrase: str) -> bool:
        return v.finding_for(f"{phrase.split(' ')[-1]} {obs_text}") is None

    pre = {k: [p for p in ps if ok(p)] for k, ps in _SITE_PRE.items()}
    pre.update({f"{k}-left": [p for p in ps if ok(p)] for k, ps in _LEFT_ONLY_PRE.items()})
    post = {k: [p for p in ps if ok(p)] for k, ps in _SITE_POST.items()}
    for k, ps in post.items():
        _check(bool(ps), f"no anatomy phrase for {finding!r} ({obs_text!r}) on site {k!r}")
    return pre, post


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


class _Renderer:
    """Turns statements into sentences; one instance per report (it fixes the report's label spelling).

    ``used`` records the severity word each statement got in the sentence being built, for the scene
    graph's severity cues.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.alias = rng.random() < 0.15  # this report's extractor writes RadGraph2's code aliases
        self.used: dict[int, str] = {}

    def chan(self, finding: str, change: str) -> str:
        if finding in _DEVICES:
            return _CHAN_DEV[change]
        return _CHAN[change][1 if self.alias else 0]

    def sev_word(self, st: _Stmt) -> str | None:
        scale = _FORMS[st.finding][2]
        if not scale or not st.severity:
            return None
        word = self.rng.choice(_SEVERITY_WORDS[scale][st.severity])
        self.used[id(st)] = word
        return word

    def probe(self, st: _Stmt) -> tuple[str, bool]:
        """(first word, plural) of the noun phrase the next :meth:`noun_phrase` call will write."""
        state = self.rng.getstate()
        used = dict(self.used)
        s = _Sentence()
        _, _, plural = self.noun_phrase(s, st)
        self.rng.setstate(state)
        self.used = used
        return s.words[0], plural

    def noun_phrase(self, s: _Sentence, st: _Stmt, severity: bool = True) -> tuple[int, int | None, bool]:
        """Adds ``[severity] [modifier] [anatomy] observation [anatomy]``; returns (obs id, anatomy head, plural)."""
        rng = self.rng
        forms, plural_form, _, _, mods = _FORMS[st.finding]
        label = {"present": "OBS-DP", "absent": "OBS-DA", "uncertain": "OBS-U"}[st.polarity]
        obs_text = plural_form if st.side == "bilateral" and plural_form else rng.choice(forms)
        if st.finding in _UNKNOWN_FORMS and rng.random() < 0.05:
            obs_text = _UNKNOWN_FORMS[st.finding]
        plural = obs_text == plural_form or obs_text == "atelectatic changes"
        word = self.sev_word(st) if severity else None
        sev_id = s.e(word, "OBS-DP") if word else None
        mod_id = None
        if mods and (rng.random() < 0.3 or st.finding == "calcified nodule"):
            mod_id = s.e(rng.choice(mods), "OBS-DP")
        anat = None
        post = None
        if st.finding == "pleural effusion":
            if st.side:
                side_word = st.side if st.side == "bilateral" or rng.random() < 0.75 else f"{st.side}-sided"
                side_id = s.e(side_word, "ANAT-DP")
                anat = s.e("pleural", "ANAT-DP")
                s.r(side_id, "modify", anat)
            else:
                anat = s.e("pleural", "ANAT-DP")
        elif st.finding == "chest tube":
            side_word = st.side if rng.random() < 0.75 else f"{st.side}-sided"
            side_id = s.e(side_word, "ANAT-DP")
            anat = s.e(rng.choice(("chest", "chest", "pleural")), "ANAT-DP")
            s.r(side_id, "modify", anat)
            obs_text = "tube"
        elif st.finding == "pulmonary edema/hazy opacity" and obs_text == "edema" and rng.random() < 0.6:
            anat = s.e("pulmonary", "ANAT-DP")
        elif st.site in _SITE_PRE:
            if (st.site, st.side) in _SITE_UNKNOWN and rng.random() < 0.06:
                phrase = _SITE_UNKNOWN[st.site, st.side]
                if rng.random() < 0.5:
                    anat = s.anatomy(phrase)
                else:
                    post = f"in the {phrase}"
            else:
                # the anatomy head must not combine with the observation into another finding name
                # ("left mid lung" + "opacity" would read as "lung opacity" on the whole lung)
                usable = _usable_sites(st.finding, obs_text)
                choices = usable[0][st.site] + (usable[0].get(f"{st.site}-left", []) if st.side == L else [])
                if rng.random() < 0.55 and choices:
                    anat = s.anatomy(rng.choice(choices).format(side=st.side))
                else:
                    post = rng.choice(usable[1][st.site]).format(side=st.side)
        obs = s.e(obs_text, label)
        if sev_id is not None:
            s.r(sev_id, "modify", obs)
        if mod_id is not None:
            s.r(mod_id, "modify", obs)
        if post:
            words = post.split(" ")
            s.w(" ".join(words[:2]))
            anat = s.anatomy(" ".join(words[2:]))
        if anat is not None:
            s.r(obs, "located_at", anat)
        return obs, anat, plural

    def statement(self, st: _Stmt, impression: bool = False) -> _Sentence:
        """One sentence realising a statement; the stated change is rendered exactly."""
        rng = self.rng
        s = _Sentence()
        f = st.finding
        count = _FORMS[f][3]
        if st.polarity == "absent" and st.change is None:
            s.w(rng.choice(("no", "no", "there is no")) if f != "pneumonia" else "no evidence of")
            self.noun_phrase(s, st, severity=False)
            s.w(".")
            return s
        if f in _DEVICES:
            return self.device(s, st)
        if st.polarity == "uncertain":
            if rng.random() < 0.6:
                s.w("possible")
                self.noun_phrase(s, st)
            else:
                self.noun_phrase(s, st)
                s.w("cannot be excluded")
            s.w(".")
            return s
        change = st.change
        if change == "resolved":
            if rng.random() < 0.5:
                s.w("interval")
                chg = s.e("resolution", self.chan(f, change))
                s.w("of the")
                obs, _, _ = self.noun_phrase(s, st, severity=False)
            else:
                s.w("previously seen")
                obs, _, plural = self.noun_phrase(s, st, severity=False)
                s.w("have" if plural else "has")
                chg = s.e("resolved", self.chan(f, change))
            s.r(chg, "modify", obs)
            s.w(".")
            return s
        if change is None:
            if f == "tortuous aorta" and rng.random() < 0.5:
                s.w("the")
                anat = s.e("aorta", "ANAT-DP")
                s.w("is")
                s.r(s.e("tortuous", "OBS-DP"), "located_at", anat)
            else:
                if rng.random() < 0.3 and not impression:
                    first, plural = self.probe(st)
                    s.w("there are" if plural else f"there is {_article(first)}" if count else "there is")
                obs, anat, _ = self.noun_phrase(s, st)
                self._combo(s, st, obs, anat)
            s.w(".")
            return s
        words = _CHANGE_WORDS[change]
        kinds = [k for k in ("past", "state", "adj", "noun") if words[k]]
        if st.combo:
            kinds = ["adj"]
        kind = rng.choice(kinds)
        label = self.chan(f, change)
        if kind == "adj":
            chg = s.e(rng.choice(words["adj"]), label)
            obs, anat, _ = self.noun_phrase(s, st)
            self._combo(s, st, obs, anat)
        elif kind == "noun":
            s.w("interval")
            noun, prep = rng.choice(words["noun"]).split(" ")
            chg = s.e(noun, label)
            s.w(prep)
            if change == "new":
                first, plural = self.probe(st)
                if count and not plural:
                    s.w(_article(first))
            else:
                s.w("the")
            obs, _, _ = self.noun_phrase(s, st)
        else:
            obs, _, plural = self.noun_phrase(s, st)
            if kind == "past":
                s.w("have" if plural else "has")
                chg = s.e(rng.choice(words["past"]), label)
            else:
                s.w("are" if plural else "is")
                chg = s.e(rng.choice(words["state"]), label)
        s.r(chg, "modify", obs)
        s.w(".")
        return s

    def _combo(self, s: _Sentence, st: _Stmt, obs: int, anat: int | None) -> None:
        if not st.combo:
            return
        s.w("may reflect")
        for k, finding in enumerate(st.combo):
            if k:
                s.w("or")
            u = s.e(finding, "OBS-U")
            s.r(obs, "suggestive_of", u)
            if anat is not None:
                s.r(u, "located_at", anat)

    def device(self, s: _Sentence, st: _Stmt) -> _Sentence:
        """Tubes, lines and pacers: placed (CHAN-DEV-AP), removed (CHAN-DEV-DISA), repositioned, unchanged."""
        rng = self.rng
        f, change = st.finding, st.change
        if change == "resolved":
            if rng.random() < 0.5:
                s.w("interval")
                chg = s.e("removal", self.chan(f, change))
                s.w("of the")
                obs, _, _ = self.noun_phrase(s, st)
            else:
                obs, _, _ = self.noun_phrase(s, st)
                s.w("has been")
                chg = s.e("removed", self.chan(f, change))
            s.r(chg, "modify", obs)
        elif change == "new":
            if rng.random() < 0.5:
                chg = s.e("new", self.chan(f, change))
                obs, _, _ = self.noun_phrase(s, st)
            else:
                s.w("interval")
                chg = s.e("placement", self.chan(f, change))
                s.w("of")
                s.w(_article(self.probe(st)[0]))
                obs, _, _ = self.noun_phrase(s, st)
            s.r(chg, "modify", obs)
        elif change == "no change":
            obs, _, _ = self.noun_phrase(s, st)
            s.w("is")
            chg = s.e("unchanged", self.chan(f, change))
            s.w("in position")
            s.r(chg, "modify", obs)
        elif change == "repositioned":
            obs, _, _ = self.noun_phrase(s, st)
            s.w("has been")
            chg = s.e(rng.choice(("advanced", "withdrawn", "repositioned")), self.chan(f, change))
            s.r(chg, "modify", obs)
        else:
            obs, _, _ = self.noun_phrase(s, st)
            if f == "picc" and rng.random() < 0.5:
                s.w("tip is in the")
                s.r(obs, "located_at", s.e("SVC", "ANAT-DP"))
            elif f == "enteric tube" and rng.random() < 0.3:
                s.w("terminates in the")
                s.r(obs, "located_at", s.e("stomach", "ANAT-DP"))
            elif f == "enteric tube":
                s.w("tip is below the diaphragm")
            else:
                s.w(rng.choice(("is in standard position", "is in place", "is present")))
        s.w(".")
        return s


# --- one study: report + scene graph --------------------------------------------------------------------

@dataclass
class _Rendered:
    doc: dict
    # (phrase text, statements, normal-region tag, severity word per id(statement))
    sentences: list[tuple[str, list[_Stmt], str | None, dict[int, str]]]
    stated_radgraph: dict[tuple[str, str], str]


def _render_report(rng: random.Random, stmts: list[_Stmt], has_prior: bool, compare: bool, reason: str,
                   cur: list[int]) -> _Rendered:
    """RadGraph text and entities for one report, and the sentence list the scene graph is built from."""
    rep = _Report()
    rend = _Renderer(rng)
    sentences: list[tuple[str, list[_Stmt], str | None, dict[int, str]]] = []

    def emit(s: _Sentence, stmts: list[_Stmt], normal: str | None = None) -> None:
        sentences.append((rep.add(s), stmts, normal, rend.used))
        rend.used = {}

    def header(text: str) -> None:
        s = _Sentence()
        s.w(text)
        rep.add(s, capitalise=False)

    header("EXAMINATION : Chest radiograph .")
    header(f"INDICATION : {reason} .")
    header("COMPARISON : Prior chest radiograph ." if has_prior and compare else "COMPARISON : None .")
    header("FINDINGS :")
    lung_findings = any(cur[_IX[k]] for k in TRACKED if k[0] in ("lung opacity", "consolidation", "pneumonia",
                                                                  "pulmonary edema/hazy opacity", "atelectasis"))
    negs = [st for st in stmts if st.polarity == "absent" and st.change is None]
    others = [st for st in stmts if not (st.polarity == "absent" and st.change is None)]
    for st in others:
        emit(rend.statement(st), [st])
    if len(negs) >= 2 and rng.random() < 0.5:
        s = _Sentence()
        s.w("no")
        for k, st in enumerate(negs):
            if k:
                s.w("," if k < len(negs) - 1 else "or")
            rend.noun_phrase(s, st, severity=False)
        s.w(".")
        emit(s, negs)
    else:
        for st in negs:
            emit(rend.statement(st), [st])
    if not lung_findings and rng.random() < 0.2:
        s = _Sentence()
        s.w("the")
        lungs = s.e("lungs", "ANAT-DP")
        s.w("are")
        s.r(s.e("clear", "OBS-DP"), "located_at", lungs)
        s.w(".")
        emit(s, [], "lungs")
    if cur[_IX["enlarged cardiac silhouette", "cardiac silhouette"]] == 0 and rng.random() < 0.15:
        s = _Sentence()
        heart = s.anatomy("heart size")
        s.w("is")
        s.r(s.e("normal", "OBS-DP"), "located_at", heart)
        s.w(".")
        emit(s, [], "heart")
    if rng.random() < 0.1:
        s = _Sentence()
        bones = s.anatomy("osseous structures")
        s.w("are")
        s.r(s.e("unremarkable", "OBS-DP"), "located_at", bones)
        s.w(".")
        emit(s, [])

    header("IMPRESSION :")
    key = [st for st in others if st.polarity == "present" and st.finding not in _DEVICES + _CHRONIC
           and (st.severity >= 2 or st.change in ("new", "worsened"))]
    if key:
        for st in key[:2]:
            emit(rend.statement(st, impression=True), [st])
    elif negs and rng.random() < 0.6:
        st = rng.choice(negs)
        emit(rend.statement(st, impression=True), [st])
    else:
        s = _Sentence()
        s.w("no")
        acute = s.e("acute", "OBS-DA")
        cp = s.e("cardiopulmonary", "ANAT-DP")
        proc = s.e("process", "OBS-DA")
        s.r(acute, "modify", proc)
        s.r(proc, "located_at", cp)
        s.w(".")
        emit(s, [])

    stated: dict[tuple[str, str], str] = {}
    for _, sts, _, _ in sentences:
        for st in sts:
            if st.change:
                for region in st.regions:
                    stated.setdefault((region, st.finding), st.change)
    doc = {"text": " ".join(rep.tokens), "entities": rep.entities, "data_source": "MIMIC-CXR",
           "data_split": "inference"}
    return _Rendered(doc, sentences, stated)


def _objects(rng: random.Random, image_id: str, rows: int, cols: int) -> list[dict]:
    """36 anatomical boxes (a few images miss some; ~0.5 % faulty boxes), 224-frame and original pixels."""
    t = _tables()
    ratio = 224.0 / max(rows, cols)
    w, h = cols * ratio, rows * ratio
    left, top = (224.0 - w) / 2.0, (224.0 - h) / 2.0
    scale = rng.uniform(0.92, 1.05)
    dx, dy = rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03)
    missing: set[str] = set()
    if rng.random() < 0.03:
        missing = set(rng.sample(t.bboxes, rng.randint(1, 4)))
    out = []
    for name in t.bboxes:
        if name in missing:
            continue
        fr = [c / 224.0 for c in t.box_template[name]]
        fx1, fy1, fx2, fy2 = [0.5 + (c - 0.5) * scale + d + rng.uniform(-0.012, 0.012)
                              for c, d in zip(fr, (dx, dy, dx, dy))]
        # edge boxes are clamped at 0: the loader rejects negative coordinates (box by box)
        ox1, oy1, ox2, oy2 = (max(0, round(fx1 * cols)), max(0, round(fy1 * rows)), round(fx2 * cols),
                              round(fy2 * rows))
        if rng.random() < 0.005:  # odd boxes as in the release: past the right edge, zero-area or past the bottom
            kind = rng.randrange(3)
            if kind == 0:
                ox2 = cols + rng.randint(1, 40)
            elif kind == 1:
                ox2 = ox1
            else:
                oy2 = rows + rng.randint(1, 60)
        x1, y1 = max(0, round(ox1 * ratio + left)), max(0, round(oy1 * ratio + top))
        x2, y2 = round(ox2 * ratio + left), round(oy2 * ratio + top)
        region = t.vocab.regions[name]
        out.append({
            "object_id": f"{image_id}_{name}", "x1": x1, "y1": y1, "x2": x2, "y2": y2,
            "width": x2 - x1, "height": y2 - y1, "bbox_name": name, "synsets": list(region.cuis),
            "name": name[:1].upper() + name[1:], "original_x1": ox1, "original_y1": oy1, "original_x2": ox2,
            "original_y2": oy2, "original_width": ox2 - ox1, "original_height": oy2 - oy1,
        })
    return out


def _label(finding: str, polarity: str) -> str:
    category = _tables().vocab.findings[finding].category
    return f"{category}|{'no' if polarity == 'absent' else 'yes'}|{finding}"


def _cui(finding: str) -> str:
    return ";;".join(_tables().vocab.findings[finding].cuis)


class _RelCounter:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"REL_{self.n:08d}"


def _scene_graph(image_id: str, view: str, patient_id: str, study: _Study, order: int | None, gender: str,
                 age: str, reason: str, objects: list[dict], rendered: _Rendered, prior_image: str | None,
                 rels: _RelCounter, with_date: bool) -> tuple[dict, dict[tuple[str, str], str]]:
    """One Chest ImaGenome scene graph, and the comparison label it states per (bbox, finding)."""
    v = _tables().vocab
    entries: dict[str, dict] = {}

    def entry(region: str) -> dict:
        if region not in entries:
            r = v.regions[region]
            entries[region] = {
                region: True, "bbox_name": region, "synsets": list(r.cuis), "name": region[:1].upper() + region[1:],
                "attributes": [], "attributes_ids": [], "phrases": [], "phrase_IDs": [], "sections": [],
                "comparison_cues": [], "temporal_cues": [], "severity_cues": [], "texture_cues": [],
                "object_id": f"{image_id}_{region}",
            }
        return entries[region]

    relationships: list[dict] = []
    stated: dict[tuple[str, str], str] = {}
    for k, (text, stmts, normal, words) in enumerate(rendered.sentences):
        per_region: dict[str, list[_Stmt]] = {}
        for st in stmts:
            if not st.in_scene_graph:
                continue
            for region in st.regions:
                if v.regions[region].has_bbox:
                    per_region.setdefault(region, []).append(st)
        normal_regions = {"lungs": ("right lung", "left lung"), "heart": ("cardiac silhouette",)}.get(normal or "", ())
        for region in normal_regions:
            per_region.setdefault(region, [])
        for region, sts in per_region.items():
            labels, ids, comp, sev, tex, tmp = [], [], [], [], [], []
            for st in sts:
                labels.append(_label(st.finding, st.polarity))
                ids.append(_cui(st.finding))
                for extra in st.combo:
                    labels.append(_label(extra, "present"))
                    ids.append(_cui(extra))
                if st.imagenome:
                    comp.extend(f"comparison|yes|{c}" for c in st.imagenome)
                if id(st) in words:
                    sev.append(f"severity|yes|{words[id(st)]}")
                if st.finding in _TEXTURE and st.polarity != "absent":
                    tex.append(f"texture|yes|{_TEXTURE[st.finding]}")
                if st.finding in _CHRONIC:
                    tmp.append("temporal|yes|chronic")
                elif st.change == "new" and st.finding in ("consolidation", "pneumonia"):
                    tmp.append("temporal|yes|acute")
            abnormal = any("|yes|" in lab for lab in labels)
            labels.append("nlp|yes|abnormal" if abnormal else "nlp|yes|normal")
            ids.append("C0205161" if abnormal else "C0205307")
            e = entry(region)
            e["attributes"].append(labels)
            e["attributes_ids"].append(ids)
            e["phrases"].append(text)
            e["phrase_IDs"].append(f"{study.study_id}|{k}")
            e["sections"].append("finalreport")
            e["comparison_cues"].append(sorted(set(comp)))
            e["temporal_cues"].append(tmp)
            e["severity_cues"].append(sev)
            e["texture_cues"].append(tex)
            if prior_image is None or not v.regions[region].has_bbox:
                continue
            for st in sts:
                if not st.imagenome:
                    continue
                stated.setdefault((region, st.finding), ";;".join(st.imagenome))
                relationships.append({
                    "relationship_id": rels.next(),
                    "predicate": "[" + ", ".join(f"'{_PREDICATE[c]}'" for c in st.imagenome) + "]",
                    "synsets": [],
                    "relationship_names": [f"comparison|yes|{c}" for c in st.imagenome],
                    "relationship_contexts": [1.0] * len(st.imagenome),
                    "phrase": text,
                    "attributes": [_label(st.finding, "present")],
                    "bbox_name": region,
                    "subject_id": f"{image_id}_{region}",
                    "object_id": f"{prior_image}_{region}",
                })
    graph = {
        "image_id": image_id, "viewpoint": view, "patient_id": int(patient_id), "study_id": int(study.study_id),
        "gender": gender, "age_decile": age, "reason_for_exam": reason,
        "StudyOrder": order if with_date else None,
        "StudyDateTime": study.when.strftime("%Y-%m-%d %H:%M:%S") if with_date else None,
        "objects": objects, "attributes": list(entries.values()), "relationships": relationships,
    }
    return graph, stated


# --- writing --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CohortSummary:
    """What :func:`write_cohort` wrote.

    Attributes:
        out_dir: the cohort folder.
        seed, patients: the arguments.
        studies, images, lateral_images, reports: counts (``images`` = frontal images = scene graphs).
        relationships: Chest ImaGenome comparison relationships written.
        ground_truth_rows, embedding_rows: rows of the two parquet files (0 when no embeddings).
        malformed: malformed files written (README.json not counted).
        files, bytes: everything written under ``out_dir``.
        scene_graph_dir, radgraph_dir, metadata_csv, ground_truth: paths of the outputs.
        embeddings: ``region_embeddings.parquet`` or None.
        malformed_dir: ``malformed/`` or None.
    """

    out_dir: Path
    seed: int
    patients: int
    studies: int
    images: int
    lateral_images: int
    reports: int
    relationships: int
    ground_truth_rows: int
    embedding_rows: int
    malformed: int
    files: int
    bytes: int
    scene_graph_dir: Path
    radgraph_dir: Path
    metadata_csv: Path
    ground_truth: Path
    embeddings: Path | None
    malformed_dir: Path | None


_GT_SCHEMA = pa.schema([
    ("patient_id", pa.string()), ("study_id", pa.string()), ("prior_study_id", pa.string()),
    ("anatomy", pa.string()), ("finding", pa.string()), ("change", pa.string()),
    ("severity_prior", pa.int64()), ("severity_current", pa.int64()),
    ("stated_imagenome", pa.string()), ("stated_radgraph", pa.string()),
])
_EMB_SCHEMA = pa.schema([
    ("image_id", pa.string()), ("anatomy", pa.string()),
    ("embedding", pa.list_(pa.float32(), EMBEDDING_DIM)),
])


class _Writer:
    """Streams one cohort to disk: JSON files as they are made, CSV rows, parquet row groups."""

    def __init__(self, out: Path, seed: int, embeddings: bool, sparse: bool = False) -> None:
        self.out = out
        self.seed = seed
        self.sparse = sparse
        self.files = 0
        self.bytes = 0
        self.studies = self.images = self.laterals = self.reports = self.relationships = 0
        self.gt_rows = self.emb_rows = 0
        self.subjects: set[str] = set()
        self.study_ids: set[str] = set()
        self.dicoms: set[str] = set()
        self.first_patient: tuple[str, str] | None = None  # (patient, study) for malformed/
        self.rels = _RelCounter()
        self.meta_fh = (out / METADATA_CSV).open("w", newline="", encoding="utf-8")
        self.meta = csv.writer(self.meta_fh, lineterminator="\n")
        self.meta.writerow(METADATA_COLUMNS)
        self.gt_writer = pq.ParquetWriter(out / GROUND_TRUTH, _GT_SCHEMA)
        self.gt: dict[str, list] = {name: [] for name in _GT_SCHEMA.names}
        self.emb_writer = pq.ParquetWriter(out / EMBEDDINGS, _EMB_SCHEMA) if embeddings else None
        self.emb: tuple[list, list, list] = ([], [], [])
        if embeddings:
            t = _tables()
            g = np.random.default_rng([seed, 0xE3B])
            n_find = len({f for f, _ in TRACKED})
            self.emb_findings = {f: i for i, f in enumerate(dict.fromkeys(f for f, _ in TRACKED))}
            self.emb_w = g.normal(0.0, 1.0, (n_find, EMBEDDING_DIM)).astype(np.float32)
            self.emb_bias = g.normal(0.0, 0.5, (len(t.embed_regions), EMBEDDING_DIM)).astype(np.float32)
            # per embedding region: (row of its findings in TRACKED order -> finding index)
            self.emb_index = [[(_IX[key], self.emb_findings[key[0]]) for key in TRACKED if key[1] == region]
                              for region in t.embed_regions]

    def write_json(self, path: Path, obj: object) -> None:
        data = json.dumps(obj).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files += 1
        self.bytes += len(data)

    def new_id(self, rng: random.Random, kind: str) -> str:
        if kind == "subject":
            pool, make = self.subjects, lambda: str(rng.randint(10_000_000, 19_999_999))
        elif kind == "study":
            pool, make = self.study_ids, lambda: str(rng.randint(50_000_000, 59_999_999))
        else:
            pool = self.dicoms

            def make() -> str:
                h = f"{rng.getrandbits(160):040x}"
                return "-".join(h[i:i + 8] for i in range(0, 40, 8))
        while True:
            value = make()
            if value not in pool:
                pool.add(value)
                return value

    def flush(self, force: bool = False) -> None:
        if self.gt["patient_id"] and (force or len(self.gt["patient_id"]) >= 50_000):
            self.gt_writer.write_table(pa.table(self.gt, schema=_GT_SCHEMA))
            self.gt = {name: [] for name in _GT_SCHEMA.names}
        if self.emb_writer is not None and self.emb[0] and (force or len(self.emb[0]) >= 50_000):
            flat = np.concatenate(self.emb[2]).astype(np.float32).reshape(-1)
            vec = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), EMBEDDING_DIM)
            self.emb_writer.write_table(pa.table([pa.array(self.emb[0], pa.string()), pa.array(self.emb[1], pa.string()), vec],
                                                 schema=_EMB_SCHEMA))
            self.emb = ([], [], [])

    def close(self) -> None:
        self.flush(force=True)
        self.meta_fh.close()
        self.gt_writer.close()
        if self.emb_writer is not None:
            self.emb_writer.close()

    def embed(self, np_rng: np.random.Generator, image_id: str, sev: list[int]) -> None:
        t = _tables()
        s = np.zeros((len(t.embed_regions), len(self.emb_findings)), dtype=np.float32)
        for r, pairs in enumerate(self.emb_index):
            for row, fi in pairs:
                s[r, fi] = sev[row]
        # an image encoder reads severity only roughly: a per-image acquisition shift (exposure, positioning,
        # AP vs PA) shared by all regions of the image, plus independent noise per region
        shift = np_rng.normal(0.0, EMBEDDING_IMAGE_NOISE, EMBEDDING_DIM)
        noise = np_rng.normal(0.0, EMBEDDING_NOISE, (len(t.embed_regions), EMBEDDING_DIM))
        vec = s @ self.emb_w + self.emb_bias + (shift + noise).astype(np.float32)
        self.emb[0].extend([image_id] * len(t.embed_regions))
        self.emb[1].extend(t.embed_regions)
        self.emb[2].append(vec.astype(np.float32))
        self.emb_rows += len(t.embed_regions)

    # one patient ----------------------------------------------------------------------------------------
    def patient(self, index: int) -> None:
        rng = random.Random(f"cxrkg-synth:{self.seed}:{index}")
        np_rng = np.random.default_rng([self.seed, index]) if self.emb_writer is not None else None
        n = rng.choices(range(1, 9), (0.06, 0.1, 0.13, 0.15, 0.16, 0.15, 0.13, 0.12))[0]
        subject = self.new_id(rng, "subject")
        gender = rng.choice("FM")
        age_lo = rng.choice(range(20, 100, 10))
        age = f"{age_lo}-{age_lo + 10}"
        times, sevs, icus = _simulate(rng, n)
        studies: list[_Study] = []
        for t in range(n):
            st = _Study(self.new_id(rng, "study"), times[t], sevs[t], icus[t])
            n_frontal = 2 if rng.random() < 0.07 else 1
            views = ["AP" if icus[t] or rng.random() < 0.3 else "PA" for _ in range(n_frontal)]
            st.images = sorted(((self.new_id(rng, "dicom"), view) for view in views), key=lambda x: x[0])
            if views[0] == "PA" and rng.random() < 0.7 or rng.random() < 0.1:
                st.laterals = [self.new_id(rng, "dicom")]
            for dicom in [d for d, _ in st.images] + st.laterals:
                st.sizes[dicom] = rng.choice(_IMAGE_SIZES)
            studies.append(st)
        if self.first_patient is None:
            self.first_patient = (subject, studies[0].study_id)
        folder = f"p{subject[:2]}"
        for t, st in enumerate(studies):
            prior = studies[t - 1] if t else None
            compare = prior is not None and rng.random() < 0.85
            reason = f"___{gender} with {rng.choice(_COMPLAINTS)}"
            stmts = _plan(rng, st.sev, prior.sev if prior else None, compare, self.sparse)
            rendered = _render_report(rng, stmts, prior is not None, compare, reason, st.sev)
            doc_key = f"{folder}/p{subject}/s{st.study_id}.txt"
            self.write_json(self.out / RADGRAPH_DIR / folder / f"p{subject}" / f"s{st.study_id}.json",
                            {doc_key: rendered.doc})
            self.reports += 1
            self.studies += 1
            with_date = rng.random() >= 0.05
            prior_image = prior.images[0][0] if prior else None
            stated_ig: dict[tuple[str, str], str] = {}
            for k, (dicom, view) in enumerate(st.images):
                rows, cols = st.sizes[dicom]
                objects = _objects(rng, dicom, rows, cols)
                graph, stated = _scene_graph(dicom, view, subject, st, t + 1, gender, age, reason, objects, rendered,
                                             prior_image, self.rels, with_date)
                self.relationships += len(graph["relationships"])
                if k == 0:
                    stated_ig = stated
                self.write_json(self.out / SCENE_GRAPH_DIR / folder / f"{dicom}_SceneGraph.json", graph)
                self.images += 1
                if np_rng is not None:
                    self.embed(np_rng, dicom, st.sev)
            self.laterals += len(st.laterals)
            self._metadata(subject, st)
            if prior is not None:
                self._truth(subject, prior, st, stated_ig, rendered.stated_radgraph)
        self.flush()

    def _metadata(self, subject: str, st: _Study) -> None:
        date = int(st.when.strftime("%Y%m%d"))
        time = round(st.when.hour * 10000 + st.when.minute * 100 + st.when.second + st.when.microsecond / 1e6, 3)
        rows = [(d, v) for d, v in st.images] + [(d, "LATERAL") for d in st.laterals]
        portable = st.images[0][1] == "AP"
        desc = "CHEST (PORTABLE AP)" if portable else "CHEST (PA AND LAT)" if st.laterals else "CHEST (PA)"
        for dicom, view in rows:
            h, w = st.sizes[dicom]
            meaning = {"AP": "antero-posterior", "PA": "postero-anterior", "LATERAL": "lateral"}[view]
            orientation = "Recumbent" if portable and view == "AP" else "Erect"
            self.meta.writerow((dicom, subject, st.study_id, desc, view, h, w, date, repr(time), desc, meaning,
                                orientation))

    def _truth(self, subject: str, prior: _Study, st: _Study, stated_ig: dict, stated_rg: dict) -> None:
        gt = self.gt
        for i, (finding, region) in enumerate(TRACKED):
            change = true_change(prior.sev[i], st.sev[i])
            if change is None:
                continue
            gt["patient_id"].append(subject)
            gt["study_id"].append(st.study_id)
            gt["prior_study_id"].append(prior.study_id)
            gt["anatomy"].append(region)
            gt["finding"].append(finding)
            gt["change"].append(change)
            gt["severity_prior"].append(prior.sev[i])
            gt["severity_current"].append(st.sev[i])
            gt["stated_imagenome"].append(stated_ig.get((region, finding)))
            gt["stated_radgraph"].append(stated_rg.get((region, finding)))
            self.gt_rows += 1


def _malformed(w: _Writer, count: int) -> list[dict]:
    """Writes ``count`` bad files under malformed/, cycling through MALFORMED_KINDS; returns README entries."""
    rng = random.Random(f"cxrkg-synth-malformed:{w.seed}")
    base = w.out / MALFORMED_DIR
    entries = []
    claimed_patient, claimed_study = w.first_patient or ("10000000", "50000000")
    for k in range(count):
        kind, defect = MALFORMED_KINDS[k % len(MALFORMED_KINDS)]
        subject = w.new_id(rng, "subject")
        study = w.new_id(rng, "study")
        dicom = w.new_id(rng, "dicom")
        folder = f"p{subject[:2]}"
        graph = {
            "image_id": dicom, "viewpoint": "PA", "patient_id": int(subject), "study_id": int(study), "gender": "F",
            "age_decile": "50-60", "reason_for_exam": "___F with cough", "StudyOrder": 1,
            "StudyDateTime": "2155-06-01 09:30:00", "objects": _objects(rng, dicom, 3056, 2544),
            "attributes": [{
                "left costophrenic angle": True, "bbox_name": "left costophrenic angle", "synsets": [],
                "name": "Left costophrenic angle", "attributes": [["anatomicalfinding|yes|pleural effusion", "nlp|yes|abnormal"]],
                "attributes_ids": [[_cui("pleural effusion"), "C0205161"]], "phrases": ["Small left pleural effusion."],
                "phrase_IDs": [f"{study}|4"], "sections": ["finalreport"], "comparison_cues": [[]], "temporal_cues": [[]],
                "severity_cues": [["severity|yes|small"]], "texture_cues": [[]],
                "object_id": f"{dicom}_left costophrenic angle",
            }],
            "relationships": [],
        }
        doc_key = f"{folder}/p{subject}/s{study}.txt"
        text = "FINDINGS : Small left pleural effusion . No pneumothorax ."
        ents = {
            "1": {"tokens": "Small", "label": "OBS-DP", "start_ix": 2, "end_ix": 2, "relations": [["modify", "4"]]},
            "2": {"tokens": "left", "label": "ANAT-DP", "start_ix": 3, "end_ix": 3, "relations": [["modify", "3"]]},
            "3": {"tokens": "pleural", "label": "ANAT-DP", "start_ix": 4, "end_ix": 4, "relations": []},
            "4": {"tokens": "effusion", "label": "OBS-DP", "start_ix": 5, "end_ix": 5, "relations": [["located_at", "3"]]},
            "5": {"tokens": "pneumothorax", "label": "OBS-DA", "start_ix": 8, "end_ix": 8, "relations": []},
        }
        record = dicom
        if kind == "truncated_json":
            path = base / SCENE_GRAPH_DIR / f"{dicom}_SceneGraph.json"
            data = json.dumps(graph).encode()
            payload = data[: len(data) // 2]
        elif kind == "wrong_types":
            if (k // len(MALFORMED_KINDS)) % 2 == 0:
                graph["attributes"] = {"left costophrenic angle": graph["attributes"][0]}
                defect = "scene graph whose attributes is an object, not a list"
            else:
                graph["study_id"] = {"id": int(study)}
                defect = "scene graph whose study_id is an object, not an int or string"
            path = base / SCENE_GRAPH_DIR / f"{dicom}_SceneGraph.json"
            payload = json.dumps(graph).encode()
        elif kind == "unknown_entity_label":
            ents["5"]["label"] = "OBS-MAYBE"
            path = base / RADGRAPH_DIR / folder / f"p{subject}" / f"s{study}.json"
            payload = json.dumps({doc_key: {"text": text, "entities": ents, "data_source": "MIMIC-CXR",
                                            "data_split": "inference"}}).encode()
            defect = f"{defect}: entity 5 is labelled 'OBS-MAYBE'"
            record = doc_key
        elif kind == "dangling_relation":
            ents["4"]["relations"].append(["located_at", "99"])
            path = base / RADGRAPH_DIR / folder / f"p{subject}" / f"s{study}.json"
            payload = json.dumps({doc_key: {"text": text, "entities": ents, "data_source": "MIMIC-CXR",
                                            "data_split": "inference"}}).encode()
            defect = f"{defect}: entity 4 located_at entity 99"
            record = doc_key
        elif kind == "study_claimed_by_other_patient":
            graph["study_id"] = int(claimed_study)
            graph["attributes"][0]["phrase_IDs"] = [f"{claimed_study}|4"]
            path = base / SCENE_GRAPH_DIR / f"{dicom}_SceneGraph.json"
            payload = json.dumps(graph).encode()
            defect = f"{defect}: study {claimed_study} belongs to patient {claimed_patient}, this file says {subject}"
        else:
            graph["StudyDateTime"] = None
            graph["StudyOrder"] = None
            path = base / SCENE_GRAPH_DIR / f"{dicom}_SceneGraph.json"
            payload = json.dumps(graph).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(payload)
        w.files += 1
        w.bytes += len(payload)
        entries.append({"file": path.relative_to(w.out).as_posix(), "kind": kind, "defect": defect,
                        "record": record, "patient_id": subject,
                        "study_id": claimed_study if kind == "study_claimed_by_other_patient" else study})
    return entries


def write_cohort(out_dir: Path, patients: int, seed: int, malformed: int = 0, embeddings: bool = False,
                 sparse: bool = False) -> CohortSummary:
    """Write a synthetic cohort of ``patients`` patients under ``out_dir``; the same seed writes the same bytes.

    Layout (docs/formats.md): ``scene_graphs/p1X/<dicom_id>_SceneGraph.json`` (one per frontal image),
    ``radgraph/p1X/p1XXXXXXX/sXXXXXXXX.json`` (one RadGraph document per report),
    ``mimic-cxr-2.0.0-metadata.csv`` (one row per image, laterals included), ``ground_truth.parquet``,
    with ``embeddings`` also ``region_embeddings.parquet``, with ``malformed`` > 0 also ``malformed/``.

    Ground truth: one row per consecutive study pair of a patient and tracked (anatomy, finding) present in
    either study; columns ``patient_id, study_id, prior_study_id`` (str), ``anatomy, finding``,
    ``change`` (improved / worsened / no change / new / resolved), ``severity_prior, severity_current``
    (int 0..3; devices 0/1), ``stated_imagenome`` (the Chest ImaGenome comparison label of the primary
    image's relationship, several joined by ``;;``, or null) and ``stated_radgraph`` (the progression class
    of the report's RadGraph2 change entity, as ``vocabulary().change_labels`` maps it, or null).

    Embeddings: one row per frontal image and region of :data:`TRACKED` (17 regions): ``image_id``,
    ``anatomy``, ``embedding`` (fixed-size list of ``EMBEDDING_DIM`` = 32 float32) = severities of the
    region's findings times a fixed random matrix (N(0, 1) entries) + a region bias + a per-image shift
    shared by the image's regions (N(0, 2²) per dimension) + independent N(0, 2²) noise; unitless. The noise
    makes one image's region a rough severity reader (image-based progression models reach only
    0.35-0.47 macro-F1 on Chest ImaGenome), which other regions of the same image help to correct.

    Outputs of an earlier run in ``out_dir`` (the folders and files named above) are replaced; other
    files are left alone. Files are written patient by patient; memory holds one patient plus the id sets.

    Args:
        out_dir: the cohort folder (created if missing).
        patients: number of patients (>= 1); each has 1-8 studies (mean ~4.8).
        seed: random seed; output is a function of (patients, seed, malformed, embeddings, sparse) only, and the
            regular files do not depend on ``malformed`` or ``embeddings``.
        malformed: number of bad files under ``malformed/``, kinds cycling through :data:`MALFORMED_KINDS`,
            listed with their defects in ``malformed/README.json``.
        embeddings: also write ``region_embeddings.parquet``.
        sparse: reports state every present finding and nothing else (no absences, hedges or omissions),
            as real reports list what they see; the default cohort also states some absences. A sparse
            cohort's study-level events are exactly its ground truth's (``graph.synth_check``).

    Raises:
        ValueError: ``patients`` < 1 or ``malformed`` < 0.
        RuntimeError: the vocabulary no longer knows a name this generator uses.
        OSError: the folder cannot be written.
    """
    if patients < 1:
        raise ValueError(f"patients must be >= 1, got {patients}")
    if malformed < 0:
        raise ValueError(f"malformed must be >= 0, got {malformed}")
    _tables()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in _OUTPUTS:
        p = out / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
    w = _Writer(out, seed, embeddings, sparse)
    try:
        for i in range(patients):
            w.patient(i)
    finally:
        w.close()
    readme = None
    if malformed:
        entries = _malformed(w, malformed)
        readme = out / MALFORMED_DIR / "README.json"
        data = json.dumps({"description": "deliberately malformed inputs; each must be rejected", "files": entries},
                          indent=1).encode()
        readme.write_bytes(data)
        w.files += 1
        w.bytes += len(data)
    for name in (METADATA_CSV, GROUND_TRUTH) + ((EMBEDDINGS,) if embeddings else ()):
        w.files += 1
        w.bytes += (out / name).stat().st_size
    return CohortSummary(
        out_dir=out, seed=seed, patients=patients, studies=w.studies, images=w.images, lateral_images=w.laterals,
        reports=w.reports, relationships=w.relationships, ground_truth_rows=w.gt_rows, embedding_rows=w.emb_rows,
        malformed=malformed, files=w.files, bytes=w.bytes, scene_graph_dir=out / SCENE_GRAPH_DIR,
        radgraph_dir=out / RADGRAPH_DIR, metadata_csv=out / METADATA_CSV, ground_truth=out / GROUND_TRUTH,
        embeddings=out / EMBEDDINGS if embeddings else None, malformed_dir=out / MALFORMED_DIR if malformed else None,
    )
