"""Extraction as plain functions: inputs -> extractor -> RadGraph JSON shards + doc mapping + rejections.

Output folder layout (what ``cxrkg ingest OUT/radgraph --doc-mapping OUT/doc_mapping.csv`` reads)::

    OUT/radgraph/part-00000.json   RadGraph v1 / RadGraph2 JSON {doc_key: {text, entities, ...}}, shard_size docs each
    OUT/doc_mapping.csv            doc_key, patient_id, study_id, study_datetime (one row per extracted report)
    OUT/rejected.json              [{file, record, field, reason}] when anything was rejected

Every document written is checked against RadGraph's schema (:func:`graph.formats.radgraph.schema.written_violations`:
labels, relation kinds per pair of entity kinds); the summary counts what falls outside it by name.

Memory is bounded by one shard: inputs are streamed, each shard is extracted and written, then dropped.
The Prefect flow in ``flows/extract_flow.py`` wraps :func:`run_extraction`; it runs without Prefect too.
"""

from __future__ import annotations

import csv
import functools
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from graph.extract.inputs import ReportInput
from graph.formats.radgraph.schema import written_violations
from graph.records import Rejection, write_rejections

DEFAULT_SHARD_SIZE = 500
RADGRAPH_DIR = "radgraph"
DOC_MAPPING = "doc_mapping.csv"
REJECTED = "rejected.json"

#: An extractor: ``[(doc_key, text or {section: text})] -> iterator of (doc_key, RadGraph doc or Rejection)``.
Extractor = Callable[[list[tuple[str, str | Mapping[str, str]]]], Iterator[tuple[str, "dict | Rejection"]]]


@dataclass
class ExtractionSummary:
    """What one extraction run did (counts, seconds, where the files are, the rejections)."""

    extractor: str
    out: str
    reports_seen: int = 0
    documents: int = 0
    entities: int = 0
    change_entities: int = 0
    #: relations (``"ANAT modify OBS"``) and labels outside RadGraph's schema in the written documents -> count
    out_of_schema: Counter = field(default_factory=Counter)
    shards: list[str] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    rejected_report: str | None = None
    seconds: float = 0.0
    workers: int = 1  # processes that extracted (for an existing Dask cluster: 0, its own count)
    engine: str = "this process"  # or "Dask local cluster", "Dask at ADDR"

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


def radgraph_extractor(**options: Any) -> Extractor:
    """The ``radgraph`` package's model (options: those of :class:`graph.extract.radgraph_adapter.RadGraphExtractor`:
    ``model_type``, ``model_cache_dir``, ``batch_size``, ``cuda``), loaded here.

    Raises:
        graph.extract.radgraph_adapter.RadGraphUnavailable: the package is missing or the model cannot be loaded.
        graph.extract.radgraph_adapter.UnknownRadGraphModel: an unknown ``model_type``.
    """
    from graph.extract.radgraph_adapter import RadGraphExtractor

    return RadGraphExtractor(**options)


EXTRACTORS: dict[str, Callable[..., Extractor]] = {"rules": rules_extractor, "radgraph": radgraph_extractor}
"""The extractors by name -> the factory that builds one from its keyword options (``cxrkg extract``'s and
``cxrkg eval reports``' choices). A factory raises ImportError when its optional extra is missing."""


@functools.lru_cache(maxsize=2)
def shared_extractor(name: str, options: tuple[tuple[str, Any], ...] = ()) -> Extractor:
    """The extractor ``name`` of :data:`EXTRACTORS` built from ``options`` (sorted (key, value) pairs), once per
    process and (name, options): a command that checks it before a flow runs and the flow's task share one
    spaCy pipeline or radgraph model, and a worker process that extracts many shards loads it once.

    Raises:
        ValueError: a name not in :data:`EXTRACTORS`.
        ImportError: the extractor's optional extra is not installed.
        graph.extract.radgraph_adapter.RadGraphUnavailable: the radgraph model cannot be loaded.
    """
    if name not in EXTRACTORS:
        raise ValueError(f"unknown extractor {name!r}: choose {' or '.join(EXTRACTORS)}")
    return EXTRACTORS[name](**dict(options))


@dataclass
class Shard:
    """A run of input reports for one output file (``items``; empty when the inputs ended with rejected
    records only) and the input rejections met while collecting it, in input order."""

    number: int
    items: list[ReportInput]
    rejected: list[Rejection]


@dataclass
class ShardResult:
    """What extracting one :class:`Shard` produced: its file (None when nothing was written), the
    doc-mapping rows ``(doc_key, patient_id, study_id, study_datetime)``, its rejections (input ones
    first) and its counts (``inputs``: the shard's reports and input rejections; ``out_of_schema``: the
    relations and labels of its documents outside RadGraph's schema, by name)."""

    path: str | None
    mapping: list[tuple[str, str | None, str | None, str | None]]
    rejections: list[Rejection]
    inputs: int = 0
    documents: int = 0
    entities: int = 0
    change_entities: int = 0
    out_of_schema: dict[str, int] = field(default_factory=dict)


def iter_shards(inputs: Iterable[ReportInput | Rejection], size: int) -> Iterator[Shard]:
    """Group the inputs into shards of ``size`` reports; a repeated doc_key is rejected (the first wins)."""
    batch: list[ReportInput] = []
    rejected: list[Rejection] = []
    seen: set[str] = set()
    number = 0
    for item in inputs:
        if isinstance(item, Rejection):
            rejected.append(item)
            continue
        if item.doc_key in seen:
            rejected.append(Rejection(item.file, item.doc_key, "doc_key",
                                      "duplicate doc_key: another report of this run has it"))
            continue
        seen.add(item.doc_key)
        batch.append(item)
        if len(batch) >= size:
            yield Shard(number, batch, rejected)
            batch, rejected, number = [], [], number + 1
    if batch or rejected:
        yield Shard(number, batch, rejected)


def shard_path(shard_dir: Path, number: int) -> Path:
    """``shard_dir/part-NNNNN.json``."""
    return shard_dir / f"part-{number:05d}.json"


def extract_shard(shard: Shard, shard_dir: Path, extractor: Extractor) -> ShardResult:
    """Extract one shard into ``part-NNNNN.json`` under ``shard_dir`` (written as documents arrive, so
    memory holds one document at a time beyond the shard's inputs). Runs in any process: the parallel
    extraction calls it on Dask workers."""
    result = ShardResult(None, [], list(shard.rejected), inputs=len(shard.items) + len(shard.rejected))
    if not shard.items:
        return result
    path = shard_path(shard_dir, shard.number)
    by_key = {r.doc_key: r for r in shard.items}
    violations: Counter = Counter()
    with path.open("w", encoding="utf-8") as fh:
        fh.write("{")
        for key, doc in extractor([(r.doc_key, r.report) for r in shard.items]):
            if isinstance(doc, Rejection):
                result.rejections.append(doc)
                continue
            r = by_key[key]
            fh.write(("," if result.documents else "") + "\n" + json.dumps(key) + ": " + json.dumps(doc))
            result.mapping.append((key, r.patient_id, r.study_id, r.study_datetime))
            result.documents += 1
            result.entities += len(doc["entities"])
            result.change_entities += sum(e["label"].startswith("CHAN-") for e in doc["entities"].values())
            violations.update(written_violations(doc))
        fh.write("\n}\n")
    result.path = str(path)
    result.out_of_schema = dict(violations)
    return result


class ExtractionOutput:
    """The output folder of one run: clears earlier shards, appends shard results in shard order to the
    doc mapping and the summary, and writes the rejections at the end. A context manager."""

    def __init__(self, out: Path, summary: ExtractionSummary, rejected_report: Path | None = None) -> None:
        self.out = Path(out)
        self.summary = summary
        self.rejected_report = Path(rejected_report) if rejected_report else self.out / REJECTED
        self.shard_dir = self.out / RADGRAPH_DIR
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        for old in self.shard_dir.glob("part-*.json"):
            old.unlink()
        self._mapping_fh = (self.out / DOC_MAPPING).open("w", newline="", encoding="utf-8")
        self._mapping = csv.writer(self._mapping_fh)
        self._mapping.writerow(["doc_key", "patient_id", "study_id", "study_datetime"])

    def __enter__(self) -> "ExtractionOutput":
        return self

    def add(self, result: ShardResult) -> None:
        """Fold one shard's result in (call in shard order for a deterministic output)."""
        s = self.summary
        s.reports_seen += result.inputs
        s.rejections += result.rejections
        self._mapping.writerows(result.mapping)
        s.documents += result.documents
        s.entities += result.entities
        s.change_entities += result.change_entities
        s.out_of_schema.update(result.out_of_schema)
        if result.path:
            s.shards.append(result.path)

    def add_all(self, results: Iterable[ShardResult]) -> None:
        """:meth:`add` each result, in order."""
        for result in results:
            self.add(result)

    def __exit__(self, exc_type, *exc) -> None:
        self._mapping_fh.close()
        if exc_type is not None:
            return
        report, s = self.rejected_report, self.summary
        if report.exists() and report.resolve().parent == self.out.resolve():
            report.unlink()  # from an earlier run of this folder
        if s.rejections:
            write_rejections(report, s.rejections)
            s.rejected_report = str(report.resolve())


def run_extraction(inputs: Iterable[ReportInput | Rejection], out: Path, extractor: str | Extractor = "rules",
                   shard_size: int = DEFAULT_SHARD_SIZE, rejected_report: Path | None = None,
                   extractor_name: str | None = None) -> ExtractionSummary:
    """Extract every input report into ``out`` (layout in the module docstring), streamed by shard, in
    this process.

    Args:
        inputs: from :func:`graph.extract.inputs.iter_inputs`; Rejection items are recorded, not extracted.
        out: output folder (created; earlier ``part-*.json`` shards in it are removed first).
        extractor: a name of :data:`EXTRACTORS` (built without options) or an extractor callable.
        shard_size: reports per output JSON file (bounds memory).
        rejected_report: where to write the rejections (default ``out/rejected.json``), only when any.
        extractor_name: the name the summary gives the extractor (default: ``extractor``'s name).

    Returns:
        the summary; ``summary.ok`` is False when any file or record was rejected.
    """
    started = time.perf_counter()
    name = extractor_name or (extractor if isinstance(extractor, str) else str(getattr(extractor, "name", "custom")))
    run = shared_extractor(extractor) if isinstance(extractor, str) else extractor
    summary = ExtractionSummary(extractor=name, out=str(out))
    with ExtractionOutput(out, summary, rejected_report) as output:
        for shard in iter_shards(inputs, shard_size):
            output.add(extract_shard(shard, output.shard_dir, run))
    summary.seconds = time.perf_counter() - started
    return summary
