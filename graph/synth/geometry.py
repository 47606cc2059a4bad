"""The anatomy each film shows: planted from the patient's true state at the study, so that the boxes measure
what the truth says (docs/measurements.md, "The synthetic cohort's geometry").

Per frontal image the simulator plants six CheXStruct measurements (:class:`Planted`):

* the cardiothoracic ratio, normal (PA 0.41-0.48) without the true enlarged cardiac silhouette and above the
  view's cardiomegaly threshold with it (PA 0.50 + 0.03 per severity level, at least 0.51); AP films add 0.05,
  as an AP projection magnifies the heart (CheXStruct's AP threshold is 0.05 higher);
* the mediastinal width ratio, normal (PA 0.17-0.23) or, in a share of patients, widened (PA 0.27-0.32); AP
  films add 0.08 (CheXStruct's thresholds: 0.25 PA, 0.33 AP);
* the trachea, central or wholly beside the spine's centre: pushed away from a large pneumothorax, or from a
  large effusion where the other side's is small or none, and in a few patients (3 %) deviated throughout;
* the aortic knob, normal (1.2-2.2 trachea widths) or enlarged (2.8-3.4; threshold 2.5) where the true
  tortuous aorta is marked (severity 2);
* rotation: a share of films (more of them AP) with the clavicles' medial edges asymmetric about the spine's
  centre (ratio 0.10-0.30; threshold 0.4), the others 0.60-1.00;
* cut-off films (more of them AP), where one apex or one costophrenic angle lies at or past the image's border.

The numbers are this module's own, placed about CheXStruct's thresholds with a margin (0.01 to 0.2): they are
not read from ``graph.measurements``, so a test that measures the boxes checks the thresholds as well.

Positions are in the template's unit frame (the 224-pixel template of ``graph.synth.tables`` over 224: x to the
viewer's right, the patient's right on the viewer's left), placed on the image by ``graph.synth.scene_graph``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pyarrow as pa

from graph.synth.tables import _IX, SIDES, L, R, _tables

_U = 1 / 224  # one template pixel in the unit frame
MIDLINE = 112 * _U  # the spine box's centre in the template (100 .. 124)
THORAX = (189 - 35) * _U  # the right lung's outer edge (35) to the left lung's (189)
_CLAVICLE_LENGTH = 74 * _U

#: regions whose boxes carry the planted measurements: they get a smaller share of the per-box jitter
PLANTED_REGIONS = frozenset({
    "cardiac silhouette", "right cardiac silhouette", "left cardiac silhouette", "upper mediastinum", "trachea",
    "spine", "aortic arch", "right clavicle", "left clavicle", "right lung", "left lung", "right apical zone",
    "left apical zone", "right costophrenic angle", "left costophrenic angle",
})
#: the share of the per-box jitter (±0.012 of the image) a planted region's corners get: ±0.0018, so that a
#: measured ratio stays within about 0.01 of the planted one
PLANTED_JITTER = 0.15

CUT_OFF_PARTS = ("apex_right", "apex_left", "bottom_right", "bottom_left")
_CUT_REGION = {"apex_right": "right apical zone", "apex_left": "left apical zone",
               "bottom_right": "right costophrenic angle", "bottom_left": "left costophrenic angle"}

_AP_HEART = 0.05  # AP magnifies the heart: the AP cardiomegaly threshold is 0.05 above the PA one
_AP_MEDIASTINUM = 0.08  # and the mediastinum: 0.33 AP against 0.25 PA
_ROTATED = {"PA": 0.06, "AP": 0.15}  # share of rotated films by view
_CUT_OFF = {"PA": 0.04, "AP": 0.10}  # share of cut-off films by view


@dataclass(frozen=True)
class Planted:
    """The geometry planted in one frontal image: true values and states (the truth file's columns).

    Ratios are CheXStruct's (docs/measurements.md): dimensionless, before the boxes' jitter and pixel rounding.

    Attributes:
        view: ``PA`` or ``AP``.
        cardiothoracic_ratio, cardiomegaly: the planted ratio; the true enlarged cardiac silhouette.
        mediastinal_width_ratio, mediastinal_widening: the upper mediastinum over the thoracic width; widened.
        trachea_direction: the patient's side the whole trachea lies on (``left`` / ``right``), None central.
        aortic_knob_ratio, aortic_knob_enlargement: the knob over the trachea's width; enlarged.
        rotation_ratio, rotated: the nearer over the farther clavicle's medial distance from the spine's centre.
        cut_off_part: the part at or past the border (``apex_right``, ``apex_left``, ``bottom_right``,
            ``bottom_left``), None when the film shows the whole chest.
        cut_edge: where that part's edge is placed, as a fraction of the image's height (the apex's top edge
            from -0.02 to 0.004; the costophrenic angle's bottom edge from 0.975 to 1.0); 0 without a cut.
        trachea_width, trachea_offset: the trachea's width over the thoracic width; its centre's offset from the
            spine's centre in trachea widths (to the viewer's right), as placed.
        heart_right_share: the share of the heart's width on the patient's right of the spine's centre.
        clavicle_distance: the clavicles' mean medial distance from the spine's centre over the thoracic width.
        nearer_clavicle: the side whose clavicle is nearer the spine's centre (``left`` / ``right``).
    """

    view: str
    cardiothoracic_ratio: float
    cardiomegaly: bool
    mediastinal_width_ratio: float
    mediastinal_widening: bool
    trachea_direction: str | None
    aortic_knob_ratio: float
    aortic_knob_enlargement: bool
    rotation_ratio: float
    rotated: bool
    cut_off_part: str | None
    cut_edge: float
    trachea_width: float
    trachea_offset: float
    heart_right_share: float
    clavicle_distance: float
    nearer_clavicle: str

    @property
    def cut_off(self) -> bool:
        return self.cut_off_part is not None

    def boxes(self, template: dict[str, tuple[int, int, int, int]]) -> dict[str, tuple[float, ...]]:
        """Every region's box in the unit frame (x1, y1, x2, y2): the template's (in 224 pixels), with the x
        corners of the heart, upper mediastinum, trachea, aortic arch and clavicles placed to the planted
        ratios. The lungs and the spine keep the template's: they fix the thoracic width and the midline."""
        out = {name: tuple(c * _U for c in box) for name, box in template.items()}
        c, tw = MIDLINE, self.trachea_width * THORAX

        def place(name: str, x1: float, x2: float) -> None:
            _, y1, _, y2 = out[name]
            out[name] = (x1, y1, x2, y2)

        heart = self.cardiothoracic_ratio * THORAX
        h1 = c - self.heart_right_share * heart
        place("cardiac silhouette", h1, h1 + heart)
        place("right cardiac silhouette", h1, c)
        place("left cardiac silhouette", c, h1 + heart)
        t1 = c + self.trachea_offset * tw - tw / 2
        place("trachea", t1, t1 + tw)
        mediastinum = self.mediastinal_width_ratio * THORAX
        m1 = t1 + tw / 2 + 0.1 * mediastinum - mediastinum / 2  # a little towards the aortic arch
        place("upper mediastinum", m1, m1 + mediastinum)
        place("aortic arch", t1 + 0.75 * tw, t1 + tw + self.aortic_knob_ratio * tw)
        d = self.clavicle_distance * THORAX
        near, far = 2 * d * self.rotation_ratio / (1 + self.rotation_ratio), 2 * d / (1 + self.rotation_ratio)
        right, left = (near, far) if self.nearer_clavicle == R else (far, near)
        place("right clavicle", c - right - _CLAVICLE_LENGTH, c - right)
        place("left clavicle", c + left, c + left + _CLAVICLE_LENGTH)
        return out

    def cut_shift(self, scale: float, dy: float) -> float:
        """How far (a fraction of the image's height, down positive) the film's anatomy moves so that the cut
        part's edge lands on :attr:`cut_edge`, for the image's placement (``scale`` about the centre, then
        ``dy``); 0 for a film without a cut."""
        if self.cut_off_part is None:
            return 0.0
        _, y1, _, y2 = _tables().box_template[_CUT_REGION[self.cut_off_part]]
        edge = (y1 if self.cut_off_part.startswith("apex") else y2) * _U
        return self.cut_edge - (0.5 + (edge - 0.5) * scale + dy)


@dataclass(frozen=True)
class _Patient:
    """What stays with a patient from study to study: baselines and chronic states."""

    ctr: float              # PA cardiothoracic ratio without cardiomegaly
    heart_offset: float     # added to the ratio with cardiomegaly
    mediastinum: float      # PA mediastinal width ratio
    widened: bool
    knob: float             # aortic knob ratio, normal
    knob_enlarged: float    # aortic knob ratio, where the aorta is marked tortuous
    trachea_width: float
    chronic_deviation: str | None
    heart_right_share: float
    clavicle_distance: float


class PatientGeometry:
    """The planted geometry of one patient's films, drawn from its own random stream (not the patient's, so
    that the reports of a seed stay what they were) and from the patient's true severities at each study.

    Args:
        rng: the patient's geometry stream (``random.Random(f"cxrkg-synth-geometry:{seed}:{index}")``).
    """

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.patient = _Patient(
            ctr=rng.uniform(0.41, 0.47), heart_offset=rng.gauss(0.0, 0.008),
            mediastinum=rng.uniform(0.17, 0.22), widened=rng.random() < 0.06,
            knob=rng.uniform(1.2, 2.1), knob_enlarged=rng.uniform(2.8, 3.4),
            trachea_width=rng.uniform(0.07, 0.09),
            chronic_deviation=rng.choice(SIDES) if rng.random() < 0.03 else None,
            heart_right_share=rng.uniform(0.30, 0.40), clavicle_distance=rng.uniform(0.06, 0.09),
        )

    def image(self, view: str, sev: list[int]) -> Planted:
        """The planted geometry of one frontal image of a study with true severities ``sev`` (TRACKED order).

        Raises:
            KeyError: ``view`` is neither ``PA`` nor ``AP``.
        """
        rng, p = self.rng, self.patient
        ap = view == "AP"
        heart = sev[_IX["enlarged cardiac silhouette", "cardiac silhouette"]]
        if heart:
            ctr = max(0.51, 0.50 + 0.03 * heart + p.heart_offset + rng.gauss(0.0, 0.006))
        else:
            ctr = min(0.48, p.ctr + rng.gauss(0.0, 0.006))
        ctr = min(0.75, ctr + _AP_HEART * ap)
        if p.widened:
            mediastinum = rng.uniform(0.27, 0.32)
        else:
            mediastinum = min(0.23, p.mediastinum + rng.gauss(0.0, 0.004))
        mediastinum += _AP_MEDIASTINUM * ap
        direction = self._trachea(sev) or p.chronic_deviation
        if direction is None:
            offset = rng.uniform(-0.2, 0.2)
        else:  # the near edge a gap of 0.25 .. 0.8 trachea widths beyond the midline
            offset = (0.5 + rng.uniform(0.25, 0.8)) * (1 if direction == L else -1)
        enlarged = sev[_IX["tortuous aorta", "aortic arch"]] >= 2
        knob = (p.knob_enlarged if enlarged else p.knob) + rng.gauss(0.0, 0.03)
        rotated = rng.random() < _ROTATED[view]
        rotation = rng.uniform(0.10, 0.30) if rotated else rng.uniform(0.60, 1.00)
        nearer = rng.choice(SIDES)
        part, edge = None, 0.0
        if rng.random() < _CUT_OFF[view]:
            part = rng.choice(CUT_OFF_PARTS)
            edge = rng.uniform(-0.02, 0.004) if part.startswith("apex") else rng.uniform(0.975, 1.0)
        return Planted(view, round(ctr, 4), bool(heart), round(mediastinum, 4), p.widened, direction, round(knob, 4),
                       enlarged, round(rotation, 4), rotated, part, round(edge, 4), p.trachea_width, offset,
                       p.heart_right_share, p.clavicle_distance, nearer)

    @staticmethod
    def _trachea(sev: list[int]) -> str | None:
        """The side the trachea is pushed to: away from a large pneumothorax, or from a large effusion when the
        other side's is small or none; None when no side pushes, or both do."""
        effusion = {s: sev[_IX["pleural effusion", f"{s} costophrenic angle"]] for s in SIDES}
        pushing = [s for s in SIDES if sev[_IX["pneumothorax", f"{s} apical zone"]] >= 3
                   or effusion[s] >= 3 and effusion[R if s == L else L] <= 1]
        if len(pushing) != 1:
            return None
        return R if pushing[0] == L else L


#: the geometry of a film that plants nothing (the malformed files' valid part): a normal PA chest
NORMAL = Planted("PA", 0.45, False, 0.2, False, None, 1.6, False, 0.9, False, None, 0.0, 0.08, 0.0, 0.35, 0.075, R)


# geometry_truth.parquet: one row per frontal image (scene graph), what its anatomy boxes were planted with
# (graph.synth.geometry); columns ``image_id, patient_id, study_id, view`` (str), ``rows, columns`` (int, as the
# metadata CSV's Rows and Columns), ``cardiothoracic_ratio, cardiomegaly``, ``mediastinal_width_ratio,
# mediastinal_widening``, ``trachea_deviation`` (bool), ``trachea_direction`` (the patient's side, ``left`` /
# ``right``, or null), ``aortic_knob_ratio, aortic_knob_enlargement``, ``rotation_ratio, rotated``, ``cut_off``
# (bool) and ``cut_off_part`` (``apex_right``, ``apex_left``, ``bottom_right``, ``bottom_left`` or null). The
# ratios (double, unitless, 4 decimals) are the planted ones, before the boxes' jitter and pixel rounding; each
# flag is the true state. ``cardiomegaly`` is the study's true enlarged cardiac silhouette (severity > 0) and
# ``aortic_knob_enlargement`` its marked tortuous aorta (severity 2).
TRUTH_SCHEMA = pa.schema([
    ("image_id", pa.string()), ("patient_id", pa.string()), ("study_id", pa.string()), ("view", pa.string()),
    ("rows", pa.int64()), ("columns", pa.int64()),
    ("cardiothoracic_ratio", pa.float64()), ("cardiomegaly", pa.bool_()),
    ("mediastinal_width_ratio", pa.float64()), ("mediastinal_widening", pa.bool_()),
    ("trachea_deviation", pa.bool_()), ("trachea_direction", pa.string()),
    ("aortic_knob_ratio", pa.float64()), ("aortic_knob_enlargement", pa.bool_()),
    ("rotation_ratio", pa.float64()), ("rotated", pa.bool_()),
    ("cut_off", pa.bool_()), ("cut_off_part", pa.string()),
])


def truth_row(image_id: str, patient_id: str, study_id: str, rows: int, columns: int, p: Planted) -> tuple:
    """One film's row of :data:`TRUTH_SCHEMA`, in its column order."""
    return (image_id, patient_id, study_id, p.view, rows, columns, p.cardiothoracic_ratio, p.cardiomegaly,
            p.mediastinal_width_ratio, p.mediastinal_widening, p.trachea_direction is not None,
            p.trachea_direction, p.aortic_knob_ratio, p.aortic_knob_enlargement, p.rotation_ratio, p.rotated,
            p.cut_off, p.cut_off_part)
