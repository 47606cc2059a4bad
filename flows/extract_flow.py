"""The extract flow: report text -> RadGraph JSON shards (one task) -> the ingest flow (as a subflow).

Thin: the task calls :func:`graph.extract.pipeline.run_extraction`; ingestion reuses
``flows.ingest_flow.ingest_flow`` unchanged, so extracted files go through the same parser, checks and
batched writes as real RadGraph files. Tasks get paths and names, never a driver or a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.ingest_flow import IngestSummary, ingest_flow
from graph.extract.inputs import CsvColumns, iter_inputs
from graph.extract.pipeline import DEFAULT_SHARD_SIZE, ExtractionSummary, run_extraction

INGEST_BATCH_FILES = 4  # shards per load task: bounds the memory of one task to a few thousand reports


@dataclass
class ExtractFlowResult:
    """Both halves of a run; ``ok`` is False when either rejected anything."""

    extraction: ExtractionSummary
    ingestion: IngestSummary | None

    @property
    def ok(self) -> bool:
        return self.extraction.ok and (self.ingestion is None or self.ingestion.ok)


@task(cache_policy=NO_CACHE)
def extract_reports(source: str, out: str, extractor: str, columns: CsvColumns, cache: str | None,
                    id_prefix: str | None, shard_size: int, rejected_report: str | None,
                    radgraph_options: dict | None) -> ExtractionSummary:
    """Stream the inputs through the extractor into ``out`` (see graph.extract.pipeline)."""
    from graph.extract.pipeline import get_extractor

    run = get_extractor(extractor, **(radgraph_options or {})) if extractor == "radgraph" else extractor
    summary = run_extraction(iter_inputs(source, columns, Path(cache) if cache else None, id_prefix), Path(out),
                             run, shard_size, Path(rejected_report) if rejected_report else None,
                             extractor_name=extractor)
    get_run_logger().info("extract: %d reports seen, %d documents, %d entities (%d change), %d rejected in %.1fs",
                          summary.reports_seen, summary.documents, summary.entities, summary.change_entities,
                          len(summary.rejections), summary.seconds)
    return summary


@flow(name="cxrkg-extract", log_prints=False)
def extract_flow(source: str, out: str, extractor: str = "rules", ingest: bool = True,
                 columns: CsvColumns = CsvColumns(), cache: str | None = None, id_prefix: str | None = None,
                 shard_size: int = DEFAULT_SHARD_SIZE, rejected_report: str | None = None,
                 ingest_rejected_report: str | None = None, progress: bool = False,
                 radgraph_options: dict | None = None) -> ExtractFlowResult:
    """Extract RadGraph-format JSON from report text, then (``ingest=True``) load it into the graph.

    Args:
        source: ``iu``, a folder of .txt / Open-i .xml reports, or a .csv / .txt / .xml file.
        out: output folder (``radgraph/part-*.json``, ``doc_mapping.csv``, ``rejected.json``).
        extractor: ``rules`` (offline) or ``radgraph`` (the radgraph package; see the README).
        columns: CSV column names (id, text, optional patient and study date).
        cache: IU wheel cache folder (default ``CXRKG_IU_CACHE``).
        shard_size: reports per output file.
        rejected_report: extraction rejections (default ``out/rejected.json``).
        ingest_rejected_report: ingestion rejections (default ``out/rejected-ingest.json``).

    Returns:
        the extraction summary and, when ingested, the ingest flow's summary.
    """
    summary = extract_reports(source, out, extractor, columns, cache, id_prefix, shard_size, rejected_report,
                              radgraph_options)
    ingested = None
    if ingest and summary.documents:
        ingested = ingest_flow([summary.radgraph_dir], doc_mapping=summary.doc_mapping,
                               batch_files=INGEST_BATCH_FILES,
                               rejected_report=ingest_rejected_report or str(Path(out) / "rejected-ingest.json"),
                               progress=progress)
    return ExtractFlowResult(summary, ingested)
