"""Training: config files, the training loop with early stopping on validation macro-F1, checkpoints.

A checkpoint (``torch.save`` of a dict) records the weights, the config, the input layout (feature
names, anatomy and finding vocabularies, embedding size), the snapshot's content hash, the validation
metrics and a model version. :func:`load_checkpoint` refuses a file that is not one; :func:`check_compatible`
refuses data whose layout differs and, unless told otherwise, data whose snapshot hash differs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

import numpy as np
import torch
from pydantic import ConfigDict, Field, field_validator, model_validator
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from gnn.config_file import ConfigFile
from gnn.dataset import CLASSES, LABEL_EDGE, ProgressionData
from gnn.errors import GnnError
from gnn.metrics import macro_f1
from gnn.models import Conv, ProgressionGNN

CHECKPOINT_KIND = "cxrkg-progression-gnn"
LrSchedule = Literal["constant", "cosine"]

# The tuned configuration (gnn/README.md), shipped inside the package so an installed cxrkg finds it.
DEFAULT_CONFIG = Path(__file__).resolve().parent / "configs" / "gnn.yaml"


class TrainConfig(ConfigFile):
    """Hyper-parameters of one training run (a YAML or JSON file; unknown keys are refused; validated
    by pydantic: integers stay integers, ranges and choices are checked).

    Attributes:
        model: convolution, ``sage`` / ``gat`` / ``hgt``.
        hidden: hidden size. layers: message-passing rounds. heads: attention heads (gat, hgt).
        lr: Adam learning rate. weight_decay: L2 penalty. dropout: dropout probability.
        epochs: maximum epochs. patience: epochs without a better validation macro-F1 before stopping.
        batch_size: study pairs per batch. seed: torch / shuffling seed.
        split_seed: seed of the patient split (keep it fixed to compare runs on the same test patients).
        use_embeddings: use region embeddings when the snapshot has them.
        class_weights: weight the loss by inverse square-root class frequency (helps macro-F1).
        pair_context: classify each pair with the pooled changes of the study pair's other pairs
            (see :mod:`gnn.models`); checkpoints from before the option have it off.
        lr_schedule: ``constant``, or ``cosine`` (the learning rate falls along a half cosine to 0
            over ``epochs``; Loshchilov & Hutter, ICLR 2017, without restarts).
        ema_decay: in [0, 1); above 0, validation and the checkpoint use an exponential moving
            average of the weights, updated after every optimiser step with this decay (Polyak &
            Juditsky 1992; ``torch.optim.swa_utils.AveragedModel``); 0 uses the raw weights.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    model: Conv = "sage"
    hidden: int = Field(64, ge=1)
    layers: int = Field(3, ge=1)
    heads: int = Field(2, ge=1)
    lr: float = Field(3e-3, gt=0)
    weight_decay: float = Field(1e-3, ge=0)
    dropout: float = Field(0.3, ge=0, lt=1)
    epochs: int = Field(40, ge=1)
    patience: int = Field(8, ge=1)
    batch_size: int = Field(32, ge=1)
    seed: int = 0
    split_seed: int = 0
    use_embeddings: bool = True
    class_weights: bool = True
    pair_context: bool = True
    lr_schedule: LrSchedule = "cosine"
    ema_decay: float = Field(0.99, ge=0, lt=1)

    @field_validator("lr", "weight_decay", "dropout", "ema_decay", mode="before")
    @classmethod
    def _int_is_a_number(cls, value: Any) -> Any:
        # YAML reads "lr: 1" as an int; strict mode would refuse it for a float field
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _hgt_heads_divide_hidden(self) -> "TrainConfig":
        if self.model == "hgt" and self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} must be divisible by heads {self.heads} for hgt")
        return self


@dataclass
class TrainResult:
    """A trained model and how it got there.

    Attributes:
        model: the weights of the best validation epoch (in eval mode, on CPU).
        best_epoch: 1-based epoch of the best validation macro-F1; val_macro_f1 its value.
        history: per epoch: loss, val_macro_f1, seconds.
        epoch_seconds: mean wall time of one training epoch.
    """

    model: ProgressionGNN
    config: TrainConfig
    best_epoch: int
    val_macro_f1: float
    history: list[dict[str, float]] = field(default_factory=list)
    epoch_seconds: float = 0.0
    device: str = "cpu"


def resolve_device(device: str) -> torch.device:
    """``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (CUDA when available).

    Raises:
        GnnError: CUDA requested but not available, or an unknown device string.
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise GnnError(f"--device {device!r}: {exc}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise GnnError(f"--device {device}: CUDA is not available on this machine (use --device cpu)")
    return dev


def in_dims(data: ProgressionData) -> dict[str, int]:
    """Input widths of the model's node types for ``data``: observation features, anatomy and finding
    vocabulary sizes, study features (2, plus the embedding and its flag when there are embeddings)."""
    return {"observation": data.num_features, "anatomy": len(data.vocab.anatomy),
            "finding": len(data.vocab.findings), "study": 2 + (data.embedding_dim + 1 if data.embedding_dim else 0)}


def build_model(data: ProgressionData | dict[str, int], config: TrainConfig) -> ProgressionGNN:
    """The model ``config`` describes, for ``data``'s input sizes (or given ``in_dims``)."""
    dims = data if isinstance(data, dict) else in_dims(data)
    return ProgressionGNN(dims, hidden=config.hidden, layers=config.layers, conv=config.model,
                          dropout=config.dropout, heads=config.heads, pair_context=config.pair_context)


def _loader(data: ProgressionData, indices: list[int], batch_size: int, shuffle: bool, seed: int):
    from torch_geometric.loader import DataLoader

    g = torch.Generator()
    g.manual_seed(seed)
    return DataLoader([data.samples[i] for i in indices], batch_size=batch_size, shuffle=shuffle, generator=g)


@torch.no_grad()
def predict_proba(model: nn.Module, data: ProgressionData, sample_indices: list[int] | None = None,
                  device: str | torch.device = "cpu", batch_size: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Class probabilities for every pair of the given samples.

    Returns:
        (pair ids ``[N]`` (rows of ``data.pairs``), probabilities ``[N, 5]`` in CLASSES order).
    """
    dev = torch.device(device)
    model = model.to(dev).eval()
    idx = list(range(len(data.samples))) if sample_indices is None else list(sample_indices)
    ids, probs = [], []
    for batch in _loader(data, idx, batch_size, False, 0):
        batch = batch.to(dev)
        probs.append(torch.softmax(model(batch), dim=-1).cpu().numpy())
        ids.append(batch[LABEL_EDGE].pair_id.cpu().numpy())
    if not ids:
        return np.zeros(0, np.int64), np.zeros((0, len(CLASSES)), np.float32)
    return np.concatenate(ids), np.concatenate(probs)


def train_model(data: ProgressionData, config: TrainConfig, device: str = "cpu",
                log: Callable[[str], None] | None = None) -> TrainResult:
    """Train on the ``train`` patients, early-stop on the ``val`` patients' macro-F1 (5 classes).

    Each epoch runs every training study pair once (batches of ``config.batch_size``); the loss is
    cross-entropy over the labelled pairs, class-weighted by 1/sqrt(frequency) when configured.
    The same code runs on CPU and CUDA.

    Raises:
        GnnError: no labelled training or validation pairs, or an unavailable device.
    """
    dev = resolve_device(device)
    torch.manual_seed(config.seed)
    np.random.seed(config.seed)
    train_idx, val_idx = _training_samples(data)
    loss_fn = nn.CrossEntropyLoss(weight=_class_weights(data, config, dev), ignore_index=-1)
    run = _Optimisation.start(data, config, dev)
    best = _BestEpoch(config.patience)
    history: list[dict[str, float]] = []
    for epoch in range(1, config.epochs + 1):
        t0 = time.perf_counter()
        loss = run.epoch(_loader(data, train_idx, config.batch_size, True, config.seed * 1000 + epoch), loss_fn, dev)
        seconds = time.perf_counter() - t0
        f1 = _val_macro_f1(run.scored, data, val_idx, dev)
        history.append({"epoch": epoch, "loss": loss, "val_macro_f1": f1, "seconds": seconds})
        if log:
            log(f"epoch {epoch:3d}  loss {loss:.4f}  val macro-F1 {f1:.4f}  {seconds:.1f} s")
        if best.stop_after(epoch, f1, run.scored):
            break
    model = build_model(data, config)
    assert best.state is not None, "the first epoch's macro-F1 (>= 0) always beats the initial -1"
    model.load_state_dict(best.state)
    model.eval()
    return TrainResult(model, config, best.epoch, best.f1, history,
                       float(np.mean([h["seconds"] for h in history])), str(dev))


def _training_samples(data: ProgressionData) -> tuple[list[int], list[int]]:
    """The training and validation samples with a labelled pair.

    Raises:
        GnnError: either set is empty.
    """
    train_idx = data.sample_indices("train")
    val_idx = data.sample_indices("val")
    if not train_idx or not val_idx:
        raise GnnError(f"need labelled pairs from training and validation patients, have {len(train_idx)} / "
                       f"{len(val_idx)} study pairs: the graph is too small or states no changes")
    return train_idx, val_idx


def _class_weights(data: ProgressionData, config: TrainConfig, dev: torch.device) -> torch.Tensor | None:
    """``[5]`` loss weights 1/sqrt(count of the class among training labels), scaled to mean 1 over the
    classes that occur (0 for the others); None when ``config.class_weights`` is off."""
    if not config.class_weights:
        return None
    y_train = data.pairs["label"].to_numpy()[data.labelled("train")]
    counts = np.bincount(y_train, minlength=len(CLASSES)).astype(np.float64)
    w = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1.0)), 0.0)
    return torch.tensor(w / w[counts > 0].mean(), dtype=torch.float32, device=dev)


@dataclass
class _Optimisation:
    """The model in training and what updates it: Adam, the learning-rate schedule (None: constant)
    and the weight average (None when ``ema_decay`` is 0)."""

    model: ProgressionGNN
    opt: torch.optim.Optimizer
    schedule: torch.optim.lr_scheduler.LRScheduler | None
    averaged: AveragedModel | None

    @classmethod
    def start(cls, data: ProgressionData, config: TrainConfig, dev: torch.device) -> "_Optimisation":
        model = build_model(data, config).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        schedule = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, config.epochs)
                    if config.lr_schedule == "cosine" else None)
        averaged = (AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(config.ema_decay))
                    if config.ema_decay > 0 else None)
        return cls(model, opt, schedule, averaged)

    @property
    def scored(self) -> nn.Module:
        """The weights validation scores and the checkpoint keeps: the average when there is one."""
        return self.averaged.module if self.averaged is not None else self.model

    def epoch(self, batches: Iterable, loss_fn: nn.Module, dev: torch.device) -> float:
        """One pass over ``batches`` (batches without a labelled pair are skipped); returns the mean loss
        per labelled pair."""
        self.model.train()
        total, n = 0.0, 0
        for batch in batches:
            batch = batch.to(dev)
            y = batch[LABEL_EDGE].edge_label
            if not bool((y >= 0).any()):
                continue
            self.opt.zero_grad()
            loss = loss_fn(self.model(batch), y)
            loss.backward()
            self.opt.step()
            if self.averaged is not None:
                self.averaged.update_parameters(self.model)
            total += loss.item() * int((y >= 0).sum())
            n += int((y >= 0).sum())
        if self.schedule is not None:
            self.schedule.step()
        return total / max(n, 1)


def _val_macro_f1(model: nn.Module, data: ProgressionData, val_idx: list[int], dev: torch.device) -> float:
    """Macro-F1 of ``model`` over the labelled pairs of the validation samples."""
    ids, proba = predict_proba(model, data, val_idx, dev)
    keep = np.isin(ids, data.labelled("val"))
    return macro_f1(data.pairs["label"].to_numpy()[ids[keep]], proba[keep].argmax(1), CLASSES, "validation")


@dataclass
class _BestEpoch:
    """Early stopping on validation macro-F1: the best score, its 1-based epoch and a CPU copy of its
    weights, and the epochs since it."""

    patience: int
    f1: float = -1.0
    epoch: int = 0
    state: dict[str, torch.Tensor] | None = None
    bad: int = 0

    def stop_after(self, epoch: int, f1: float, scored: nn.Module) -> bool:
        """Record ``epoch``'s score; True when ``patience`` epochs in a row did not improve on the best."""
        if f1 > self.f1:
            self.f1, self.epoch, self.bad = f1, epoch, 0
            self.state = {k: v.detach().cpu().clone() for k, v in scored.state_dict().items()}
            return False
        self.bad += 1
        return self.bad >= self.patience


def model_version(result: TrainResult, content_hash: str) -> str:
    """``<conv>-h<hidden>l<layers>-<snapshot hash[:8]>-<UTC time>``: names a trained model."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    c = result.config
    return f"{c.model}-h{c.hidden}l{c.layers}-s{c.seed}-{content_hash[:8]}-{stamp}"


def save_checkpoint(path: Path, result: TrainResult, data: ProgressionData, version: str | None = None,
                    metrics: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the checkpoint (weights, config, input layout, snapshot hash, metrics); returns its metadata."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "kind": CHECKPOINT_KIND, "model_version": version or model_version(result, data.content_hash),
        "config": result.config.model_dump(), "in_dims": in_dims(data), "feature_names": data.feature_names,
        "anatomy": list(data.vocab.anatomy), "findings": list(data.vocab.findings),
        "embedding_dim": data.embedding_dim, "embedding_stats": data.embedding_stats, "classes": list(CLASSES), "snapshot_hash": data.content_hash,
        "split_seed": data.split_seed, "best_epoch": result.best_epoch, "val_macro_f1": result.val_macro_f1,
        "history": result.history, "metrics": metrics or {}, "device": result.device,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    torch.save({"meta": meta, "state_dict": result.model.state_dict()}, path)
    return meta


def load_checkpoint(path: Path) -> tuple[ProgressionGNN, dict[str, Any]]:
    """Load a checkpoint onto the CPU.

    Raises:
        GnnError: missing file, not a cxrkg progression checkpoint, or weights that do not fit.
    """
    path = Path(path)
    if not path.exists():
        raise GnnError(f"{path}: no such checkpoint; train one with `cxrkg train`")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a corrupt or foreign file
        raise GnnError(f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from exc
    if not isinstance(blob, dict) or blob.get("meta", {}).get("kind") != CHECKPOINT_KIND:
        raise GnnError(f"{path}: not a cxrkg progression-model checkpoint")
    meta = blob["meta"]
    cfg = TrainConfig.from_dict({"pair_context": False, **meta["config"]})
    model = build_model(meta["in_dims"], cfg)
    try:
        model.load_state_dict(blob["state_dict"])
    except RuntimeError as exc:
        raise GnnError(f"{path}: weights do not fit the model they claim to be: {exc}") from exc
    model.eval()
    return model, meta


def check_compatible(meta: dict[str, Any], data: ProgressionData, check_hash: bool = True) -> None:
    """Refuse data the checkpoint cannot be applied to.

    Raises:
        GnnError: the input layout differs (feature names, vocabularies, embedding size), or
            ``check_hash`` and the data's snapshot hash is not the checkpoint's.
    """
    if meta["feature_names"] != data.feature_names:
        have, want = data.embedding_dim, meta["embedding_dim"]
        hint = (f" (the checkpoint was trained {'with' if want else 'without'} {want or ''} region embeddings, "
                f"the data has {have or 'none'})") if have != want else ""
        raise GnnError(f"checkpoint {meta['model_version']} expects other observation features{hint}")
    if meta["anatomy"] != list(data.vocab.anatomy) or meta["findings"] != list(data.vocab.findings):
        raise GnnError(f"checkpoint {meta['model_version']} was trained on another anatomy/finding vocabulary; "
                       "retrain it on this graph")
    if check_hash and meta["snapshot_hash"] != data.content_hash:
        raise GnnError(f"checkpoint {meta['model_version']} was trained on snapshot {meta['snapshot_hash'][:12]}, "
                       f"but the graph now hashes to {data.content_hash[:12]}: export and retrain "
                       "(`cxrkg export snapshot`, `cxrkg train`), or accept the difference with --allow-new-data")
