"""CXRTrek stage 6 (what the next study shows of each present finding) answered by a saved next-study
forecaster (``cxrkg cxrtrek answer --forecaster``), or by carrying the present findings forward.

For a sample of study S whose next study is N, the forecaster's row of the pair (S, N) gives the probability
that N states the finding present; its inputs are the patient's history up to and including S
(:mod:`gnn.forecast.rows`: no field of the next study is read but its place in the order). A probability of at
least 0.5 answers the yes/no question ``Yes.`` and the choice ``Still present.``; below, ``No.`` and
``Resolved.`` (the forecaster does not tell a stated absence from a finding the next report leaves out, so
its choice answers never say ``Not mentioned.``). A finding the forecaster does not forecast is left
unanswered. The forecaster reads study-level states, where uncertain counts as not present; the gold answers
count it present (docs/cxrtrek.md).

The output keeps each sample's stage 6 questions only (a valid CXRTrek-format file: the chat rebuilt from
them), with the answers and a ``graph_basis`` saying what gave them (``forecast`` with the probability and
model version, or ``carry-forward``).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gnn.forecast.compare import patient_tables
from gnn.forecast.model import TrainedGraphForecaster
from gnn.forecast.rows import build_forecast_table
from gnn.splits import split_of
from graph.store import GraphStore

BATCH_PATIENTS = 1000
_NEXT = re.compile(r"next_\[(.+)\]")
YES_TEXT, NO_TEXT = "Still present.", "Resolved."


@dataclass
class AnswerSummary:
    """Stage 6 questions answered and left unanswered (a finding the forecaster does not know, or a pair
    it has no row for), samples written."""

    answered: int = 0
    unanswered: int = 0
    samples: int = 0


def _fill(item: dict[str, Any], present: bool, basis: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(item)
    if item["qtype"] == "yes_no":
        out["answer"] = "Yes." if present else "No."
    else:
        want = YES_TEXT if present else NO_TEXT
        option = next(o for o in item["option_list"] if o.endswith(" " + want))
        out["answer"], out["answer_list"] = option, [option]
    out["graph_basis"] = basis
    return out


def _answered(samples: list[dict[str, Any]], decide: Callable[[str, str], dict[str, Any] | None],
              summary: AnswerSummary) -> list[dict[str, Any]]:
    """The samples with stage 6 only, each question answered by ``decide(study_id, finding)`` -> basis with
    ``present``, or left out (None)."""
    out = []
    for s in samples:
        data = s["data_dict"]["cxrtrek_data"]
        items = []
        for item in data["content"]:
            m = _NEXT.fullmatch(str(item.get("target") or ""))
            if item["stage"] != 6 or m is None:
                continue
            basis = decide(str(data["study_id"]), m.group(1))
            if basis is None:
                summary.unanswered += 1
                continue
            items.append(_fill(item, basis.pop("present"), basis))
            summary.answered += 1
        if items:
            chat = [s["messages"][0]] + [{"role": r, "content": x[k]} for x in items
                                         for r, k in (("user", "question"), ("assistant", "answer"))]
            kept = {**{k: v for k, v in data.items() if k != "content"}, "content": items}
            out.append({"messages": chat, "image": s["image"], "data_dict": {"cxrtrek_data": kept}})
    summary.samples = len(out)
    return out


def in_split(samples: list[dict[str, Any]], split: str, seed: int = 0) -> list[dict[str, Any]]:
    """The samples of patients in ``split`` (train / val / test) of :func:`gnn.splits.split_of` with ``seed``
    (``cxrkg forecast --split-seed``): the held-out patients of a forecaster are ``test``."""
    return [s for s in samples if split_of(str(s["data_dict"]["cxrtrek_data"]["pat_id"]), seed) == split]


def carry_forward(samples: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], AnswerSummary]:
    """Every present finding still present in the next study (stage 6 asks only about present ones)."""
    summary = AnswerSummary()
    return _answered(samples, lambda _s, _f: {"basis": "carry-forward", "present": True}, summary), summary


def forecast_answers(store: GraphStore, samples: list[dict[str, Any]],
                     forecaster: TrainedGraphForecaster) -> tuple[list[dict[str, Any]], AnswerSummary]:
    """Stage 6 answered by ``forecaster`` from the graph's study-level states of the samples' patients."""
    patients = sorted({str(s["data_dict"]["cxrtrek_data"]["pat_id"]) for s in samples})
    probability: dict[tuple[str, str], float] = {}
    for start in range(0, len(patients), BATCH_PATIENTS):
        studies, states = patient_tables(store, patients[start:start + BATCH_PATIENTS])
        if not studies["patient_id"].duplicated().any():
            continue
        table = build_forecast_table(studies, states, findings=forecaster.findings)
        p = np.asarray(forecaster(table.x), dtype=float)
        keys = zip(table.rows["prior_study_id"], table.rows["finding"], strict=True)
        probability.update(zip(keys, p.tolist(), strict=True))

    def decide(study_id: str, finding: str) -> dict[str, Any] | None:
        p = probability.get((study_id, finding))
        if p is None:
            return None
        return {"basis": "forecast", "probability": round(p, 4), "model_version": forecaster.model_version,
                "present": p >= 0.5}

    summary = AnswerSummary()
    return _answered(samples, decide, summary), summary
