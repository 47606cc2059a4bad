"""File fingerprints shared by ingestion, the drop folder, dataset downloads and GNN snapshots."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (``hashlib.file_digest``, streamed).

    Raises:
        OSError: the file cannot be read.
    """
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
