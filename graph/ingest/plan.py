"""What a run loads: input discovery, fingerprints, the incremental plan and its batches by patient."""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Iterable, Iterator

from graph.formats.files import sha256_of
from graph.formats.lunguage import lunguage_header
from graph.formats.metadata import StudyDates, read_metadata
from graph.formats.scene_graph import SCENE_GRAPH_SUFFIX
from graph.records import InputError, Rejection
from graph.sequences import cut_runs

SCENE_GRAPH, RADGRAPH, METADATA = "chest_imagenome_scene_graph", "radgraph", "mimic_cxr_metadata"
LUNGUAGE = "lunguage"  # Lunguage sequential structured reports: a .csv whose header names the Lunguage columns
# RadGraph files bigger than this (bytes) are streamed: parsed and written STREAM_CHUNK_DOCS documents
# per transaction (see graph.ingest.load.store_files). Module attributes, read at call time: tests lower them.
STREAM_THRESHOLD_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)  # slots: a MIMIC-sized plan holds 469,000 of them
class InputFile:
    """One input file: where it is, what format it holds, its content hash (sha256, hex; empty until
    computed) and, when discovered, its size in bytes and modification time in ns (-1 when unknown)."""

    path: str
    format: str
    sha256: str
    size: int = -1
    mtime_ns: int = -1


@dataclass
class IngestPlan:
    """Files to load (new or changed, in the order of :func:`plan_ingest`) and files skipped as unchanged.

    ``patient_hints`` maps a file's path to the patient its records are expected to belong to (see
    :func:`patient_hints`); it only decides the order and where batches end, never what is stored.
    ``metadata_rejections``: unreadable metadata CSVs and rows (a row whose date does not parse names
    its line and dicom_id); a run reports them once. ``skipped``: what the input folders hold but
    :func:`discover` could not read (link loops, broken links, linked or unreadable folders).
    """

    load: list[InputFile]
    changed: set[str]
    unchanged: list[str]
    metadata: list[str]
    patient_hints: dict[str, str] = field(default_factory=dict)
    metadata_rejections: list[Rejection] = field(default_factory=list)
    skipped: list[Rejection] = field(default_factory=list)

    @property
    def rejections(self) -> list[Rejection]:
        """What the plan itself rejects: unreadable folder entries, then metadata."""
        return self.skipped + self.metadata_rejections

    def batches(self, batch_files: int) -> list[list[InputFile]]:
        """The files to load in batches of about ``batch_files``, a patient's files kept together.

        A batch ends at the first file of another (or an unknown) patient once it holds ``batch_files``
        files, and in any case at twice that size; so batches written at once rarely share a patient.
        """
        def full(batch: list[InputFile], f: InputFile) -> bool:
            return len(batch) >= 2 * batch_files or (
                len(batch) >= batch_files and not self._same_patient(batch[-1], f))

        return cut_runs(self.load, full)

    def patients_within(self, batch: list[InputFile]) -> set[str]:
        """The (hinted) patients all of whose files to load are in ``batch``: a batch can relink them
        in its own transaction, unless a file without a hint turns out to hold them too."""
        here = Counter(self.patient_hints[f.path] for f in batch if f.path in self.patient_hints)
        return {p for p, n in here.items() if n == self._files_per_patient[p]}

    @cached_property
    def _files_per_patient(self) -> Counter:
        return Counter(self.patient_hints[f.path] for f in self.load if f.path in self.patient_hints)

    def _same_patient(self, a: InputFile, b: InputFile) -> bool:
        hint = self.patient_hints.get(a.path)
        return hint is not None and hint == self.patient_hints.get(b.path)


def file_format(path: Path) -> str | None:
    """The input format a file announces, or None for files cxrkg does not read (or cannot: a CSV whose
    header cannot be read); see :func:`_name_format` and :func:`_csv_format`."""
    fmt = _name_format(path.name)
    if fmt is None and path.name.endswith(".csv"):
        try:
            return _csv_format(str(path))
        except OSError:
            return None
    return fmt


def _name_format(name: str) -> str | None:
    """The input format a file name announces (a string: discovery makes no path object per file); None
    for a name that announces nothing, a CSV other than metadata among them (:func:`_csv_format` reads its
    header)."""
    if name.upper().startswith("README"):
        return None  # documentation kept next to data files
    if name.endswith(SCENE_GRAPH_SUFFIX):
        return SCENE_GRAPH
    if name.endswith(".csv") and "metadata" in name:
        return METADATA
    if name.endswith((".json", ".jsonl")):
        return RADGRAPH
    return None


def _csv_format(path: str) -> str | None:
    """A CSV's format by its header: :data:`LUNGUAGE` when it names every Lunguage column (a ``cxrkg export
    lunguage`` file too: parsing refuses it with one rejection, graph.ingest.lunguage), else None.

    Raises:
        OSError: the file cannot be read.
    """
    return LUNGUAGE if lunguage_header(path) else None


def discover(paths: Iterable[Path], exclude: Iterable[Path] = (), fingerprints: bool = True,
             skipped: list[Rejection] | None = None) -> list[InputFile]:
    """All readable input files under the given files or folders (recursively), sorted by path.

    ``exclude`` names files to leave out, such as the rejected-files report of an earlier run. Without
    ``fingerprints`` the files' ``sha256`` is left empty (a first load, which compares with nothing,
    fills it in where the file is read anyway: :func:`with_fingerprint`). What a folder holds but cannot
    be read is added to ``skipped``, one rejection per entry naming it: a symbolic link loop, a broken
    link, a linked folder (never entered, so a loop cannot trap the walk), an unreadable folder and a CSV
    whose header cannot be read (a CSV other than metadata is recognised by its header: :func:`_csv_format`).
    Paths are plain strings below each root (``os.scandir``, ``os.path``): making a ``Path`` per file was
    most of planning's time on 112,000 files.

    Raises:
        FileNotFoundError: a given path does not exist.
    """
    found: list[InputFile] = []
    skip = {str(Path(p).resolve()) for p in exclude}
    for root in paths:
        root = Path(root)
        if not root.exists():
            raise FileNotFoundError(f"{root}: no such file or folder")
        if root.is_file():
            candidates: Iterable[tuple[str, str, str]] = [(str(root), root.name, str(root.resolve()))]
        else:
            # a generator: the 469,000 path pairs of a MIMIC-sized cohort held at once were 260 MB
            candidates = _walk(str(root), str(root.resolve()), skipped if skipped is not None else [])
        for path, name, real in candidates:
            fmt = _name_format(name)
            if fmt is None and name.endswith(".csv") and real not in skip:
                fmt = _header_format(path, skipped)
            if fmt and real not in skip:
                found.append(_input_file(path, real, fmt, fingerprints))
    found.sort(key=attrgetter("path"))
    return found


def _header_format(path: str, skipped: list[Rejection] | None) -> str | None:
    """:func:`_csv_format`, a CSV that cannot be read added to ``skipped`` (when given) instead."""
    try:
        return _csv_format(path)
    except OSError as exc:
        if skipped is not None:
            skipped.append(Rejection(path, None, None, f"CSV header not read: {exc.strerror or exc}"))
        return None


def _input_file(path: str, real: str, fmt: str, fingerprint: bool) -> InputFile:
    try:
        st = os.stat(real)
    except OSError:  # vanished or unreadable: parsing rejects it, naming the error
        return InputFile(real, fmt, "")
    return InputFile(real, fmt, sha256_of(Path(path)) if fingerprint else "", st.st_size, st.st_mtime_ns)


def _walk(root: str, base: str, skipped: list[Rejection]) -> Iterator[tuple[str, str, str]]:
    """(path, file name, resolved path) of every file below ``root``, whose resolved path is ``base``,
    without entering linked folders (``os.scandir``: a third of the time ``Path.rglob`` took on 112,000
    files); what cannot be read goes to ``skipped``. Linked folders are not entered, so below ``base``
    only a linked file needs resolving of its own (resolving every path was a quarter of planning time)."""
    folders = [(os.path.join(base, ""), root)]  # (resolved folder with its trailing separator, folder)
    while folders:
        real, folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            skipped.append(Rejection(folder, None, None, f"folder not read: {exc.strerror or exc}"))
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                folders.append((f"{real}{e.name}/", e.path))
            elif _is_file(e):
                yield e.path, e.name, os.path.realpath(e.path) if e.is_symlink() else real + e.name
            elif e.is_symlink():
                skipped.append(Rejection(e.path, None, None, _unfollowed_link(e.path)))


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a link loop raises where a broken link is merely not a file
        return False


def _unfollowed_link(path: str) -> str:
    """Why a symbolic link that is not a file was not read."""
    try:
        target = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop: not read"
        return f"broken symbolic link (to {os.readlink(path)}): not read"
    if stat.S_ISDIR(target.st_mode):
        return f"linked folder, not entered: give its target ({os.path.realpath(path)}) to load it"
    return "symbolic link to something that is not a file: not read"


def with_fingerprint(f: InputFile) -> InputFile:
    """``f`` with its ``sha256`` filled in when empty; left empty when the file cannot be read (parsing
    then rejects it, naming the error)."""
    if f.sha256:
        return f
    try:
        return replace(f, sha256=sha256_of(Path(f.path)))
    except OSError:
        return f


def with_known_fingerprints(files: list[InputFile], known: dict[str, tuple]) -> list[InputFile]:
    """``files`` with ``sha256`` filled in where planning compares it: taken from the graph's record of the last
    load (``known``: path -> (sha256, vocabulary version, size, mtime_ns), :meth:`GraphStore.source_file_hashes`)
    when the file's size and modification time are still the ones loaded, otherwise computed from its bytes. So
    an incremental run reads only modified files (the rule of make and rsync's default quick check); a file
    rewritten with different bytes of the same size within the same nanosecond is taken as unchanged. A file
    the graph has no record of is new whatever its bytes: its ``sha256`` stays empty here and is computed where
    the file is read to be parsed (:func:`with_fingerprint`, :func:`graph.ingest.schedule.parsed_ahead`), so a
    first load does not read every file once more before writing anything."""
    out = []
    for f in files:
        previous = known.get(f.path)
        if previous is None or f.sha256:
            out.append(f)
        elif previous[0] and f.size >= 0 and previous[2:4] == (f.size, f.mtime_ns):
            out.append(replace(f, sha256=previous[0]))
        else:
            out.append(with_fingerprint(f))
    return out


def plan_ingest(files: list[InputFile], known: dict[str, tuple], vocabulary_version: str) -> IngestPlan:
    """Split files into what to load and what is unchanged since its last load.

    ``known`` maps loaded paths to (sha256, vocabulary version, ...). A file counts as changed when its
    content or the vocabulary it was normalised with has changed.

    Files whose patient and date are known before parsing (:func:`patient_hints`) come first,
    ordered by patient, so a patient's scene graphs and reports share a batch (fewer batches touch
    an observation, and batches written at once hold different patients). The others follow, scene
    graphs before report extractions so that reports of the same run find their study dates in the
    graph.
    """
    order = {SCENE_GRAPH: 0, RADGRAPH: 1, LUNGUAGE: 2}
    load, unchanged, changed = [], [], set()
    for f in files:
        if f.format == METADATA:
            continue
        previous = known.get(f.path)
        if previous is not None and previous[:2] == (f.sha256, vocabulary_version):
            unchanged.append(f.path)
            continue
        if previous is not None:
            changed.add(f.path)
        load.append(f)
    metadata = [f.path for f in files if f.format == METADATA]
    dates, metadata_rejections = metadata_dates(metadata)
    hints = patient_hints(load, dates)
    load.sort(key=lambda f: (0, hints[f.path], order[f.format], f.path) if f.path in hints
              else (1, "", order[f.format], f.path))
    return IngestPlan(load, changed, unchanged, metadata, hints, metadata_rejections)


_MIMIC_REPORT_PATH = re.compile(r"(?:^|/)p(\d+)/s(\d+)\.[^/]+$")


def patient_hints(files: list[InputFile], dates: StudyDates) -> dict[str, str]:
    """path -> patient, for the files whose patient and study date are known before parsing them.

    Scene graphs (``<dicom_id>_SceneGraph.json``) through the metadata CSVs' dicom_id -> study_id ->
    subject_id; report files in the MIMIC-CXR layout (``.../p10000032/s50414267.json``) from their
    path, when the metadata CSVs (``dates``, :func:`metadata_dates`) date that study. Files with a known
    date need no other file of the run to be stored first, so they can be loaded patient by patient.
    """
    hints: dict[str, str] = {}
    for f in files:
        patient = None
        normal = _is_normal(f.path)  # then read as a string: a Path per file was most of this function's time
        if f.format == SCENE_GRAPH:
            name = f.path.rpartition("/")[2] if normal else Path(f.path).name
            study = dates.image_study.get(name.removesuffix(SCENE_GRAPH_SUFFIX))
            patient = dates.study_patient.get(study) if study else None
        elif match := _MIMIC_REPORT_PATH.search(f.path if normal else Path(f.path).as_posix()):
            patient = match.group(1) if match.group(2) in dates.study_datetime else None
        if patient:
            hints[f.path] = patient
    return hints


def _is_normal(path: str) -> bool:
    """Whether ``path`` is already as ``Path(path).as_posix()`` writes it (every path :func:`discover` finds
    is), so that its name and folders can be read from the string without making a ``Path``."""
    return bool(path) and path != "." and "//" not in path and "/./" not in path and not path.startswith("./") \
        and not path.endswith(("/", "/."))


@lru_cache(maxsize=4)
def _metadata(path: str, version: tuple) -> tuple[StudyDates, tuple[InputError, ...]]:
    dates, errors = read_metadata(Path(path))
    return dates, tuple(errors)


def metadata_dates(paths: Iterable[str]) -> tuple[StudyDates, list[Rejection]]:
    """Study dates and patients from all metadata CSVs.

    Each CSV is read once per version within a process: a version is (inode, size, modification time
    in ns), so a rewritten file is read again, while the planning step and every batch of a run share
    one read (the full MIMIC-CXR metadata CSV runs to tens of MB; hashing it per batch cost a full read).
    File times advance in clock ticks of milliseconds, so a file modified in the last two seconds adds
    its SHA-256 to the version (git's "racily clean" rule).
    """
    dates, patients, images, sizes, rejections = {}, {}, {}, {}, []
    for path in paths:
        try:
            st = os.stat(path)
            version: tuple = (st.st_ino, st.st_size, st.st_mtime_ns)
            if time.time_ns() - st.st_mtime_ns < 2_000_000_000:
                version += (sha256_of(Path(path)),)
            d, errors = _metadata(path, version)
        except OSError as exc:
            rejections.append(Rejection.from_error(InputError(path, None, None, f"cannot read: {exc}")))
            continue
        except InputError as exc:
            rejections.append(Rejection.from_error(exc))
            continue
        dates.update(d.study_datetime)
        patients.update(d.study_patient)
        images.update(d.image_study)
        sizes.update(d.image_size)
        rejections += [Rejection.from_error(e) for e in errors]
    return StudyDates(dates, patients, images, sizes), rejections
