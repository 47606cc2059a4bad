"""How a run is planned (no database): files ordered and batched by patient, discovered paths resolved once."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from graph.ingest import discover, plan_ingest
from graph.synth import write_cohort
from graph.vocabulary import vocabulary


@pytest.fixture(scope="module")
def cohort(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cohort")
    write_cohort(out, patients=6, seed=5)
    return out


def test_files_are_ordered_and_batched_by_patient(cohort, tmp_path):
    # a report whose study the metadata CSV does not date gets no hint: it goes after the hinted files
    stray = tmp_path / "in" / "radgraph" / "p19" / "p19999999" / "s59999999.json"
    shutil.copytree(cohort, tmp_path / "in")
    stray.parent.mkdir(parents=True)
    shutil.copy(next((tmp_path / "in" / "radgraph").rglob("s*.json")), stray)
    plan = plan_ingest(discover([tmp_path / "in"]), {}, vocabulary().version)

    meta = pd.read_csv(cohort / "mimic-cxr-2.0.0-metadata.csv", dtype=str)
    patient_of_image = dict(zip(meta.dicom_id, meta.subject_id, strict=True))
    for f in plan.load:
        name = Path(f.path).name
        if name.endswith("_SceneGraph.json"):
            assert plan.patient_hints[f.path] == patient_of_image[name.removesuffix("_SceneGraph.json")]
        elif f.path != str(stray.resolve()):
            assert plan.patient_hints[f.path] == Path(f.path).parent.name.removeprefix("p")
    assert str(stray.resolve()) not in plan.patient_hints and plan.load[-1].path == str(stray.resolve())
    hinted = [plan.patient_hints[f.path] for f in plan.load[:-1]]
    assert hinted == sorted(hinted)  # a patient's scene graphs and reports are adjacent

    per_patient = Counter(plan.patient_hints.values())
    batches = plan.batches(max(per_patient.values()))
    assert len(batches) > 2 and [f for b in batches for f in b] == plan.load
    for batch in batches[:-1]:
        patients = {plan.patient_hints[f.path] for f in batch}
        assert plan.patients_within(batch) == patients  # every patient's files all in one batch
    seen = [p for b in batches[:-1] for p in {plan.patient_hints[f.path] for f in b}]
    assert len(seen) == len(set(seen)) == 6
    # a patient with more files than twice the batch size is split; it is within neither batch
    biggest, n = per_patient.most_common(1)[0]
    split = [b for b in plan.batches(n // 2 - 1) if biggest in {plan.patient_hints.get(f.path) for f in b}]
    assert len(split) > 1 and all(biggest not in plan.patients_within(b) for b in split)


def test_discovered_paths_are_resolved_once_per_root(cohort, tmp_path):
    # a root reached through a link, and a linked file inside it: both name the real files
    real = tmp_path / "real"
    shutil.copytree(cohort / "radgraph", real / "radgraph")
    target = next((real / "radgraph").rglob("s*.json"))
    elsewhere = tmp_path / "elsewhere" / "p10" / "p10000001" / "s50000001.json"
    elsewhere.parent.mkdir(parents=True)
    shutil.copy(target, elsewhere)
    (real / "radgraph" / "p10" / "p10000001").mkdir(parents=True)
    (real / "radgraph" / "p10" / "p10000001" / "s50000001.json").symlink_to(elsewhere)
    (tmp_path / "link").symlink_to(real)

    paths = {f.path for f in discover([tmp_path / "link"])}
    assert str(elsewhere.resolve()) in paths and str(target.resolve()) in paths
    assert all(p == str(Path(p).resolve()) for p in paths)
    assert paths == {f.path for f in discover([real])}


def test_unchanged_size_and_mtime_reuse_the_loaded_fingerprint_changed_ones_are_hashed_new_ones_later(cohort,
                                                                                                         tmp_path):
    from graph.formats.files import sha256_of
    from graph.ingest import with_known_fingerprints

    shutil.copytree(cohort / "scene_graphs", tmp_path / "in")
    a, b, c, d = discover([tmp_path / "in"], fingerprints=False)[:4]
    assert a.sha256 == "" and a.size == Path(a.path).stat().st_size > 0
    Path(b.path).touch()  # same bytes, new mtime: read again (and found equal by the plan)
    version = vocabulary().version
    known = {a.path: ("recorded", version, a.size, a.mtime_ns), b.path: ("recorded", version, b.size, b.mtime_ns),
             c.path: ("recorded", version, None, None)}  # loaded before sizes were recorded
    out = {f.path: f.sha256 for f in with_known_fingerprints(discover([tmp_path / "in"], fingerprints=False), known)}
    assert out[a.path] == "recorded"  # not read: the graph's fingerprint stands
    assert out[b.path] == sha256_of(Path(b.path)) and out[c.path] == sha256_of(Path(c.path))
    assert out[d.path] == ""  # new file: hashed where it is parsed (test_parsed_ahead_fills_in_the_fingerprints)


@pytest.mark.parametrize("batches", [1, 3], ids=["inline", "worker"])
def test_parsed_ahead_fills_in_the_fingerprints(cohort, batches):
    # a first load's files are planned unread and hashed by the parse step, inline or in its worker process
    from graph.formats.files import sha256_of
    from graph.ingest import METADATA, parse_files, parsed_ahead

    files = [f for f in discover([cohort], fingerprints=False) if f.format != METADATA][:9]
    assert files and all(f.sha256 == "" for f in files)
    size = -(-len(files) // batches)
    out = list(parsed_ahead([files[i:i + size] for i in range(0, len(files), size)], None))
    assert len(out) == batches
    got = [f for batch, _ in out for f in batch]
    assert [f.path for f in got] == [f.path for f in files]
    assert [f.sha256 for f in got] == [sha256_of(Path(f.path)) for f in files]
    parsed = [pf for _, batch in out for pf in batch]
    assert [pf.mentions for pf in parsed] == [pf.mentions for pf in parse_files(files, vocabulary(), None)]


def test_patient_hints_read_paths_as_path_objects_do(tmp_path):
    # paths written by hand (not as discover writes them) are read as their normalised form
    from graph.formats.metadata import StudyDates
    from graph.ingest.plan import RADGRAPH, SCENE_GRAPH, InputFile, patient_hints

    dates = StudyDates({"50000001": pd.Timestamp("2150-03-04").to_pydatetime()}, {"50000001": "10000001"},
                       {"img1": "50000001"})
    paths = {"in//p10000001/s50000001.json": "10000001", "in/./p10000001/./s50000001.json": "10000001",
             "p10000001/s50000001.json": "10000001", "in/p10000001/s50000002.json": None,
             "sg//img1_SceneGraph.json": "10000001", "sg/img1_SceneGraph.json/": "10000001",
             "sg/img2_SceneGraph.json": None}
    files = [InputFile(p, SCENE_GRAPH if "Scene" in p else RADGRAPH, "") for p in paths]
    assert patient_hints(files, dates) == {p: patient for p, patient in paths.items() if patient}
