"""Extraction as plain functions: inputs -> extractor -> RadGraph JSON shards + doc mapping + rejections.

Output folder layout (what ``cxrkg ingest OUT/radgraph --doc-mapping OUT/doc_mapping.csv`` reads)::

    OUT/radgraph/part-00000.json   RadGraph v1 / RadGraph2 JSON {doc_key: {text, entities, ...}}, shard_size docs each
    OUT/doc_mapping.csv            doc_key, patient_id, study_id, study_datetime (one row per extracted report)
    OUT/rejected.json              [{file, record, field, reason}] when anything was rejected

Memory is bounded by one shard: inputs are streamed, each shard is extracted and written, then dropped.
The Prefect flow in ``flows/extract_flow.py`` wraps :func:`run_extraction`; it runs without Prefect too.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from graph.extract.inputs import ReportInput
from graph.records import write_rejections
from graph.records import Rejection

EXTRACTORS = ("rules", "radgraph")
DEFAULT_SHARD_SIZE = 500
RADGRAPH_DIR = "radgraph"
DOC_MAPPING = "doc_mapping.csv"
REJECTED = "rejected.json"

#: An extractor: ``[(doc_key, text or {section: text})] -> iterator of (doc_key, RadGraph doc or Rejection)``.
Extractor = Callable[[list[tuple[str, object]]], Iterator[tuple[str, "dict | Rejection"]]]


@dataclass
class ExtractionSummary:
    """What one extraction run did (counts, seconds, where the files are, the rejections)."""

    extractor: str
    out: str
    reports_seen: int = 0
    documents: int = 0
    entities: int = 0
    change_entities: int = 0
    shards: list[str] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    rejected_report: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.rejections

    @property
    def radgraph_dir(self) -> str:
        return str(Path(self.out) / RADGRAPH_DIR)

    @property
    def doc_mapping(self) -> str:
        return str(Path(self.out) / DOC_MAPPING)


def rules_extractor() -> Extractor:
    """The offline ``rules`` extractor (spaCy + medspaCy); ImportError names the extra when missing."""
    from graph.extract.rules import build_pipeline, extract

    build_pipeline()  # fail early (ImportError) before any file is written

    def run(items):
        for key, doc in extract(items):
            yield key, doc
    return run


def get_extractor(name: str, **options) -> Extractor:
    """``rules`` or ``radgraph`` (options go to :class:`graph.extract.radgraph_adapter.RadGraphExtractor`).

    Raises:
        ValueError: an unknown name.
        ImportError: the extractor's optional extra is not installed.
        graph.extract.radgraph_adapter.RadGraphUnavailable: the radgraph model cannot be loaded.
    """
    if name == "rules":
        return rules_extractor()
    if name == "radgraph":
        from graph.extract.radgraph_adapter import RadGraphExtractor

        return RadGraphExtractor(**options)
    raise ValueError(f"unknown extractor {name!r}: choose {' or '.join(EXTRACTORS)}")


def _shards(inputs: Iterable[ReportInput | Rejection], size: int, summary: ExtractionSummary
            ) -> Iterator[list[ReportInput]]:
    batch: list[ReportInput] = []
    seen: set[str] = set()
    for item in inputs:
        summary.reports_seen += 1
        if isinstance(item, Rejection):
            summary.rejections.append(item)
            continue
        if item.doc_key in seen:
            summary.rejections.append(Rejection(item.file, item.doc_key, "doc_key",
                                                "duplicate doc_key: another report of this run has it"))
            continue
        seen.add(item.doc_key)
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def run_extraction(inputs: Iterable[ReportInput | Rejection], out: Path, extractor: str | Extractor = "rules",
                   shard_size: int = DEFAULT_SHARD_SIZE, rejected_report: Path | None = None,
                   extractor_name: str | None = None) -> ExtractionSummary:
    """Extract every input report into ``out`` (layout in the module docstring), streamed by shard.

    Args:
        inputs: from :func:`graph.extract.inputs.iter_inputs`; Rejection items are recorded, not extracted.
        out: output folder (created; earlier ``part-*.json`` shards in it are removed first).
        extractor: a name (see :func:`get_extractor`) or an extractor callable.
        shard_size: reports per output JSON file (bounds memory).
        rejected_report: where to write the rejections (default ``out/rejected.json``), only when any.

    Returns:
        the summary; ``summary.ok`` is False when any file or record was rejected.
    """
    started = time.perf_counter()
    out = Path(out)
    name = extractor_name or (extractor if isinstance(extractor, str) else getattr(extractor, "name", "custom"))
    run = get_extractor(extractor) if isinstance(extractor, str) else extractor
    summary = ExtractionSummary(extractor=name, out=str(out))
    shard_dir = out / RADGRAPH_DIR
    shard_dir.mkdir(parents=True, exist_ok=True)
    for old in shard_dir.glob("part-*.json"):
        old.unlink()
    with (out / DOC_MAPPING).open("w", newline="", encoding="utf-8") as mapping_fh:
        mapping = csv.writer(mapping_fh)
        mapping.writerow(["doc_key", "patient_id", "study_id", "study_datetime"])
        for n, shard in enumerate(_shards(inputs, shard_size, summary)):
            path = shard_dir / f"part-{n:05d}.json"
            by_key = {r.doc_key: r for r in shard}
            written = 0
            with path.open("w", encoding="utf-8") as fh:
                fh.write("{")
                for key, doc in run([(r.doc_key, r.report) for r in shard]):
                    if isinstance(doc, Rejection):
                        summary.rejections.append(doc)
                        continue
                    r = by_key[key]
                    fh.write(("," if written else "") + "\n" + json.dumps(key) + ": " + json.dumps(doc))
                    mapping.writerow([key, r.patient_id, r.study_id, r.study_datetime])
                    written += 1
                    summary.entities += len(doc["entities"])
                    summary.change_entities += sum(e["label"].startswith("CHAN-") for e in doc["entities"].values())
                fh.write("\n}\n")
            summary.documents += written
            summary.shards.append(str(path))
    report = Path(rejected_report) if rejected_report else out / REJECTED
    if report.exists() and report.resolve().parent == out.resolve():
        report.unlink()  # from an earlier run of this folder
    if summary.rejections:
        write_rejections(report, summary.rejections)
        summary.rejected_report = str(report.resolve())
    summary.seconds = time.perf_counter() - started
    return summary
