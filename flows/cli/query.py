"""``cxrkg queries``, ``cxrkg query`` and ``cxrkg stats``: answers out (quick: no Prefect)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.table import Table

from flows.cli.app import app
from flows.cli.common import Format, err, fail, format_option, print_rows, print_whole, reader_or_fail
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


def _params(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            fail(f"--param {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        out[key.strip()] = value
    return out


@app.command()
def query(name: str = typer.Argument(..., help="query name (see `cxrkg queries`)"),
          param: list[str] = typer.Option([], "--param", "-p", help="key=value, repeatable"),
          fmt: Format = format_option()) -> None:
    """Run a named query in a read transaction."""
    from graph.store.queries import get_query, run_named, unknown_ids

    q = get_query(name)  # QueryError (an unknown name, a bad parameter): one error line
    bound = q.bind(_params(param))
    _check_finding(bound)
    reader = reader_or_fail()
    rows = run_named(reader, q, bound)
    if not rows and (unknown := unknown_ids(reader, bound)):
        fail(f"no {' and no '.join(unknown)} in the graph; `cxrkg stats` shows what is loaded")
    print_rows(rows, fmt, list(q.columns), title=q.name)
    if rows and rows[-1].get("truncated"):
        err.print(f"{q.name}: only the first {len(rows):,} rows; more exist (raise max_rows to see them)")


def _check_finding(params: dict[str, Any]) -> None:
    finding = params.get("finding")
    if finding is None:
        return  # without reading the vocabulary (YAML): issue 18's 0.3 s
    from graph.store.queries import QueryError
    from graph.vocabulary import vocabulary

    if vocabulary().finding_for(finding) is None:
        raise QueryError(f"finding {finding!r} is not in the vocabulary (v{vocabulary().version}); "
                         "use a Chest ImaGenome attribute name or one of its synonyms")


@app.command()
def stats(fmt: Format = format_option("json with the checks' examples; csv: one row per count"),
          check: bool = typer.Option(True, help="run the consistency checks and the schema drift check (exit code 4 when any fails)")) -> None:
    """Counts per label and relationship type, orphan nodes, the consistency checks, and any property or
    label the graph holds that graph/schema.yaml does not declare (schema drift)."""
    from graph.store.consistency import run_checks
    from graph.store.stats import graph_stats, schema_drift

    store = reader_or_fail()
    result = graph_stats(store)
    checks = run_checks(store) if check else []
    drift = schema_drift(store) if check else []
    if check:
        result["consistency"] = {c.name: {"count": c.count, "examples": c.examples, "description": c.description}
                                 for c in checks}
        result["schema_drift"] = drift
        result["consistent"] = all(c.ok for c in checks) and not drift
    if fmt == "json":
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        rows = [{"kind": "node", "name": k, "count": v} for k, v in result["nodes"].items()]
        rows += [{"kind": "relationship", "name": k, "count": v} for k, v in result["relationships"].items()]
        rows += [{"kind": "orphan", "name": k, "count": v} for k, v in result["orphans"].items()]
        rows += [{"kind": "check", "name": c.name, "count": c.count} for c in checks]
        rows += [{"kind": "drift", "name": name, "count": 1} for name in drift]
        print_rows(rows, fmt.value, title="graph statistics")
    for c in checks:
        if not c.ok:
            err.print(f"[bold red]inconsistent:[/] {c.count} {c.description}; e.g. {', '.join(c.examples)}")
    if drift:
        err.print(f"[bold red]schema drift:[/] the graph holds {', '.join(drift)}, which graph/schema.yaml does not "
                  "declare (written by another tool or an earlier cxrkg; declare it, or remove it)")
    if not all(c.ok for c in checks) or drift:
        raise typer.Exit(ExitCode.INCONSISTENT)
