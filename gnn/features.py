"""The one named layout of an observation's feature vector, shared by the dataset build, the baselines and
``cxrkg compare`` (no column is known by a bare number anywhere else).

Layout (``[F]``, float32): per source of :data:`gnn.export.SOURCES` (chest_imagenome, radgraph) the block
:data:`PER_SOURCE` (mentioned, fraction of its polarity-bearing mentions present / absent / uncertain,
highest severity / 3, has severity); then ``mentioned`` (by any source) and ``is_current`` (the pair's
current study); then, with embeddings, ``embedding_0..D-1`` and ``has_embedding``.
"""

from __future__ import annotations

import numpy as np

from gnn.export import SOURCES

PER_SOURCE = ("mentioned", "frac_present", "frac_absent", "frac_uncertain", "severity", "has_severity")
BASE_DIM = len(PER_SOURCE) * len(SOURCES)


def feature_names(emb_dim: int = 0) -> list[str]:
    """The ``F`` names in vector order (``"radgraph:frac_present"``, ``"mentioned"``, ``"embedding_3"``, ...)."""
    names = [f"{s}:{n}" for s in SOURCES for n in PER_SOURCE] + ["mentioned", "is_current"]
    if emb_dim:
        names += [f"embedding_{i}" for i in range(emb_dim)] + ["has_embedding"]
    return names


def column(source: str, name: str) -> int:
    """Index of one per-source feature (``column("radgraph", "frac_present")``)."""
    return SOURCES.index(source) * len(PER_SOURCE) + PER_SOURCE.index(name)


MENTIONED = BASE_DIM  # mentioned by any source
IS_CURRENT = BASE_DIM + 1


def _any_source(x: np.ndarray, name: str) -> np.ndarray:
    """``[N]`` bool: some source mentioned the observation and its ``name`` fraction is above 0."""
    x = np.atleast_2d(x)
    return np.any([(x[:, column(s, "mentioned")] > 0) & (x[:, column(s, name)] > 0) for s in SOURCES], axis=0)


def stated_present(x: np.ndarray) -> np.ndarray:
    """``[N]`` bool: any source states present (``x``: ``[N, F]`` or one ``[F]`` vector)."""
    return _any_source(x, "frac_present")


def stated_uncertain(x: np.ndarray) -> np.ndarray:
    """``[N]`` bool: any source states uncertain."""
    return _any_source(x, "frac_uncertain")


def highest_severity(x: np.ndarray) -> np.ndarray:
    """``[N]`` float: the highest stated severity over sources, on 0..1 (ordinal / 3); 0 when none."""
    x = np.atleast_2d(x)
    per = [np.where(x[:, column(s, "has_severity")] > 0, x[:, column(s, "severity")], 0.0) for s in SOURCES]
    return np.max(per, axis=0)
