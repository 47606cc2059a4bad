"""What the graph states about each study, read for its staged questions (:mod:`graph.cxrtrek.generate`).

One read per :data:`BATCH_PATIENTS` patients, the next read while the current batch is written (:data:`graph.store.cxrtrek_statements.STUDY_STAGE_FACTS`).
Findings are read at anatomy level (Observation nodes), without the IS_A hierarchy: a study has the findings
its sources state, not their parents. Polarity as Medical-Diff-VQA and CXRTrek read hedged findings (the demo
file answers "Yes." to a "probable" effusion): ``present`` and ``uncertain`` count as present, ``absent`` as
explicitly negated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graph.store import cxrtrek_statements as cs
from graph.store.read_statements import PATIENT_IDS
from graph.store.reads import Reader, read_by_patients
from graph.terms import POSITIVE_STATES

BATCH_PATIENTS = 1000
"""Patients per read."""

DEVICE_CATEGORIES = ("tubesandlines", "device")
"""The vocabulary categories CXRTrek asks about as foreign bodies (``foreign_body_[...]`` targets)."""
TECHNICAL_CATEGORY = "technicalassessment"
"""The vocabulary category of the findings that state image quality (low lung volumes, rotated, artifact, skin
fold, breast/nipple shadows): stage 1's Quality_Assessment reads them."""
QUALITY_TASKS = ("rotation", "inclusion")
"""The Measurement tasks (graph.measurements) stage 1's Quality_Assessment reads."""


@dataclass(frozen=True)
class Observation:
    """One stated observation: id, vocabulary anatomy and finding, the finding's category, polarity,
    severity word (None when none was stated)."""

    observation_id: str
    anatomy: str
    finding: str
    category: str | None
    polarity: str
    severity: str | None

    @property
    def present(self) -> bool:
        """Present or uncertain (see the module docstring)."""
        return self.polarity in POSITIVE_STATES


@dataclass(frozen=True)
class Change:
    """One PROGRESSION edge from an observation of the study to one of its previous study: the edge id,
    anatomy, finding, change word, basis (stated / derived), severity now and before, both observation ids."""

    progression_id: str
    anatomy: str
    finding: str
    change: str
    basis: str
    severity: str | None
    prior_severity: str | None
    observation_id: str
    prior_observation_id: str


@dataclass(frozen=True)
class Box:
    """A Chest ImaGenome box of one of the study's images: id, image id, region name, corners (224 frame)."""

    bbox_id: str
    image_id: str
    name: str
    x1: int
    y1: int
    x2: int
    y2: int


@dataclass(frozen=True)
class Measured:
    """A Measurement node of one of the study's images (graph.measurements, written at load time): its id
    (``"<image_id>|<name>"``), image id, name (``rotation_ratio``, ``inclusion``, ``inclusion_apex_right``
    ...), value, the view's threshold, decision (None without a value or outside PA / AP) and reason (why no
    value, else None)."""

    measurement_id: str
    image_id: str
    name: str
    value: float | None
    threshold: float | None
    decision: str | None
    reason: str | None


@dataclass
class StudyStageFacts:
    """One study as its staged questions see it; lists sorted so that a read gives one order.

    Attributes:
        images: (image id, view) of the study's images, by image id; ``prior_images`` the previous study's.
        next_observations: the next study's stated observations (empty when there is none).
        measurements: the rotation and inclusion Measurement nodes of its images (:data:`QUALITY_TASKS`), by
            image id and name.
    """

    study_id: str
    patient_id: str
    order: int | None
    prior_id: str | None
    next_id: str | None
    images: list[tuple[str, str | None]] = field(default_factory=list)
    prior_images: list[tuple[str, str | None]] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    next_observations: list[Observation] = field(default_factory=list)
    measurements: list[Measured] = field(default_factory=list)

    _grouped: dict[bool, dict[str, list[Observation]]] = field(default_factory=dict, repr=False, compare=False)

    def by_finding(self, nxt: bool = False) -> dict[str, list[Observation]]:
        """Finding -> its observations (this study's, or the next study's with ``nxt``), findings sorted."""
        if nxt not in self._grouped:
            out: dict[str, list[Observation]] = defaultdict(list)
            for o in self.next_observations if nxt else self.observations:
                out[o.finding].append(o)
            self._grouped[nxt] = {k: out[k] for k in sorted(out)}
        return self._grouped[nxt]


def _study(row: dict[str, Any]) -> StudyStageFacts:
    obs = sorted((Observation(*o) for o in row["observations"]), key=lambda o: (o.finding, o.anatomy))
    nxt = sorted((Observation(i, a, f, None, p, None) for i, a, f, p in row["next_observations"]),
                 key=lambda o: (o.finding, o.anatomy))
    changes = sorted((Change(*c) for c in row["changes"]), key=lambda c: (c.finding, c.anatomy, c.basis, c.progression_id))
    boxes = sorted((Box(*b) for b in row["boxes"]), key=lambda b: (b.image_id, b.name, b.bbox_id))
    measured = sorted((Measured(*m) for m in row["measurements"]), key=lambda m: (m.image_id, m.name))
    return StudyStageFacts(str(row["study_id"]), str(row["patient_id"]), row["study_order"], row["prior_id"],
                           row["next_id"], [(str(i), v) for i, v in row["images"]],
                           [(str(i), v) for i, v in row["prior_images"]], boxes, obs, changes, nxt, measured)


def _ordered(rows: list[dict[str, Any]]) -> list[StudyStageFacts]:
    studies = [_study(r) for r in rows]
    return sorted(studies, key=lambda s: (s.patient_id, s.order if s.order is not None else -1, s.study_id))


def iter_stage_facts(reader: Reader, patient_ids: list[str]) -> Iterator[list[StudyStageFacts]]:
    """The studies of the given patients, one list per :data:`BATCH_PATIENTS` patients in patient id order,
    each ordered by (patient id, study order, study id). The next batch is read while the caller works on
    this one (a second thread: the server's work and the caller's overlap)."""
    for rows in read_by_patients(reader, cs.STUDY_STAGE_FACTS, patient_ids, BATCH_PATIENTS):
        yield _ordered(rows)


def all_patient_ids(reader: Reader) -> list[str]:
    """Every patient id in the graph, sorted."""
    return [str(r["patient_id"]) for r in reader.read(PATIENT_IDS)]
