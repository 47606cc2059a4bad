"""NIH ChestX-ray14 conversion (graph.datasets.nih.convert) and its independent reference (graph.checks.nih.reference).

No Neo4j. The hand-made tables below are synthetic; the last tests read the real wheel (the package registry or a
filled CXRKG_IU_CACHE) and are skipped, not passed, when it cannot be obtained.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from collections import Counter
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from flows.cli import app
from graph.checks.nih import reference as ref
from graph.datasets.nih import convert as nih
from graph.datasets.nih.convert import LABEL_MAP, SOURCE_GOOGLE, SOURCE_TEXT, DatasetUnavailable, NIHTables
from graph.datasets.wheel import WheelUnavailable
from graph.formats.scene_graph import parse_scene_graph
from graph.vocabulary import vocabulary

PNEUMOTHORAX = "pneumothorax"
EFFUSION = "pleural effusion"
MASS = "mass/nodule (not otherwise specified)"
TEXT_FINDINGS = set(t.finding for t in LABEL_MAP[SOURCE_TEXT].values())


# --- hand-made tables ------------------------------------------------------------------------------------

def _entry(rows: list[tuple]) -> pd.DataFrame:
    """rows: (patient id, follow-up, labels[, age, view]); the image id is derived from both."""
    out = []
    for row in rows:
        pid, fu, labels, *rest = row
        age, view = (*rest, *(57, "PA")[len(rest):])
        out.append({"Image Index": f"{pid:08d}_{fu:03d}.png", "Finding Labels": labels, "Follow-up #": str(fu),
                    "Patient ID": str(pid), "Patient Age": str(age), "Patient Gender": "M", "View Position": view})
    return pd.DataFrame(out, columns=list(nih.DATA_ENTRY_COLUMNS))


def _google(rows: list[tuple]) -> pd.DataFrame:
    """rows: (image, Fracture, Pneumothorax, Airspace opacity, Nodule or mass)."""
    return pd.DataFrame(rows, columns=list(nih.GOOGLE_COLUMNS))


def _bbox(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([(i, label, *map(str, xywh)) for i, label, *xywh in rows], columns=list(nih.BBOX_COLUMNS))


def _tables(entry: list[tuple], google: list[tuple] = (), bbox: list[tuple] = ()) -> NIHTables:
    return NIHTables(_entry(entry), _bbox(list(bbox)), _google(list(google)))


def _state(states: pd.DataFrame, pid: str, fu: int, finding: str) -> pd.Series:
    row = states[(states.patient_id == pid) & (states.follow_up == fu) & (states.finding == finding)]
    assert len(row) == 1
    return row.iloc[0]


# --- dates, ages, mapping --------------------------------------------------------------------------------

def test_synthetic_dates_keep_order_only():
    assert nih.synthetic_study_datetime(0) == datetime(2000, 1, 1)
    assert nih.synthetic_study_datetime(1) == datetime(2000, 4, 1)  # 2000 is a leap year
    assert nih.synthetic_study_datetime(5).year == 2001
    days = [nih.synthetic_study_datetime(i) for i in range(200)]
    assert days == sorted(days) and len(set(days)) == 200
    assert "synthetic" in nih.SYNTHETIC_DATES_NOTE and "order" in nih.SYNTHETIC_DATES_NOTE
    with pytest.raises(ValueError):
        nih.synthetic_study_datetime(-1)


def test_age_decile():
    assert [nih.age_decile(a) for a in (57, "0", 9, 10, 99, 100, 412, -1, "", "x")] == [
        "50-60", "0-10", "0-10", "10-20", "90-100", None, None, None, None, None]


def test_label_map_names_exist_in_vocabulary():
    v = vocabulary()
    nih.check_label_map(v)
    assert len(LABEL_MAP[SOURCE_TEXT]) == 14 and len(TEXT_FINDINGS) == 13  # Mass and Nodule are one finding
    assert v.findings["fracture"].category == "anatomicalfinding"
    assert all("fracture" in v.findings[f].parents for f in ("rib fracture", "clavicle fracture", "spinal fracture"))
    assert v.finding_for("fracture") == "rib fracture"  # the extractors' reading of the word is unchanged


# --- the converter on hand-made tables -------------------------------------------------------------------

def _convert(tmp_path: Path, tables: NIHTables, limit: int | None = None):
    return nih.convert_tables(tables, tmp_path / "out", limit)


def _graph(tmp_path: Path, pid: int, fu: int) -> dict:
    path = tmp_path / "out" / "scene_graphs" / f"{pid % 100:02d}" / f"{pid:08d}_{fu:03d}_SceneGraph.json"
    return json.loads(path.read_text())


def test_scene_graph_fields_and_dates(tmp_path):
    s = _convert(tmp_path, _tables([(13, 0, "No Finding", 60, "AP"), (13, 5, "Effusion", 104, "PA")]))
    assert (s.images, s.patients, s.longitudinal_patients, s.rejections) == (2, 1, 1, [])
    g = _graph(tmp_path, 13, 5)
    assert {k: g[k] for k in ("image_id", "study_id", "patient_id", "viewpoint", "gender", "age_decile",
                              "reason_for_exam", "StudyOrder", "StudyDateTime", "relationships")} == {
        "image_id": "00000013_005", "study_id": "00000013_005", "patient_id": "13", "viewpoint": "PA",
        "gender": "M", "age_decile": None, "reason_for_exam": None, "StudyOrder": 6,
        "StudyDateTime": "2001-03-31 00:00:00", "relationships": []}
    assert g["StudyDateTime_is_synthetic"] is True
    assert _graph(tmp_path, 13, 0)["age_decile"] == "60-70"
    meta = pd.read_csv(tmp_path / "out" / "metadata.csv")
    assert list(meta.columns) == ["dicom_id", "subject_id", "study_id", "StudyDate", "StudyTime", "ViewPosition"]
    assert meta.to_dict("records")[1] == {"dicom_id": "00000013_005", "subject_id": 13, "study_id": "00000013_005",
                                          "StudyDate": 20010331, "StudyTime": 0.0, "ViewPosition": "PA"}
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "synthetic" in readme and "Wang X" in readme and "Majkowska" in readme


def test_labels_no_finding_and_google_become_source_tagged_entries(tmp_path):
    tables = _tables([(1, 0, "No Finding"), (1, 1, "Mass|Nodule|Cardiomegaly")],
                     google=[("00000001_001.png", "YES", "NO", "NO", "YES")])
    s = _convert(tmp_path, tables)
    assert s.adjudicated_images == 1
    first = _graph(tmp_path, 1, 0)["attributes"]
    assert {(e["bbox_name"], e["source"]) for e in first} == {
        ("lungs", SOURCE_TEXT), ("cardiac silhouette", SOURCE_TEXT), ("mediastinum", SOURCE_TEXT)}
    absent = [a for e in first for phrase in e["attributes"] for a in phrase]
    assert len(absent) == 13 and all("|no|" in a for a in absent)
    assert "disease|no|pneumonia" in absent and "anatomicalfinding|no|hernia" in absent

    second = {(e["bbox_name"], e["source"]): e for e in _graph(tmp_path, 1, 1)["attributes"]}
    lungs = second[("lungs", SOURCE_TEXT)]
    assert lungs["attributes"] == [[f"anatomicalfinding|yes|{MASS}"]] * 2
    assert lungs["phrases"] == ["NIH ChestX-ray14 text-mined label: Mass", "NIH ChestX-ray14 text-mined label: Nodule"]
    assert lungs["phrase_IDs"] == ["00000001_001|0", "00000001_001|1"] and lungs["sections"] == ["labels"] * 2
    n = len(lungs["phrases"])
    for key in ("attributes", "attributes_ids", "phrase_IDs", "sections", "comparison_cues", "temporal_cues",
                "severity_cues", "texture_cues"):
        assert len(lungs[key]) == n
    assert lungs["comparison_cues"] == [[], []] and lungs["object_id"] == "00000001_001_lungs"
    heart = second[("cardiac silhouette", SOURCE_TEXT)]
    assert heart["attributes"] == [["anatomicalfinding|yes|enlarged cardiac silhouette"]]
    g_lungs = second[("lungs", SOURCE_GOOGLE)]
    assert g_lungs["attributes"] == [["anatomicalfinding|no|pneumothorax"], ["anatomicalfinding|no|airspace opacity"],
                                     [f"anatomicalfinding|yes|{MASS}"]]
    assert g_lungs["phrase_IDs"] == ["00000001_001|4", "00000001_001|5", "00000001_001|6"]
    assert second[("chest", SOURCE_GOOGLE)]["attributes"] == [["anatomicalfinding|yes|fracture"]]


def test_parsed_mentions_carry_their_source(tmp_path):
    tables = _tables([(2, 0, "Effusion|Pneumothorax")], google=[("00000002_000.png", "NO", "NO", "YES", "NO")])
    _convert(tmp_path, tables)
    path = tmp_path / "out" / "scene_graphs" / "02" / "00000002_000_SceneGraph.json"
    parsed = parse_scene_graph(path, vocabulary())
    assert parsed.unmapped_terms == []
    got = Counter((m.source, m.polarity) for m in parsed.mentions)
    assert got == {(SOURCE_TEXT, "present"): 2, (SOURCE_GOOGLE, "absent"): 3, (SOURCE_GOOGLE, "present"): 1}
    assert len({m.mention_id for m in parsed.mentions}) == 6
    assert parsed.studies[0].study_datetime == datetime(2000, 1, 1) and parsed.studies[0].patient_id == "2"


def test_boxes_become_objects_on_their_side(tmp_path):
    image = "00000003_000.png"
    tables = _tables([(3, 0, "Atelectasis|Cardiomegaly")], bbox=[
        (image, "Atelectasis", 100.4, 200.5, 300.0, 100.0),  # centre x 250: image left = patient's right
        (image, "Atelectasis", 150.0, 600.0, 50.0, 50.0),
        (image, "Infiltrate", 700.0, 100.0, 100.0, 100.0),
        (image, "Cardiomegaly", 300.0, 400.0, 400.0, 300.0),
    ])
    s = _convert(tmp_path, tables)
    assert s.boxes == 4
    objects = _graph(tmp_path, 3, 0)["objects"]
    assert [(o["object_id"], o["bbox_name"], o["name"], o["finding_label"]) for o in objects] == [
        ("00000003_000_right lung", "right lung", "Atelectasis", "Atelectasis"),
        ("00000003_000_right lung_2", "right lung", "Atelectasis", "Atelectasis"),
        ("00000003_000_left lung", "left lung", "Infiltrate", "Infiltrate"),
        ("00000003_000_cardiac silhouette", "cardiac silhouette", "Cardiomegaly", "Cardiomegaly")]
    o = objects[0]
    assert (o["original_x1"], o["original_y1"], o["original_x2"], o["original_y2"]) == (100, 201, 400, 301)
    assert (o["original_width"], o["original_height"]) == (300, 100)
    assert (o["x1"], o["y1"], o["x2"], o["y2"], o["width"], o["height"]) == (22, 44, 88, 66, 66, 22)
    assert o["synsets"] == []


def test_rejections_duplicates_and_unknown_images(tmp_path):
    entry = _entry([(4, 0, "Effusion"), (4, 1, "Edema")])
    dup = entry.iloc[[1]].assign(**{"Image Index": "00000004_009.png", "Finding Labels": "Hernia"})
    tables = NIHTables(pd.concat([entry, dup], ignore_index=True),
                       _bbox([("99999999_000.png", "Mass", 1, 1, 2, 2)]),
                       _google([("99999999_000.png", "NO", "NO", "NO", "NO"), ("00000004_000.png", "NO", "maybe",
                                                                               "YES", "NO")]))
    s = _convert(tmp_path, tables)
    assert s.images == 2
    got = {(Path(r.file).name, r.record, r.field) for r in s.rejections}
    assert got == {("Data_Entry_2017_v2020.csv.gz", "00000004_009.png", "Follow-up #"),
                   ("google2019_nih-chest-xray-labels.csv.gz", "99999999_000.png", "Image Index"),
                   ("BBox_List_2017.csv.gz", "99999999_000.png", "Image Index"),
                   ("google2019_nih-chest-xray-labels.csv.gz", "00000004_000.png", "Pneumothorax")}
    assert not (tmp_path / "out" / "scene_graphs" / "04" / "00000004_009_SceneGraph.json").exists()
    edema = _graph(tmp_path, 4, 1)["attributes"][0]
    assert edema["attributes"] == [["anatomicalfinding|yes|pulmonary edema/hazy opacity"]]


def test_limit_takes_the_lowest_patient_ids(tmp_path):
    s = _convert(tmp_path, _tables([(30, 0, "Edema"), (7, 0, "Edema"), (7, 1, "Edema"), (12, 0, "Edema")]), limit=2)
    assert (s.images, s.patients, s.longitudinal_patients) == (3, 2, 1)
    assert sorted(p.name for p in (tmp_path / "out" / "scene_graphs").rglob("*.json")) == [
        "00000007_000_SceneGraph.json", "00000007_001_SceneGraph.json", "00000012_000_SceneGraph.json"]


# --- unreadable wheels -----------------------------------------------------------------------------------

def _csv_gz(frame: pd.DataFrame) -> bytes:
    return gzip.compress(frame.to_csv(index=False).encode())


def _fake_wheel(tmp_path: Path, **override: bytes | None) -> Path:
    members = {nih.DATA_ENTRY_MEMBER: _csv_gz(_entry([(1, 0, "Effusion")])),
               nih.BBOX_MEMBER: gzip.compress(b"Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
                                              b"00000001_000.png,Effusion,1,2,3,4,,,\n"),
               nih.GOOGLE_MEMBER: _csv_gz(_google([]))}
    members.update(override)
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in members.items():
            if data is not None:
                zf.writestr(name, data)
    return wheel


def test_fake_wheel_converts(tmp_path):
    s = nih.convert_nih(tmp_path / "out", _fake_wheel(tmp_path))
    assert (s.images, s.boxes) == (1, 1)


@pytest.mark.parametrize("override, message", [
    ({nih.GOOGLE_MEMBER: None}, "has no member torchxrayvision/data/google2019"),
    ({nih.DATA_ENTRY_MEMBER: b"\x1f\x8b\x08\x00garbage"}, "not a readable gzip CSV"),
    ({nih.DATA_ENTRY_MEMBER: gzip.compress(b"Image Index,Patient ID\nx.png,1\n")}, "lacks column(s) Finding Labels"),
    ({nih.BBOX_MEMBER: gzip.compress(b"a,b\n1,2\n")}, "does not start with the columns"),
])
def test_corrupt_or_missing_member_is_unavailable(tmp_path, override, message):
    with pytest.raises(DatasetUnavailable, match=message.replace("(", r"\(").replace(")", r"\)")):
        nih.convert_nih(tmp_path / "out", _fake_wheel(tmp_path, **override))


def test_not_a_wheel_is_unavailable(tmp_path):
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(DatasetUnavailable, match="not a readable wheel"):
        nih.convert_nih(tmp_path / "out", bad)
    with pytest.raises(DatasetUnavailable, match="no such file"):
        nih.convert_nih(tmp_path / "out", tmp_path / "missing.whl")


def test_cli_reports_an_unavailable_wheel_in_one_message(tmp_path):
    (tmp_path / nih.WHEEL_NAME).write_bytes(b"not the wheel")  # checksum mismatch: nothing is downloaded
    result = CliRunner().invoke(app, ["datasets", "nih", "--out", str(tmp_path / "out"), "--cache", str(tmp_path)])
    assert result.exit_code == 1
    assert "sha256" in result.output and "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


# --- the reference on hand-made tables -------------------------------------------------------------------

def test_first_study_has_no_event():
    s = ref.reference_states(_tables([(1, 0, "Effusion"), (1, 1, "Effusion")]))
    first = _state(s, "1", 0, EFFUSION)
    assert (first.state, first.prior_state, first.event) == ("present", None, None)
    assert _state(s, "1", 1, EFFUSION).event == "persistence"
    assert s[s.follow_up == 0]["event"].isna().all()


def test_onset_after_no_finding_is_onset_after_absent():
    s = ref.reference_states(_tables([(1, 0, "No Finding"), (1, 1, "Effusion")]))
    row = _state(s, "1", 1, EFFUSION)
    assert (row.event, row.prior_state) == ("onset", "absent")


def test_onset_after_another_label_is_onset_after_unmentioned():
    s = ref.reference_states(_tables([(1, 0, "Edema"), (1, 1, "Effusion")]))
    row = _state(s, "1", 1, EFFUSION)
    assert (row.event, row.prior_state) == ("onset", "not_mentioned")
    assert _state(s, "1", 1, "pulmonary edema/hazy opacity").event == "no_longer_mentioned"


def test_resolution_only_on_stated_absent():
    s = ref.reference_states(_tables(
        [(1, 0, "Effusion"), (1, 1, "No Finding"), (2, 0, "Effusion"), (2, 1, "Atelectasis"),
         (3, 0, "Pneumothorax"), (3, 1, "Atelectasis")],
        google=[("00000003_001.png", "NO", "NO", "NO", "NO")]))
    assert _state(s, "1", 1, EFFUSION).event == "resolution"
    assert _state(s, "2", 1, EFFUSION).event == "no_longer_mentioned"
    assert _state(s, "3", 1, PNEUMOTHORAX).event == "resolution"  # Google's NO is a stated absent


def test_google_no_and_text_present_is_present():
    s = ref.reference_states(_tables([(1, 0, "Pneumothorax|Nodule")],
                                     google=[("00000001_000.png", "NO", "NO", "NO", "NO")]))
    assert _state(s, "1", 0, PNEUMOTHORAX).state == "present"
    assert _state(s, "1", 0, MASS).state == "present"
    assert _state(s, "1", 0, "airspace opacity").state == "absent"
    assert _state(s, "1", 0, "fracture").state == "absent"
    assert _state(s, "1", 0, EFFUSION).state == "not_mentioned"  # Google's table does not speak of effusions


def test_mass_and_nodule_are_one_finding():
    s = ref.reference_states(_tables([(1, 0, "Mass"), (1, 1, "Nodule")]))
    assert _state(s, "1", 1, MASS).event == "persistence"


def test_events_follow_the_previous_follow_up_not_the_table_order():
    s = ref.reference_states(_tables([(1, 7, "Effusion"), (1, 2, "No Finding"), (1, 0, "Effusion")]))
    assert _state(s, "1", 2, EFFUSION).event == "resolution"
    assert _state(s, "1", 7, EFFUSION).prior_state == "absent"


def test_reference_counts_by_synthetic_year():
    tables = _tables([(1, 0, "No Finding"), (1, 1, "Effusion"), (1, 5, "No Finding"), (2, 0, "Edema"),
                      (2, 6, "Effusion")])
    c = ref.reference_counts(tables)
    assert list(c.columns) == list(ref.COUNT_COLUMNS)
    eff = c[c.finding == EFFUSION].set_index("year")
    assert eff.loc[2000, ["present", "absent", "onset", "onset_after_absent", "onset_after_unmentioned"]].tolist() == [
        1, 1, 1, 1, 0]
    assert eff.loc[2001, ["present", "absent", "onset", "onset_after_unmentioned", "resolution"]].tolist() == [
        1, 1, 1, 1, 1]
    assert set(c.finding) == set(ref.FINDINGS) and len(ref.FINDINGS) == 15


def test_reference_new_patients_date_range_is_inclusive():
    tables = _tables([(1, 0, "No Finding"), (1, 1, "Effusion"), (2, 0, "Edema"), (2, 6, "Effusion")])
    on = nih.synthetic_study_datetime(1).date()
    assert ref.reference_new_patients(tables, EFFUSION, on, on) == {"1"}
    assert ref.reference_new_patients(tables, EFFUSION, "2000-01-01", "2001-12-31") == {"1", "2"}
    assert ref.reference_new_patients(tables, EFFUSION, "2000-01-01", "2001-12-31", prior_states=("absent",)) == {"1"}
    assert ref.reference_new_patients(tables, EFFUSION, "2000-04-02", "2001-06-29") == set()
    with pytest.raises(ValueError):
        ref.reference_new_patients(tables, "unicorns", "2000-01-01", "2001-01-01")


# --- the real wheel --------------------------------------------------------------------------------------

PATIENTS = 200


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    try:
        tables = ref.load_tables(limit_patients=PATIENTS)
    except (DatasetUnavailable, WheelUnavailable) as exc:
        pytest.skip(f"NIH tables unavailable: {exc}")
    out = tmp_path_factory.mktemp("nih")
    summary = nih.convert_nih(out, limit_patients=PATIENTS)
    return tables, out, summary


@pytest.mark.network
def test_real_wheel_files_match_the_raw_table(real):
    tables, out, summary = real
    entry = tables.data_entry
    assert summary.rejections == [] and summary.patients == PATIENTS == entry["Patient ID"].nunique()
    files = sorted((out / "scene_graphs").rglob("*_SceneGraph.json"))
    assert len(files) == summary.images == len(entry)
    assert {f.name.removesuffix("_SceneGraph.json") + ".png" for f in files} == set(entry["Image Index"])
    assert summary.boxes == len(tables.bbox) and summary.adjudicated_images == len(tables.google)
    assert len(pd.read_csv(out / "metadata.csv")) == len(entry)


def _expected_mentions(tables: NIHTables) -> Counter:
    want: Counter = Counter()
    for labels in tables.data_entry["Finding Labels"]:
        names = labels.split("|")
        if names == ["No Finding"]:
            want[(SOURCE_TEXT, "absent")] += 13
        else:
            want[(SOURCE_TEXT, "present")] += len(names)
    for column in LABEL_MAP[SOURCE_GOOGLE]:
        counts = tables.google[column].value_counts()
        want[(SOURCE_GOOGLE, "present")] += int(counts.get("YES", 0))
        want[(SOURCE_GOOGLE, "absent")] += int(counts.get("NO", 0))
    return want


@pytest.mark.network
def test_real_wheel_scene_graphs_parse_with_the_right_mentions(real):
    tables, out, _ = real
    vocab = vocabulary()
    got: Counter = Counter()
    graph_states: dict[tuple[str, str], str] = {}
    for path in (out / "scene_graphs").rglob("*_SceneGraph.json"):
        parsed = parse_scene_graph(path, vocab)
        assert parsed.unmapped_terms == [], path
        study = parsed.studies[0].study_id
        for m in parsed.mentions:
            got[(m.source, m.polarity)] += 1
            key = (study, m.finding)
            graph_states[key] = "present" if "present" in (m.polarity, graph_states.get(key)) else "absent"
    assert got == _expected_mentions(tables)
    # the converter and the independent reference agree on every study-level state
    states = ref.reference_states(tables)
    stated = states[states.state != "not_mentioned"]
    assert dict(zip(zip(stated.image_id, stated.finding, strict=True), stated.state, strict=True)) == graph_states
