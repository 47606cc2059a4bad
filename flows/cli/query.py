"""``cxrkg queries``, ``cxrkg query`` and ``cxrkg stats``: answers out (quick: no Prefect)."""

from __future__ import annotations

import typer
from rich.table import Table

from flows.cli.app import app
from flows.cli.common import Format, err, fail, format_option, print_json, print_rows, print_whole, reader_or_fail
from graph.errors import ExitCode


@app.command()
def queries() -> None:
    """List the named queries with their parameters and columns."""
    from graph.store.queries import catalogue

    table = Table(title="query catalogue")
    table.add_column("name", no_wrap=True)  # names and parameters are typed by users: never cut or split
    table.add_column("parameters", no_wrap=True)
    table.add_column("purpose", min_width=20)
    for q in catalogue().values():
        table.add_row(q.name, "\n".join(_param_text(p) for p in q.params), q.purpose)
    print_whole(table)


def _param_text(p) -> str:
    kind = "|".join(p.choices) if p.choices else p.type
    return f"{p.name}:{kind}" + (f"={p.default}" if p.default is not None else "")


@app.command()
def query(name: str = typer.Argument(..., help="query name (see `cxrkg queries`)"),
          param: list[str] = typer.Option([], "--param", "-p", help="key=value, repeatable"),
          fmt: Format = format_option()) -> None:
    """Run a named query in a read transaction."""
    from graph.store.queries import bound_params, get_query, run_named, unknown_ids

    q = get_query(name)  # QueryError (an unknown name, a bad parameter, an unknown finding): one error line
    bound = bound_params(q, param)
    reader = reader_or_fail()
    rows = run_named(reader, q, bound)
    if not rows and (unknown := unknown_ids(reader, bound)):
        fail(f"no {' and no '.join(unknown)} in the graph; `cxrkg stats` shows what is loaded")
    print_rows(rows, fmt, list(q.columns), title=q.name)
    if rows and rows[-1].get("truncated"):
        err.print(f"{q.name}: only the first {len(rows):,} rows; more exist (raise max_rows to see them)")


@app.command()
def stats(fmt: Format = format_option("json with the checks' examples; csv: one row per count"),
          check: bool = typer.Option(True, help="run the consistency checks and the schema drift check (exit code 4 when any fails)")) -> None:
    """Counts per label and relationship type, orphan nodes, the consistency checks, and any property or
    label the graph holds that graph/schema.yaml does not declare (schema drift)."""
    from graph.store.stats import stats_report

    report = stats_report(reader_or_fail(), check)
    if fmt is Format.json:
        print_json(report.as_dict())
    else:
        print_rows(report.rows(), fmt, title="graph statistics")
    for c in report.failed:
        err.print(f"[bold red]inconsistent:[/] {c.count} {c.description}; e.g. {', '.join(c.examples)}")
    if report.drift:
        err.print(f"[bold red]schema drift:[/] the graph holds {', '.join(report.drift)}, which graph/schema.yaml "
                  "does not declare (written by another tool or an earlier cxrkg; declare it, or remove it)")
    if not report.consistent:
        raise typer.Exit(ExitCode.INCONSISTENT)
