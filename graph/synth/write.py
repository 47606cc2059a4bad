"""Writing a cohort: files in the released layouts, ground truth, embeddings, malformed inputs.

Layout of :func:`write_cohort`'s output (docs/formats.md §1.1): ``scene_graphs/p1X/<dicom_id>_SceneGraph.json``
(one per frontal image), ``radgraph/p1X/p1XXXXXXX/sXXXXXXXX.json`` (one RadGraph document per report),
``mimic-cxr-2.0.0-metadata.csv`` (one row per image, laterals included), ``ground_truth.parquet``,
``geometry_truth.parquet``, with ``embeddings`` also ``region_embeddings.parquet``, with ``malformed`` > 0 also
``malformed/``.

Ground truth: one row per consecutive study pair of a patient and tracked (anatomy, finding) present in
either study; columns ``patient_id, study_id, prior_study_id`` (str), ``anatomy, finding``,
``change`` (improved / worsened / no change / new / resolved), ``severity_prior, severity_current``
(int 0..3; devices 0/1), ``stated_imagenome`` (the Chest ImaGenome comparison label of the primary
image's relationship, several joined by ``;;``, or null) and ``stated_radgraph`` (the progression class
of the report's RadGraph2 change entity, as ``vocabulary().change_labels`` maps it, or null).

Geometry truth: one row per frontal image: :data:`graph.synth.geometry.TRUTH_SCHEMA`.

Embeddings: one row per frontal image and region of :data:`TRACKED` (17 regions): ``image_id``,
``anatomy``, ``embedding`` (fixed-size list of ``EMBEDDING_DIM`` = 32 float32) = severities of the
region's findings times a fixed random matrix (N(0, 1) entries) + a region bias + a per-image shift
shared by the image's regions (N(0, 2²) per dimension) + independent N(0, 2²) noise; unitless. The noise
makes one image's region a rough severity reader (image-based progression models reach only
0.35-0.47 macro-F1 on Chest ImaGenome), which other regions of the same image help to correct.
"""

from __future__ import annotations

import csv
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from graph.synth.geometry import NORMAL, TRUTH_SCHEMA, PatientGeometry, Planted, truth_row
from graph.synth.plan import _plan
from graph.synth.render import _render_report
from graph.synth.scene_graph import _cui, _objects, _RelCounter, _scene_graph
from graph.synth.simulate import STUDY_WEIGHTS, _simulate, _Study, study_count_weights, true_change
from graph.synth.tables import (
    _COMPLAINTS,
    _IMAGE_SIZES,
    _IX,
    _OUTPUTS,
    EMBEDDING_DIM,
    EMBEDDING_IMAGE_NOISE,
    EMBEDDING_NOISE,
    EMBEDDINGS,
    GEOMETRY_TRUTH,
    GROUND_TRUTH,
    MALFORMED_DIR,
    MALFORMED_KINDS,
    METADATA_COLUMNS,
    METADATA_CSV,
    RADGRAPH_DIR,
    SCENE_GRAPH_DIR,
    TRACKED,
    _tables,
)


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
        geometry_truth: ``geometry_truth.parquet`` (one row per scene graph).
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
    geometry_truth: Path

    def line(self) -> str:
        """One line for people: what was written where."""
        extra = (f", {self.malformed} malformed" if self.malformed else "") + \
                (f", {self.embedding_rows:,} embeddings" if self.embedding_rows else "")
        return (f"{self.patients} patients, {self.studies} studies, {self.images} scene graphs, {self.reports} "
                f"reports{extra}: {self.files} files ({self.bytes / 1e6:.1f} MB) in {self.out_dir}")


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

    def __init__(self, out: Path, seed: int, embeddings: bool, sparse: bool = False,
                 study_weights: tuple[float, ...] = STUDY_WEIGHTS) -> None:
        self.out = out
        self.seed = seed
        self.sparse = sparse
        self.study_weights = study_weights
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
        self.geo_writer = pq.ParquetWriter(out / GEOMETRY_TRUTH, TRUTH_SCHEMA)
        self.geo: dict[str, list] = {name: [] for name in TRUTH_SCHEMA.names}
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
        if self.geo["image_id"] and (force or len(self.geo["image_id"]) >= 50_000):
            self.geo_writer.write_table(pa.table(self.geo, schema=TRUTH_SCHEMA))
            self.geo = {name: [] for name in TRUTH_SCHEMA.names}
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
        self.geo_writer.close()
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
        n = rng.choices(range(1, 9), self.study_weights)[0]
        subject = self.new_id(rng, "subject")
        gender = rng.choice("FM")
        age_lo = rng.choice(range(20, 100, 10))
        age = f"{age_lo}-{age_lo + 10}"
        times, sevs, icus = _simulate(rng, n)
        geometry = PatientGeometry(random.Random(f"cxrkg-synth-geometry:{self.seed}:{index}"))
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
            rendered = _render_report(rng, stmts, prior is not None, compare, reason, st.sev, self.sparse)
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
                planted = geometry.image(view, st.sev)
                objects = _objects(rng, dicom, rows, cols, planted)
                self._geometry(dicom, subject, st.study_id, rows, cols, planted)
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

    def _geometry(self, dicom: str, subject: str, study_id: str, rows: int, cols: int, p: Planted) -> None:
        for name, value in zip(TRUTH_SCHEMA.names, truth_row(dicom, subject, study_id, rows, cols, p), strict=True):
            self.geo[name].append(value)

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


def _valid_scene_graph(rng: random.Random, dicom: str, subject: str, study: str) -> dict:
    """A well-formed one-phrase scene graph (small left pleural effusion) that a malformed kind then breaks."""
    return {
        "image_id": dicom, "viewpoint": "PA", "patient_id": int(subject), "study_id": int(study), "gender": "F",
        "age_decile": "50-60", "reason_for_exam": "___F with cough", "StudyOrder": 1,
        "StudyDateTime": "2155-06-01 09:30:00", "objects": _objects(rng, dicom, 3056, 2544, NORMAL),
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


def _valid_entities() -> dict:
    """The RadGraph entities of "FINDINGS : Small left pleural effusion . No pneumothorax ."."""
    return {
        "1": {"tokens": "Small", "label": "OBS-DP", "start_ix": 2, "end_ix": 2, "relations": [["modify", "4"]]},
        "2": {"tokens": "left", "label": "ANAT-DP", "start_ix": 3, "end_ix": 3, "relations": [["modify", "3"]]},
        "3": {"tokens": "pleural", "label": "ANAT-DP", "start_ix": 4, "end_ix": 4, "relations": []},
        "4": {"tokens": "effusion", "label": "OBS-DP", "start_ix": 5, "end_ix": 5, "relations": [["located_at", "3"]]},
        "5": {"tokens": "pneumothorax", "label": "OBS-DA", "start_ix": 8, "end_ix": 8, "relations": []},
    }


def _broken(kind: str, defect: str, k: int, base: Path, graph: dict, ents: dict, text: str, doc_key: str,
            ids: tuple[str, str, str, str], claimed: tuple[str, str]) -> tuple[Path, bytes, str, str]:
    """(path, bytes, defect, record) of one malformed file of ``kind`` (the ``k``-th malformed file) made
    from the valid scene graph / RadGraph entities; ``ids``: subject, study, dicom, patient folder."""
    subject, study, dicom, folder = ids
    claimed_patient, claimed_study = claimed
    path = base / SCENE_GRAPH_DIR / f"{dicom}_SceneGraph.json"
    record = dicom
    if kind == "truncated_json":
        data = json.dumps(graph).encode()
        payload = data[: len(data) // 2]
    elif kind in ("unknown_entity_label", "dangling_relation"):
        if kind == "unknown_entity_label":
            ents["5"]["label"] = "OBS-MAYBE"
            defect = f"{defect}: entity 5 is labelled 'OBS-MAYBE'"
        else:
            ents["4"]["relations"].append(["located_at", "99"])
            defect = f"{defect}: entity 4 located_at entity 99"
        path = base / RADGRAPH_DIR / folder / f"p{subject}" / f"s{study}.json"
        payload = json.dumps({doc_key: {"text": text, "entities": ents, "data_source": "MIMIC-CXR",
                                        "data_split": "inference"}}).encode()
        record = doc_key
    else:
        if kind == "wrong_types":
            if (k // len(MALFORMED_KINDS)) % 2 == 0:
                graph["attributes"] = {"left costophrenic angle": graph["attributes"][0]}
                defect = "scene graph whose attributes is an object, not a list"
            else:
                graph["study_id"] = {"id": int(study)}
                defect = "scene graph whose study_id is an object, not an int or string"
        elif kind == "study_claimed_by_other_patient":
            graph["study_id"] = int(claimed_study)
            graph["attributes"][0]["phrase_IDs"] = [f"{claimed_study}|4"]
            defect = f"{defect}: study {claimed_study} belongs to patient {claimed_patient}, this file says {subject}"
        else:
            graph["StudyDateTime"] = None
            graph["StudyOrder"] = None
        payload = json.dumps(graph).encode()
    return path, payload, defect, record


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
        graph = _valid_scene_graph(rng, dicom, subject, study)
        doc_key = f"{folder}/p{subject}/s{study}.txt"
        text = "FINDINGS : Small left pleural effusion . No pneumothorax ."
        ents = _valid_entities()
        path, payload, defect, record = _broken(kind, defect, k, base, graph, ents, text, doc_key,
                                                (subject, study, dicom, folder), (claimed_patient, claimed_study))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(payload)
        w.files += 1
        w.bytes += len(payload)
        entries.append({"file": path.relative_to(w.out).as_posix(), "kind": kind, "defect": defect,
                        "record": record, "patient_id": subject,
                        "study_id": claimed_study if kind == "study_claimed_by_other_patient" else study})
    return entries


def _clear_outputs(out: Path) -> None:
    """Create ``out`` and remove what an earlier run wrote there (the outputs of :data:`_OUTPUTS` only)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in _OUTPUTS:
        p = out / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()


def write_cohort(out_dir: Path, patients: int, seed: int, malformed: int = 0, embeddings: bool = False,
                 sparse: bool = False, mean_studies: float | None = None) -> CohortSummary:
    """Write a synthetic cohort of ``patients`` patients under ``out_dir``; the same seed writes the same bytes.

    Layout, ground-truth and geometry-truth columns and embeddings: see this module's docstring.

    Outputs of an earlier run in ``out_dir`` (the folders and files named above) are replaced; other
    files are left alone. Files are written patient by patient; memory holds one patient plus the id sets.

    Args:
        out_dir: the cohort folder (created if missing).
        patients: number of patients (>= 1); each has 1-8 studies (mean ~4.8).
        seed: random seed; output is a function of (patients, seed, malformed, embeddings, sparse,
            mean_studies) only, and the regular files do not depend on ``malformed`` or ``embeddings``.
        malformed: number of bad files under ``malformed/``, kinds cycling through :data:`MALFORMED_KINDS`,
            listed with their defects in ``malformed/README.json``.
        embeddings: also write ``region_embeddings.parquet``.
        sparse: reports state every present finding and nothing else (no absences, hedges or omissions),
            as real reports list what they see; the default cohort also states some absences. A sparse
            cohort's study-level events are exactly its ground truth's (``graph.checks.synthetic``).
        mean_studies: studies per patient on average instead of ~4.8 (``graph.synth.simulate.
            study_count_weights``); MIMIC-CXR has 3.48, so 65,000 patients at 3.48 make about 227,000 studies.

    Raises:
        ValueError: ``patients`` < 1, ``malformed`` < 0 or ``mean_studies`` outside (1, 8).
        RuntimeError: the vocabulary no longer knows a name this generator uses.
        OSError: the folder cannot be written.
    """
    if patients < 1:
        raise ValueError(f"patients must be >= 1, got {patients}")
    if malformed < 0:
        raise ValueError(f"malformed must be >= 0, got {malformed}")
    weights = study_count_weights(mean_studies)
    _tables()
    out = Path(out_dir)
    _clear_outputs(out)
    w = _Writer(out, seed, embeddings, sparse, weights)
    try:
        for i in range(patients):
            w.patient(i)
    finally:
        w.close()
    if malformed:
        data = json.dumps({"description": "deliberately malformed inputs; each must be rejected",
                           "files": _malformed(w, malformed)}, indent=1).encode()
        (out / MALFORMED_DIR / "README.json").write_bytes(data)
        w.files += 1
        w.bytes += len(data)
    for name in (METADATA_CSV, GROUND_TRUTH, GEOMETRY_TRUTH) + ((EMBEDDINGS,) if embeddings else ()):
        w.files += 1
        w.bytes += (out / name).stat().st_size
    return _summary(w, out, patients, malformed)


def _summary(w: _Writer, out: Path, patients: int, malformed: int) -> CohortSummary:
    return CohortSummary(
        out_dir=out, seed=w.seed, patients=patients, studies=w.studies, images=w.images, lateral_images=w.laterals,
        reports=w.reports, relationships=w.relationships, ground_truth_rows=w.gt_rows, embedding_rows=w.emb_rows,
        malformed=malformed, files=w.files, bytes=w.bytes, scene_graph_dir=out / SCENE_GRAPH_DIR,
        radgraph_dir=out / RADGRAPH_DIR, metadata_csv=out / METADATA_CSV, ground_truth=out / GROUND_TRUTH,
        embeddings=out / EMBEDDINGS if w.emb_writer is not None else None,
        malformed_dir=out / MALFORMED_DIR if malformed else None, geometry_truth=out / GEOMETRY_TRUTH,
    )
