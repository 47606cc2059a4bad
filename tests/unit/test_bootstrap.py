"""graph.bootstrap: the one cluster bootstrap behind every printed 95 % interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graph.bootstrap import cluster_bootstrap


def test_the_draws_are_the_documented_stream_and_the_interval_their_percentiles():
    values = np.array([0.1, 0.4, 0.9, 0.3, 0.7, 0.2, 0.8])
    drawn = cluster_bootstrap(len(values), lambda w: w @ values / len(values), draws=250, seed=3)
    # draw b is row b of one generator's integers(0, n, size=(draws, n)), even across the batches of 100
    idx = np.random.default_rng(3).integers(0, len(values), size=(250, len(values)))
    means = values[idx].mean(axis=1)
    assert np.allclose(drawn.values[:, 0], means)
    low, high = drawn.interval()
    assert low == pytest.approx(np.percentile(means, 2.5)) and high == pytest.approx(np.percentile(means, 97.5))
    assert low < values.mean() < high


def test_rows_of_one_cluster_are_drawn_together():
    clusters = ["p1", "p1", "p1", "p2", "p3", "p3"]
    seen = []
    cluster_bootstrap(clusters, lambda w: seen.append(w.copy()) or 0.0, draws=50, seed=0)
    for w in seen:
        assert w[0] == w[1] == w[2] and w[4] == w[5]
        assert w[0] + w[3] + w[4] == 3  # three clusters drawn per draw


def test_paired_figures_share_their_draws():
    x = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    drawn = cluster_bootstrap(len(x), lambda w: [w @ x / len(x), w @ x / len(x) - 0.25], draws=100, seed=1)
    # the same draws for both figures: their difference is the constant 0.25 in every draw
    assert drawn.difference(0, 1) == pytest.approx((0.25, 0.25))
    assert drawn.interval(0)[1] - drawn.interval(0)[0] > 0.25


def test_the_seed_fixes_the_intervals_and_a_generator_continues_its_stream():
    x = np.arange(20, dtype=float)

    def stat(w):
        return w @ x / len(x)

    assert cluster_bootstrap(20, stat, 80, 7).interval() == cluster_bootstrap(20, stat, 80, 7).interval()
    rng = np.random.default_rng(7)
    first, second = cluster_bootstrap(20, stat, 40, rng), cluster_bootstrap(20, stat, 40, rng)
    both = cluster_bootstrap(20, stat, 80, 7)
    assert np.array_equal(np.vstack([first.values, second.values]), both.values)


def test_no_draws_give_nan_intervals_and_a_figure_no_draw_defines_stays_nan():
    empty = cluster_bootstrap(5, lambda w: 1.0, draws=0)
    assert all(math.isnan(v) for v in (*empty.interval(), *empty.difference(0, 1)))
    drawn = cluster_bootstrap(5, lambda w: [float("nan"), 1.0], draws=20)
    assert math.isnan(drawn.interval(0)[0]) and drawn.interval(1) == (1.0, 1.0)
    with pytest.raises(ValueError, match="draws must be 0 or more"):
        cluster_bootstrap(5, lambda w: 1.0, draws=-1)


def test_a_batched_statistic_sees_the_same_draws_in_chunks_that_fit_memory(monkeypatch):
    import graph.bootstrap as bootstrap

    clusters = np.repeat([f"p{i}" for i in range(30)], 3)
    x = np.random.default_rng(5).random(len(clusters))
    one_at_a_time = cluster_bootstrap(clusters, lambda w: [w @ x, w.sum()], draws=230, seed=2)
    monkeypatch.setattr(bootstrap, "_CELLS", 7 * len(clusters))  # 7 draws a call: batches of 100 split unevenly
    shapes = []

    def stat(weights):
        shapes.append(weights.shape)
        return np.column_stack([weights @ x, weights.sum(axis=1)])

    batched = cluster_bootstrap(clusters, stat, draws=230, seed=2, batched=True)
    assert np.allclose(batched.values, one_at_a_time.values)
    assert max(s[0] for s in shapes) == 7 and sum(s[0] for s in shapes) == 230
