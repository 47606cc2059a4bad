"""Scores of CXRTrek-format answers against gold answers, per stage and question type (``cxrkg cxrtrek score``).

Questions are matched by (study id, question text). Metrics:

- yes_no: exact match of the leading ``Yes`` / ``No`` (the demo file's answers may go on with a reason);
- single-choice and multi-choice: exact match of ``answer_list`` as a set (else of the answer text);
- detection: the intersection over union of the first boxes of ``bbox_list`` (mean IoU), a hit at IoU >= 0.5;
- captioning: exact match after lower-casing and collapsing spaces. CXRTrek scores captions with BERTScore
  (``distilroberta-base``, ``CXRTrekReasoner``'s ``ms-swift/myplugins/reward_models.py``), which needs a
  model download; it does not run offline, so exact match stands in and says little about paraphrases.

Only the studies the predictions cover are scored (an answer file of the held-out patients scores those);
in them, a gold question without an answer counts as wrong. 95 % intervals: percentile bootstrap over studies (the
questions of one study are not independent), ``bootstrap`` resamples with ``seed``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

SCORE_COLUMNS = ("stage", "qtype", "metric", "questions", "answered", "score", "ci_low", "ci_high")
_SPACE = re.compile(r"\s+")
_YES_NO = re.compile(r"\s*(yes|no)\b", re.IGNORECASE)


def _items(samples: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for s in samples:
        data = s["data_dict"]["cxrtrek_data"]
        for item in data["content"]:
            out[(str(data["study_id"]), item["question"])] = item
    return out


def iou(a: list[float], b: list[float]) -> float:
    """Intersection over union of two ``[x1, y1, x2, y2]`` boxes (0 when they do not overlap)."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def _norm(text: str) -> str:
    return _SPACE.sub(" ", str(text).strip().lower())


def _yes_no(text: str) -> str | None:
    m = _YES_NO.match(text)
    return m.group(1).lower() if m else None


def item_score(gold: dict[str, Any], pred: dict[str, Any] | None) -> float:
    """One question's score in [0, 1] (see the module docstring); 0 without an answer."""
    if pred is None:
        return 0.0
    qtype = gold["qtype"]
    if qtype == "yes_no":
        want = _yes_no(gold["answer"])
        return float(want is not None and _yes_no(pred.get("answer", "")) == want)
    if qtype.endswith("choice") or "choice-" in qtype:
        if gold.get("answer_list") and pred.get("answer_list"):
            return float(set(pred["answer_list"]) == set(gold["answer_list"]))
        return float(pred.get("answer", "").strip() == gold["answer"].strip())
    if qtype == "detection":
        boxes = pred.get("bbox_list") or []
        return iou(gold["bbox_list"][0], boxes[0]) if boxes and len(boxes[0]) == 4 else 0.0
    return float(_norm(pred.get("answer", "")) == _norm(gold["answer"]))


def score_rows(gold: list[dict[str, Any]], pred: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per gold question of a study the predictions cover: study_id, stage, qtype, answered (0/1),
    score."""
    answers = _items(pred)
    covered = {str(s["data_dict"]["cxrtrek_data"]["study_id"]) for s in pred}
    rows = [(sid, item["stage"], item["qtype"], int((sid, q) in answers), item_score(item, answers.get((sid, q))))
            for (sid, q), item in _items(gold).items() if sid in covered]
    return pd.DataFrame(rows, columns=["study_id", "stage", "qtype", "answered", "score"])


def _interval(rows: pd.DataFrame, bootstrap: int, rng: np.random.Generator) -> tuple[float, float]:
    per = rows.groupby("study_id")["score"].agg(["sum", "count"]).to_numpy()
    if len(per) < 2 or bootstrap < 1:
        return float("nan"), float("nan")
    draws = rng.integers(0, len(per), size=(bootstrap, len(per)))
    means = per[draws, 0].sum(axis=1) / per[draws, 1].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def score_table(gold: list[dict[str, Any]], pred: list[dict[str, Any]], stages: set[int] | None = None,
                bootstrap: int = 200, seed: int = 0) -> pd.DataFrame:
    """Scores per (stage, qtype): :data:`SCORE_COLUMNS` (``score``: exact-match share, or mean IoU for
    detection; ``answered``: gold questions the predictions answer). ``stages``: only these."""
    rows = score_rows(gold, pred)
    if stages:
        rows = rows[rows["stage"].isin(stages)]
    rng, out = np.random.default_rng(seed), []
    for (stage, qtype), part in rows.groupby(["stage", "qtype"], sort=True):
        metric = "mean IoU" if qtype == "detection" else "exact match"
        low, high = _interval(part, bootstrap, rng)
        out.append((int(stage), qtype, metric, len(part), int(part["answered"].sum()), float(part["score"].mean()),
                    low, high))
    return pd.DataFrame(out, columns=list(SCORE_COLUMNS))
