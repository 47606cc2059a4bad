"""Scores of CXRTrek-format answers against gold answers, per stage and question type (``cxrkg cxrtrek score``).

Questions are matched by (study id, question text; the k-th asking of a question in a study by the k-th). Metrics:

- yes_no: exact match of the leading ``Yes`` / ``No`` (the demo file's answers may go on with a reason);
- single-choice and multi-choice: exact match of ``answer_list`` as a set (else of the answer text);
- detection: the intersection over union of the first boxes of ``bbox_list`` (mean IoU), a hit at IoU >= 0.5;
- captioning: exact match after lower-casing and collapsing spaces. CXRTrek scores captions with BERTScore
  (``distilroberta-base``, ``CXRTrekReasoner``'s ``ms-swift/myplugins/reward_models.py``), which needs a
  model download; it does not run offline, so exact match stands in and says little about paraphrases.

Only the studies the predictions cover are scored (an answer file of the held-out patients scores those);
in them, a gold question without an answer counts as wrong. An item of an unknown qtype is scored as a caption.

Beside each score stands the gold file's most common answer of that (stage, qtype), scored on the same
questions (:func:`majority_answers`): yes/no the majority Yes / No; a choice the most common set of right
options, matched by their text without the letter or number (``"B. Yes."`` and ``"A. Yes."`` are one answer,
since option letters vary); detection the most common first box (by IoU); a caption the most common answer
after lower-casing. It is drawn from the whole gold file, the scored studies included: the best a constant
answer did there, so a prediction above it has learnt more than the answers' shares.

95 % intervals: percentile bootstrap over studies (the questions of one study are not independent;
:func:`graph.bootstrap.cluster_bootstrap`), ``bootstrap`` draws (default :data:`graph.bootstrap.DRAWS`) from one
stream seeded with ``seed``, taken by the (stage, qtype) rows in their order; the prediction's, the most common answer's and their difference
(prediction minus most common, paired: the same resampled studies for both) come from the same draws.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pandas as pd

from graph.bootstrap import DRAWS, cluster_bootstrap
from graph.formats.cxrtrek import CHOICE_QTYPES, data_of, items_of

SCORE_COLUMNS = ("stage", "qtype", "metric", "questions", "answered", "score", "ci_low", "ci_high",
                 "majority_answer", "majority_score", "majority_ci_low", "majority_ci_high",
                 "diff", "diff_ci_low", "diff_ci_high")
"""``cxrtrek score``'s columns (docs/cxrtrek.md, "Score columns")."""
_SPACE = re.compile(r"\s+")
_YES_NO = re.compile(r"\s*(yes|no)\b", re.IGNORECASE)
_OPTION_MARK = re.compile(r"\s*(?:[A-Z]|\d+)\.\s+")


def _items(samples: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """(study id, question, k) -> the k-th item (from 0) of that study asking that question: a study may ask
    one question twice (the demo file does, in stage 8), and the k-th answer answers the k-th asking."""
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    seen: Counter = Counter()
    for s in samples:
        sid = str(data_of(s)["study_id"])
        for item in items_of(s):
            seen[(sid, item["question"])] += 1
            out[(sid, item["question"], seen[(sid, item["question"])] - 1)] = item
    return out


def is_choice(qtype: str) -> bool:
    """single-choice, multi-choice, multi-choice-N."""
    return CHOICE_QTYPES.fullmatch(qtype) is not None


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
    if is_choice(qtype):
        if gold.get("answer_list") and pred.get("answer_list"):
            return float(set(pred["answer_list"]) == set(gold["answer_list"]))
        return float(pred.get("answer", "").strip() == gold["answer"].strip())
    if qtype == "detection":
        boxes = pred.get("bbox_list") or []
        return iou(gold["bbox_list"][0], boxes[0]) if boxes and len(boxes[0]) == 4 else 0.0
    return float(_norm(pred.get("answer", "")) == _norm(gold["answer"]))


def _option_text(option: str) -> str:
    """``"B. Yes."`` -> ``"yes"``: an option without its letter or number, lower-cased, without the stop."""
    return _norm(_OPTION_MARK.sub("", option, count=1)).rstrip(".")


def _answer_key(item: dict[str, Any]) -> Any:
    """What the most common answer is counted by (see the module docstring); None where the item has none."""
    qtype = item["qtype"]
    if qtype == "yes_no":
        return _yes_no(item["answer"])
    if is_choice(qtype):
        return tuple(sorted({_option_text(a) for a in item.get("answer_list") or [item["answer"]]}))
    if qtype == "detection":
        return tuple(item["bbox_list"][0])
    return _norm(item["answer"])


def majority_answers(gold: list[dict[str, Any]]) -> dict[tuple[int, str], Any]:
    """(stage, qtype) -> the gold file's most common answer key (ties: the first met in file order)."""
    counts: dict[tuple[int, str], Counter] = defaultdict(Counter)
    for s in gold:
        for item in items_of(s):
            key = _answer_key(item)
            if key is not None:
                counts[(item["stage"], item["qtype"])][key] += 1
    return {k: c.most_common(1)[0][0] for k, c in counts.items()}


def _majority_score(item: dict[str, Any], answer: Any) -> float:
    if answer is None:
        return 0.0
    if item["qtype"] == "detection":
        return iou(item["bbox_list"][0], list(answer))
    return float(_answer_key(item) == answer)


def _shown(qtype: str, answer: Any) -> str:
    """The most common answer as ``cxrtrek score`` prints it."""
    if answer is None:
        return ""
    if is_choice(qtype):
        return " | ".join(answer)
    return str(list(answer)) if qtype == "detection" else str(answer)


def score_rows(gold: list[dict[str, Any]], pred: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per gold question of a study the predictions cover: study_id, stage, qtype, answered (0/1),
    score, majority (the score of the gold file's most common answer of its stage and qtype)."""
    answers, common = _items(pred), majority_answers(gold)
    covered = {str(data_of(s)["study_id"]) for s in pred}
    rows = [(sid, item["stage"], item["qtype"], int(key in answers), item_score(item, answers.get(key)),
             _majority_score(item, common.get((item["stage"], item["qtype"]))))
            for key, item in _items(gold).items() if (sid := key[0]) in covered]
    return pd.DataFrame(rows, columns=["study_id", "stage", "qtype", "answered", "score", "majority"])


def _intervals(rows: pd.DataFrame, bootstrap: int, rng: np.random.Generator) -> list[float]:
    """[low, high] of the score, of the most common answer and of their difference, from one set of draws of
    studies (NaN with fewer than two studies or no draw)."""
    by = rows.groupby("study_id")
    per, counts = by[["score", "majority"]].sum().to_numpy(), by.size().to_numpy()
    if len(per) < 2 or bootstrap < 1:
        return [float("nan")] * 6
    drawn = cluster_bootstrap(len(per), lambda w: (w @ per) / (w @ counts)[:, None], bootstrap, rng, batched=True)
    return [*drawn.interval(0), *drawn.interval(1), *drawn.difference(0, 1)]


def score_table(gold: list[dict[str, Any]], pred: list[dict[str, Any]], stages: set[int] | None = None,
                bootstrap: int = DRAWS, seed: int = 0) -> pd.DataFrame:
    """Scores per (stage, qtype): :data:`SCORE_COLUMNS` (``score``: exact-match share, or mean IoU for
    detection; ``answered``: gold questions the predictions answer; ``majority_*``: the gold file's most
    common answer on the same questions; ``diff``: score minus majority_score). ``stages``: only these."""
    rows = score_rows(gold, pred)
    if stages:
        rows = rows[rows["stage"].isin(stages)]
    rng, common, out = np.random.default_rng(seed), majority_answers(gold), []
    for (stage, qtype), part in rows.groupby(["stage", "qtype"], sort=True):
        metric = "mean IoU" if qtype == "detection" else "exact match"
        s_low, s_high, m_low, m_high, d_low, d_high = _intervals(part, bootstrap, rng)
        score, majority = float(part["score"].mean()), float(part["majority"].mean())
        out.append((int(stage), qtype, metric, len(part), int(part["answered"].sum()), score, s_low, s_high,
                    _shown(qtype, common.get((stage, qtype))), majority, m_low, m_high, score - majority, d_low,
                    d_high))
    return pd.DataFrame(out, columns=list(SCORE_COLUMNS))
