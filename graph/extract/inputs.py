"""Report text inputs for extraction: a folder of .txt files, a CSV, Open-i XML files, or the IU reports.

Every reader streams :class:`ReportInput` items (one report each) and :class:`graph.records.Rejection`
items (one bad file or record each, naming the file, the record and the field), so one bad report never
stops the others. Checks, in this order, per report:

* the bytes are at most :data:`MAX_REPORT_BYTES` (a 1 MB "report" is a data error, not a report);
* they decode as UTF-8 (the error names the byte offset);
* XML is well formed (Open-i files);
* there is some text (an empty or whitespace-only report is rejected).

CSV: the id and text columns are required (``--id-column`` / ``--text-column``), patient and study date
columns optional; a missing column rejects the whole file. Reports without a patient become their own
patient; reports without a date get :data:`NOMINAL_DATE` (IU dates are redacted), and since each such
report is its own patient no prior study is ever invented for it.

Shapes: ``ReportInput.report`` is the text (str) or ``{section: text}`` (lower-case section names, report
order); ids are strings; ``study_datetime`` is ``"YYYY-MM-DD HH:MM:SS"``.
"""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from graph.errors import CxrkgError
from graph.formats.scene_graph import parse_datetime
from graph.records import Rejection


class ReportSourceError(CxrkgError, ValueError):
    """A report source that cannot be read at all (no such path, a file of another kind, a folder without
    reports): the line names the path. A bad record inside a readable source is a rejection instead."""

MAX_REPORT_BYTES = 100_000
NOMINAL_DATE = "2000-01-01 00:00:00"
IU_PREFIX = "IU-"


@dataclass(frozen=True)
class ReportInput:
    """One report to extract: its doc_key (unique in the run), its text, and where it belongs."""

    doc_key: str
    report: str | Mapping[str, str]
    patient_id: str
    study_id: str
    study_datetime: str
    file: str


@dataclass(frozen=True)
class CsvColumns:
    """Column names of a report CSV: id and text required, patient and study date optional."""

    id: str = "report_id"
    text: str = "text"
    patient: str | None = None
    date: str | None = None


def _decode(data: bytes, file: str, record: str | None, field: str | None) -> str | Rejection:
    """Size check, then strict UTF-8 decode; returns the text or a Rejection."""
    if len(data) > MAX_REPORT_BYTES:
        return Rejection(file, record, field, f"report is {len(data):,} bytes, over the {MAX_REPORT_BYTES:,}-byte "
                         "limit for one report")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection(file, record, field, f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                         f"({exc.reason})")
    if not text.strip():
        return Rejection(file, record, field, "empty report (no text)")
    return text


def iter_text_folder(folder: Path, id_prefix: str = "") -> Iterator[ReportInput | Rejection]:
    """``*.txt`` files under ``folder`` (recursively, sorted); doc_key = path relative to the folder
    without ``.txt``; each report is its own patient and study, dated :data:`NOMINAL_DATE`."""
    folder = Path(folder)
    for path in sorted(folder.rglob("*.txt")):
        key = id_prefix + path.relative_to(folder).with_suffix("").as_posix()
        yield from _text_report(path, key)


def _text_report(path: Path, key: str) -> Iterator[ReportInput | Rejection]:
    file = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        yield Rejection(file, key, None, f"cannot read: {exc}")
        return
    text = _decode(data, file, key, None)
    if isinstance(text, Rejection):
        yield text
    else:
        yield ReportInput(key, text, key, key, NOMINAL_DATE, file)


def _open_i_input(data: bytes, file: str, key: str | None = None,
                  id_prefix: str = IU_PREFIX) -> ReportInput | Rejection:
    """One Open-i / NLMCXR XML report, checked; doc_key = ``id_prefix`` + file stem."""
    from graph.datasets.iu import parse_report_xml

    key = key or id_prefix + Path(file).stem
    text = _decode(data, file, key, None)
    if isinstance(text, Rejection):
        return text
    try:
        report = parse_report_xml(data, file)
    except ET.ParseError as exc:
        return Rejection(file, key, None, f"invalid XML: {exc}")
    sections = report.sections()
    if not sections:
        return Rejection(file, key, "AbstractText", "empty report: no COMPARISON, INDICATION, FINDINGS or "
                         "IMPRESSION text")
    return ReportInput(key, sections, key, key, NOMINAL_DATE, file)


def iter_xml_folder(folder: Path, id_prefix: str = IU_PREFIX) -> Iterator[ReportInput | Rejection]:
    """Open-i XML reports (``*.xml``, the NLMCXR layout) under ``folder``, recursively, sorted."""
    for path in sorted(Path(folder).rglob("*.xml")):
        try:
            data = path.read_bytes()
        except OSError as exc:
            yield Rejection(str(path), None, None, f"cannot read: {exc}")
            continue
        yield _open_i_input(data, str(path), id_prefix=id_prefix)


def iter_iu(cache: Path | None = None) -> Iterator[ReportInput | Rejection]:
    """The 3,955 IU reports, streamed out of the verified torchxrayvision wheel (each report its own
    patient, redacted date -> :data:`NOMINAL_DATE`). Raises ``WheelUnavailable`` when the wheel cannot be had."""
    import tarfile
    import zipfile

    from graph.datasets.iu import REPORTS_MEMBER
    from graph.datasets.wheel import fetch_wheel

    wheel = fetch_wheel(cache)
    with zipfile.ZipFile(wheel) as zf, zf.open(REPORTS_MEMBER) as tgz, tarfile.open(fileobj=tgz, mode="r|gz") as tar:
        for member in tar:
            if not member.isfile() or not member.name.endswith(".xml"):
                continue
            fh = tar.extractfile(member)
            yield _open_i_input(fh.read() if fh else b"", f"{wheel.name}!{member.name}")


def iter_csv(path: Path, columns: CsvColumns = CsvColumns(), id_prefix: str = "") -> Iterator[ReportInput | Rejection]:
    """Reports from a CSV (UTF-8, header row). Each row is a record named ``line N`` plus its id.

    A missing id / text / patient / date column rejects the file (field = the column); per row, an empty
    or duplicate id, an empty, oversized or non-UTF-8 text, or an unreadable date rejects that row only.
    """
    file = str(path)
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, 64 * MAX_REPORT_BYTES))
    try:
        # streamed, not read whole (227,000 MIMIC-length reports held as bytes, text and a StringIO took the
        # flow process about 700 MB); surrogateescape keeps bad bytes as lone surrogates, so that one bad
        # row is rejected, not the file; utf-8-sig drops a byte-order mark
        with Path(path).open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
            yield from _csv_rows(csv.DictReader(fh), columns, file, id_prefix)
    except OSError as exc:
        yield Rejection(file, None, None, f"cannot read: {exc}")
    except csv.Error as exc:
        yield Rejection(file, None, None, f"unreadable CSV: {exc}")
    finally:
        csv.field_size_limit(old)


def _csv_rows(reader: csv.DictReader, columns: CsvColumns, file: str,
              id_prefix: str) -> Iterator[ReportInput | Rejection]:
    """The rows of an open CSV reader, or one Rejection for a missing column."""
    header = reader.fieldnames or []
    wanted = [c for c in (columns.id, columns.text, columns.patient, columns.date) if c]
    missing = [c for c in wanted if c not in header]
    if missing:
        yield Rejection(file, None, ", ".join(missing),
                        f"missing column(s) {', '.join(missing)}; the header has {', '.join(header) or 'nothing'}")
        return
    seen: set[str] = set()
    for row in reader:
        line = reader.line_num
        yield _csv_row(row, columns, file, line, seen, id_prefix)


def _csv_row(row: dict, columns: CsvColumns, file: str, line: int, seen: set[str], id_prefix: str):
    rid = (row.get(columns.id) or "").strip()
    record = f"line {line}" + (f" ({rid})" if rid else "")
    if not rid:
        return Rejection(file, record, columns.id, "empty report id")
    key = id_prefix + rid
    if key in seen:
        return Rejection(file, record, columns.id, f"duplicate report id {rid!r}")
    seen.add(key)
    for col, value in row.items():
        if isinstance(value, str) and any("\udc80" <= ch <= "\udcff" for ch in value):
            result = _decode(value.encode("utf-8", errors="surrogateescape"), file, record, col)
            return result if isinstance(result, Rejection) else Rejection(file, record, col, "not UTF-8")
    body = row.get(columns.text) or ""
    checked = _decode(body.encode("utf-8"), file, record, columns.text)
    if isinstance(checked, Rejection):
        return checked
    patient = id_prefix + (row.get(columns.patient) or "").strip() if columns.patient else key
    if columns.patient and patient == id_prefix:
        return Rejection(file, record, columns.patient, "empty patient id")
    when = NOMINAL_DATE
    if columns.date:
        try:
            when = parse_datetime((row.get(columns.date) or "").strip()).strftime("%Y-%m-%d %H:%M:%S")
        except (ValueError, AttributeError, TypeError) as exc:
            return Rejection(file, record, columns.date, f"unreadable study date {row.get(columns.date)!r}: {exc}")
    return ReportInput(key, checked, patient, key, when, file)


def iter_inputs(source: str | Path, columns: CsvColumns = CsvColumns(), cache: Path | None = None,
                id_prefix: str | None = None) -> Iterator[ReportInput | Rejection]:
    """Dispatch on the input: ``"iu"``, a ``.csv`` file, a ``.txt`` or ``.xml`` file, or a folder holding
    ``.txt`` and/or ``.xml`` reports.

    Raises:
        ReportSourceError: the path does not exist, is a file of another kind, or a folder without .txt / .xml
            files.
        graph.datasets.wheel.WheelUnavailable: ``"iu"`` and the wheel cannot be obtained.
    """
    if str(source) == "iu":
        yield from iter_iu(cache)
        return
    path = Path(source)
    if not path.exists():
        raise ReportSourceError(f"{path}: no such file or folder (check the path)")
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix == ".csv":
            yield from iter_csv(path, columns, id_prefix or "")
        elif suffix == ".txt":
            yield from _text_report(path, (id_prefix or "") + path.stem)
        elif suffix == ".xml":
            try:
                data = path.read_bytes()
            except OSError as exc:
                yield Rejection(str(path), None, None, f"cannot read: {exc}")
                return
            yield _open_i_input(data, str(path), id_prefix=IU_PREFIX if id_prefix is None else id_prefix)
        else:
            raise ReportSourceError(f"{path}: expected a folder, a .csv, .txt or .xml file, or `iu`")
        return
    has_txt = next(path.rglob("*.txt"), None) is not None
    has_xml = next(path.rglob("*.xml"), None) is not None
    if not has_txt and not has_xml:
        raise ReportSourceError(f"{path}: no .txt or .xml reports in this folder")
    if has_txt:
        yield from iter_text_folder(path, id_prefix or "")
    if has_xml:
        yield from iter_xml_folder(path, IU_PREFIX if id_prefix is None else id_prefix)


#: report text from which extraction uses every core by default: below it, starting a Dask cluster and
#: Prefect's API server (about 15 s here) costs more than the second core saves (742 reports/s in one process,
#: MIMIC-length reports of about 1 KB: 16 MB is about 20 s of one core's work)
PARALLEL_FROM_BYTES = 16 * 2**20


def source_bytes(source: str | Path) -> int:
    """The bytes of a report source's files (a file's size, or the files below a folder); ``iu`` (3,955
    short reports inside a wheel) counts 0."""
    if str(source) == "iu":
        return 0
    path = Path(source)
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def extract_workers(source: str | Path, requested: int | None, dask_address: str | None = None) -> int:
    """The worker processes an extraction of ``source`` runs on (``--workers``): ``requested`` when given
    (0: in this process); on an existing Dask cluster (``dask_address``) its own workers (0 here); else one
    per core once the source holds :data:`PARALLEL_FROM_BYTES` (:func:`graph.runtime.processes.worker_count`).

    Raises:
        ValueError: ``requested`` below 0.
    """
    from graph.runtime.processes import worker_count

    if requested is None and dask_address:
        return 0
    return worker_count(requested, source_bytes(source) if requested is None else 0, PARALLEL_FROM_BYTES)
