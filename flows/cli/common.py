"""What the ``cxrkg`` commands share: the consoles, failing without a traceback, tables, summaries."""

from __future__ import annotations

import functools
import os
from enum import Enum
from pathlib import Path
from typing import Any, Callable, NoReturn

import typer
from rich.table import Table

# the consoles and the printers the demo's engine prints with too live below both (flows/console.py); the
# command modules import them from here with the rest
from flows.console import console, err, library_log, print_json, print_rejections, print_summary_line
from flows.console import print_rows as print_rows
from graph.errors import ExitCode
from graph.terms import BOOTSTRAP_DRAWS


class Format(str, Enum):
    """How a command prints its result (``--format``): a table for people; JSON (everything the command
    has) or CSV (its main rows, in the table's columns) for programs."""

    table = "table"
    json = "json"
    csv = "csv"


#: ``--workers``, the same in every command that has one (graph.runtime.processes.worker_count)
WORKERS_HELP = ("worker processes that do the work: N on this machine, 0: in this process (default: one per core "
                "once the input is large enough to repay starting them)")


#: ``--rejected``, the same in every command that rejects (serve's report is rewritten each run instead)
REJECTED_HELP = ("the rejection report, a JSON list of {file, record, field, reason}, written when anything is "
                 "rejected (default: in CXRKG_HOME/rejected, named by the command and the UTC time)")


def rejected_option() -> Any:
    """The ``--rejected PATH`` option of every command that rejects input (exit code 6)."""
    return typer.Option(None, "--rejected", dir_okay=False, help=REJECTED_HELP)


def report_path(rejected: Path | None, command: str) -> Path:
    """``rejected``, else where ``command`` writes its rejection report by default
    (:func:`graph.records.rejected_report_path`)."""
    from graph.records import rejected_report_path

    return rejected or rejected_report_path(command)


def reject(rejections: list, rejected: Path | None, command: str) -> None:
    """Nothing when nothing was rejected; else the rejection report written (to ``rejected``, default
    :func:`report_path`'s), the first rejections and the report's path on stderr, and exit code 6."""
    if not rejections:
        return
    from graph.records import write_rejections

    path = report_path(rejected, command)
    write_rejections(path, rejections)  # OSError: one error line naming the path
    print_rejections(rejections, str(path), "rejection report")
    raise typer.Exit(ExitCode.REJECTED)


def bootstrap_option(over: str = "patients", *aliases: str) -> Any:
    """``--bootstrap N``: the draws of the cluster bootstrap behind the command's 95 % intervals (0: none), by
    default :data:`graph.terms.BOOTSTRAP_DRAWS` in every command."""
    return typer.Option(BOOTSTRAP_DRAWS, "--bootstrap", *aliases, min=0,
                        help=f"draws of the bootstrap over {over} for the 95 % intervals (0: no intervals)")


def format_option(csv: str | None = None) -> Any:
    """The ``--format`` option of every command that has one (:class:`Format`, default table); ``csv`` says
    which rows CSV holds when the table shows more than them."""
    return typer.Option(Format.table, "--format", help="table, json or csv" + (f" ({csv})" if csv else ""))


def print_as(fmt: Format, table: Callable[[], None], everything: Any, rows: list[dict[str, Any]],
             columns: list[str] | None = None, default: Callable[[Any], Any] = str) -> None:
    """One result in the chosen format: ``table()`` prints it for people, ``everything`` is its JSON (through
    ``default`` for values JSON has no type for) and ``rows`` its CSV (in ``columns``, default the first
    row's keys)."""
    if fmt is Format.json:
        print_json(everything, default)
    elif fmt is Format.csv:
        print_rows(rows, Format.csv, columns)
    else:
        table()


def old_name(group: typer.Typer, name: str, new: str, command: Callable[..., Any]) -> None:
    """Register ``command`` on ``group`` under its old ``name`` as well, hidden from help, for one release: it
    takes the same arguments and runs the same after one ``notice:`` line on stderr naming ``cxrkg NEW``."""
    @functools.wraps(command)  # typer reads the parameters through __wrapped__
    def run(*args: Any, **kwargs: Any) -> Any:
        err.print(f"notice: `cxrkg {name}` is now `cxrkg {new}`; the old name goes in the next release",
                  highlight=False)
        return command(*args, **kwargs)

    group.command(name, hidden=True, help=f"The old name of `cxrkg {new}`, for this release only. "
                                          f"{command.__doc__ or ''}")(run)


def error_line(message: str) -> None:
    """Print one ``error:`` line on stderr (no traceback), as every fault ends."""
    err.print(f"[bold red]error:[/] {message}", highlight=False)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error line and exit with ``code``."""
    error_line(message)
    raise typer.Exit(code)


def existing(param: typer.CallbackParam, value: Any) -> Any:
    """A typer callback for path parameters: ``value`` (a path, a list of paths or None) unchanged when every
    path exists; else one error line naming the parameter and the path, exit code 1 (missing input means
    nothing done, not a usage error: exit code 2 stays Click's own)."""
    for path in value if isinstance(value, (list, tuple)) else [value]:
        if path is not None and not Path(path).exists():
            name = param.opts[0] if param.opts and param.opts[0].startswith("-") else (param.name or "").upper()
            fail(f"{name}: {path} does not exist (check the path)")
    return value


def store_or_fail():
    """The process-wide graph store, imported when a command needs it (the driver costs start-up time).

    Raises:
        GraphUnavailable: Neo4j cannot be used (one error line, exit code 1).
    """
    from graph.store import shared_store

    return shared_store()


def reader_or_fail():
    """What a read-only quick command reads through: for the local server its HTTP Query API, without
    importing the driver (:mod:`graph.store.query_api`, issue 18's 0.3 s); for ``NEO4J_URI`` the driver's
    store (a remote server's HTTP address is not known). A one-line error when neither can be used."""
    from graph.settings import local_server_settings, neo4j_settings

    server = neo4j_settings()  # ConfigError: one error line
    if server.external:
        from graph.store.lean_driver import import_driver_without_dataframes

        import_driver_without_dataframes()
        return store_or_fail()
    from graph.store.query_api import QueryApiReader

    return QueryApiReader(local_server_settings().http_uri, server.user, server.password, server.database)


def print_whole(renderable: Any) -> None:
    """Print ``renderable`` (a table whose commands or names sit in ``no_wrap`` columns) at the terminal's
    width, or wider when it needs more: rich would otherwise cut those cells with an ellipsis; a wider line
    is folded by the terminal, not broken by cxrkg."""
    from rich.measure import Measurement

    least = Measurement.get(console, console.options, renderable).minimum
    console.print(renderable, width=max(console.width, least))


def print_summary(summary) -> None:
    """The ingest summary table, the most frequent unmapped terms and the rejections."""
    table = Table(title="ingest summary", show_header=False)
    for name in ("files_seen", "files_loaded", "files_unchanged", "files_rejected", "records_loaded",
                 "mentions_loaded", "elements_created", "patients_relinked", "studies", "observations",
                 "progression_edges", "unmapped_terms", "ambiguous_comparisons"):
        table.add_row(name.replace("_", " "), str(getattr(summary, name)))
    table.add_row("out-of-schema relations", str(sum(summary.out_of_schema.values())))
    table.add_row("release variants kept", str(sum(summary.variants.values())))
    table.add_row("rejected records", str(len(summary.rejections)))
    table.add_row("seconds", f"{summary.seconds:.1f}")
    if summary.stage_seconds:
        table.add_row("stages (s)", ", ".join(f"{k} {v:.1f}" for k, v in summary.stage_seconds.items()))
    if summary.stage_cores:
        table.add_row(f"cores busy (of {os.cpu_count()})",
                      ", ".join(f"{k} {v:.1f}" for k, v in summary.stage_cores.items()))
    if summary.workers or summary.engine:  # a bulk load's files stage (0: this process wrote them)
        table.add_row("workers", f"{summary.workers} ({summary.engine})")
    for n, one in enumerate(summary.inputs, 1):  # a bulk load of several inputs
        table.add_row(f"input {n}", f"{one.files_loaded} files loaded, {one.files_rejected} rejected, "
                      f"{one.elements_created} elements ({one.engine})")
    if summary.files_cpu_seconds and summary.files_seen:
        table.add_row("files stage CPU", f"{summary.files_cpu_seconds:.1f} s, "
                      f"{1000 * summary.files_cpu_seconds / summary.files_seen:.2f} ms per input file")
    console.print(table)
    if summary.top_unmapped:
        console.print("most frequent unmapped terms: " + ", ".join(f"{t} ({n})" for t, n in summary.top_unmapped))
    print_out_of_schema(summary.out_of_schema, "read")
    print_variants(summary.variants)
    print_rejections(summary.rejections, summary.rejected_report, "rejected-files report")
    console.print(f"library log (Prefect, warnings): {library_log()}", highlight=False)


def run_ingest(paths: list[Path], doc_mapping: Path | None, rejected: Path | None, progress: bool,
               bulk: bool = False, batch_files: int = 500, brief: bool = False, engine: dict | None = None):
    """Run the ingest flow (or the bulk flow, its files stage on ``engine``: ``workers``, ``dask_address``,
    and its further inputs, ``also``) with ``batch_files`` files per batch and print its summary (in one line when ``brief``); returns the
    summary."""
    args: dict[str, Any] = dict(doc_mapping=str(doc_mapping) if doc_mapping else None,
                                rejected_report=str(rejected) if rejected else None, progress=progress,
                                batch_files=batch_files)
    if not bulk:
        store_or_fail()
        from flows.ingest_flow import ingest_flow

        summary = ingest_flow([str(p) for p in paths], **args)  # GraphBusy: one error line, exit code 5
    else:
        from flows.bulk_flow import bulk_ingest_flow

        summary = bulk_ingest_flow([str(p) for p in paths], **args, **(engine or {}))
    (print_summary_line if brief else print_summary)(summary)
    return summary


def print_extraction(summary) -> None:
    """One line for an extraction run, then its rejections."""
    console.print(f"extract ({summary.extractor}): {summary.reports_seen} reports seen, {summary.documents} "
                  f"extracted, {summary.entities} entities ({summary.change_entities} change), "
                  f"{len(summary.rejections)} rejected, {summary.seconds:.1f} s on {_workers(summary)} -> "
                  f"{summary.radgraph_dir}; mapping {summary.doc_mapping}")
    print_out_of_schema(summary.out_of_schema, "written")
    print_rejections(summary.rejections, summary.rejected_report, "rejected-records report")


def _workers(summary) -> str:
    """How many workers ran, and where: "2 workers (Dask local cluster)", "1 worker (this process)"."""
    if not summary.workers:
        return summary.engine
    return f"{summary.workers} worker{'s' if summary.workers > 1 else ''} ({summary.engine})"


def print_out_of_schema(counts: dict[str, int], verb: str) -> None:
    """The relations and labels outside RadGraph's schema (``"ANAT modify OBS": 3``), most frequent first, on
    stderr; nothing when there are none."""
    if counts:
        named = ", ".join(f"{name} ({n:,})" for name, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))
        err.print(f"[yellow]outside RadGraph's schema[/] ({verb}): {sum(counts.values()):,}: {named}", highlight=False)


def print_variants(counts: dict[str, int]) -> None:
    """What the releases read add that the readers kept (a variant spelling, an optional field or value,
    docs/formats.md §2.8, §4.1), most frequent first; nothing when there are none."""
    if counts:
        named = ", ".join(f"{name} ({n:,})" for name, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))
        console.print(f"release variants kept: {named}", highlight=False)


def snapshot_or_export(snapshot: Path | None, embeddings: Path | None) -> Path:
    """``snapshot`` when given, else the graph exported now to ``CXRKG_HOME/snapshots/latest`` (with
    ``embeddings``), said in one line."""
    if snapshot is not None:
        return snapshot
    from gnn.export import export_snapshot
    from graph.settings import local_server_settings

    target = local_server_settings().home / "snapshots" / "latest"
    manifest = export_snapshot(store_or_fail(), target, embeddings)
    console.print(f"exported snapshot {manifest.content_hash[:16]} -> {target}")
    return target


def local_server():
    """The local server of CXRKG_HOME; an error when NEO4J_URI points elsewhere."""
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings, neo4j_settings

    if neo4j_settings().external:
        fail("NEO4J_URI is set: cxrkg uses that server and does not manage a local one. "
              "Unset NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD to use the local server.")
    return LocalNeo4jServer(local_server_settings())
