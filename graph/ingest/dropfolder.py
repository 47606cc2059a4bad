"""A drop folder that scheduled ingestion watches: which files to leave for later, which are committed,
and moving committed files to an archive. Plain functions; the Prefect flow is ``flows/serve.py``.

The contract with whoever drops files:

* a file counts once its modification time is ``settle_seconds`` old (a copy still in progress is
  left for the next run); writers that can should write under a temporary name (``x.json.part`` or a
  dot-file, which cxrkg never reads) and rename it when done;
* a file is *committed* when the graph's SourceFile for its path holds exactly its current content
  hash, the current vocabulary version and no rejected records. Only committed files are ever moved,
  and each file is hashed again right before its move, so a file changed since it was loaded stays;
* metadata CSVs (``mimic-cxr-2.0.0-metadata.csv``) are never moved: later scene graphs and reports
  may need their dates, and they are read on every run.

Moving keeps the path below the drop folder (``drop/a/b.json`` -> ``archive/a/b.json``). A file dropped
again under the same path later is treated as a new version of that file (its old mentions are
replaced), exactly like a changed file that never left the folder.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from graph.errors import CxrkgError
from graph.formats.files import sha256_of
from graph.ingest import METADATA, InputFile, discover, file_format
from graph.store import GraphStore
from graph.store import read_statements as rs


@dataclass(frozen=True)
class Moved:
    """One archived file: where it was (absolute path) and where it is now."""

    source: str
    target: str


class DropFolderError(CxrkgError, ValueError):
    """A drop or archive folder that cannot be watched: the line names the folder and what is wrong."""


def check_folders(drop: Path, archive: Path | None) -> None:
    """Validate the drop and archive folders.

    Raises:
        DropFolderError: the drop folder does not exist or is a file; the archive folder is the drop folder or
            lies inside it (it would be read again).
    """
    if not drop.exists():
        raise DropFolderError(f"drop folder {drop} does not exist (check the path)")
    if not drop.is_dir():
        raise DropFolderError(f"drop folder {drop} is not a folder")
    if archive is not None:
        a, d = archive.resolve(), drop.resolve()
        if a == d or d in a.parents:
            raise DropFolderError(f"archive folder {archive} must lie outside the drop folder {drop}")


def settling_files(drop: Path, settle_seconds: float, now: float | None = None,
                   exclude: Iterable[str] = ()) -> list[str]:
    """Input files under ``drop`` modified less than ``settle_seconds`` ago (absolute paths, sorted).

    Only files cxrkg would read count (see ``graph.ingest.file_format``), less ``exclude`` (such as the
    rejected-files report). ``now`` is a POSIX time in seconds (default: the current time).
    """
    now = time.time() if now is None else now
    skip = {str(Path(p).resolve()) for p in exclude}
    young = []
    for p in drop.rglob("*"):
        try:
            if (p.is_file() and file_format(p) and str(p.resolve()) not in skip
                    and now - p.stat().st_mtime < settle_seconds):
                young.append(str(p.resolve()))
        except FileNotFoundError:  # removed while we looked
            continue
    return sorted(young)


def committed_files(store: GraphStore, files: Iterable[InputFile], vocabulary_version: str) -> list[InputFile]:
    """The files whose SourceFile in the graph has their hash, this vocabulary version and no rejections.

    Metadata CSVs are never committed (they are not recorded in the graph).
    """
    files = [f for f in files if f.format != METADATA]
    rows = {r["path"]: r for r in store.read(rs.COMMITTED_SOURCE_FILES, paths=[f.path for f in files])}
    out = []
    for f in files:
        row = rows.get(f.path)
        if row and row["sha256"] == f.sha256 and row["vocabulary_version"] == vocabulary_version and not row["rejected"]:
            out.append(f)
    return out


def archive_files(files: Iterable[InputFile], drop: Path, archive: Path) -> list[Moved]:
    """Move committed files from ``drop`` to ``archive``, keeping their relative paths.

    Each file is hashed again first and stays where it is when its content is no longer the committed
    one (rewritten since it was loaded) or it has disappeared. The move is a rename on the same file
    system; across file systems the file is copied to a temporary name beside its target, renamed, and
    only then removed from the drop folder, so at every moment at least one whole copy exists.

    Returns:
        the files moved, in the order given.
    """
    drop = drop.resolve()
    moved = []
    for f in files:
        src = Path(f.path)
        try:
            if sha256_of(src) != f.sha256:
                continue
        except FileNotFoundError:
            continue
        target = archive.resolve() / src.relative_to(drop)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(src, target)
        except OSError as exc:
            if exc.errno != getattr(os, "EXDEV", 18):
                raise
            tmp = target.with_name(f".{target.name}.cxrkg-part")
            shutil.copy2(src, tmp)
            os.replace(tmp, target)
            src.unlink()
        moved.append(Moved(str(src), str(target)))
    return moved


def loadable_files(drop: Path, exclude: Iterable[str]) -> list[InputFile]:
    """``graph.ingest.discover`` of the drop folder without the excluded paths (settling files, reports)."""
    return discover([drop], exclude=[Path(p) for p in exclude])
