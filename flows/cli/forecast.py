"""``cxrkg forecast``: forecasters of the next study (the baselines and the graph forecaster) scored on a
snapshot's patients.

Importing this module is cheap (typer only); pandas and scikit-learn load inside the command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from flows.cli.app import app
from flows.cli.common import ReportFormat, console, err, fail, print_rows


@app.command()
def forecast(snapshot: Path = typer.Option(..., exists=True, file_okay=False,
                                           help="snapshot folder (`cxrkg export --out DIR`)"),
             split_seed: int = typer.Option(0, help="seed of the patient split (train 70 %, val 15 %, test 15 %)"),
             bootstrap: int = typer.Option(200, min=0, help="bootstrap resamples of patients for the intervals"),
             graph: bool = typer.Option(True, "--gnn/--no-gnn", help="also train and score the graph forecaster"),
             out: Path = typer.Option(None, help="also write the full report (per finding) as JSON here"),
             fmt: ReportFormat = typer.Option(ReportFormat.table, "--format", help="table or json")) -> None:
    """Forecast each finding of a patient's next study from the studies before it: onset and resolution
    AUROC / AUPRC (macro over findings) and macro-F1 over onset / resolution / persistence / stays absent,
    on the development (val) and held-out (test) patients, with 95 % bootstrap intervals."""
    from gnn.errors import GnnError
    from gnn.forecast import forecast_table
    from gnn.forecast_baselines import BASELINES
    from gnn.forecast_report import evaluate_forecasters, table_rows

    forecasters = dict(BASELINES)
    if graph:
        from gnn.forecast_gnn import GRAPH_FORECASTER, ForecastGnnConfig, gnn_forecaster

        forecasters[GRAPH_FORECASTER] = gnn_forecaster(ForecastGnnConfig(seed=split_seed),
                                                       lambda line: err.print(line, highlight=False))
    try:
        table = forecast_table(snapshot, split_seed)
        report = evaluate_forecasters(table, forecasters, bootstrap=bootstrap, seed=split_seed)
    except GnnError as exc:
        fail(str(exc))
    full = report.as_dict()
    if out:
        out.write_text(json.dumps(full, indent=2, default=float))
    if fmt == ReportFormat.json:
        sys.stdout.write(json.dumps(full, indent=2, default=float) + "\n")
        return
    console.print(f"{len(table.findings)} findings; (pair, finding) rows: " +
                  ", ".join(f"{k} {v:,} of {report.patients[k]:,} patients" for k, v in report.rows.items()))
    print_rows(table_rows(report), "table", title="next-study forecasts: val = development, test = held out; "
               "95 % bootstrap intervals over patients")
