"""``cxrkg forecast``: forecasters of the next study (the baselines and the graph forecaster) scored on a
snapshot's patients; ``--ablation``: which inputs carry the forecast, on the validation patients.

Importing this module is cheap (typer only); pandas and scikit-learn load inside the command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from flows.cli.app import app
from flows.cli.common import Format, bootstrap_option, console, err, existing, fail, format_option, print_as, print_rows


@app.command()
def forecast(snapshot: Path = typer.Option(..., callback=existing, file_okay=False,
                                           help="snapshot folder (`cxrkg export snapshot --out DIR`)"),
             split_seed: int = typer.Option(0, help="seed of the patient split (train 70 %, val 15 %, test 15 %)"),
             bootstrap: int = bootstrap_option(),
             graph: bool = typer.Option(True, "--gnn/--no-gnn", help="also train and score the graph forecaster"),
             config: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False,
                                                   help="graph forecaster config (YAML, e.g. "
                                                        "forecast.yaml in gnn/configs); default: its defaults "
                                                        "with seed = --split-seed"),
             ablation: bool = typer.Option(False, "--ablation", help="refit the trees and the graph forecaster "
                                           "with input groups removed; validation patients only"),
             train_fraction: float = typer.Option(1.0, min=0.01, max=1.0, help="ablation: share of the "
                                                  "training patients to fit on"),
             max_epochs: Optional[int] = typer.Option(None, min=1, help="ablation: cap the graph's epochs"),
             save_model: Optional[Path] = typer.Option(None, "--save-model", help="save the fitted graph "
                                                       "forecaster here (for `cxrkg compare/predict --forecaster`), "
                                                       "with a mention model and the CXRTrek stage 6 rule chosen "
                                                       "on the validation patients (`cxrkg cxrtrek answer`)"),
             out: Path = typer.Option(None, help="also write the full report (per finding) as JSON here"),
             fmt: Format = format_option("csv: the rows of the forecasts' table, or of the ablation's")) -> None:
    """Forecast each finding of a patient's next study from the studies before it: onset and resolution
    AUROC / AUPRC (macro over findings) and macro-F1 over onset / resolution / persistence / stays absent,
    on the development (val) and held-out (test) patients, with 95 % bootstrap intervals. With --save-model,
    also the stage 6 rule's validation exact match beside the most common answer."""
    from gnn.forecast.model import ForecastGnnConfig
    from gnn.forecast.rows import forecast_table

    # GnnError (a bad snapshot or configuration): one error line
    cfg = ForecastGnnConfig.from_file(config) if config else ForecastGnnConfig(seed=split_seed)
    table = forecast_table(snapshot, split_seed)
    if ablation:
        _ablation(table, cfg, train_fraction, max_epochs, bootstrap, split_seed, out, fmt)
        return
    report, stage6 = _evaluate(table, cfg if graph else None, bootstrap, split_seed, snapshot, save_model)
    full = report.as_dict() | ({} if stage6 is None else {"stage6_validation": stage6})
    if out:
        out.write_text(json.dumps(full, indent=2, default=float))
    from gnn.forecast.report import table_rows

    print_as(fmt, lambda: _print_forecasts(table, report, stage6), full, table_rows(report), default=float)


def _print_forecasts(table, report, stage6: Optional[dict]) -> None:
    from gnn.forecast.report import table_rows

    console.print(f"{len(table.findings)} findings; (pair, finding) rows: " +
                  ", ".join(f"{k} {v:,} of {report.patients[k]:,} patients" for k, v in report.rows.items()))
    print_rows(table_rows(report), "table", title="next-study forecasts: val = development, test = held out; "
               "95 % bootstrap intervals over patients")
    if stage6 is not None:
        print_rows(stage6["figures"], "table", title=f"CXRTrek stage 6 on the validation patients, rule chosen there "
                   f"({stage6['rule_text']}); exact match, paired 95 % bootstrap intervals over patients")


def _log(line: str) -> None:
    err.print(line, highlight=False)


def _evaluate(table, cfg, bootstrap: int, seed: int, snapshot: Path, save_model: Optional[Path]):
    """The baselines and (with a config) the graph forecaster, fitted and scored on val and test; the
    graph forecaster saved to ``save_model`` when given, with its mention model and stage 6 rule (then also
    returned: the rule and its validation figures, else None)."""
    from gnn.export import Manifest
    from gnn.forecast.baselines import BASELINES
    from gnn.forecast.model import GRAPH_FORECASTER, gnn_forecaster, with_stage6
    from gnn.forecast.report import evaluate_forecasters

    if save_model and cfg is None:
        fail("--save-model needs the graph forecaster (drop --no-gnn)")
    forecasters = dict(BASELINES)
    if cfg is not None:
        forecasters[GRAPH_FORECASTER] = gnn_forecaster(cfg, _log)
    fitted: dict = {}
    report = evaluate_forecasters(table, forecasters, bootstrap=bootstrap, seed=seed, fitted=fitted)
    if save_model:
        forecaster = fitted[GRAPH_FORECASTER]
        figures = with_stage6(forecaster, table, _log, bootstrap, seed)
        forecaster.save(save_model, Manifest.read(snapshot).content_hash)
        err.print(f"graph forecaster {forecaster.model_version} -> {save_model}", highlight=False)
        rule = forecaster.stage6
        return report, {"rule": rule.as_dict(), "rule_text": rule.text(), "figures": figures}
    return report, None


def _ablation(table, cfg, train_fraction: float, max_epochs: Optional[int], bootstrap: int, seed: int,
              out: Optional[Path], fmt: Format) -> None:
    """Run and print the ablation (:mod:`gnn.forecast.ablation`)."""
    from gnn.forecast.ablation import ablation_models, ablation_rows, run_ablation

    result = run_ablation(table, ablation_models(cfg, max_epochs, _log), train_fraction, bootstrap, seed, _log)
    rows = ablation_rows(result)
    for row in rows:
        row["fit s"] = f"{result.seconds[(row['model'], row['inputs'])]:.0f}"
    if out:
        out.write_text(json.dumps(rows, indent=2))
    print_as(fmt, lambda: _print_ablation(result, rows, train_fraction), rows, rows)


def _print_ablation(result, rows: list[dict], train_fraction: float) -> None:
    console.print(f"fitted on {result.train_rows:,} training rows ({train_fraction:.0%} of the training patients); "
                  f"scored on {result.val_rows:,} validation rows of {result.val_patients:,} patients")
    print_rows(rows, "table", title="which inputs carry the forecast (validation patients; change: paired "
               "difference to all inputs; 95 % bootstrap intervals over patients)")
