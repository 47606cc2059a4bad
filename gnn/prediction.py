"""Predictions over the graph, write-back as PROGRESSION edges with source ``gnn``, and the model registry.

Write-back (:func:`predict`): for every consecutive study pair and (anatomy, finding) that is present
or uncertain in at least one of the two studies and has no stated change, one edge
``(current)-[:PROGRESSION {source: 'gnn', change, probability, classes, probabilities, model_version,
snapshot_hash}]->(prior)``. Earlier ``gnn`` edges of the same patients are replaced in the same
transaction; stated edges (chest_imagenome, radgraph) are never touched, and a pair with a stated edge
gets no prediction. An observation the pair needs but the graph lacks (not mentioned in that study) is
created without mentions, like the placeholders of stated changes; the ingest removes such placeholders
(and their ``gnn`` edges) when it relinks the patient, so run ``cxrkg predict --write-back`` again after
an ingest.

The registry is a folder (``$CXRKG_HOME/models``): one folder per model version with ``model.pt`` and
``metrics.json``, and ``latest.json`` naming the newest; ``predict`` and ``compare`` default to it.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from gnn.baselines import _present
from gnn.dataset import CLASSES, ProgressionData, build
from gnn.errors import GnnError
from gnn.export import read_graph_tables
from graph.store import GraphStore

WRITE_BATCH_PATIENTS = 500


def models_dir() -> Path:
    """``$CXRKG_HOME/models`` (``~/.cxrkg/models`` by default)."""
    from graph.settings import settings

    return settings().home.expanduser() / "models"


def register(checkpoint: Path, metrics: dict[str, Any], registry: Path | None = None) -> Path:
    """Copy a checkpoint into the registry under its model version, with ``metrics.json``, and mark it
    latest. Returns the registered ``model.pt`` path.

    Raises:
        GnnError: the checkpoint cannot be read.
    """
    from gnn.training import load_checkpoint

    _, meta = load_checkpoint(checkpoint)
    root = Path(registry) if registry else models_dir()
    folder = root / meta["model_version"]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "model.pt"
    if Path(checkpoint).resolve() != target.resolve():
        shutil.copy2(checkpoint, target)
    (folder / "metrics.json").write_text(json.dumps({
        "model_version": meta["model_version"], "snapshot_hash": meta["snapshot_hash"],
        "config": meta["config"], "val_macro_f1": meta["val_macro_f1"], "metrics": metrics}, indent=1, default=str))
    (root / "latest.json").write_text(json.dumps({"model_version": meta["model_version"], "path": str(target)}))
    return target


def latest_checkpoint(registry: Path | None = None) -> Path | None:
    """The newest registered checkpoint, or None when nothing is registered."""
    root = Path(registry) if registry else models_dir()
    try:
        path = Path(json.loads((root / "latest.json").read_text())["path"])
    except (OSError, ValueError, KeyError):
        return None
    return path if path.exists() else None


def resolve_checkpoint(checkpoint: Path | None) -> Path:
    """The given checkpoint, else the latest registered one.

    Raises:
        GnnError: none given and none registered.
    """
    if checkpoint is not None:
        return Path(checkpoint)
    latest = latest_checkpoint()
    if latest is None:
        raise GnnError(f"no checkpoint given and none registered in {models_dir()}: run `cxrkg train` first")
    return latest


def with_embeddings(tables: dict[str, Any], embeddings: Path | None) -> dict[str, Any]:
    """Add a user embeddings parquet to in-memory tables (see :func:`gnn.export.export_snapshot`).

    Raises:
        GnnError: unreadable or malformed file.
    """
    if embeddings is None:
        return tables
    from gnn.export import _check_embeddings

    path = Path(embeddings)
    if not path.is_file():
        raise GnnError(f"{path}: no such embeddings file")
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _EMBEDDINGS_CACHE:  # a warm caller (compare in a notebook or server) reads it once
        _EMBEDDINGS_CACHE.clear()
        _EMBEDDINGS_CACHE[key] = _check_embeddings(path)[0]
    return {**tables, "region_embeddings": _EMBEDDINGS_CACHE[key]}


_EMBEDDINGS_CACHE: dict[tuple[str, int, int], Any] = {}


@dataclass
class PredictionSummary:
    """What :func:`predict` did: pairs scored, edges written, pairs skipped because a change is stated."""

    model_version: str
    snapshot_hash: str
    pairs_scored: int
    edges_written: int
    skipped_stated: int
    patients: int
    seconds: float


def pair_present(data: ProgressionData) -> np.ndarray:
    """``[len(pairs)]`` bool: present or uncertain in at least one of the two studies."""
    return _present(data.x_cur) | _present(data.x_prior)


def predict(store: GraphStore, checkpoint: Path | None = None, write_back: bool = False,
            allow_new_data: bool = False, embeddings: Path | None = None, device: str = "cpu",
            ) -> tuple[pd.DataFrame, PredictionSummary]:
    """Score every consecutive study pair of the graph with a checkpoint; optionally write the edges back.

    Args:
        store: the graph to score (and to write the predictions to).
        checkpoint: model file; default the latest registered.
        write_back: store the predictions in Neo4j (see the module docstring).
        allow_new_data: accept a graph whose content hash is not the checkpoint's snapshot hash
            (e.g. after new studies were ingested); otherwise that is an error.
        embeddings: region embeddings parquet, required when the model was trained with them.
        device: the torch device to score on (``cpu``, ``cuda``).

    Returns:
        (one row per scored pair: patient_id, study_id, prior_study_id, anatomy, finding, change,
        probability, stated (bool), one column per class probability; the summary).

    Raises:
        GnnError: empty graph, no study pairs, missing or incompatible checkpoint, hash mismatch.
    """
    from gnn.training import check_compatible, load_checkpoint, predict_proba

    t0 = time.perf_counter()
    model, meta = load_checkpoint(resolve_checkpoint(checkpoint))
    graph = read_graph_tables(store)
    tables = with_embeddings(graph.tables, embeddings)
    data = build(tables, graph.content_hash, meta["split_seed"], use_embeddings=meta["embedding_dim"] > 0,
                 embedding_stats=meta.get("embedding_stats"))
    check_compatible(meta, data, check_hash=not allow_new_data)
    out, p = prediction_frame(data, *predict_proba(model, data, device=device), tables)
    is_stated = out["stated"].to_numpy()
    written = 0
    if write_back:
        written = _write_back(store, out[~is_stated], p[~is_stated], meta, data.content_hash,
                              sorted(set(data.pairs["patient_id"])))
    summary = PredictionSummary(meta["model_version"], data.content_hash, int(len(out)), written,
                                int(is_stated.sum()), int(out["patient_id"].nunique()),
                                round(time.perf_counter() - t0, 2))
    return out, summary


def prediction_frame(data: ProgressionData, ids: np.ndarray, proba: np.ndarray, tables: dict[str, Any],
                     ) -> tuple[pd.DataFrame, np.ndarray]:
    """The scored pairs that :func:`predict` reports: those present or uncertain in either study
    (:func:`pair_present`), in pair order.

    Args:
        data: the dataset the pairs come from.
        ids: ``[N]`` scored pair ids (rows of ``data.pairs``).
        proba: ``[N, 5]`` their class probabilities (:func:`gnn.training.predict_proba`).
        tables: the snapshot tables ``data`` was built from (their ``labels`` say which pairs are stated).

    Returns:
        (one row per kept pair: patient_id, study_id, prior_study_id, anatomy, finding, change (the most
        probable class), probability, one ``p_<class>`` column per class, stated (a change is stated for the
        pair); the kept rows' probabilities ``[M, 5]``).
    """
    order = np.argsort(ids)
    ids, proba = ids[order], proba[order]
    pairs = data.pairs.iloc[ids].reset_index(drop=True)
    keep = pair_present(data)[ids]
    out = pairs.loc[keep, ["patient_id", "study_id", "prior_study_id", "anatomy", "finding"]].copy()
    p = proba[keep]
    out["change"] = [CLASSES[i] for i in p.argmax(1)]
    out["probability"] = p.max(1).astype(float)
    for i, c in enumerate(CLASSES):
        out[f"p_{c.replace(' ', '_')}"] = p[:, i].astype(float)
    out = out.reset_index(drop=True)
    stated_keys = _stated_keys(tables)
    out["stated"] = np.array([k in stated_keys for k in zip(out["study_id"], out["prior_study_id"], out["anatomy"],
                                                            out["finding"], strict=True)], dtype=bool)
    return out, p


def _stated_keys(tables: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    lab = tables["labels"]
    rows = lab.to_pylist() if hasattr(lab, "to_pylist") else lab
    return {(r["study_id"], r["prior_study_id"], r["anatomy"], r["finding"]) for r in rows}


def _write_back(store: GraphStore, rows: pd.DataFrame, proba: np.ndarray, meta: dict[str, Any], content_hash: str,
                patients: list[str]) -> int:
    records = rows.to_dict("records")
    by_patient: dict[str, list[dict[str, Any]]] = {}
    for r, pr in zip(records, proba, strict=True):
        by_patient.setdefault(r["patient_id"], []).append({
            "study_id": r["study_id"], "prior_study_id": r["prior_study_id"], "anatomy": r["anatomy"],
            "finding": r["finding"], "change": r["change"], "probability": float(r["probability"]),
            "classes": list(CLASSES), "probabilities": [round(float(x), 5) for x in pr],
            "model_version": meta["model_version"], "snapshot_hash": content_hash})
    written = 0
    for start in range(0, len(patients), WRITE_BATCH_PATIENTS):
        chunk = patients[start:start + WRITE_BATCH_PATIENTS]
        batch = [row for pid in chunk for row in by_patient.get(pid, [])]

        written += store.replace_gnn_progressions(chunk, batch)
    return written


def write_predictions(frame: pd.DataFrame, path: Path) -> Path:
    """Save a prediction table as parquet (or CSV when the name ends in .csv)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        import pyarrow as pa

        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return path
