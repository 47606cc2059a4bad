"""``cxrkg train | predict | compare``: the progression-model commands (``cxrkg eval gnn`` scores the model).

Importing this module is cheap (typer only): torch,
PyG and Prefect are imported inside the commands that need them. Bad input (an empty graph, a patient
with one study, an unknown finding, a checkpoint that does not fit the graph, ...) ends with a one-line
error and exit code 1, not a stack trace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from flows.cli.app import app
from flows.cli.common import Format, console, err, existing, format_option, print_as, snapshot_or_export, store_or_fail


@app.command()
def train(config: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False,
                                                help="YAML/JSON config (e.g. gnn/configs/gnn.yaml); default settings otherwise"),
          snapshot: Optional[Path] = typer.Option(None, callback=existing, file_okay=False,
                                                  help="snapshot folder; default: export the graph now"),
          embeddings: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False,
                                                    help="embeddings parquet (when exporting now)"),
          out: Optional[Path] = typer.Option(None, help="checkpoint file; default: the registry "
                                                        "(model.pt in the version's folder of "
                                                        "CXRKG_HOME/models)"),
          device: str = typer.Option("cpu", help="cpu, cuda, cuda:N or auto"),
          epochs: Optional[int] = typer.Option(None, min=1, help="override the config's epochs"),
          seed: Optional[int] = typer.Option(None, help="override the config's seed"),
          register_model: bool = typer.Option(True, "--register/--no-register",
                                              help="register the model as the latest")) -> None:
    """Train the progression GNN (early stopping on validation macro-F1); writes a checkpoint that
    records the snapshot hash."""
    from gnn.dataset import load_dataset
    from gnn.prediction import models_dir, register
    from gnn.training import TrainConfig, model_version, save_checkpoint, train_model

    cfg = TrainConfig.from_file(config, epochs=epochs, seed=seed) if config else \
        TrainConfig.from_dict({}, epochs=epochs, seed=seed)
    folder = snapshot_or_export(snapshot, embeddings)
    manifest, data = load_dataset(folder, cfg.split_seed, cfg.use_embeddings)
    console.print(f"{len(data.samples)} study pairs, {len(data.pairs)} pairs, {len(data.labelled())} labelled; "
                  f"{data.num_features} observation features")
    result = train_model(data, cfg, device, lambda line: console.print(line, highlight=False))
    version = model_version(result, data.content_hash)
    path = out or models_dir() / version / "model.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = save_checkpoint(path, result, data, version)
    console.print(f"best epoch {result.best_epoch}: validation macro-F1 {result.val_macro_f1:.4f}; "
                  f"{result.epoch_seconds:.2f} s per epoch on {result.device}")
    if register_model:
        path = register(path, {"val_macro_f1": result.val_macro_f1})
    console.print(f"model {meta['model_version']} -> {path}")


@app.command()
def predict(checkpoint: Optional[Path] = typer.Option(None, help="model file; default the latest registered"),
            write_back: bool = typer.Option(False, "--write-back", help="store predictions as PROGRESSION edges "
                                            "(source gnn)"),
            out: Optional[Path] = typer.Option(None, help="also save the predictions (.parquet or .csv)"),
            embeddings: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False,
                                                      help="embeddings parquet, if the model uses them"),
            allow_new_data: bool = typer.Option(False, "--allow-new-data",
                                                help="accept a graph that changed since the model's snapshot"),
            device: str = typer.Option("cpu", help="cpu, cuda, cuda:N or auto"),
            forecaster: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False, help="a next-study "
                                                      "forecaster (`cxrkg forecast --save-model`): write its "
                                                      "forecasts back instead")) -> None:
    """Predict the change of every unstated (current, prior) pair of consecutive studies; with
    ``--forecaster``, write every consecutive pair's next-study forecasts back."""
    if forecaster:
        _write_forecasts(forecaster)
        return
    from gnn.prediction import predict as run_predict
    from gnn.prediction import write_predictions

    frame, summary = run_predict(store_or_fail(), checkpoint, write_back, allow_new_data, embeddings, device)
    if out:
        write_predictions(frame, out)
    console.print(f"model {summary.model_version}: {summary.pairs_scored} pairs scored "
                  f"({summary.skipped_stated} with a stated change) for {summary.patients} patients"
                  + (f"; {summary.edges_written} gnn edges written" if write_back else "")
                  + (f"; table {out}" if out else "") + f" in {summary.seconds:.1f} s")


def _write_forecasts(path: Path) -> None:
    from gnn.forecast.compare import write_forecasts
    from gnn.forecast.model import load_forecaster

    summary = write_forecasts(store_or_fail(), load_forecaster(path),
                              lambda line: err.print(line, highlight=False))
    console.print(f"forecaster {summary.model_version}: {summary.pairs:,} study pairs of {summary.patients:,} "
                  f"patients; {summary.edges_written:,} gnn edges written in {summary.seconds:.1f} s")


@app.command()
def compare(patient: str = typer.Option(..., "--patient", help="patient id"),
            current: Optional[str] = typer.Option(None, help="current study (default: the last)"),
            prior: Optional[str] = typer.Option(None, help="prior study (default: the one before current)"),
            finding: Optional[str] = typer.Option(None, help="only this finding (name or synonym)"),
            checkpoint: Optional[Path] = typer.Option(None, help="model file; default the latest registered"),
            embeddings: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False,
                                                      help="embeddings parquet, if the model uses them"),
            forecaster: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False, help="a next-study "
                                                      "forecaster (`cxrkg forecast --save-model`): derived events "
                                                      "beside its forecast for the later study"),
            fmt: Format = format_option("csv: the rows, one per anatomy and finding")) -> None:
    """What changed between two studies of a patient: stated changes, else the model's, per anatomy and
    finding, and a one-line answer; with ``--forecaster``, per finding the derived event beside the
    forecast for the later study."""
    from dataclasses import asdict

    if forecaster:
        from gnn.forecast.compare import compare_forecast
        from gnn.forecast.model import load_forecaster

        forecast = compare_forecast(store_or_fail(), patient, load_forecaster(forecaster), current, prior, finding)
        print_as(fmt, lambda: _print_forecast(forecast), asdict(forecast), [asdict(r) for r in forecast.rows])
        return
    from gnn.compare import compare as run_compare

    result = run_compare(store_or_fail(), patient, current, prior, checkpoint, finding, embeddings)
    print_as(fmt, lambda: _print_comparison(result), asdict(result), [asdict(r) for r in result.rows])


def _print_comparison(result) -> None:
    title = (f"patient {result.patient_id}: study {result.current_study_id} vs {result.prior_study_id} "
             f"({result.days:.1f} days{'' if result.consecutive else ', not consecutive'})")
    table = Table(title=title)
    for c in ("anatomy", "finding", "prior", "current", "change", "source", "probability"):
        table.add_column(c, overflow="fold")
    for r in result.rows:
        table.add_row(r.anatomy, r.finding, r.prior_state + (f" ({r.prior_severity})" if r.prior_severity else ""),
                      r.current_state + (f" ({r.current_severity})" if r.current_severity else ""), r.change,
                      r.source, "" if r.probability is None else f"{r.probability:.2f}")
    console.print(table)
    console.print(result.answer, highlight=False)


def _print_forecast(result) -> None:
    table = Table(title=f"patient {result.patient_id}: study {result.current_study_id} vs {result.prior_study_id}"
                        f"{'' if result.consecutive else ' (not consecutive)'}; forecast {result.model_version}")
    for c in ("finding", "prior", "current", "derived event", "forecast", "p(present)"):
        table.add_column(c, overflow="fold")
    for r in result.rows:
        table.add_row(r.finding, r.prior_state, r.current_state, r.event or "", r.forecast, f"{r.probability:.2f}")
    console.print(table)
    console.print(result.answer, highlight=False)
