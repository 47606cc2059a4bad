"""One percentile bootstrap over clusters (patients, studies), for every 95 % interval cxrkg prints.

Rows of one cluster are not independent (the questions of one study, the forecasts of one patient), so a draw
resamples whole clusters with replacement and every row comes with its cluster as often as that was drawn
(the independent units are what is resampled; Efron and Tibshirani, "An Introduction to the Bootstrap", 1993,
ch. 13: percentile intervals). The interval is the 2.5th and 97.5th percentile of the statistic over the draws.

Paired use: a statistic that returns several figures gets them all from the same draws, so the interval of a
difference between two of them is the percentile interval of their per-draw differences
(:meth:`Bootstrap.difference`).

Draws: draw ``b`` is the ``b``-th row of ``numpy.random.default_rng(seed).integers(0, n, size=(draws, n))``
(taken a batch at a time), so a seed and a number of draws give the same intervals on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

# the default number of draws; named in graph.terms, so that the commands' options need not import numpy
from graph.terms import BOOTSTRAP_DRAWS as DRAWS

_BATCH = 100  # draws generated at once: 2,000 at once over 10,000 clusters would hold 20 million indices
_CELLS = 4_000_000  # weights handed to a batched statistic at once (32 MB): a large table gets fewer draws a call


def _counts(drawn: np.ndarray, n: int) -> np.ndarray:
    """How often each of the ``n`` clusters was drawn in each row of ``drawn``, shape (rows, n), as floats."""
    offset = drawn + (np.arange(len(drawn)) * n)[:, None]
    return np.bincount(offset.ravel(), minlength=len(drawn) * n).reshape(len(drawn), n).astype(float)


@dataclass(frozen=True)
class Bootstrap:
    """The statistic of every draw.

    Attributes:
        values: float array, shape (draws, k): the ``k`` figures of the statistic in each draw (NaN where a
            draw leaves a figure undefined).
    """

    values: np.ndarray

    @property
    def low(self) -> np.ndarray:
        """The 2.5th percentile of each figure over the draws, shape (k,) (NaN where no draw defines it)."""
        return _percentile(self.values, 2.5)

    @property
    def high(self) -> np.ndarray:
        """The 97.5th percentile of each figure over the draws, shape (k,)."""
        return _percentile(self.values, 97.5)

    def interval(self, i: int = 0) -> tuple[float, float]:
        """(low, high) of figure ``i``; (NaN, NaN) without draws."""
        if not len(self.values):
            return float("nan"), float("nan")
        return float(self.low[i]), float(self.high[i])

    def difference(self, i: int, j: int) -> tuple[float, float]:
        """(low, high) of figure ``i`` minus figure ``j``, paired: the percentiles of the per-draw differences;
        (NaN, NaN) without draws."""
        if not len(self.values):
            return float("nan"), float("nan")
        d = (self.values[:, i] - self.values[:, j])[:, None]
        return float(_percentile(d, 2.5)[0]), float(_percentile(d, 97.5)[0])


def _percentile(values: np.ndarray, q: float) -> np.ndarray:
    out = np.full(values.shape[1], np.nan)
    finite = np.isfinite(values).any(axis=0) if len(values) else np.zeros(values.shape[1], bool)
    if finite.any():
        out[finite] = np.nanpercentile(values[:, finite], q, axis=0)
    return out


def cluster_bootstrap(clusters: Sequence | np.ndarray | pd.Series,
                      statistic: Callable[[np.ndarray], float | Sequence[float] | np.ndarray],
                      draws: int = DRAWS, seed: int | np.random.Generator = 0, batched: bool = False) -> Bootstrap:
    """Resample the clusters with replacement ``draws`` times and compute ``statistic`` on each draw.

    Args:
        clusters: the cluster of each row (a patient id, a study id), length n rows; or an int giving the
            number of clusters when the statistic works on clusters directly.
        statistic: takes the weights of one draw and returns one figure or k figures. The weights are, per row
            (per cluster when ``clusters`` is an int), how many times the draw took its cluster: a float array
            of length n whose clusters' counts sum to the number of clusters.
        draws: how many draws (0 gives an empty :class:`Bootstrap`, its intervals NaN).
        seed: the seed of the draws (module docstring), or a generator to draw from (several bootstraps
            one after the other on one stream).
        batched: the statistic takes the weights of several draws at once, shape (b, n), and returns shape
            (b, k): one matrix product instead of ``b`` calls, for statistics that are sums over rows. The
            draws, and so the intervals, are those of the one-draw-a-call form.

    Returns:
        The statistic of every draw (no rows without draws: then every interval is NaN).

    Raises:
        ValueError: ``draws`` is negative.
    """
    if draws < 0:
        raise ValueError(f"draws must be 0 or more, got {draws}")
    if isinstance(clusters, (int, np.integer)):
        row_cluster, n = None, int(clusters)
    else:
        row_cluster, uniques = pd.factorize(np.asarray(clusters, dtype=object), sort=False)
        n = len(uniques)
    rng = np.random.default_rng(seed)
    rows = n if row_cluster is None else len(row_cluster)
    chunk = max(1, min(_BATCH, _CELLS // max(rows, 1)))
    out = []
    for start in range(0, draws, _BATCH):
        counts = _counts(rng.integers(0, n, size=(min(_BATCH, draws - start), n)), n)
        weights = counts if row_cluster is None else counts[:, row_cluster]
        if batched:
            for k in range(0, len(weights), chunk):
                out.append(np.asarray(statistic(weights[k:k + chunk]), dtype=float).reshape(
                    len(weights[k:k + chunk]), -1))
        else:
            out += [np.atleast_1d(np.asarray(statistic(w), dtype=float)) for w in weights]
    if not out:
        return Bootstrap(np.zeros((0, 0)))  # the statistic's width is unknown: intervals say NaN
    return Bootstrap(np.vstack(out))
