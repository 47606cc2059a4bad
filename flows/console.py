"""The consoles and the printers that both the ``cxrkg`` commands (:mod:`flows.cli.common` re-exports them)
and the demo's engine (:mod:`flows.demo`) print with: rows as a table, JSON or CSV, the ingest summary in one
line, rejections, the library log's path.

Below both in the layers of ``flows`` (pyproject.toml's import-linter contracts): the demo must not import
the CLI, and the CLI's commands run the demo.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

# soft_wrap: a line longer than the terminal is written whole and the terminal folds it, so a command or a
# path in an error, a summary or a rejection is never split by an inserted line break (copied from the terminal,
# it still runs); tables still fit the width (their cells wrap or are cut inside the table's own borders)
# emoji off: an answer's text is printed as stored (":x:" stays three characters), and rich's emoji table is
# not loaded on the quick commands' path
console = Console(soft_wrap=True, emoji=False)
err = Console(stderr=True, soft_wrap=True, emoji=False)


def print_json(data: Any, default: Callable[[Any], Any] = str) -> None:
    """``data`` as indented JSON on stdout; a value JSON has no type for goes through ``default`` (its text:
    dates, paths; ``float`` for NumPy's numbers)."""
    sys.stdout.write(json.dumps(data, indent=2, default=default) + "\n")


def print_rows(rows: list[dict[str, Any]], fmt: str, columns: list[str] | None = None,
               title: str | None = None, wrap: bool = True) -> None:
    """Rows as a table (with a row count), JSON or CSV on stdout; a table as wide as the terminal, its cells
    wrapped (``wrap``) or cut with an ellipsis, one line per row."""
    columns = columns or (list(rows[0]) if rows else [])
    if fmt == "json":
        print_json(rows)
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()} for r in rows)
        sys.stdout.write(buf.getvalue())
    else:
        table = Table(title=title, show_lines=False)
        cells = [["" if r.get(c) is None else ", ".join(map(str, r[c])) if isinstance(r.get(c), list)
                  else str(r.get(c)) for c in columns] for r in rows]
        for c, width in zip(columns, [None] * len(columns) if wrap else _cut_widths(columns, cells), strict=True):
            table.add_column(c, overflow="fold" if wrap else "ellipsis", no_wrap=not wrap, width=width)
        for row in cells:
            table.add_row(*row)
        console.print(table)
        if wrap:  # a table cut to one line per row is a glance, not a result to count
            console.print(f"{len(rows)} row(s)")


def _cut_widths(columns: list[str], cells: list[list[str]], short: int = 14) -> list[int | None]:
    """Column widths that fit the console with one line per row: columns up to ``short`` characters keep
    their width (None), the longer ones share the rest equally (cut with an ellipsis)."""
    widest = [max([len(c)] + [len(row[k]) for row in cells]) for k, c in enumerate(columns)]
    room = console.width - (3 * len(columns) + 1) - sum(w for w in widest if w <= short)
    wide = [w for w in widest if w > short]
    each = max(short, room // len(wide)) if wide else 0
    return [None if w <= short or w <= each else each for w in widest]


def print_summary_line(summary) -> None:
    """The ingest summary in one line (the demo), then the rejections."""
    console.print(f"{summary.files_loaded:,} files loaded, {summary.files_unchanged:,} unchanged, "
                  f"{summary.files_rejected:,} rejected; {summary.elements_created:,} elements in "
                  f"{summary.seconds:.1f} s", highlight=False)
    print_rejections(summary.rejections, summary.rejected_report, "rejected-files report")


def print_rejections(rejections: list, report: str | None, report_name: str) -> None:
    """The first ten rejections (file, record, field, reason) on stderr, then where the full report is."""
    for r in rejections[:10]:
        where = r.record if r.record and r.record.startswith("row ") else f"record {r.record}" if r.record else ""
        err.print(f"[yellow]rejected[/] {r.file}" + (f" {where}" if where else "")
                  + (f" field {r.field}" if r.field else "") + f": {r.reason}", highlight=False)
    if len(rejections) > 10:
        err.print(f"... {len(rejections) - 10} more")
    if report:
        err.print(f"{report_name}: {report}")


def library_log() -> Path:
    """The file that Prefect's logs and other libraries' warnings go to (flows/logs.py)."""
    from graph.settings import local_server_settings

    return local_server_settings().home / "logs" / "cxrkg.log"


def counts_line(title: str, rows: list[dict], key: Callable[[dict], str], count: str) -> str:
    """``title: a (3), b (2), ...`` from rows of a name (``key(row)``) and a count (``row[count]``)."""
    return f"{title}: " + ", ".join(f"{key(r)} ({r[count]:,})" for r in rows)
