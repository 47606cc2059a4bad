"""The Indiana University / Open-i chest X-ray reports (Demner-Fushman et al., JAMIA 2016; CC BY-NC-ND 4.0).

Source: ``torchxrayvision/data/NLMCXR_reports.tgz`` inside the torchxrayvision 1.5.7 wheel on PyPI
(``pip download torchxrayvision==1.5.7 --no-deps``), checked against :data:`WHEEL_SHA256`. The wheel
is kept in a cache folder; reports are streamed out of it (zip -> gzip tar -> one XML at a time) and
never written to disk or committed, edited or not.

Shapes: :class:`IUReport` per XML file (3,955 in all); a file that is not valid XML becomes a
:class:`graph.records.Rejection` naming the file, and the others continue.

Errors: :class:`IUUnavailable` when the wheel cannot be downloaded (no registry) or its checksum
differs; tests turn it into ``pytest.skip``.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from graph.formats.files import sha256_of
from graph.records import Rejection

WHEEL_NAME = "torchxrayvision-1.5.7-py3-none-any.whl"
WHEEL_SHA256 = "95f6c3475661f3515d4258deb0855bd5d1b1a56e0b65384251d3dd3fa61fac41"
REPORTS_MEMBER = "torchxrayvision/data/NLMCXR_reports.tgz"
SECTIONS = ("COMPARISON", "INDICATION", "FINDINGS", "IMPRESSION")
ATTRIBUTION = ("Indiana University chest X-ray reports (Open-i), Demner-Fushman et al., JAMIA 2016, "
               "CC BY-NC-ND 4.0; obtained from the torchxrayvision 1.5.7 wheel.")


class IUUnavailable(RuntimeError):
    """The IU reports cannot be obtained here: the registry is unreachable or the wheel is not the expected one."""


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
                                                         self.impression)) if v.strip()}


def default_cache() -> Path:
    """``$CXRKG_IU_CACHE``, else ``~/.cache/cxrkg/iu``."""
    from graph.settings import settings

    return settings().iu_cache


def fetch_wheel(cache: Path | None = None, timeout: int = 300) -> Path:
    """The verified torchxrayvision wheel in ``cache``, downloaded with pip if it is not there yet.

    Raises:
        IUUnavailable: pip cannot download it (no network / registry), or the sha256 differs.
    """
    cache = cache or default_cache()
    wheel = cache / WHEEL_NAME
    if not wheel.exists():
        cache.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "torchxrayvision==1.5.7", "--no-deps",
               "--disable-pip-version-check", "-q", "-d", str(cache)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise IUUnavailable(f"cannot download torchxrayvision 1.5.7 from the package registry: {exc}") from exc
        if res.returncode != 0 or not wheel.exists():
            tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
            raise IUUnavailable(f"cannot download torchxrayvision 1.5.7 from the package registry: {tail[0]}")
    digest = sha256_of(wheel)
    if digest != WHEEL_SHA256:
        raise IUUnavailable(f"{wheel}: sha256 {digest} is not the expected {WHEEL_SHA256}")
    return wheel


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
    """All readable IU reports (about 4 MB of text); rejections are dropped. Raises IUUnavailable."""
    return [r for r in iter_reports(fetch_wheel(cache)) if isinstance(r, IUReport)]
