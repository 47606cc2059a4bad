"""The parallel extraction groups consecutive shards into task batches that grow from one shard per worker
to :data:`flows.extract_flow.SHARDS_PER_TASK`, keeping every shard once and in order."""

from __future__ import annotations

from flows.extract_flow import SHARDS_PER_TASK, shard_batches


def test_batches_grow_per_round_of_workers_and_keep_order():
    batches = list(shard_batches(iter(range(40)), workers=2, most=8))
    assert [len(b) for b in batches] == [1, 1, 2, 2, 4, 4, 8, 8, 8, 2]
    assert [s for b in batches for s in b] == list(range(40))


def test_small_runs_spread_over_the_workers():
    assert [len(b) for b in shard_batches(iter(range(3)), workers=3)] == [1, 1, 1]
    assert list(shard_batches(iter([]), workers=2)) == []
    assert max(len(b) for b in shard_batches(iter(range(500)), workers=2)) == SHARDS_PER_TASK
