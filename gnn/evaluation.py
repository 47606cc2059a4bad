"""Evaluation of the GNN and every baseline on the same test patients, over several seeds.

Metric definitions follow scikit-learn and the progression literature, so figures compare with
published ones: per class precision, recall and F1; macro-F1 over every class of the task
(:func:`gnn.metrics.macro_f1`, also what training stops on); accuracy; one-vs-rest AUROC per class
and their unweighted mean. Figures are given for the five classes of the task and for Chest ImaGenome's
three comparison classes (improved / worsened / no change; new counts as worsened and resolved as
improved, summing their probabilities), the setting in which image-based models reach 0.35-0.47
macro-F1 (CheXRelNet 0.389, CheXRelFormer 0.354, DiPro 0.453, as reproduced in arXiv 2510.11112).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gnn.baselines import BASELINES
from gnn.dataset import CLASSES, CLASSES_3, TO_3, ProgressionData
from gnn.errors import GnnError
from gnn.metrics import macro_f1, missing_classes
from gnn.training import TrainConfig, predict_proba, train_model


def classification_metrics(y: np.ndarray, proba: np.ndarray, classes: tuple[str, ...] = CLASSES,
                           split: str = "test") -> dict[str, Any]:
    """Metrics of probabilities ``proba`` ``[N, C]`` against labels ``y`` ``[N]`` (ints in ``range(C)``).

    Returns:
        ``{"per_class": {name: {precision, recall, f1, support, auroc}}, "macro_f1", "accuracy",
        "macro_auroc", "confusion" (C x C list, rows = truth), "n", "missing_classes"}``; AUROC is NaN for a
        class with no positive or no negative test pair.

    Warns:
        MissingClassWarning: ``y`` lacks a class (see :func:`gnn.metrics.macro_f1`).
    """
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support, roc_auc_score

    pred = proba.argmax(1)
    labels = list(range(len(classes)))
    p, r, f, s = precision_recall_fscore_support(y, pred, labels=labels, zero_division=0)
    per_class = {}
    aucs = []
    for c, name in enumerate(classes):
        pos = y == c
        auc = float(roc_auc_score(pos, proba[:, c])) if 0 < pos.sum() < len(y) else float("nan")
        if not math.isnan(auc):
            aucs.append(auc)
        per_class[name] = {"precision": float(p[c]), "recall": float(r[c]), "f1": float(f[c]), "support": int(s[c]),
                           "auroc": auc}
    return {
        "per_class": per_class,
        "macro_f1": macro_f1(y, pred, classes, split),
        "accuracy": float((pred == y).mean()) if len(y) else 0.0,
        "macro_auroc": float(np.mean(aucs)) if aucs else float("nan"),
        "confusion": confusion_matrix(y, pred, labels=labels).tolist(),
        "n": int(len(y)),
        "missing_classes": missing_classes(y, classes),
    }


def to_three(proba: np.ndarray) -> np.ndarray:
    """``[N, 5]`` -> ``[N, 3]`` probabilities in CLASSES_3 order (new -> worsened, resolved -> improved)."""
    out = np.zeros((len(proba), len(CLASSES_3)), proba.dtype)
    for c5, c3 in enumerate(TO_3):
        out[:, c3] += proba[:, c5]
    return out


def score(y: np.ndarray, proba: np.ndarray) -> dict[str, Any]:
    """Five-class and three-class metrics of one model."""
    return {"five_class": classification_metrics(y, proba, CLASSES),
            "three_class": classification_metrics(TO_3[y], to_three(proba), CLASSES_3)}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for setting in ("five_class", "three_class"):
        block = {}
        for key in ("macro_f1", "accuracy", "macro_auroc"):
            vals = np.array([r[setting][key] for r in runs], dtype=float)
            block[key] = {"mean": float(np.nanmean(vals)), "sd": float(np.nanstd(vals, ddof=1)) if len(vals) > 1 else 0.0,
                          "values": vals.tolist()}
        per = {}
        names = CLASSES if setting == "five_class" else CLASSES_3
        for name in names:
            per[name] = {k: float(np.nanmean([r[setting]["per_class"][name][k] for r in runs]))
                         for k in ("precision", "recall", "f1", "auroc")}
            per[name]["support"] = runs[0][setting]["per_class"][name]["support"]
        block["per_class"] = per
        block["confusion"] = np.sum([r[setting]["confusion"] for r in runs], axis=0).tolist()
        out[setting] = block
    return out


def evaluate(data: ProgressionData, config: TrainConfig, seeds: tuple[int, ...] = (0, 1, 2), device: str = "cpu",
             log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train the GNN once per seed and fit every baseline per seed; score all on the same test pairs
    (labelled pairs of the test patients of ``data``'s split, which does not depend on the seed).

    Returns:
        A JSON-ready report: ``models`` -> name -> ``{"runs": [per seed scores], "summary": mean/sd}``,
        plus ``test_pairs``, ``test_patients``, ``seeds``, ``config``, ``snapshot_hash``, ``gap``
        (GNN minus the best baseline, five-class macro-F1 means), ``seconds``.

    Raises:
        GnnError: fewer than one seed, or no labelled test pairs.
    """
    if not seeds:
        raise GnnError("evaluate needs at least one seed")
    t0 = time.perf_counter()
    test_rows = data.labelled("test")
    if len(test_rows) == 0:
        raise GnnError("no labelled pairs among the test patients: the graph is too small or states no changes")
    train_rows = data.labelled("train")
    y = data.pairs["label"].to_numpy()
    y_test = y[test_rows]
    test_samples = data.sample_indices("test")
    models: dict[str, dict[str, Any]] = {"gnn": {"runs": []}, **{name: {"runs": []} for name in BASELINES}}
    extra: dict[str, Any] = {"gnn_best_epochs": [], "gnn_epoch_seconds": []}
    for seed in seeds:
        cfg = config.model_copy(update={"seed": seed})
        result = train_model(data, cfg, device=device)
        ids, proba = predict_proba(result.model, data, test_samples, device)
        order = {pid: i for i, pid in enumerate(ids.tolist())}
        gnn_proba = proba[[order[r] for r in test_rows]]
        models["gnn"]["runs"].append(score(y_test, gnn_proba))
        extra["gnn_best_epochs"].append(result.best_epoch)
        extra["gnn_epoch_seconds"].append(result.epoch_seconds)
        for name, cls in BASELINES.items():
            model = cls(seed=seed) if name == "pair_gbt" else cls()
            model.fit(data, train_rows)
            models[name]["runs"].append(score(y_test, model.predict_proba(data, test_rows)))
        if log:
            log(f"seed {seed}: " + ", ".join(f"{n} {m['runs'][-1]['five_class']['macro_f1']:.3f}"
                                             for n, m in models.items()))
    for m in models.values():
        m["summary"] = _summary(m["runs"])
    best_baseline = max((n for n in models if n != "gnn"),
                        key=lambda n: models[n]["summary"]["five_class"]["macro_f1"]["mean"])
    gap = models["gnn"]["summary"]["five_class"]["macro_f1"]["mean"] - \
        models[best_baseline]["summary"]["five_class"]["macro_f1"]["mean"]
    return {
        "snapshot_hash": data.content_hash, "seeds": list(seeds), "config": config.model_dump(),
        "test_pairs": int(len(test_rows)), "test_patients": int(data.pairs.iloc[test_rows]["patient_id"].nunique()),
        "train_pairs": int(len(train_rows)), "classes": list(CLASSES), "classes_three": list(CLASSES_3),
        "models": models, "best_baseline": best_baseline, "gap_macro_f1": gap, **extra,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def format_table(report: dict[str, Any]) -> str:
    """The report as text: per model mean +- sd of macro-F1, accuracy, AUROC (5 and 3 classes), then
    per-class precision / recall / F1 / AUROC (five classes, means over seeds)."""
    lines = [f"test: {report['test_pairs']} labelled pairs of {report['test_patients']} patients; "
             f"seeds {report['seeds']}; snapshot {report['snapshot_hash'][:12]}",
             f"{'model':<15}{'macro-F1 (5)':>18}{'accuracy (5)':>18}{'AUROC (5)':>18}{'macro-F1 (3)':>18}{'AUROC (3)':>18}"]
    for name, m in report["models"].items():
        s5, s3 = m["summary"]["five_class"], m["summary"]["three_class"]

        def ms(block: dict, key: str) -> str:
            return f"{block[key]['mean']:.3f} ± {block[key]['sd']:.3f}"

        lines.append(f"{name:<15}{ms(s5, 'macro_f1'):>18}{ms(s5, 'accuracy'):>18}{ms(s5, 'macro_auroc'):>18}"
                     f"{ms(s3, 'macro_f1'):>18}{ms(s3, 'macro_auroc'):>18}")
    lines.append(f"GNN - best baseline ({report['best_baseline']}): {100 * report['gap_macro_f1']:+.1f} macro-F1 points")
    lines.append("")
    lines.append(f"{'per class (5)':<15}" + "".join(f"{c:>22}" for c in report["classes"]))
    for name, m in report["models"].items():
        per = m["summary"]["five_class"]["per_class"]
        lines.append(f"{name:<15}" + "".join(
            f"{per[c]['precision']:>7.2f}/{per[c]['recall']:.2f}/{per[c]['f1']:.2f}/{per[c]['auroc']:.2f}".rjust(22)
            for c in report["classes"]))
    lines.append(f"{'support':<15}" + "".join(f"{report['models']['gnn']['summary']['five_class']['per_class'][c]['support']:>22}"
                                              for c in report["classes"]))
    lines.append("(cells: precision/recall/F1/AUROC)")
    return "\n".join(lines)


def write_report(report: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    """Write ``evaluation.json``, ``evaluation.txt`` and ``confusion_matrix.png`` (GNN and best baseline,
    five classes, summed over seeds) into ``out_dir``; returns their paths."""
    # a Figure without pyplot draws off screen without switching the process's backend (a notebook's
    # inline plots keep working after this)
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "evaluation.json", "text": out / "evaluation.txt", "plot": out / "confusion_matrix.png"}
    paths["json"].write_text(json.dumps(report, indent=1, default=lambda v: None))
    paths["text"].write_text(format_table(report) + "\n")
    names = ["gnn", report["best_baseline"]]
    fig = Figure(figsize=(6 * len(names), 5))
    axes = fig.subplots(1, len(names))
    for ax, name in zip(axes, names, strict=True):
        cm = np.array(report["models"][name]["summary"]["five_class"]["confusion"], dtype=float)
        norm = cm / np.maximum(cm.sum(1, keepdims=True), 1)
        ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks(range(len(CLASSES)), CLASSES, rotation=35, ha="right")
        ax.set_yticks(range(len(CLASSES)), CLASSES)
        ax.set_xlabel("predicted")
        ax.set_ylabel("stated")
        f1 = report["models"][name]["summary"]["five_class"]["macro_f1"]
        ax.set_title(f"{name}: macro-F1 {f1['mean']:.3f} ± {f1['sd']:.3f}")
        for i in range(len(CLASSES)):
            for j in range(len(CLASSES)):
                ax.text(j, i, f"{int(cm[i, j])}", ha="center", va="center",
                        color="white" if norm[i, j] > 0.5 else "black", fontsize=8)
    fig.tight_layout()
    fig.savefig(paths["plot"], dpi=110)
    return paths
