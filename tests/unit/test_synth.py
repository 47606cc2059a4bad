"""The synthetic cohort writer (graph/synth/): formats, determinism, ground truth, malformed files.

One 20-patient cohort is written per module; every check reads the files back as a consumer would.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from graph.formats.radgraph import parse_radgraph
from graph.formats.scene_graph import parse_scene_graph
from graph.records import InputError
from graph.synth import EMBEDDING_DIM, MALFORMED_KINDS, TRACKED, write_cohort
from graph.terms import PROGRESSION_CLASSES
from graph.vocabulary import vocabulary

REPO = Path(__file__).resolve().parents[2]
SEED = 11
PATIENTS = 20
DICOM = re.compile(r"^[0-9a-f]{8}(-[0-9a-f]{8}){4}$")
RADGRAPH_LABELS = {"ANAT-DP", "OBS-DP", "OBS-U", "OBS-DA"}
COMPARISONS = {"improved", "worsened", "no change"}


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    out = tmp_path_factory.mktemp("cohort")
    summary = write_cohort(out, patients=PATIENTS, seed=SEED, malformed=len(MALFORMED_KINDS), embeddings=True)
    return out, summary


@pytest.fixture(scope="module")
def graphs(cohort):
    out, _ = cohort
    return {p: json.loads(p.read_text()) for p in sorted((out / "scene_graphs").rglob("*_SceneGraph.json"))}


@pytest.fixture(scope="module")
def docs(cohort):
    out, _ = cohort
    return {p: json.loads(p.read_text()) for p in sorted((out / "radgraph").rglob("*.json"))}


@pytest.fixture(scope="module")
def metadata(cohort):
    out, _ = cohort
    return pd.read_csv(out / "mimic-cxr-2.0.0-metadata.csv", dtype={"dicom_id": str, "subject_id": str, "study_id": str})


@pytest.fixture(scope="module")
def truth(cohort):
    out, _ = cohort
    return pd.read_parquet(out / "ground_truth.parquet")


@pytest.fixture(scope="module")
def study_order(metadata):
    """patient -> [study ids by date] and study -> frontal dicoms, from the metadata CSV."""
    frontal = metadata[metadata.ViewPosition.isin(["AP", "PA"])]
    when = frontal.groupby("study_id").agg(subject=("subject_id", "first"), date=("StudyDate", "first"),
                                           time=("StudyTime", "first"))
    order: dict[str, list[str]] = defaultdict(list)
    for sid, row in when.sort_values(["date", "time"]).iterrows():
        order[row.subject].append(sid)
    images = frontal.groupby("study_id").dicom_id.apply(sorted).to_dict()
    return dict(order), images


def test_summary_matches_files(cohort, graphs, docs, metadata, truth):
    out, s = cohort
    files = _files(out)
    assert s.files == len(files) and s.bytes == sum(len(b) for b in files.values())
    assert s.patients == PATIENTS and s.images == len(graphs) and s.reports == len(docs) == s.studies
    assert s.images > s.studies  # some studies have two frontal images
    assert len(metadata) == s.images + s.lateral_images
    assert s.ground_truth_rows == len(truth) > 0
    assert s.relationships == sum(len(g["relationships"]) for g in graphs.values())
    assert 3 <= s.studies / PATIENTS <= 7


def test_same_seed_writes_the_same_bytes_in_any_process(cohort, tmp_path):
    out, _ = cohort
    again = tmp_path / "again"
    (again / "malformed").mkdir(parents=True)
    (again / "malformed" / "stale.json").write_text("{}")  # outputs of an earlier run are replaced
    code = ("import sys; from pathlib import Path; from graph.synth import write_cohort; "
            f"write_cohort(Path(sys.argv[1]), patients={PATIENTS}, seed={SEED}, malformed={len(MALFORMED_KINDS)}, "
            "embeddings=True)")
    env = {**os.environ, "PYTHONHASHSEED": "4242", "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", code, str(again)], check=True, env=env, cwd=REPO)
    assert _files(again) == _files(out)

    other = write_cohort(tmp_path / "other", patients=PATIENTS, seed=SEED + 1)
    assert other.malformed_dir is None and not (tmp_path / "other" / "region_embeddings.parquet").exists()
    assert other.ground_truth.read_bytes() != (out / "ground_truth.parquet").read_bytes()
    assert not set(_files(tmp_path / "other")) & {k for k in _files(out) if k.startswith("scene_graphs/")}


def test_regular_files_do_not_depend_on_malformed_or_embeddings(cohort, tmp_path):
    out, _ = cohort
    write_cohort(tmp_path, patients=PATIENTS, seed=SEED)
    full = {k: v for k, v in _files(out).items() if not k.startswith("malformed/") and k != "region_embeddings.parquet"}
    assert _files(tmp_path) == full


def test_latent_drivers_make_neighbours_and_related_findings_co_vary():
    from graph.synth.simulate import _simulate

    sev = np.array([s for i in range(200) for s in _simulate(random.Random(i), 6)[1]], dtype=float)
    ix = {key: i for i, key in enumerate(TRACKED)}

    def corr(a, b):
        return np.corrcoef(sev[:, ix[a]], sev[:, ix[b]])[0, 1]

    assert corr(("pleural effusion", "left costophrenic angle"), ("pleural effusion", "right costophrenic angle")) > 0.4
    assert corr(("pleural effusion", "left costophrenic angle"), ("pulmonary edema/hazy opacity", "left lung")) > 0.4
    assert corr(("consolidation", "right lower lung zone"), ("lung opacity", "right mid lung zone")) > 0.6
    assert corr(("pneumothorax", "left apical zone"), ("chest tube", "left lung")) > 0.3
    assert abs(corr(("consolidation", "left lower lung zone"), ("consolidation", "right lower lung zone"))) < 0.3
    assert sev.min() == 0 and sev.max() == 3


def test_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError):
        write_cohort(tmp_path, patients=0, seed=1)
    with pytest.raises(ValueError):
        write_cohort(tmp_path, patients=1, seed=1, malformed=-1)


def test_scene_graphs_have_the_released_shape(graphs):
    v = vocabulary()
    bboxes = {name for name, r in v.regions.items() if r.has_bbox}
    null_dates = fewer_objects = faulty = 0
    for path, g in graphs.items():
        assert path.name == f"{g['image_id']}_SceneGraph.json" and DICOM.match(g["image_id"])
        assert path.parent.name == f"p{str(g['patient_id'])[:2]}"
        assert isinstance(g["patient_id"], int) and isinstance(g["study_id"], int)
        assert re.fullmatch(r"1\d{7}", str(g["patient_id"])) and re.fullmatch(r"5\d{7}", str(g["study_id"]))
        assert g["viewpoint"] in ("AP", "PA") and g["gender"] in ("F", "M")
        if g["StudyDateTime"] is None:
            assert g["StudyOrder"] is None
            null_dates += 1
        else:
            datetime.strptime(g["StudyDateTime"], "%Y-%m-%d %H:%M:%S")
            assert isinstance(g["StudyOrder"], int) and g["StudyOrder"] >= 1
        names = [o["bbox_name"] for o in g["objects"]]
        assert len(names) == len(set(names)) <= 36 and set(names) <= bboxes
        fewer_objects += len(names) < 36
        for o in g["objects"]:
            assert o["object_id"] == f"{g['image_id']}_{o['bbox_name']}"
            assert o["width"] == o["x2"] - o["x1"] and o["height"] == o["y2"] - o["y1"]
            assert o["original_width"] == o["original_x2"] - o["original_x1"]
            faulty += o["x1"] < 0 or o["width"] == 0 or o["original_y2"] > 3100
        for entry in g["attributes"]:
            region = entry["bbox_name"]
            assert entry[region] is True and entry["object_id"] == f"{g['image_id']}_{region}" and region in v.regions
            n = len(entry["phrases"])
            assert n >= 1
            for key in ("attributes", "attributes_ids", "phrase_IDs", "sections", "comparison_cues", "temporal_cues",
                        "severity_cues", "texture_cues"):
                assert len(entry[key]) == n, (path.name, region, key)
            for labels, ids in zip(entry["attributes"], entry["attributes_ids"], strict=True):
                assert len(labels) == len(ids)
                parts = [label.split("|", 2) for label in labels]
                assert all(len(p) == 3 and p[1] in ("yes", "no") for p in parts), labels
                assert sum(p[0] == "nlp" for p in parts) == 1
                for category, _, name in parts:
                    if category != "nlp":
                        assert v.findings[name].category == category
            for cues, category in (("comparison_cues", "comparison"), ("severity_cues", "severity"),
                                   ("temporal_cues", "temporal"), ("texture_cues", "texture")):
                for phrase_cues in entry[cues]:
                    assert all(c.startswith(f"{category}|yes|") for c in phrase_cues)
            for cue in (c for cs in entry["severity_cues"] for c in cs):
                assert v.severity_of(cue.split("|")[2]) is not None
            assert all(pid.startswith(f"{g['study_id']}|") for pid in entry["phrase_IDs"])
    assert null_dates and fewer_objects and faulty  # the edge cases the format notes ask for


def test_relationships_compare_with_the_previous_study(graphs, study_order):
    order, images = study_order
    ambiguous = 0
    for g in graphs.values():
        studies = order[str(g["patient_id"])]
        position = studies.index(str(g["study_id"]))
        if position == 0:
            assert g["relationships"] == []
            continue
        previous = set(images[studies[position - 1]])
        ids = [r["relationship_id"] for r in g["relationships"]]
        assert len(ids) == len(set(ids))
        for r in g["relationships"]:
            assert r["subject_id"] == f"{g['image_id']}_{r['bbox_name']}"
            prior, bbox = r["object_id"].split("_", 1)
            assert prior in previous and bbox == r["bbox_name"]
            labels = [n.split("|", 2) for n in r["relationship_names"]]
            assert all(c == "comparison" and p == "yes" and lab in COMPARISONS for c, p, lab in labels)
            assert len(r["relationship_contexts"]) == len(labels) >= 1
            ambiguous += len(labels) > 1
            assert all(a.split("|", 2)[2] in vocabulary().findings for a in r["attributes"])
    assert ambiguous >= 1


def test_radgraph_documents_are_consistent(cohort, docs):
    out, _ = cohort
    v = vocabulary()
    labels_seen = set()
    for path, doc in docs.items():
        (key, d), = doc.items()
        assert key == path.relative_to(out / "radgraph").with_suffix(".txt").as_posix()
        assert re.fullmatch(r"p1\d/p1\d{7}/s5\d{7}\.txt", key)
        assert d["data_source"] == "MIMIC-CXR" and d["data_split"] == "inference"
        tokens = d["text"].split(" ")
        ids = list(d["entities"])
        assert ids == [str(i) for i in range(1, len(ids) + 1)]
        for ent in d["entities"].values():
            assert 0 <= ent["start_ix"] <= ent["end_ix"] < len(tokens)
            assert ent["tokens"] == " ".join(tokens[ent["start_ix"]:ent["end_ix"] + 1])
            assert ent["label"] in RADGRAPH_LABELS or ent["label"] in v.change_labels
            labels_seen.add(ent["label"])
            for rtype, target in ent["relations"]:
                assert rtype in ("modify", "located_at", "suggestive_of") and target in d["entities"]
                if ent["label"] in v.change_labels:
                    assert rtype == "modify" and d["entities"][target]["label"].startswith("OBS")
    assert {"OBS-U", "OBS-DA", "CHAN-NC", "CHAN-CON-WOR", "CHAN-CON-AP"} <= labels_seen
    assert labels_seen & {"CHAN-WOR", "CHAN-IMP", "CHAN-AP", "CHAN-DISA"}  # RadGraph2 code aliases


def test_ground_truth_changes_follow_severities(truth, study_order):
    order, _ = study_order
    assert list(truth.columns) == ["patient_id", "study_id", "prior_study_id", "anatomy", "finding", "change",
                                   "severity_prior", "severity_current", "stated_imagenome", "stated_radgraph"]
    for col in ("patient_id", "study_id", "prior_study_id"):
        assert truth[col].map(type).eq(str).all()
    assert set(zip(truth.finding, truth.anatomy, strict=True)) <= {(f, r) for f, r in TRACKED}
    assert truth.severity_prior.between(0, 3).all() and truth.severity_current.between(0, 3).all()
    p, c = truth.severity_prior, truth.severity_current
    rules = {"new": (p == 0) & (c > 0), "resolved": (p > 0) & (c == 0), "worsened": (p > 0) & (c > p),
             "improved": (c > 0) & (c < p), "no change": (p == c) & (p > 0)}
    for change, ok in rules.items():
        rows = truth.change == change
        assert rows.any() and ok[rows].all(), change
    assert set(truth.change) == set(PROGRESSION_CLASSES)
    for row in truth.drop_duplicates(["patient_id", "study_id"]).itertuples():
        studies = order[row.patient_id]
        assert studies.index(row.study_id) == studies.index(row.prior_study_id) + 1
    stated_ig = truth.stated_imagenome.dropna()
    assert stated_ig.map(lambda s: set(s.split(";;")) <= COMPARISONS).all()
    assert set(truth.stated_radgraph.dropna()) <= set(PROGRESSION_CLASSES) | {"repositioned"}
    # noisy but informative views: most stated labels are right, not all
    rg = truth.dropna(subset=["stated_radgraph"])
    agree = (rg.stated_radgraph == rg.change).mean()
    assert 0.75 < agree < 1.0
    assert 0.1 < len(rg) / len(truth) < 0.9


def test_metadata_covers_every_image(graphs, metadata, truth):
    by_dicom = metadata.set_index("dicom_id")
    assert by_dicom.index.is_unique
    assert list(metadata.columns)[:3] == ["dicom_id", "subject_id", "study_id"] and len(metadata.columns) == 12
    assert metadata.StudyDate.between(21000101, 21991231).all()
    for g in graphs.values():
        row = by_dicom.loc[g["image_id"]]
        assert (row.subject_id, row.study_id, row.ViewPosition) == (str(g["patient_id"]), str(g["study_id"]), g["viewpoint"])
        if g["StudyDateTime"]:
            when = datetime.strptime(f"{row.StudyDate} {'%010.3f' % row.StudyTime}", "%Y%m%d %H%M%S.%f")
            assert when.strftime("%Y-%m-%d %H:%M:%S") == g["StudyDateTime"]
    assert set(truth.study_id) | set(truth.prior_study_id) <= set(metadata.study_id)


def test_malformed_files_are_malformed_as_listed(cohort, graphs, metadata):
    out, s = cohort
    v = vocabulary()
    readme = json.loads((out / "malformed" / "README.json").read_text())
    listed = readme["files"]
    assert [e["kind"] for e in listed] == [k for k, _ in MALFORMED_KINDS] and s.malformed == len(listed)
    assert {p.relative_to(out).as_posix() for p in (out / "malformed").rglob("*") if p.is_file()} == \
        {e["file"] for e in listed} | {"malformed/README.json"}
    claimed = {str(g["study_id"]): str(g["patient_id"]) for g in graphs.values()}
    for e in listed:
        path = out / e["file"]
        kind = e["kind"]
        if kind == "truncated_json":
            with pytest.raises(json.JSONDecodeError):
                json.loads(path.read_text())
        elif kind == "wrong_types":
            g = json.loads(path.read_text())
            assert not isinstance(g["attributes"], list) or isinstance(g["study_id"], dict)
        elif kind in ("unknown_entity_label", "dangling_relation"):
            (key, d), = json.loads(path.read_text()).items()
            ents = d["entities"]
            if kind == "unknown_entity_label":
                assert any(x["label"] not in RADGRAPH_LABELS and x["label"] not in v.change_labels for x in ents.values())
            else:
                assert any(t not in ents for x in ents.values() for _, t in x["relations"])
            parsed = parse_radgraph(path, v)
            assert len(parsed.rejections) == 1 and not parsed.mentions
            continue
        elif kind == "study_claimed_by_other_patient":
            g = json.loads(path.read_text())
            assert claimed[str(g["study_id"])] != str(g["patient_id"])
        elif kind == "no_date":
            g = json.loads(path.read_text())
            assert g["StudyDateTime"] is None and g["StudyOrder"] is None
            assert g["image_id"] not in set(metadata.dicom_id) and str(g["study_id"]) not in set(metadata.study_id)
            continue
        if kind in ("truncated_json", "wrong_types"):
            with pytest.raises(InputError):
                parse_scene_graph(path, v)


def test_embeddings_are_a_noisy_function_of_severity(cohort, truth):
    out, s = cohort
    emb = pd.read_parquet(out / "region_embeddings.parquet")
    assert list(emb.columns) == ["image_id", "anatomy", "embedding"] and len(emb) == s.embedding_rows
    regions = sorted({r for _, r in TRACKED})
    assert len(emb) == s.images * len(regions) and set(emb.anatomy) == set(regions)
    x = np.stack(emb.embedding.to_numpy())
    assert x.shape == (len(emb), EMBEDDING_DIM) and x.dtype == np.float32
    meta = pd.read_csv(out / "mimic-cxr-2.0.0-metadata.csv", dtype=str)[["dicom_id", "study_id"]]
    eff = truth[truth.finding == "pleural effusion"][["study_id", "anatomy", "severity_current"]]
    joined = emb.merge(meta, left_on="image_id", right_on="dicom_id").merge(eff, on=["study_id", "anatomy"])
    xs = np.stack(joined.embedding.to_numpy()).astype(np.float64)
    y = joined.severity_current.to_numpy(dtype=float)
    assert len(y) > 40 and y.std() > 0
    design = np.c_[xs, np.ones(len(xs))]
    fit = design @ np.linalg.lstsq(design, y, rcond=None)[0]
    assert 1 - ((y - fit) ** 2).sum() / ((y - y.mean()) ** 2).sum() > 0.5


def test_project_parsers_read_the_cohort_as_stated(cohort, truth):
    """The cohort's own parsers see the stated changes the ground truth records (short of unknown terms)."""
    out, _ = cohort
    v = vocabulary()
    rg, ig = defaultdict(set), defaultdict(set)
    unmapped = []
    for path in sorted((out / "radgraph").rglob("*.json")):
        parsed = parse_radgraph(path, v)
        assert not parsed.rejections
        unmapped += parsed.unmapped_terms
        for m in parsed.mentions:
            if m.change:
                rg[m.study_id, m.anatomy, m.finding].add(m.change)
    for path in sorted((out / "scene_graphs").rglob("*_SceneGraph.json")):
        parsed = parse_scene_graph(path, v)
        for m in parsed.mentions:
            if m.change:
                ig[m.study_id, m.anatomy, m.finding].add(m.change)
    stated = truth.dropna(subset=["stated_radgraph"])
    found = [r.stated_radgraph in rg[r.study_id, r.anatomy, r.finding] for r in stated.itertuples()]
    assert np.mean(found) > 0.93
    single = truth[truth.stated_imagenome.notna() & ~truth.stated_imagenome.fillna("").str.contains(";;")]
    assert all(r.stated_imagenome in ig[r.study_id, r.anatomy, r.finding] for r in single.itertuples())
    assert unmapped and len(unmapped) < 4 * len(stated)  # some terms the vocabulary does not know, not many


def _negated_words(radgraph_dir) -> list[str]:
    """Tokens labelled OBS-DA in a cohort's RadGraph documents, but those of "no acute cardiopulmonary
    process" (which names no finding)."""
    out = []
    for path in radgraph_dir.rglob("*.json"):
        for doc in json.loads(path.read_text()).values():
            out += [e["tokens"] for e in doc["entities"].values()
                    if e["label"] == "OBS-DA" and e["tokens"] not in ("acute", "process")]
    return out


def test_sparse_cohort_states_no_absence(tmp_path):
    sparse = write_cohort(tmp_path / "sparse", patients=20, seed=3, sparse=True)
    dense = write_cohort(tmp_path / "dense", patients=20, seed=3)
    assert sparse.studies == dense.studies  # the same simulated patients, other statements
    assert _negated_words(dense.radgraph_dir) and not _negated_words(sparse.radgraph_dir)


def test_mean_studies_sets_the_cohort_size_per_patient(tmp_path):
    from graph.synth.simulate import MIMIC_STUDIES_PER_PATIENT, STUDY_WEIGHTS, study_count_weights

    weights = study_count_weights(MIMIC_STUDIES_PER_PATIENT)
    assert sum(k * w for k, w in enumerate(weights, start=1)) == pytest.approx(3.485, abs=1e-3)
    assert study_count_weights() == STUDY_WEIGHTS
    s = write_cohort(tmp_path / "mimic", patients=300, seed=3, mean_studies=MIMIC_STUDIES_PER_PATIENT)
    assert 3.2 <= s.studies / 300 <= 3.8  # 65,000 patients -> about 227,000 studies, as in MIMIC-CXR
    assert 1.04 <= s.images / s.studies <= 1.10  # and about 242,000 scene graphs
    with pytest.raises(ValueError, match="between 1 and 8"):
        study_count_weights(8.5)
