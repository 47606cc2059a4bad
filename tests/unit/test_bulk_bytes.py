"""The bulk load's import files stay byte for byte what they were before the files stage was made faster
(issue 36): a synthetic cohort with bad records, plus the RadGraph-XL sample through its doc mapping (no
patient hints: parked and derived at the end), written batch by batch and by worker parts; each file's
SHA-256 (the cohort's folder replaced by a placeholder) and every rejection are compared with the digests
the writer before the change produced (recorded below)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from graph.records import file_key
from graph.synth import write_cohort
from tests.unit.test_bulk_files import write_import_files

SAMPLE = Path(__file__).resolve().parents[2] / "graph" / "samples" / "radgraph_xl"

# file name -> SHA-256 of its bytes (header and rows, the cohort's folder as "<cohort>"), written by the
# files stage as of commit 8273cb6 (before issue 36), in turn and by worker parts alike (a part's rows come
# in the same order here: one worker); "rejections": SHA-256 of the rejections, one per line
EXPECTED = {
    "nodes_Anatomy.csv":
        "05ed61e27095d9f75c6767de71501786a5ed0ce56eb05e65cffcccf4f0557c7c",
    "nodes_BoundingBox.csv":
        "d27775032e657847b25ac5d5360e2ff7ccff94ad640efc83c250859399be7b9c",
    "nodes_Finding.csv":
        "790b2ee76f2f39260e1886285ad6001289ee44bf76591f2d6a3470e184d13d2f",
    "nodes_Image.csv":
        "da307fe36239ece9bd187bcf48969d97c57575a5fd62615fdb747fc9bfe46a3b",
    "nodes_Mention.csv":
        "e2964a84624b74570cb0c22ac9efdad1320493efb5380935bf703d282ab22075",
    "nodes_Observation.csv":
        "cd94c4151d1fd3af22b3de17f799f187681b444b257ad4cc1fcebd9f8b430e39",
    "nodes_Patient.csv":
        "0da9dd382d97c5f230920fcb7ed939e087fda27a4ed8023eec71c0121fa168df",
    "nodes_Report.csv":
        "779889e81a578d617f8f4576ea1b03e427e35d4f153f6366a5fc643ca6677284",
    "nodes_SourceFile.csv":
        "a71c15a92455a0db68ebd2b3b0b9e05e0d4f6653edda6181ba5b2428b4d61763",
    "nodes_Study.csv":
        "6ba3594128da97b2edf12cb0d3492c5ca5bb25d66cbc53a9387811e1b61fb0ba",
    "nodes_StudyFinding.csv":
        "ec39f819a8fd68dd4c7bc11fbac6048a27f657c657f121b952a8c0e4bdcc2b89",
    "rels_HAS_BBOX_Image_BoundingBox.csv":
        "7644c95ade906f27c291998cb2a233e61779341f260b6d926e176117d149afd4",
    "rels_HAS_IMAGE_Study_Image.csv":
        "557ce26f93abc7f2432b350a1dfede2d36655089a5ce6dd96f7b8ee438019b95",
    "rels_HAS_MENTION_Observation_Mention.csv":
        "eda9d88233e96dafc77f2f895ad248789d93357b131081f798be5820e10b7405",
    "rels_HAS_OBSERVATION_Study_Observation.csv":
        "2907a1b58de51f284d4cddc00c03d288564cf5d9f1956c1079480b0c4f917e0b",
    "rels_HAS_REPORT_Study_Report.csv":
        "58234a472479c2c1aa681922ce53e44bde0680f39d7e780ad3e108b3b35ddfaa",
    "rels_HAS_STUDY_FINDING_Study_StudyFinding.csv":
        "f1e72c5b8870c31286f197f9343a73d00b8314611646a0c274379ee20b2f882d",
    "rels_HAS_STUDY_Patient_Study.csv":
        "7a3326174d66c5c9ab6640d462a7f25b2c08c39cc779404976bbd34eac4b112a",
    "rels_LOCATED_AT_Observation_Anatomy.csv":
        "3c3a25f5e74eda742acfa99d8108b530cbed76ee116358a71a2611736cbb4f1c",
    "rels_OF_ANATOMY_BoundingBox_Anatomy.csv":
        "91d538278c7951544066575449b5da813df99621dd8204c8007434e553c7c5ac",
    "rels_OF_FINDING_Observation_Finding.csv":
        "84772cc564222451b58681a7cb3ef376622eb59b02cdb309aec78b55ad2dae63",
    "rels_OF_FINDING_StudyFinding_Finding.csv":
        "7f7e73278086ef942c3d84d6693bb9683c9bd75633ef57d0b61f40f456c74938",
    "rels_PRIOR_Study_Study.csv":
        "7ea19e499dfed9a30d2cea0bf14947cc13090d9d7c6f7beef569f75f69b5a053",
    "rels_PROGRESSION_Observation_Observation.csv":
        "4b9d1403de5e13ff1ec9a960518b873d39f2460480ae18003815aa3b3139bab5",
    "rels_PROGRESSION_StudyFinding_StudyFinding.csv":
        "2c0729b13dbdbc4550d9ab0cd179f1b8c7f9f46f34dbde07900381a7ca6891d4",
    "rejections":
        "8c7270392a78c0187b5b8e53ed2c62dfed1fb14aede355022a33acf392457134",
}


def _spoil(cohort: Path) -> None:
    """Bad input of every kind a batch must reject and go on from: truncated JSON, a wrong type, a
    negative box (a record-level rejection), a RadGraph document without its text."""
    graphs = sorted((cohort / "scene_graphs").rglob("*_SceneGraph.json"))
    reports = sorted((cohort / "radgraph").rglob("*.json"))
    graphs[0].write_bytes(graphs[0].read_bytes()[:200])
    sg = json.loads(graphs[1].read_text())
    sg["objects"][0]["x1"] = "12"
    graphs[1].write_text(json.dumps(sg))
    sg = json.loads(graphs[2].read_text())
    sg["objects"][1]["y1"] = -3
    graphs[2].write_text(json.dumps(sg))
    docs = json.loads(reports[0].read_text())
    for doc in docs.values():
        doc.pop("text", None)
    reports[0].write_text(json.dumps(docs))
    for path in cohort.rglob("*"):
        os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # SourceFile's mtime_ns


def _placeholders(data: bytes, cohort: Path, files: list[Path]) -> bytes:
    """The bytes without what depends on where the test's cohort lies: its folder, and the Mention rows'
    ``file_key`` (a hash of the file's path)."""
    for path in files:
        data = data.replace(f",{file_key(str(path))},".encode(), b",<key>,")
    return data.replace(str(cohort).encode(), b"<cohort>")


def _digests(cohort: Path, out: Path, parts: bool) -> dict[str, str]:
    rejections: list = []
    listing = write_import_files(cohort, out, "parts" if parts else "by_batch", 30, rejections, also=(SAMPLE,),
                                 doc_mapping=str(SAMPLE / "doc_mapping.csv"))
    inputs = [p for p in cohort.rglob("*") if p.is_file()]
    content: dict[str, bytes] = {}
    for f in listing:
        data = f.path.read_bytes()
        if f.path.name in content:  # a worker part's file: the header is written once
            data = data.split(b"\n", 1)[1]
        content[f.path.name] = content.get(f.path.name, b"") + data
    digests = {name: hashlib.sha256(_placeholders(data, cohort, inputs)).hexdigest()
               for name, data in sorted(content.items())}
    lines = "\n".join(f"{r.file}|{r.record}|{r.field}|{r.reason}" for r in rejections)
    digests["rejections"] = hashlib.sha256(lines.replace(str(cohort), "<cohort>").encode()).hexdigest()
    return digests


@pytest.mark.parametrize("parts", [False, True], ids=["in_turn", "parts"])
def test_import_files_are_byte_identical_to_the_writer_before_issue_36(tmp_path, parts):
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=24, seed=11)
    _spoil(cohort)
    got = _digests(cohort, tmp_path / "out", parts=parts)
    assert len(got) > 20
    assert got == EXPECTED
