"""The scoring flow of ``cxrkg score-reports``: the items annotated by the extractor of ``cxrkg extract`` and
scored (:func:`graph.report_scoring.score.score_aligned`), in this process or in shards on a forked pool
(:func:`graph.runtime.processes.forked_pool`), the results in item order.

The scoring itself knows no extractor (it takes an annotator) and no worker pool; this module, beside the
extraction flow, wires the two. It runs without Prefect: the workers inherit the built extractor by fork,
and the command stays off Prefect's import and API server (a second and about ten, per task call ~30 ms).
"""

from __future__ import annotations

import functools
from typing import Mapping, Sequence

from graph.records import Rejection
from graph.report_scoring.facts import StudyFacts
from graph.report_scoring.score import StudyResult, score_aligned

#: items (study, generated, reference) per shard a worker annotates and scores at once
SHARD_ITEMS = 200
#: items from which the command scores on every core by default: below, forking and the pool's traffic cost
#: more than the other cores save (the rules extractor reads about 300 texts a second per core)
PARALLEL_FROM_ITEMS = 1000


def _score_shard(name: str, file: str, shard: tuple[list[tuple[str, str, str]], dict[str, StudyFacts]]
                 ) -> list[StudyResult | Rejection]:
    from graph.extract.pipeline import shared_extractor

    items, facts = shard
    return score_aligned(items, facts, shared_extractor(name), None, file)


def score_items(items: Sequence[tuple[str, str, str]], facts: Mapping[str, StudyFacts], extractor: str,
                workers: int, file: str = "generated") -> list[StudyResult | Rejection]:
    """:func:`graph.report_scoring.score.score_aligned` of ``items`` with the extractor ``extractor`` (rules or
    radgraph), on ``workers`` forked processes (0: in this process). The extractor is built here first, so a
    missing extra fails before any worker starts, and the workers inherit it built.

    Raises:
        ImportError: the extractor's extra is missing.
        graph.extract.radgraph_adapter.RadGraphUnavailable: the radgraph model cannot be loaded.
        graph.report_scoring.radgraph_reward.RewardsUnavailable: radgraph's reward functions are missing.
    """
    from graph.extract.pipeline import shared_extractor
    from graph.report_scoring.radgraph_reward import rewards_module

    run = shared_extractor(extractor)
    rewards_module()
    if workers <= 0:
        return score_aligned(list(items), facts, run, None, file)
    from graph.runtime.processes import forked_pool

    shards = [list(items[i:i + SHARD_ITEMS]) for i in range(0, len(items), SHARD_ITEMS)]
    with forked_pool(workers) as pool:
        done = pool.map(functools.partial(_score_shard, extractor, file),
                        [(s, {sid: facts[sid] for sid, _, _ in s if sid in facts}) for s in shards])
        return [r for shard in done for r in shard]
