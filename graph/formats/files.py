"""File helpers: fingerprints shared by ingestion, the drop folder, dataset downloads and GNN snapshots, and
string-typed CSV tables with required columns (Lunguage files; question files have their own reader,
:mod:`graph.formats.diffvqa`, which names rows by file line)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from graph.records import InputError

if TYPE_CHECKING:
    import pandas as pd


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (``hashlib.file_digest``, streamed).

    Raises:
        OSError: the file cannot be read.
    """
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def read_bytes(path: str | Path, size: int | None = None) -> bytes:
    """A whole file's bytes in as few system calls as the OS allows: open, one read of the expected size and
    one byte more (the file's size when ``size`` is None: one ``fstat``), close. ``Path.read_bytes`` makes
    about twice as many calls (a terminal check, two ``fstat``, a seek, a read to see the end), and on
    this machine's sandboxed kernel each costs microseconds. A file that grew since ``size`` was taken is
    read to its end; one that shrank is read as it is now.

    Args:
        path: the file.
        size: its size in bytes when known (the planner's ``InputFile.size``), else None.

    Raises:
        OSError: the file cannot be opened or read (the message names the path, as ``open`` does).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        want = (os.fstat(fd).st_size if size is None else size) + 1
        data = os.read(fd, want)
        if len(data) < want:  # a regular file's short read is its end
            return data
        chunks = [data]
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_string_csv(path: Path, columns: tuple[str, ...], error: type[InputError], kind: str) -> pd.DataFrame:
    """A CSV with every cell a string (``""`` when empty) that has at least ``columns`` (others are kept).

    Args:
        path: the file.
        columns: the columns it must have.
        error: the :class:`~graph.records.InputError` subclass to raise.
        kind: what the file is, for the message ("a Lunguage file").

    Raises:
        error: the file cannot be read as CSV (file named), or lacks a column (file, header line and the
            first missing column named).
    """
    import pandas as pd  # not at module level: the checksum users (the CLI's quick paths among them) stay light

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise error(str(path), None, None, f"not a readable CSV ({exc})") from exc
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise error(str(path), "line 1 (header)", missing[0],
                    f"column(s) {', '.join(missing)} missing; {kind} has {', '.join(columns)}")
    return frame
