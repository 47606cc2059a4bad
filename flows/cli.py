"""The ``cxrkg`` command line.

Quick commands (``db``, ``queries``, ``query``, ``stats``, ``synth``) never import Prefect: importing it
costs about a second and its ephemeral API server about ten. Only the flow commands do.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="cxrkg: a longitudinal chest X-ray knowledge graph in Neo4j.")
db_app = typer.Typer(no_args_is_help=True, help="The local Neo4j server cxrkg runs itself.")
app.add_typer(db_app, name="db")
console = Console()
err = Console(stderr=True)


@app.callback()
def _route_logs() -> None:
    # before any command imports Prefect: its logs go to CXRKG_HOME/logs/cxrkg.log (flows/logs.py)
    from flows.logs import route_library_logs
    from graph.config import local_server_settings

    route_library_logs(local_server_settings().home)


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def _store_or_fail():
    from graph.store import GraphUnavailable, shared_store

    try:
        return shared_store()
    except GraphUnavailable as exc:
        _fail(str(exc))


def _print_rows(rows: list[dict[str, Any]], fmt: str, columns: list[str] | None = None, title: str | None = None) -> None:
    columns = columns or (list(rows[0]) if rows else [])
    if fmt == "json":
        sys.stdout.write(json.dumps(rows, indent=2, default=str) + "\n")
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()} for r in rows)
        sys.stdout.write(buf.getvalue())
    else:
        table = Table(title=title, show_lines=False)
        for c in columns:
            table.add_column(c, overflow="fold")
        for r in rows:
            table.add_row(*("" if r.get(c) is None else ", ".join(map(str, r[c])) if isinstance(r.get(c), list)
                            else str(r.get(c)) for c in columns))
        console.print(table)
        console.print(f"{len(rows)} row(s)")


# --- local server ------------------------------------------------------------------------------

def _local_server():
    from graph.config import local_server_settings, neo4j_settings
    from graph.server import LocalNeo4jServer

    if neo4j_settings().external:
        _fail("NEO4J_URI is set: cxrkg uses that server and does not manage a local one. "
              "Unset NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD to use the local server.")
    return LocalNeo4jServer(local_server_settings())


@db_app.command("start")
def db_start() -> None:
    """Start the local Neo4j (building it with Maven on first use)."""
    from graph.server import ServerError

    server = _local_server()
    try:
        server.start()
    except ServerError as exc:
        _fail(str(exc))
    s = server.status()
    console.print(f"Neo4j running (pid {s.pid}) at {s.bolt_uri}; data in {server.settings.data_dir}; "
                  f"password in {server.settings.password_file}")


@db_app.command("stop")
def db_stop() -> None:
    """Stop the local Neo4j."""
    _local_server().stop()
    console.print("Neo4j stopped")


@db_app.command("status")
def db_status() -> None:
    """Say whether the local Neo4j runs, where, and its version."""
    s = _local_server().status()
    console.print_json(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in vars(s).items()}))
    if not s.running:
        raise typer.Exit(3)


# --- data --------------------------------------------------------------------------------------

@app.command()
def synth(patients: int = typer.Option(200, min=1, help="patients to generate"),
          seed: int = typer.Option(0, help="random seed; the same seed writes the same files"),
          out: Path = typer.Option(..., help="output folder"),
          malformed: int = typer.Option(0, min=0, help="extra malformed files to write (malformed/)"),
          embeddings: bool = typer.Option(False, help="also write per (image, region) embeddings"),
          sparse: bool = typer.Option(False, help="state every present finding and nothing else, as real "
                                                  "reports do (no absences, hedges or omissions)")) -> None:
    """Write a synthetic cohort in Chest ImaGenome and RadGraph formats, with its ground truth."""
    from graph.synth import write_cohort

    summary = write_cohort(out, patients=patients, seed=seed, malformed=malformed, embeddings=embeddings,
                           sparse=sparse)
    console.print(summary)


def _print_summary(summary) -> None:
    table = Table(title="ingest summary", show_header=False)
    for name in ("files_seen", "files_loaded", "files_unchanged", "files_rejected", "records_loaded",
                 "mentions_loaded", "elements_created", "patients_relinked", "studies", "observations",
                 "progression_edges", "unmapped_terms", "ambiguous_comparisons"):
        table.add_row(name.replace("_", " "), str(getattr(summary, name)))
    table.add_row("rejected records", str(len(summary.rejections)))
    table.add_row("seconds", f"{summary.seconds:.1f}")
    console.print(table)
    if summary.top_unmapped:
        console.print("most frequent unmapped terms: " + ", ".join(f"{t} ({n})" for t, n in summary.top_unmapped))
    for r in summary.rejections[:10]:
        err.print(f"[yellow]rejected[/] {r.file}" + (f" record {r.record}" if r.record else "")
                  + (f" field {r.field}" if r.field else "") + f": {r.reason}")
    if len(summary.rejections) > 10:
        err.print(f"... {len(summary.rejections) - 10} more")
    if summary.rejected_report:
        err.print(f"rejected-files report: {summary.rejected_report}")


def run_ingest(paths: list[Path], doc_mapping: Path | None, rejected: Path | None, progress: bool):
    """Run the ingest flow and print its summary; returns the summary."""
    _store_or_fail()
    from flows.ingest_flow import ingest_flow

    summary = ingest_flow([str(p) for p in paths], doc_mapping=str(doc_mapping) if doc_mapping else None,
                          rejected_report=str(rejected) if rejected else None, progress=progress)
    _print_summary(summary)
    return summary


@app.command()
def ingest(paths: list[Path] = typer.Argument(..., exists=True, help="files or folders, searched recursively"),
           doc_mapping: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                      help="CSV doc_key,patient_id,study_id[,study_datetime]"),
           rejected: Path = typer.Option(Path("cxrkg-rejected.json"), help="rejected-files report (JSON)"),
           progress: bool = typer.Option(True, help="progress bar")) -> None:
    """Load scene graphs, RadGraph files and metadata CSVs; exit code 2 when anything was rejected."""
    summary = run_ingest(paths, doc_mapping, rejected, progress and sys.stderr.isatty())
    if not summary.ok:
        raise typer.Exit(2)


# --- queries -----------------------------------------------------------------------------------

@app.command()
def queries() -> None:
    """List the named queries with their parameters and columns."""
    from graph.store.queries import catalogue

    table = Table(title="query catalogue")
    for c in ("name", "parameters", "purpose"):
        table.add_column(c, overflow="fold")
    for q in catalogue().values():
        table.add_row(q.name, ", ".join(_param_text(p) for p in q.params), q.purpose)
    console.print(table)


def _param_text(p) -> str:
    kind = "|".join(p.choices) if p.choices else p.type
    return f"{p.name}:{kind}" + (f"={p.default}" if p.default is not None else "")


def _params(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            _fail(f"--param {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        out[key.strip()] = value
    return out


@app.command()
def query(name: str = typer.Argument(..., help="query name (see `cxrkg queries`)"),
          param: list[str] = typer.Option([], "--param", "-p", help="key=value, repeatable"),
          fmt: str = typer.Option("table", "--format", help="table, json or csv")) -> None:
    """Run a named query in a read transaction."""
    from graph.store.queries import QueryError, get_query, run_named

    if fmt not in ("table", "json", "csv"):
        _fail(f"--format {fmt!r}: choose table, json or csv")
    try:
        q = get_query(name)
        bound = q.bind(_params(param))
        _check_finding(bound)
        rows = run_named(_store_or_fail(), q, bound)
    except QueryError as exc:
        _fail(str(exc))
    _print_rows(rows, fmt, list(q.columns), title=q.name)


def _check_finding(params: dict[str, Any]) -> None:
    from graph.store.queries import QueryError
    from graph.vocabulary import vocabulary

    finding = params.get("finding")
    if finding is not None and vocabulary().finding_for(finding) is None:
        raise QueryError(f"finding {finding!r} is not in the vocabulary (v{vocabulary().version}); "
                         "use a Chest ImaGenome attribute name or one of its synonyms")


@app.command()
def stats(fmt: str = typer.Option("table", "--format", help="table or json"),
          check: bool = typer.Option(True, help="run the consistency checks (exit code 4 when any fails)")) -> None:
    """Counts per label and relationship type, orphan nodes, and the consistency checks."""
    from graph.store.consistency import run_checks
    from graph.store.stats import graph_stats

    store = _store_or_fail()
    result = graph_stats(store)
    checks = run_checks(store) if check else []
    if check:
        result["consistency"] = {c.name: {"count": c.count, "examples": c.examples, "description": c.description}
                                 for c in checks}
        result["consistent"] = all(c.ok for c in checks)
    if fmt == "json":
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        rows = [{"kind": "node", "name": k, "count": v} for k, v in result["nodes"].items()]
        rows += [{"kind": "relationship", "name": k, "count": v} for k, v in result["relationships"].items()]
        rows += [{"kind": "orphan", "name": k, "count": v} for k, v in result["orphans"].items()]
        rows += [{"kind": "check", "name": c.name, "count": c.count} for c in checks]
        _print_rows(rows, "table", title="graph statistics")
    for c in checks:
        if not c.ok:
            err.print(f"[bold red]inconsistent:[/] {c.count} {c.description}; e.g. {', '.join(c.examples)}")
    if not all(c.ok for c in checks):
        raise typer.Exit(4)


datasets_app = typer.Typer(no_args_is_help=True, help="Public datasets cxrkg can fetch.")
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("iu")
def datasets_iu(out: Path = typer.Option(..., help="folder for the torchxrayvision 1.5.7 wheel")) -> None:
    """Fetch the Indiana University chest X-ray reports (3,955, CC BY-NC-ND 4.0, Demner-Fushman et al.,
    JAMIA 2016) inside the torchxrayvision 1.5.7 wheel from the package registry, checked by sha256."""
    from graph.extract.iu import IUReport, IUUnavailable, fetch_wheel, iter_reports

    try:
        wheel = fetch_wheel(out)
    except IUUnavailable as exc:
        _fail(str(exc))
    reports = sum(1 for r in iter_reports(wheel) if isinstance(r, IUReport))
    console.print(f"{wheel}: {reports} reports")


@datasets_app.command("nih")
def datasets_nih(out: Path = typer.Option(..., help="folder for the scene graphs, metadata.csv and README.md"),
                 cache: Optional[Path] = typer.Option(None, help="torchxrayvision wheel cache (default CXRKG_IU_CACHE)"),
                 patients: Optional[int] = typer.Option(None, min=1, help="only the N lowest patient ids")) -> None:
    """Convert NIH ChestX-ray14 (112,120 images, Wang et al., CVPR 2017) and Google's adjudicated labels
    (Majkowska et al., Radiology 2020) from the torchxrayvision 1.5.7 wheel into Chest ImaGenome-format scene
    graphs plus metadata.csv. Dates are synthetic; only their order is NIH's."""
    from graph.datasets.nih import ATTRIBUTION, SYNTHETIC_DATES_NOTE, DatasetUnavailable, convert_nih, locate_wheel

    try:
        summary = convert_nih(out, locate_wheel(cache=cache), patients)
    except DatasetUnavailable as exc:
        _fail(str(exc))
    table = Table(title=f"NIH ChestX-ray14 -> {summary.out}")
    table.add_column("item")
    table.add_column("count", justify="right")
    for name, value in (("images (= studies = scene graph files)", summary.images), ("patients", summary.patients),
                        ("patients with >= 2 studies", summary.longitudinal_patients), ("boxes", summary.boxes),
                        ("images with adjudicated labels", summary.adjudicated_images),
                        ("rejected rows", len(summary.rejections))):
        table.add_row(name, f"{value:,}")
    console.print(table)
    for r in summary.rejections[:10]:
        console.print(f"rejected: {r.file}: record {r.record}, field {r.field}: {r.reason}", markup=False,
                      soft_wrap=True)
    console.print(SYNTHETIC_DATES_NOTE, markup=False, soft_wrap=True)
    console.print(ATTRIBUTION, markup=False, soft_wrap=True)


def _print_extraction(summary) -> None:
    console.print(f"extract ({summary.extractor}): {summary.reports_seen} reports seen, {summary.documents} "
                  f"extracted, {summary.entities} entities ({summary.change_entities} change), "
                  f"{len(summary.rejections)} rejected, {summary.seconds:.1f} s -> {summary.radgraph_dir}; "
                  f"mapping {summary.doc_mapping}")
    for r in summary.rejections[:10]:
        err.print(f"[yellow]rejected[/] {r.file}" + (f" record {r.record}" if r.record else "")
                  + (f" field {r.field}" if r.field else "") + f": {r.reason}", markup=True, highlight=False)
    if len(summary.rejections) > 10:
        err.print(f"... {len(summary.rejections) - 10} more")
    if summary.rejected_report:
        err.print(f"rejected-records report: {summary.rejected_report}")


@app.command()
def extract(source: str = typer.Argument(..., help="`iu`, a folder of .txt or Open-i .xml reports, or a .csv / "
                                                   ".txt / .xml file"),
            out: Path = typer.Option(..., help="output folder: radgraph/part-*.json, doc_mapping.csv, rejected.json"),
            extractor: str = typer.Option("rules", help="rules (offline) or radgraph (pip install 'cxrkg[radgraph]')"),
            id_column: str = typer.Option("report_id", help="CSV: report id column"),
            text_column: str = typer.Option("text", help="CSV: report text column"),
            patient_column: Optional[str] = typer.Option(None, help="CSV: patient id column (default: each "
                                                                     "report its own patient)"),
            date_column: Optional[str] = typer.Option(None, help="CSV: study date column (default: a nominal date)"),
            id_prefix: Optional[str] = typer.Option(None, help="prefix for doc_keys and ids (default IU- for XML)"),
            ingest: bool = typer.Option(False, "--ingest", help="then load the output into Neo4j (Prefect flow)"),
            rejected: Optional[Path] = typer.Option(None, help="rejected-records report (default OUT/rejected.json)"),
            shard_size: int = typer.Option(500, min=1, help="reports per output JSON file"),
            cache: Optional[Path] = typer.Option(None, help="IU wheel cache (default CXRKG_IU_CACHE)"),
            radgraph_model: str = typer.Option("radgraph-xl", help="radgraph, radgraph-xl or modern-radgraph-xl"),
            radgraph_cache: Optional[Path] = typer.Option(None, help="radgraph model cache (default "
                                                                     "CXRKG_RADGRAPH_CACHE or the package's)")) -> None:
    """Extract RadGraph-format JSON from report text (rules: spaCy + medspaCy; or the radgraph package),
    with a doc mapping CSV for `cxrkg ingest --doc-mapping`; `--ingest` also loads it. Exit code 2 when
    any file or record was rejected (each named in the rejected-records report)."""
    from graph.extract.inputs import CsvColumns

    if extractor not in ("rules", "radgraph"):
        _fail(f"--extractor {extractor!r}: choose rules or radgraph")
    columns = CsvColumns(id_column, text_column, patient_column, date_column)
    if source == "iu":
        from graph.extract.iu import IUUnavailable, fetch_wheel

        try:
            fetch_wheel(cache)
        except IUUnavailable as exc:
            _fail(str(exc))
    elif not Path(source).exists():
        _fail(f"{source}: no such file or folder (expected `iu`, a folder, or a .csv / .txt / .xml file)")
    radgraph_options = {"model_type": radgraph_model, "model_cache_dir": radgraph_cache}
    if extractor == "radgraph":
        from graph.extract.radgraph_adapter import RadGraphUnavailable, load_model

        try:
            radgraph_options["model"] = load_model(radgraph_model, radgraph_cache)
        except (RadGraphUnavailable, ValueError) as exc:
            _fail(str(exc))
    if ingest:
        _store_or_fail()
        from flows.extract_flow import extract_flow

        try:
            result = extract_flow(source, str(out), extractor, True, columns, str(cache) if cache else None,
                                  id_prefix, shard_size, str(rejected) if rejected else None,
                                  radgraph_options=radgraph_options if extractor == "radgraph" else None)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            _fail(str(exc))
        _print_extraction(result.extraction)
        if result.ingestion is not None:
            _print_summary(result.ingestion)
        ok = result.ok
    else:
        from graph.extract.inputs import iter_inputs
        from graph.extract.pipeline import get_extractor, run_extraction

        try:
            run = get_extractor(extractor, **radgraph_options) if extractor == "radgraph" else extractor
            summary = run_extraction(iter_inputs(source, columns, cache, id_prefix), out, run, shard_size, rejected,
                                     extractor_name=extractor)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            _fail(str(exc))
        _print_extraction(summary)
        ok = summary.ok
    if not ok:
        raise typer.Exit(2)


@app.command("eval-extract")
def eval_extract(cache: Optional[Path] = typer.Option(None, help="IU wheel cache (default CXRKG_IU_CACHE)"),
                 fmt: str = typer.Option("table", "--format", help="table or json")) -> None:
    """Score the rules extractor and a keyword baseline on the IU reports against their MeSH major tags
    (per finding P/R/F1, micro/macro F1, laterality), and the change cues on the hand-labelled IU sentences."""
    from graph.extract.evaluate import evaluate_all, format_report
    from graph.extract.iu import IUUnavailable, load_reports

    if fmt not in ("table", "json"):
        _fail(f"--format {fmt!r}: choose table or json")
    try:
        reports = load_reports(cache)
    except IUUnavailable as exc:
        _fail(str(exc))
    result = evaluate_all(reports)
    if fmt == "json":
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
    else:
        console.print(format_report(result), markup=False, highlight=False)


@app.command()
def demo(out: Optional[Path] = typer.Option(None, help="where to write the synthetic cohort "
                                                        "(default: CXRKG_HOME/demo)"),
         patients: int = typer.Option(200, min=2), seed: int = typer.Option(7)) -> None:
    """Start Neo4j if needed, write a synthetic cohort, ingest it and the real RadGraph-XL sample, and
    print one patient's worsening pleural effusions next to the ground truth, then graph statistics."""
    from flows.demo import run_demo

    run_demo(console, out, patients, seed)


from flows.ops_commands import register as _register_ops  # noqa: E402  (`cxrkg serve`)

_register_ops(app)

from flows.gnn_commands import gnn_app; app.add_typer(gnn_app)  # noqa: E402,E702  export/train/evaluate/predict/compare

if __name__ == "__main__":
    app()
