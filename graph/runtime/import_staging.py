"""A bulk import staged beside the home's data and swapped in whole, so the home holds the old database or the
new one, never half of one.

``neo4j-admin database import`` writes a store file by file; killed (the command's SIGKILL ends it through
flows/child_guard.py) or out of disk, it leaves a partial store where it wrote. So it writes into the import's
own folder (``<home>/import-*/data``), and only a finished import is moved into ``<home>/data``: a mark file
is written first, then each of the database's two folders (its store and its transaction logs) replaces the
old one by a rename within the home's file system. :func:`recover` finishes a swap that a kill interrupted
(the mark is there: roll forward) and deletes an import folder whose command is gone (no mark: roll back);
the local server's start and every bulk load run it first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import psutil

OWNER = "owner.pid"
"""The file of an import folder that names the process writing it."""
STAGED = "data"
"""The import folder's sub-folder the importer writes its store into (its ``server.directories.data``)."""
SWAP = "SWAP"
"""The mark of a finished import being moved into place: it holds the database's name."""
_PARTS = ("databases", "transactions")  # what neo4j-admin writes for one database under a data folder


def new_import_folder(home: Path) -> Path:
    """A new import folder in ``home`` (``import-*``), marked with this process's pid.

    Raises:
        OSError: ``home`` cannot be written.
    """
    home.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="import-", dir=home))
    (folder / OWNER).write_text(f"{os.getpid()}\n")
    return folder


def swap_in(folder: Path, data_dir: Path, database: str) -> None:
    """Move the finished import staged in ``folder`` into ``data_dir`` in place of ``database``'s old store.

    Raises:
        OSError: a folder cannot be moved (the mark stays: :func:`recover` finishes the move).
    """
    (folder / STAGED / SWAP).write_text(database)
    _finish(folder, data_dir)


def _finish(folder: Path, data_dir: Path) -> None:
    mark = folder / STAGED / SWAP
    database = mark.read_text().strip()
    for part in _PARTS:
        staged, target = folder / STAGED / part / database, data_dir / part / database
        if staged.exists():  # each part is moved once; a part already moved is not staged any more
            shutil.rmtree(target, ignore_errors=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target)
    mark.unlink()


def _owner_alive(folder: Path) -> bool:
    try:
        pid = int((folder / OWNER).read_text().strip())
    except (OSError, ValueError):
        return False
    return pid != os.getpid() and psutil.pid_exists(pid)


def recover(home: Path, data_dir: Path) -> list[str]:
    """Finish or undo what killed imports left in ``home``: an import folder with the swap's mark is moved
    into ``data_dir`` (roll forward), one whose process is gone is deleted (roll back); an import under way
    (its process alive) is left alone.

    Returns:
        One line per folder dealt with ("finished the import in ...", "removed the partial import ...").
    """
    done = []
    for folder in sorted(home.glob("import-*")) if home.is_dir() else []:
        if (folder / STAGED / SWAP).exists():
            _finish(folder, data_dir)
            shutil.rmtree(folder, ignore_errors=True)
            done.append(f"finished the import in {folder}")
        elif folder.is_dir() and not _owner_alive(folder):
            shutil.rmtree(folder, ignore_errors=True)
            done.append(f"removed the partial import {folder}")
    return done


def megabytes(path: Path) -> float:
    """The size of the files under ``path`` in MB (10^6 bytes)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def free_megabytes(path: Path) -> float:
    """The free space of ``path``'s file system in MB (10^6 bytes)."""
    return shutil.disk_usage(path).free / 1e6
