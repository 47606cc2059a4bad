"""The three NIH ChestX-ray14 tables read and checked out of the torchxrayvision 1.5.7 wheel.

Only the members in :data:`NIH_MEMBERS` are ever read (the wheel's other tables carry research-use terms
without redistribution rights); the wheel is fetched and checksummed by :func:`graph.datasets.wheel.fetch_wheel`
(sha256 :data:`graph.datasets.wheel.WHEEL_SHA256`). What the tables hold is described in
:mod:`graph.datasets.nih.convert`.

Errors: :class:`DatasetUnavailable` for a wheel that cannot be downloaded, is not a zip, lacks a member,
or holds a member that is not a readable gzip CSV with the expected columns.
"""

from __future__ import annotations

import gzip
import io
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from graph.datasets.wheel import WHEEL_NAME, WheelUnavailable, default_cache, fetch_wheel
from graph.errors import CxrkgError

DATA_ENTRY_MEMBER = "torchxrayvision/data/Data_Entry_2017_v2020.csv.gz"
BBOX_MEMBER = "torchxrayvision/data/BBox_List_2017.csv.gz"
GOOGLE_MEMBER = "torchxrayvision/data/google2019_nih-chest-xray-labels.csv.gz"
#: The only wheel members cxrkg reads for NIH (the others have no redistribution rights).
NIH_MEMBERS = (DATA_ENTRY_MEMBER, BBOX_MEMBER, GOOGLE_MEMBER)

DATA_ENTRY_COLUMNS = ("Image Index", "Finding Labels", "Follow-up #", "Patient ID", "Patient Age",
                      "Patient Gender", "View Position")
#: BBox_List's header is ``Image Index,Finding Label,Bbox [x,y,w,h],,,``: its first six columns are renamed to these.
BBOX_COLUMNS = ("Image Index", "Finding Label", "x", "y", "w", "h")
GOOGLE_COLUMNS = ("Image Index", "Fracture", "Pneumothorax", "Airspace opacity", "Nodule or mass")


class DatasetUnavailable(CxrkgError, RuntimeError):
    """The NIH tables cannot be read here: no wheel (no registry), not a zip, a member missing or corrupt."""


@dataclass(frozen=True)
class NIHTables:
    """The three NIH tables as read from the wheel, every cell a string (``""`` when empty).

    ``data_entry`` has at least :data:`DATA_ENTRY_COLUMNS`, ``bbox`` exactly :data:`BBOX_COLUMNS`,
    ``google`` at least :data:`GOOGLE_COLUMNS`.
    """

    data_entry: pd.DataFrame
    bbox: pd.DataFrame
    google: pd.DataFrame


def locate_wheel(wheel: Path | None = None, cache: Path | None = None) -> Path:
    """The wheel to read: ``wheel`` as given (not checksummed, so tests can pass small fake wheels), else
    the verified torchxrayvision 1.5.7 wheel in ``cache`` (default :func:`graph.datasets.wheel.default_cache`),
    downloaded with pip when missing.

    Raises:
        DatasetUnavailable: ``wheel`` does not exist, or the download / checksum fails.
    """
    if wheel is not None:
        if not Path(wheel).is_file():
            raise DatasetUnavailable(f"{wheel}: no such file; pass the torchxrayvision 1.5.7 wheel or leave it out "
                                     "to download it")
        return Path(wheel)
    cache = cache or default_cache()
    try:
        return fetch_wheel(cache)
    except WheelUnavailable as exc:
        raise DatasetUnavailable(f"{exc} (fix: let pip reach the package registry, or put the verified {WHEEL_NAME} "
                                 f"into {cache}, deleting any other file of that name first)") from exc


def _read_member(zf: zipfile.ZipFile, wheel: Path, member: str) -> pd.DataFrame:
    fix = f"delete {wheel} so that it is downloaded again, or pass the torchxrayvision 1.5.7 wheel"
    try:
        raw = zf.read(member)
    except KeyError:
        raise DatasetUnavailable(f"{wheel}: has no member {member}; {fix}") from None
    except (zipfile.BadZipFile, zlib.error, OSError) as exc:
        raise DatasetUnavailable(f"{wheel}: member {member} cannot be read ({exc}); {fix}") from exc
    try:
        text = gzip.decompress(raw)
        return pd.read_csv(io.BytesIO(text), dtype=str, keep_default_na=False)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as exc:
        raise DatasetUnavailable(f"{wheel}: member {member} is not a readable gzip CSV ({exc}); {fix}") from exc


def _require(frame: pd.DataFrame, columns: tuple[str, ...], wheel: Path, member: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DatasetUnavailable(f"{wheel}: member {member} lacks column(s) {', '.join(missing)}; it is not the "
                                 "NIH table of torchxrayvision 1.5.7")


def read_tables(wheel: Path) -> NIHTables:
    """Read the three NIH tables (and nothing else) out of ``wheel`` (about 1 MB compressed).

    Raises:
        DatasetUnavailable: the wheel is missing or not a zip, a member is missing, not gzip, not CSV, or
            lacks the columns used.
    """
    try:
        zf = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise DatasetUnavailable(f"{wheel}: not a readable wheel ({exc}); delete it so that it is downloaded "
                                 "again, or pass the torchxrayvision 1.5.7 wheel") from exc
    with zf:
        entry = _read_member(zf, wheel, DATA_ENTRY_MEMBER)
        bbox = _read_member(zf, wheel, BBOX_MEMBER)
        google = _read_member(zf, wheel, GOOGLE_MEMBER)
    _require(entry, DATA_ENTRY_COLUMNS, wheel, DATA_ENTRY_MEMBER)
    if len(bbox.columns) < len(BBOX_COLUMNS) or list(bbox.columns[:2]) != list(BBOX_COLUMNS[:2]):
        raise DatasetUnavailable(f"{wheel}: member {BBOX_MEMBER} does not start with the columns "
                                 f"{', '.join(BBOX_COLUMNS[:2])}, x, y, w, h")
    bbox = bbox.iloc[:, :len(BBOX_COLUMNS)].set_axis(list(BBOX_COLUMNS), axis=1)
    _require(google, GOOGLE_COLUMNS, wheel, GOOGLE_MEMBER)
    return NIHTables(entry, bbox, google)


def load_nih_tables(wheel: Path | None = None, cache: Path | None = None) -> NIHTables:
    """:func:`read_tables` of :func:`locate_wheel`. Raises DatasetUnavailable."""
    return read_tables(locate_wheel(wheel, cache))
