"""The scoring flow of ``cxrkg eval reports``: the reports read (:func:`score_reports`), the items annotated by the extractor of ``cxrkg extract`` and
scored (:func:`graph.report_scoring.score.score_aligned`), in this process or in shards on a forked pool
(:func:`graph.runtime.processes.forked_pool`), the results in item order.

The scoring itself knows no extractor (it takes an annotator) and no worker pool; this module, beside the
extraction flow, wires the two. It runs without Prefect: the workers inherit the built extractor by fork,
and the command stays off Prefect's import and API server (a second and about ten, per task call ~30 ms).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from graph.errors import CxrkgError
from graph.records import Rejection
from graph.report_scoring.facts import StudyFacts
from graph.report_scoring.score import StudyResult, score_aligned

if TYPE_CHECKING:
    from graph.report_scoring.facts import Reader
    from graph.report_scoring.summary import CorpusSummary

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


class PlotUnavailable(CxrkgError, ImportError):
    """``--plot`` asked for and matplotlib missing."""


@dataclass
class ScoreRun:
    """What one scoring run did: the corpus summary (its notes say what was written where and what was left
    out), the rejected rows and the report that lists them (None when nothing was rejected)."""

    summary: CorpusSummary
    rejections: list[Rejection]
    rejected_report: str | None

    @property
    def ok(self) -> bool:
        return not self.rejections

    def as_dict(self) -> dict:
        """The summary as JSON values, with the rejections."""
        return self.summary.as_dict() | {"rejections": [r.__dict__ for r in self.rejections]}


def score_reports(store: Reader, out: Path, generated: Path | None = None, reference: Path | None = None,
                  baseline: str | None = None, extractor: str = "rules", details: Path | None = None,
                  plot: Path | None = None, workers: int | None = None,
                  rejected_report: Path | None = None) -> ScoreRun:
    """Score generated reports (``generated``: CSV of study_id, report) or a baseline made from the graph
    (``baseline``: ``reference`` or ``copy-prior``) against the references (``reference``: CSV, default each
    study's report in the graph) and the patient's graph (:func:`graph.report_scoring.facts.cohort_facts`).

    Writes ``out`` (a row per scored study), ``details`` (each contradicted and omitted change) and ``plot``
    (PNG per finding) when given, and the rejected rows to ``rejected_report`` (default
    ``CXRKG_HOME/rejected/eval-reports-<UTC time>.json``, :func:`graph.records.rejected_report_path`) when any. ``workers``: as :func:`graph.runtime.processes.worker_count` (unset: every core from
    :data:`PARALLEL_FROM_ITEMS` studies on).

    Raises:
        graph.records.InputError: a CSV cannot be read at all (a row that cannot is rejected instead).
        PlotUnavailable: ``plot`` without matplotlib.
        ImportError, RadGraphUnavailable, RewardsUnavailable: as :func:`score_items`.
    """
    from graph.records import rejected_report_path, write_rejections
    from graph.report_scoring.inputs import write_details, write_scores
    from graph.report_scoring.summary import summarise
    from graph.runtime.processes import worker_count

    items, facts, rejections, notes = _items(store, generated, reference, baseline)
    scored = score_items(items, facts, extractor, worker_count(workers, len(items), PARALLEL_FROM_ITEMS),
                         str(generated or "baseline"))
    results = [r for r in scored if not isinstance(r, Rejection)]
    rejections += [r for r in scored if isinstance(r, Rejection)]
    if baseline == "reference" and (unread := sum(r.score.changes_omitted for r in results)):
        notes.append(f"{unread} changes the graph holds are omitted by the references themselves: the extractor "
                     "reads no change of their finding in the report's words (--details lists them)")
    write_scores(out, [r.score for r in results])
    report = None
    if rejections:
        report = str(rejected_report or rejected_report_path("eval-reports"))
        write_rejections(Path(report), rejections)
        notes.append(f"{len(rejections)} rejected: {report}")
    if details is not None:
        contradicted, omitted = write_details(details, results)
        notes.append(f"{contradicted} contradicted and {omitted} omitted changes in {details}")
    summary = summarise(results, extractor)
    summary.notes += notes
    if plot is not None:
        summary.notes.append(f"per finding: {_plot(summary, plot)}")
    return ScoreRun(summary, rejections, report)


def _items(store: Reader, generated: Path | None, reference: Path | None, baseline: str | None
           ) -> tuple[list[tuple[str, str, str]], dict[str, StudyFacts], list[Rejection], list[str]]:
    """The (study, generated, reference) items to score, the graph's facts of their studies, the rows
    rejected so far, and notes on what the baseline left out."""
    from graph.report_scoring.facts import cohort_facts
    from graph.report_scoring.inputs import baseline_items, generated_items, read_reports

    rows, rejections = read_reports(generated) if generated else ({}, [])
    refs, ref_rejections = read_reports(reference) if reference else (None, [])
    facts = cohort_facts(store, list(rows) if generated else None)
    if baseline is None:
        items, missing = generated_items(rows, facts, str(generated), refs, str(reference))
        return items, facts, rejections + ref_rejections + missing, []
    items, left_out = baseline_items(baseline, facts)
    return items, facts, rejections + ref_rejections, [f"baseline {baseline}: {len(items)} studies" +
                                                       (f"; {left_out} without a prior report left out"
                                                        if left_out else "")]


def _plot(summary: CorpusSummary, path: Path) -> Path:
    try:
        from graph.report_scoring.plot import plot_per_finding

        return plot_per_finding(summary, path)
    except ImportError as exc:
        raise PlotUnavailable(f"--plot needs matplotlib (make install has it): {exc}") from exc
