"""The training flow ``cxrkg-train``: export -> train -> evaluate -> register.

Thin: each task calls a plain function of ``gnn`` and receives paths and plain values, never the driver
(process-wide, ``graph.store.shared_store``) or a model object. Every parameter has a default, so the
flow's deployment (``flows/serve.py``, ``cxrkg serve --train-cron ...``) can run it on a schedule:
it snapshots the current graph, trains with the config, evaluates the GNN against the baselines on the
test patients over the seeds, and registers the model with its metrics and snapshot hash in
``$CXRKG_HOME/models`` (``latest.json`` names it; ``cxrkg predict`` / ``compare`` use it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from graph.settings import settings


def _home() -> Path:
    return settings().home.expanduser()


@task(cache_policy=NO_CACHE)
def export_task(out_dir: str, embeddings: Optional[str]) -> dict[str, Any]:
    """Snapshot the graph; returns the manifest as a dict."""
    from gnn.export import export_snapshot
    from graph.store import shared_store

    return export_snapshot(shared_store(), Path(out_dir), Path(embeddings) if embeddings else None).__dict__


@task(cache_policy=NO_CACHE)
def train_task(snapshot_dir: str, config: dict[str, Any], checkpoint: str, device: str) -> dict[str, Any]:
    """Train on the snapshot and write the checkpoint; returns the checkpoint metadata."""
    from gnn.dataset import load_dataset
    from gnn.training import TrainConfig, save_checkpoint, train_model

    cfg = TrainConfig.from_dict(config)
    _, data = load_dataset(Path(snapshot_dir), cfg.split_seed, cfg.use_embeddings)
    result = train_model(data, cfg, device, log=get_run_logger().info)
    meta = save_checkpoint(Path(checkpoint), result, data)
    return {k: meta[k] for k in ("model_version", "snapshot_hash", "best_epoch", "val_macro_f1")}


@task(cache_policy=NO_CACHE)
def evaluate_task(snapshot_dir: str, config: dict[str, Any], seeds: list[int], out_dir: str,
                  device: str) -> dict[str, Any]:
    """GNN vs baselines over the seeds; writes the report and plot; returns the summary figures."""
    from gnn.dataset import load_dataset
    from gnn.evaluation import evaluate, format_table, write_report
    from gnn.training import TrainConfig

    cfg = TrainConfig.from_dict(config)
    _, data = load_dataset(Path(snapshot_dir), cfg.split_seed, cfg.use_embeddings)
    report = evaluate(data, cfg, tuple(seeds), device)
    write_report(report, Path(out_dir))
    get_run_logger().info("\n" + format_table(report))
    return {"report": str(Path(out_dir) / "evaluation.json"), "best_baseline": report["best_baseline"],
            "gap_macro_f1": report["gap_macro_f1"],
            "macro_f1": {n: m["summary"]["five_class"]["macro_f1"] for n, m in report["models"].items()}}


@task(cache_policy=NO_CACHE)
def register_task(checkpoint: str, metrics: dict[str, Any]) -> str:
    """Copy the checkpoint into the registry with its metrics; returns the registered path."""
    from gnn.prediction import register

    return str(register(Path(checkpoint), metrics))


@flow(name="cxrkg-train", log_prints=True)
def train_flow(config_path: Optional[str] = None, snapshot_dir: Optional[str] = None,
               embeddings: Optional[str] = None, seeds: list[int] = [0, 1, 2],  # noqa: B006 (Prefect parameter)
               evaluate: bool = True, device: str = "cpu", epochs: Optional[int] = None,
               work_dir: Optional[str] = None) -> dict[str, Any]:
    """Export the graph, train the progression GNN, evaluate it against the baselines and register it.

    Args:
        config_path: training config (YAML/JSON); default ``gnn/configs/gnn.yaml`` (shipped with the package).
        snapshot_dir: where to write the snapshot; default ``$CXRKG_HOME/snapshots/<run>``.
        embeddings: optional region embeddings parquet for the export.
        seeds: evaluation seeds (mean ± sd); the registered model is trained with the config's seed.
        evaluate: skip the evaluation when False (registers the model with its validation figure only).
        device: ``cpu``, ``cuda`` or ``auto``.
        epochs: override the config's epochs.
        work_dir: folder for the checkpoint and the evaluation report; default ``$CXRKG_HOME/runs/<run>``.

    Returns:
        ``{"manifest", "model", "evaluation", "registered"}``.
    """
    from datetime import datetime, timezone

    from gnn.training import DEFAULT_CONFIG, TrainConfig

    run = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    cfg_file = Path(config_path) if config_path else DEFAULT_CONFIG
    config = (TrainConfig.from_file(cfg_file, epochs=epochs) if cfg_file.exists() else
              TrainConfig.from_dict({}, epochs=epochs)).model_dump()
    work = Path(work_dir) if work_dir else _home() / "runs" / run
    snapshot = snapshot_dir or str(_home() / "snapshots" / run)
    manifest = export_task(snapshot, embeddings)
    model = train_task(snapshot, config, str(work / "model.pt"), device)
    evaluation = evaluate_task(snapshot, config, list(seeds), str(work / "evaluation"), device) if evaluate else None
    metrics = {"val_macro_f1": model["val_macro_f1"], "evaluation": evaluation}
    registered = register_task(str(work / "model.pt"), metrics)
    (work / "run.json").write_text(json.dumps({"manifest": manifest, "model": model, "evaluation": evaluation,
                                               "registered": registered}, indent=1, default=str))
    return {"manifest": manifest, "model": model, "evaluation": evaluation, "registered": registered}
