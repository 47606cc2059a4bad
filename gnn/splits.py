"""Patient-level splits shared by every task on a snapshot (progression pairs and next-study forecasts)."""

from __future__ import annotations

import hashlib


def split_of(patient_id: str, seed: int, fractions: tuple[float, float] = (0.7, 0.15)) -> str:
    """``train`` / ``val`` / ``test`` for a patient, deterministic in (seed, patient id) and stable
    when patients are added: SHA-256 of ``seed:patient_id`` mapped to [0, 1) against the cumulative
    fractions (train 0.7, validation 0.15, test the rest by default)."""
    u = int(hashlib.sha256(f"{seed}:{patient_id}".encode()).hexdigest()[:12], 16) / float(1 << 48)
    return "train" if u < fractions[0] else "val" if u < fractions[0] + fractions[1] else "test"


def fold_of(patient_id: str, folds: int, seed: int = 0) -> int:
    """The patient's fold, ``0 .. folds - 1``, for out-of-fold predictions (:mod:`gnn.cross_fit`):
    deterministic in (seed, patient id), stable when patients are added, and independent of
    :func:`split_of` with the same seed (SHA-256 of ``fold:seed:patient_id``).

    Raises:
        ValueError: ``folds`` is under 2.
    """
    if folds < 2:
        raise ValueError(f"folds must be 2 or more, not {folds}")
    return int(hashlib.sha256(f"fold:{seed}:{patient_id}".encode()).hexdigest()[:12], 16) % folds
