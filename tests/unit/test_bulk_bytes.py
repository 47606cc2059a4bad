"""The bulk load's import files stay byte for byte what they were before the files stage was made faster
(issue 36): a synthetic cohort with bad records, plus the RadGraph-XL sample through its doc mapping (no
patient hints: parked and derived at the end), written batch by batch and by worker parts; each file's
SHA-256 (the cohort's folder replaced by a placeholder) and every rejection are compared with the digests
the writer before the change produced (recorded below)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from graph.records import file_key
from graph.synth import write_cohort
from tests.fixtures.bulk import write_import_files

SAMPLE = Path(__file__).resolve().parents[2] / "graph" / "samples" / "radgraph_xl"

# file name -> SHA-256 of its bytes (header and rows, the input folders as "<cohort>" and "<sample>"), written
# by the files stage before it was made faster (issue 36; recorded again from that writer once the graph
# model gained episodes and RadGraph-schema sides, and again when a stated uncertain state began to yield to
# a presence a later comparison implies: Episode, Observation and anatomy-level PROGRESSION rows; and once
# more when episodes gained episode_count: Episode rows), in turn
# and by worker parts alike (a part's rows come in the same order here: one worker); "rejections": SHA-256 of
# the rejections, one per line
EXPECTED = {
    "nodes_Anatomy.csv":
        "05ed61e27095d9f75c6767de71501786a5ed0ce56eb05e65cffcccf4f0557c7c",
    "nodes_BoundingBox.csv":
        "d27775032e657847b25ac5d5360e2ff7ccff94ad640efc83c250859399be7b9c",
    "nodes_Episode.csv":
        "59478022bf3663a8a1560e40609b94c59fa9818f22c1c7028739d2b2322256ac",
    "nodes_Finding.csv":
        "790b2ee76f2f39260e1886285ad6001289ee44bf76591f2d6a3470e184d13d2f",
    "nodes_Image.csv":
        "da307fe36239ece9bd187bcf48969d97c57575a5fd62615fdb747fc9bfe46a3b",
    "nodes_Mention.csv":
        "00a3959473bc8195e50368d3505260d9baa0a43e1dccec22bb6c81b0aa65dfc6",
    "nodes_Observation.csv":
        "169cc967c8a65c7be0498859e77cd863ec6e511f270e2bc9d5329acfe9cbeb6c",
    "nodes_Patient.csv":
        "0da9dd382d97c5f230920fcb7ed939e087fda27a4ed8023eec71c0121fa168df",
    "nodes_Report.csv":
        "e263aeab7d8c08be22337ab4f72ce5620659cb4a74d6ff9096ca1a2f9beaab32",
    "nodes_SourceFile.csv":
        "792e46d71b08767b282b0c581d69079bbe8ab90c1c6c999c211ebe7001252780",
    "nodes_Study.csv":
        "6ba3594128da97b2edf12cb0d3492c5ca5bb25d66cbc53a9387811e1b61fb0ba",
    "nodes_StudyFinding.csv":
        "4efc348f1578d2bdcf000596178f857d3e52df772acf3487f9278e1c46b7bab7",
    "rels_HAS_BBOX_Image_BoundingBox.csv":
        "7644c95ade906f27c291998cb2a233e61779341f260b6d926e176117d149afd4",
    "rels_HAS_EPISODE_Patient_Episode.csv":
        "dbb19ccdf7583bb781115d2fa06e2fff91ff7b441707c48266f6478dcf360eaf",
    "rels_HAS_IMAGE_Study_Image.csv":
        "557ce26f93abc7f2432b350a1dfede2d36655089a5ce6dd96f7b8ee438019b95",
    "rels_HAS_MENTION_Observation_Mention.csv":
        "eda9d88233e96dafc77f2f895ad248789d93357b131081f798be5820e10b7405",
    "rels_HAS_OBSERVATION_Study_Observation.csv":
        "429a0c73467ba093314abab4a314983f7a3eac1ad5bf7a15c0cf07eea3e621d9",
    "rels_HAS_REPORT_Study_Report.csv":
        "58234a472479c2c1aa681922ce53e44bde0680f39d7e780ad3e108b3b35ddfaa",
    "rels_HAS_STUDY_FINDING_Study_StudyFinding.csv":
        "bceaaa2c0f2069d081f1461ccde58a3d802a1efba759cbde8f843a40519908cc",
    "rels_HAS_STUDY_Patient_Study.csv":
        "7a3326174d66c5c9ab6640d462a7f25b2c08c39cc779404976bbd34eac4b112a",
    "rels_LOCATED_AT_Observation_Anatomy.csv":
        "c45a25c18e92c0dd619358a304f4334f6f348202b4ab3294bb8980a1dba50813",
    "rels_OF_ANATOMY_BoundingBox_Anatomy.csv":
        "91d538278c7951544066575449b5da813df99621dd8204c8007434e553c7c5ac",
    "rels_OF_FINDING_Episode_Finding.csv":
        "b74ae514da4253df33d0a3388dc0dca270e882919ac6ddffc4cee28f544f3e8d",
    "rels_OF_FINDING_Observation_Finding.csv":
        "f922d545513b77975b3305b8f7a48579567becbe067d0b8f057e509351a52018",
    "rels_OF_FINDING_StudyFinding_Finding.csv":
        "22ecc67cc0cd29f233d4eeeeb9afe3365817a0a88547b2cddf2e02917ff4fd89",
    "rels_PRIOR_Study_Study.csv":
        "7ea19e499dfed9a30d2cea0bf14947cc13090d9d7c6f7beef569f75f69b5a053",
    "rels_PROGRESSION_Observation_Observation.csv":
        "ae37d6984eb8c6a8d1a8cadfccd74823fbbf53faf7e04c85e2e8a914f490b16a",
    "rels_PROGRESSION_StudyFinding_StudyFinding.csv":
        "2338c1952873b905435ca7b5671f8c31043cf35c405866aa4ccc9329a6d498ce",
    "rejections":
        "8c7270392a78c0187b5b8e53ed2c62dfed1fb14aede355022a33acf392457134",
}


def _settled(folder: Path) -> None:
    """Every file's mtime fixed (SourceFile's mtime_ns), so the files do not depend on when they were copied."""
    for path in folder.rglob("*"):
        os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))


def _sample(tmp_path: Path) -> Path:
    """The RadGraph-XL sample copied beside the cohort: its path and mtime then do not depend on the checkout."""
    sample = tmp_path / "sample"
    shutil.copytree(SAMPLE, sample)
    _settled(sample)
    return sample


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
    _settled(cohort)


def _placeholders(data: bytes, cohort: Path, sample: Path, files: list[Path]) -> bytes:
    """The bytes without what depends on where the test's inputs lie: their folders, and the Mention rows'
    ``file_key`` (a hash of the file's path)."""
    for path in files:
        data = data.replace(f",{file_key(str(path))},".encode(), b",<key>,")
    return data.replace(str(cohort).encode(), b"<cohort>").replace(str(sample).encode(), b"<sample>")


def _digests(cohort: Path, sample: Path, out: Path, parts: bool) -> dict[str, str]:
    rejections: list = []
    listing = write_import_files(cohort, out, "parts" if parts else "by_batch", 30, rejections, also=(sample,),
                                 doc_mapping=str(sample / "doc_mapping.csv"))
    inputs = [p for folder in (cohort, sample) for p in folder.rglob("*") if p.is_file()]
    content: dict[str, bytes] = {}
    for f in listing:
        data = f.path.read_bytes()
        if f.path.name in content:  # a worker part's file: the header is written once
            data = data.split(b"\n", 1)[1]
        content[f.path.name] = content.get(f.path.name, b"") + data
    digests = {name: hashlib.sha256(_placeholders(data, cohort, sample, inputs)).hexdigest()
               for name, data in sorted(content.items())}
    lines = "\n".join(f"{r.file}|{r.record}|{r.field}|{r.reason}" for r in rejections)
    lines = lines.replace(str(cohort), "<cohort>").replace(str(sample), "<sample>")
    digests["rejections"] = hashlib.sha256(lines.encode()).hexdigest()
    return digests


@pytest.mark.parametrize("parts", [False, True], ids=["in_turn", "parts"])
def test_import_files_are_byte_identical_to_the_writer_before_issue_36(tmp_path, parts):
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=24, seed=11)
    _spoil(cohort)
    got = _digests(cohort, _sample(tmp_path), tmp_path / "out", parts=parts)
    assert len(got) > 20
    assert got == EXPECTED
