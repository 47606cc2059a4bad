"""The Indiana University / Open-i chest X-ray reports (Demner-Fushman et al., JAMIA 2016; CC BY-NC-ND 4.0).

Source: ``torchxrayvision/data/NLMCXR_reports.tgz`` inside the torchxrayvision 1.5.7 wheel on PyPI
(``pip download torchxrayvision==1.5.7 --no-deps``), checked against :data:`graph.datasets.wheel.WHEEL_SHA256`. The wheel
is kept in a cache folder; reports are streamed out of it (zip -> gzip tar -> one XML at a time) and
never written to disk or committed, edited or not.

Shapes: :class:`IUReport` per XML file (3,955 in all); a file that is not valid XML becomes a
:class:`graph.records.Rejection` naming the file, and the others continue.

Errors: :class:`graph.datasets.wheel.WheelUnavailable` when the wheel cannot be downloaded (no registry) or its checksum
differs; tests turn it into ``pytest.skip``.
"""

from __future__ import annotations

import tarfile
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from graph.datasets.wheel import fetch_wheel
from graph.records import Rejection

REPORTS_MEMBER = "torchxrayvision/data/NLMCXR_reports.tgz"
SECTIONS = ("COMPARISON", "INDICATION", "FINDINGS", "IMPRESSION")
ATTRIBUTION = ("Indiana University chest X-ray reports (Open-i), Demner-Fushman et al., JAMIA 2016, "
               "CC BY-NC-ND 4.0; obtained from the torchxrayvision 1.5.7 wheel.")


@dataclass(frozen=True)
class IUReport:
    """One IU report: ``report_id`` is the file stem (``"10"`` for ecgen-radiology/10.xml).

    Sections hold the text as written ("" when absent); ``mesh_major`` / ``mesh_minor`` hold the tags as
    written (``"Calcified Granuloma/lung/upper lobe/right"``); ``image_ids`` the parentImage ids.
    """

    report_id: str
    file: str
    comparison: str
    indication: str
    findings: str
    impression: str
    mesh_major: tuple[str, ...]
    mesh_minor: tuple[str, ...]
    image_ids: tuple[str, ...]

    def sections(self) -> dict[str, str]:
        """Non-empty sections in report order, keyed lower-case (``{"findings": ..., "impression": ...}``)."""
        return {k.lower(): v for k, v in zip(SECTIONS, (self.comparison, self.indication, self.findings,
                                                         self.impression), strict=True) if v.strip()}


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def parse_report_xml(data: bytes, file: str) -> IUReport:
    """Parse one Open-i XML report.

    Raises:
        ET.ParseError: not well-formed XML.
    """
    root = ET.fromstring(data)
    sections = {s: "" for s in SECTIONS}
    for node in root.iter("AbstractText"):
        label = (node.get("Label") or "").upper()
        if label in sections:
            sections[label] = _text(node)
    mesh = root.find("MeSH")
    major = tuple(_text(m) for m in mesh.findall("major")) if mesh is not None else ()
    minor = tuple(_text(m) for m in mesh.findall("minor")) if mesh is not None else ()
    images = tuple(i.get("id", "") for i in root.findall("parentImage") if i.get("id"))
    return IUReport(Path(file).stem, file, sections["COMPARISON"], sections["INDICATION"], sections["FINDINGS"],
                    sections["IMPRESSION"], major, minor, images)


def iter_reports(wheel: Path) -> Iterator[IUReport | Rejection]:
    """Stream reports out of the wheel, one at a time, in archive order; bad XML yields a Rejection."""
    with zipfile.ZipFile(wheel) as zf, zf.open(REPORTS_MEMBER) as tgz, tarfile.open(fileobj=tgz, mode="r|gz") as tar:
        for member in tar:
            if not member.isfile() or not member.name.endswith(".xml"):
                continue
            fh = tar.extractfile(member)
            data = fh.read() if fh else b""
            try:
                yield parse_report_xml(data, member.name)
            except ET.ParseError as exc:
                yield Rejection(member.name, Path(member.name).stem, None, f"invalid XML: {exc}")


def load_reports(cache: Path | None = None) -> list[IUReport]:
    """All readable IU reports (about 4 MB of text); rejections are dropped. Raises WheelUnavailable."""
    return [r for r in iter_reports(fetch_wheel(cache)) if isinstance(r, IUReport)]
