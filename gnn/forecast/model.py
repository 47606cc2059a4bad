"""A graph forecaster of the next study: one graph per study pair whose nodes are the forecast findings,
each carrying its own history features (:data:`gnn.forecast.rows.FEATURES`) and a learned finding embedding,
joined to every other finding so that attention can learn which findings' histories predict which (the
co-occurrence a per-finding model cannot see). On a complete graph, graph attention is dense
self-attention over the nodes, so two graph-transformer layers (Dwivedi and Bresson, "A Generalization of
Transformer Networks to Graphs", AAAI DLG workshop 2021: attention restricted to a graph's edges, here all
pairs of findings; ``torch.nn.TransformerEncoderLayer``) run on dense (pairs, findings, hidden) tensors,
which on a CPU is far faster than PyG's sparse ``GATv2Conv`` over the same 272 edges per pair (one NIH epoch
took over five minutes sparse). A linear read-out per node gives the logit that the next study states the
finding present.

Inputs are standardised with the training rows' mean and standard deviation (a missing age or sex is 0
after standardising, with an indicator). Training: binary cross-entropy, Adam, early stopping on the
validation patients' mean of onset and resolution AUROC.

The same network fitted to another target of the same rows, whether the next study mentions the finding at
all (``next_mentioned``, early-stopped on its validation AUROC), is the mention model that CXRTrek stage 6's
"not mentioned" answer needs (:mod:`gnn.forecast.stage6`); a saved forecaster may carry it and the stage 6
rule chosen on the validation patients (:func:`with_stage6`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from pydantic import ConfigDict, Field, field_validator, model_validator
from sklearn.metrics import roc_auc_score
from torch import Tensor, nn

from gnn.config_file import ConfigFile
from gnn.errors import GnnError
from gnn.forecast.evaluation import Subsets
from gnn.forecast.rows import ForecastTable
from gnn.forecast.stage6 import (
    Stage6Rule,
    against_most_common,
    asked,
    asked_part,
    choose_rule,
    most_common,
    outcomes,
    unless_clearly_better,
)
from graph.bootstrap import DRAWS

GRAPH_FORECASTER = "graph (attention over findings)"
PRESENCE, MENTION = "next_present", "next_mentioned"  # the targets a network is fitted to (rows' columns)
# The shipped configuration (its defaults), inside the package so an installed cxrkg finds it.
DEFAULT_FORECAST_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "forecast.yaml"


class ForecastGnnConfig(ConfigFile):
    """Hyperparameters (defaults chosen on the validation patients, never on the test ones); a YAML file
    such as ``gnn/configs/forecast.yaml`` (``cxrkg forecast --config``), unknown keys refused.

    Attributes:
        hidden: node width. heads: attention heads (must divide ``hidden``). layers: attention layers.
        dropout: of the attention layers. epochs: at most; patience: epochs without a better validation
        mean of onset and resolution AUROC before stopping. batch_pairs: study pairs per step. lr: Adam's.
        seed: torch and shuffling seed. attend_across: attention across findings; off, each finding
        attends to itself only (a per-finding network; the ablation's "without other findings").
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    hidden: int = Field(64, ge=1)
    heads: int = Field(2, ge=1)
    layers: int = Field(2, ge=1)
    dropout: float = Field(0.1, ge=0, lt=1)
    epochs: int = Field(12, ge=1)
    patience: int = Field(3, ge=1)
    batch_pairs: int = Field(512, ge=1)
    lr: float = Field(2e-3, gt=0)
    seed: int = 0
    attend_across: bool = True

    @field_validator("lr", "dropout", mode="before")
    @classmethod
    def _int_is_a_number(cls, value: Any) -> Any:
        # YAML reads "lr: 1" as an int; strict mode would refuse it for a float field
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _heads_divide_hidden(self) -> "ForecastGnnConfig":
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} must be divisible by heads {self.heads}")
        return self


class FindingGraphNet(nn.Module):
    """``forward(x)``: x float (pairs, findings, features) -> logits (pairs, findings). With
    ``attend_across`` off, an attention mask lets each finding attend to itself only."""

    def __init__(self, n_findings: int, n_features: int, hidden: int, heads: int, layers: int = 2,
                 dropout: float = 0.1, attend_across: bool = True):
        super().__init__()
        self.embed = nn.Embedding(n_findings, hidden)
        self.lift = nn.Linear(n_features, hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, dim_feedforward=2 * hidden, dropout=dropout,
                                           batch_first=True)
        self.attend = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.out = nn.Linear(hidden, 1)
        # True = may not attend; None keeps the complete graph
        self.register_buffer("mask", None if attend_across else ~torch.eye(n_findings, dtype=torch.bool))

    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.lift(x) + self.embed.weight)
        return self.out(self.attend(h, mask=self.mask)).squeeze(-1)


class _Inputs:
    """Standardisation fitted on the training rows; reshapes (pair, finding) rows to (pairs, findings, f)."""

    def __init__(self, mean: np.ndarray, std: np.ndarray, n_findings: int):
        self.mean, self.std, self.n_findings = mean, std, n_findings

    @classmethod
    def fit(cls, x_train: np.ndarray, n_findings: int) -> "_Inputs":
        values = x_train[:, :-1]
        return cls(np.nanmean(values, axis=0), np.nanstd(values, axis=0) + 1e-6, n_findings)

    def __call__(self, x: np.ndarray) -> Tensor:
        values = (x[:, :-1] - self.mean) / self.std
        missing = np.isnan(values).any(axis=1, keepdims=True).astype(np.float32)
        values = np.nan_to_num(values, nan=0.0).astype(np.float32)
        out = np.concatenate([values, missing], axis=1)
        return torch.from_numpy(out.reshape(-1, self.n_findings, out.shape[1]))


FORECASTER_KIND = "cxrkg-next-study-forecaster"


@dataclass
class TrainedGraphForecaster:
    """A fitted graph forecaster: ``forecaster(x)`` -> probability that the next study states the finding
    present, one per row of ``x`` (rows in (pair, finding) order over exactly :attr:`findings`).

    Attributes:
        history: per epoch: epoch, train_loss (mean binary cross-entropy), val_onset_auroc,
            val_resolution_auroc (the learning curve). model_version: set when saved or loaded.
        snapshot_hash: the content hash of the snapshot it was fitted on (when saved with one).
        mention: the mention model fitted on the same rows (``next_mentioned``), or None.
        stage6: the stage 6 rule chosen on the validation patients, or None (then :class:`Stage6Rule`'s
            defaults apply).
    """

    model: FindingGraphNet
    inputs: _Inputs
    findings: list[str]
    config: ForecastGnnConfig
    history: list[dict[str, float]] = field(default_factory=list)
    model_version: str | None = None
    snapshot_hash: str = ""
    mention: "TrainedGraphForecaster | None" = None
    stage6: Stage6Rule | None = None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return _predict(self.model, self.inputs(x))

    def save(self, path: Path, snapshot_hash: str = "") -> Path:
        """Write the weights, config, findings and standardisation (``torch.save`` of a dict)."""
        self.model_version = self.model_version or "forecast-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        self.snapshot_hash = snapshot_hash or self.snapshot_hash
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"kind": FORECASTER_KIND, "state_dict": self.model.state_dict(), "config": self.config.model_dump(),
                    "findings": self.findings, "mean": [float(v) for v in self.inputs.mean],
                    "std": [float(v) for v in self.inputs.std], "n_features": self.model.lift.in_features,
                    "history": [{k: float(v) for k, v in h.items()} for h in self.history],
                    "model_version": self.model_version, "snapshot_hash": self.snapshot_hash,
                    "mention": None if self.mention is None else
                    {"state_dict": self.mention.model.state_dict(),
                     "history": [{k: float(v) for k, v in h.items()} for h in self.mention.history]},
                    "stage6": None if self.stage6 is None else self.stage6.as_dict()}, path)
        return path


def load_forecaster(path: Path) -> TrainedGraphForecaster:
    """Read a file written by :meth:`TrainedGraphForecaster.save`.

    Raises:
        GnnError: unreadable, or not a forecaster file.
    """
    try:
        saved = torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a missing, corrupt or foreign file
        raise GnnError(f"{path}: not a readable next-study forecaster ({type(exc).__name__}: {exc})") from exc
    if not isinstance(saved, dict) or saved.get("kind") != FORECASTER_KIND:
        raise GnnError(f"{path}: not a next-study forecaster (save one with `cxrkg forecast --save-model`)")
    cfg = ForecastGnnConfig.from_dict(saved["config"])
    n_f = len(saved["findings"])

    def network(state_dict: dict) -> FindingGraphNet:
        model = FindingGraphNet(n_f, saved["n_features"], cfg.hidden, cfg.heads, cfg.layers, cfg.dropout,
                                cfg.attend_across)
        model.load_state_dict(state_dict)
        return model.eval()

    inputs = _Inputs(np.asarray(saved["mean"]), np.asarray(saved["std"]), n_f)
    findings = list(saved["findings"])
    mention = saved.get("mention")  # absent from files saved before the mention model
    return TrainedGraphForecaster(
        network(saved["state_dict"]), inputs, findings, cfg, saved["history"], saved["model_version"],
        saved["snapshot_hash"],
        None if mention is None else TrainedGraphForecaster(network(mention["state_dict"]), inputs, findings, cfg,
                                                            mention["history"]),
        None if saved.get("stage6") is None else Stage6Rule(**saved["stage6"]))


def gnn_forecaster(config: ForecastGnnConfig = ForecastGnnConfig(),
                   log: Callable[[str], None] = lambda _: None) -> Callable[[ForecastTable], TrainedGraphForecaster]:
    """A forecaster for :func:`gnn.forecast.report.evaluate_forecasters`: trains on the table's training
    patients (early-stopped on its validation patients), returns the fitted forecaster."""
    def make(table: ForecastTable) -> TrainedGraphForecaster:
        return _train(table, config, log)
    return make


def with_stage6(forecaster: TrainedGraphForecaster, table: ForecastTable, log: Callable[[str], None] = lambda _: None,
                bootstrap: int = DRAWS, seed: int = 0) -> list[dict[str, str]]:
    """Fit the mention model on ``table``'s training rows (the presence model's configuration and
    standardisation) and choose the stage 6 rule on its validation rows that stage 6 asks about
    (:func:`gnn.forecast.stage6.choose_rule`), kept per question type only where it clearly beats the most
    common answer of the training and validation patients there (:func:`gnn.forecast.stage6.unless_clearly_better`);
    both are set on ``forecaster``. Returns the validation figures of
    :func:`gnn.forecast.stage6.against_most_common`; the test rows are not read.

    Raises:
        GnnError: no validation row that stage 6 asks about.
    """
    forecaster.mention = _train(table, forecaster.config, log, target=MENTION)
    rows, x = table.part("val")
    keep = asked(x)  # the networks read whole pairs: forecast every row, then keep those stage 6 asks about
    if not keep.any():
        raise GnnError("no validation patient has a present finding with a next study: no stage 6 rule to choose")
    p, m = forecaster(x)[keep], forecaster.mention(x)[keep]
    rows = rows[keep].reset_index(drop=True)
    gold = outcomes(rows)
    fallback = most_common(np.concatenate([outcomes(asked_part(table, "train")[0]), gold]))
    forecaster.stage6 = unless_clearly_better(choose_rule(p, m, gold), fallback, rows, p, m)
    return against_most_common(rows, p, m, forecaster.stage6, bootstrap, seed)


def _validation_score(target: str, rows: pd.DataFrame) -> Callable[[np.ndarray], dict[str, float]]:
    """The early-stopping figures of a target on the validation rows (NaN where one outcome only)."""
    if target == PRESENCE:
        subsets = Subsets(rows)
        return lambda p: {k: subsets.macro(p)[0][k] for k in ("onset_auroc", "resolution_auroc")}
    y = rows[target].to_numpy()
    return lambda p: {"mention_auroc": float(roc_auc_score(y, p)) if 0 < y.sum() < len(y) else np.nan}


def _train(table: ForecastTable, cfg: ForecastGnnConfig, log: Callable[[str], None],
           target: str = PRESENCE) -> TrainedGraphForecaster:
    torch.manual_seed(cfg.seed)
    n_f = len(table.findings)
    rows_tr, x_tr = table.part("train")
    rows_va, x_va = table.part("val")
    inputs = _Inputs.fit(x_tr, n_f)
    xt, yt = inputs(x_tr), torch.from_numpy(rows_tr[target].to_numpy().reshape(-1, n_f).astype(np.float32))
    xv, val = inputs(x_va), _validation_score(target, rows_va)
    model = FindingGraphNet(n_f, xt.shape[2], cfg.hidden, cfg.heads, cfg.layers, cfg.dropout, cfg.attend_across)
    optimiser = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    loss_fn = nn.BCEWithLogitsLoss()
    best, best_state, waited, history = -1.0, None, 0, []
    generator = torch.Generator().manual_seed(cfg.seed)
    for epoch in range(cfg.epochs):
        model.train()
        losses = []
        for idx in torch.randperm(len(xt), generator=generator).split(cfg.batch_pairs):
            optimiser.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            optimiser.step()
            losses.append(loss.item() * len(idx))
        point = val(_predict(model, xv))
        history.append({"epoch": epoch + 1, "train_loss": sum(losses) / max(len(xt), 1),
                        **{f"val_{k}": v for k, v in point.items()}})
        score = float(np.nanmean(list(point.values()))) if np.isfinite(list(point.values())).any() else np.nan
        log(f"epoch {epoch + 1}{'' if target == PRESENCE else ' (mention model)'}: validation " +
            ", ".join(f"{k.replace('_', ' ').replace('auroc', 'AUROC')} {v:.3f}" for k, v in point.items()))
        if score > best:
            best, best_state, waited = score, {k: v.clone() for k, v in model.state_dict().items()}, 0
        else:
            waited += 1
            if waited >= cfg.patience:
                break
    if best_state is not None:  # None: no epoch had a finite validation AUROC (too few patients)
        model.load_state_dict(best_state)
    return TrainedGraphForecaster(model, inputs, list(table.findings), cfg, history)


@torch.no_grad()
def _predict(model: FindingGraphNet, x: Tensor, batch: int = 4096) -> np.ndarray:
    model.eval()
    return torch.cat([torch.sigmoid(model(part)) for part in x.split(batch)]).reshape(-1).numpy().astype(float)
