"""CXRTrek stage 6 (what the next study shows of each present finding) answered by a saved next-study
forecaster (``cxrkg cxrtrek answer --forecaster``), or by carrying the present findings forward.

For a sample of study S whose next study is N, the forecaster's row of the pair (S, N) gives the probability
that N states the finding present and, from its mention model, that N states the finding at all; its inputs
are the patient's history up to and including S (:mod:`gnn.forecast.rows`: no field of the next study is read
but its place in the order). The saved stage 6 rule (:class:`gnn.forecast.stage6.Stage6Rule`, thresholds
chosen on the validation patients by ``cxrkg forecast --save-model``) turns the two into the yes/no answer and
the choice among still present, resolved and not mentioned. A forecaster without a rule or a mention model
(saved before them, or the demo's) answers with the rule's defaults: ``Yes.`` / ``Still present.`` at a
probability of 0.5 or more, else ``No.`` / ``Resolved.``, never ``Not mentioned.``. A finding the forecaster
does not forecast is left unanswered. The forecaster's inputs read study-level states, where uncertain is a
state of its own; the gold answers count it present (docs/cxrtrek.md).

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
from gnn.forecast.stage6 import STILL_PRESENT, Stage6Rule
from gnn.splits import split_of
from graph.cxrtrek.templates import NEXT_OPTIONS, NO, YES
from graph.formats.cxrtrek import data_of, items_of, new_sample
from graph.store import GraphStore

BATCH_PATIENTS = 1000
_NEXT = re.compile(r"next_\[(.+)\]")


@dataclass
class AnswerSummary:
    """Stage 6 questions answered and left unanswered (a finding the forecaster does not know, or a pair
    it has no row for), samples written."""

    answered: int = 0
    unanswered: int = 0
    samples: int = 0


def _fill(item: dict[str, Any], yes: bool, outcome: str, basis: dict[str, Any]) -> dict[str, Any]:
    """The item answered: yes/no by ``yes``, a choice by ``outcome`` (a key of NEXT_OPTIONS)."""
    out = copy.deepcopy(item)
    if item["qtype"] == "yes_no":
        out["answer"] = YES if yes else NO
    else:
        option = next(o for o in item["option_list"] if o.endswith(" " + NEXT_OPTIONS[outcome]))
        out["answer"], out["answer_list"] = option, [option]
    out["graph_basis"] = basis
    return out


def _answered(samples: list[dict[str, Any]], decide: Callable[[str, str], dict[str, Any] | None],
              summary: AnswerSummary) -> list[dict[str, Any]]:
    """The samples with stage 6 only, each question answered by ``decide(study_id, finding)`` -> basis with
    ``yes`` (the yes/no answer) and ``outcome`` (the choice's), or left out (None)."""
    out = []
    for s in samples:
        data = data_of(s)
        items = []
        for item in items_of(s):
            m = _NEXT.fullmatch(str(item.get("target") or ""))
            if item["stage"] != 6 or m is None:
                continue
            basis = decide(str(data["study_id"]), m.group(1))
            if basis is None:
                summary.unanswered += 1
                continue
            basis = dict(basis)
            items.append(_fill(item, basis.pop("yes"), basis.pop("outcome"), basis))
            summary.answered += 1
        if items:
            chat = [s["messages"][0]] + [{"role": r, "content": x[k]} for x in items
                                         for r, k in (("user", "question"), ("assistant", "answer"))]
            kept = {**{k: v for k, v in data.items() if k != "content"}, "content": items}
            out.append(new_sample(chat, s["image"], kept))
    summary.samples = len(out)
    return out


def in_split(samples: list[dict[str, Any]], split: str, seed: int = 0) -> list[dict[str, Any]]:
    """The samples of patients in ``split`` (train / val / test) of :func:`gnn.splits.split_of` with ``seed``
    (``cxrkg forecast --split-seed``): the held-out patients of a forecaster are ``test``."""
    return [s for s in samples if split_of(str(data_of(s)["pat_id"]), seed) == split]


def carry_forward(samples: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], AnswerSummary]:
    """Every present finding still present in the next study (stage 6 asks only about present ones)."""
    summary = AnswerSummary()
    return _answered(samples, lambda _s, _f: {"basis": "carry-forward", "yes": True, "outcome": STILL_PRESENT},
                     summary), summary


def forecast_answers(store: GraphStore, samples: list[dict[str, Any]],
                     forecaster: TrainedGraphForecaster) -> tuple[list[dict[str, Any]], AnswerSummary]:
    """Stage 6 answered by ``forecaster`` (its mention model and stage 6 rule where it has them) from the
    graph's study-level states of the samples' patients."""
    patients = sorted({str(data_of(s)["pat_id"]) for s in samples})
    rule = forecaster.stage6 or Stage6Rule()
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for start in range(0, len(patients), BATCH_PATIENTS):
        studies, states = patient_tables(store, patients[start:start + BATCH_PATIENTS])
        if not studies["patient_id"].duplicated().any():
            continue
        table = build_forecast_table(studies, states, findings=forecaster.findings)
        p = np.asarray(forecaster(table.x), dtype=float)
        m = None if forecaster.mention is None else np.asarray(forecaster.mention(table.x), dtype=float)
        batch = {"p": p, "m": m, "yes": rule.yes(p), "outcome": rule.choice(p, m)}
        keys = zip(table.rows["prior_study_id"], table.rows["finding"], strict=True)
        found.update({key: {**batch, "i": i} for i, key in enumerate(keys)})

    def decide(study_id: str, finding: str) -> dict[str, Any] | None:
        at = found.get((study_id, finding))
        if at is None:
            return None
        i = at["i"]
        mention = {} if at["m"] is None else {"mention_probability": round(float(at["m"][i]), 4)}
        return {"basis": "forecast", "probability": round(float(at["p"][i]), 4), **mention,
                "model_version": forecaster.model_version, "yes": bool(at["yes"][i]), "outcome": str(at["outcome"][i])}

    summary = AnswerSummary()
    return _answered(samples, decide, summary), summary
