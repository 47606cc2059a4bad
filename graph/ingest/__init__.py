"""Ingestion as plain functions: what a run loads (:mod:`~graph.ingest.plan`), parsing
(:mod:`~graph.ingest.parse`), writing (:mod:`~graph.ingest.load`) and scheduling the batches
(:mod:`~graph.ingest.schedule`). The ingest flow (``flows/ingest_flow.py``) wires them to Prefect tasks."""

from graph.ingest.load import MAX_MENTIONS_PER_WRITE, BatchResult, load_files, store_files
from graph.ingest.parse import (
                                StreamedFile,
                                check_studies,
                                drop_records,
                                parse_file,
                                parse_files,
                                parse_files_with_packaged_vocabulary,
)
from graph.ingest.plan import (
                                METADATA,
                                RADGRAPH,
                                SCENE_GRAPH,
                                IngestPlan,
                                InputFile,
                                discover,
                                file_format,
                                metadata_dates,
                                patient_hints,
                                plan_ingest,
                                with_known_fingerprints,
)
from graph.ingest.schedule import batch_keys, independent, parsed_ahead, write_window

__all__ = ["MAX_MENTIONS_PER_WRITE", "BatchResult", "load_files", "store_files", "StreamedFile", "check_studies",
           "drop_records", "parse_file", "parse_files", "parse_files_with_packaged_vocabulary", "METADATA",
           "RADGRAPH", "SCENE_GRAPH", "IngestPlan", "InputFile", "discover", "file_format", "metadata_dates",
           "patient_hints", "plan_ingest", "with_known_fingerprints", "batch_keys", "independent", "parsed_ahead", "write_window"]
