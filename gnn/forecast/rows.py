"""Forecasting the next study: what a patient's next chest X-ray will show, from the history before it.

On real data the change between two studies follows from the two studies' own labels, so a model that sees
the current study learns the presence rule, not progression. The forecasting task hides the next study:
for each pair (prior study, next study) of consecutive studies of a patient and each forecast finding, the
inputs are the patient's history up to and including the prior study, and the target is whether the next
study states the finding present: next-visit prediction from the visits before it, as in Choi et al.,
"Doctor AI: Predicting Clinical Events via Recurrent Neural Networks", MLHC 2016.

Targets, from the study-level states the graph derives (``study_findings.parquet``; uncertain counts as not
present on either side, and a finding without a state is not mentioned):

=============  ============================  ======================================================
class          prior study                   next study
=============  ============================  ======================================================
onset          not present                   present
resolution     present                       not present (stated absent, or no longer mentioned)
persistence    present                       present
stays absent   not present                   not present
=============  ============================  ======================================================

``resolved_stated`` marks resolutions whose next study states the absence (the stricter reading of the
graph's events); the metrics score the wider one, as a forecaster cannot know what the report will omit.

Inputs per (pair, finding), in :data:`FEATURES` order, all from studies up to and including the prior:
the finding's state there (one-hot), how many earlier studies had it present / stated absent, the share
present, follow-up steps since it was first and last present (-1 when never), the number of studies so far,
how many other findings are present at the prior, the interval to the next study in follow-up steps (its
position in the patient's order; no field of the next study is read, so blanking them changes no input),
the age decile's lower bound at the prior study and sex. ``finding`` is the finding's index in
:attr:`ForecastTable.findings`.

Splits are by patient (:func:`gnn.splits.split_of`): stable as patients are added.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gnn.errors import GnnError
from gnn.export import load_tables
from gnn.splits import split_of
from graph.terms import State

PRESENT, UNCERTAIN, ABSENT, NOT_MENTIONED = State.PRESENT, State.UNCERTAIN, State.ABSENT, State.NOT_MENTIONED
STATES = (NOT_MENTIONED, ABSENT, UNCERTAIN, PRESENT)  # the codes of ``next_state`` and of the state features
ONSET, RESOLUTION, PERSISTENCE, STAYS_ABSENT = 0, 1, 2, 3
CLASSES = ("onset", "resolution", "persistence", "stays absent")
FEATURES = ("state_not_mentioned", "state_absent", "state_uncertain", "state_present", "n_present_before",
            "n_absent_before", "share_present", "steps_since_first_present", "steps_since_last_present",
            "n_studies", "other_findings_present", "interval_steps", "age", "sex_female")


@dataclass
class ForecastTable:
    """The forecasting rows of a snapshot.

    Attributes:
        rows: one row per (pair, finding): ``patient_id, study_id`` (the next study), ``prior_study_id``,
            ``finding`` (name), ``split`` (train / val / test), ``prior_present``, ``next_present``
            (0/1), ``target`` (index into :data:`CLASSES`), ``resolved_stated`` (0/1), ``next_mentioned``
            (0/1: the next study states the finding in any state), ``next_state`` (categorical over
            :data:`STATES`).
        x: float32 array, shape (len(rows), len(FEATURES) + 1): :data:`FEATURES`, then the finding index.
        findings: the forecast findings (those present in at least one study), sorted.
    """

    rows: pd.DataFrame
    x: np.ndarray
    findings: list[str]

    @property
    def feature_names(self) -> list[str]:
        return [*FEATURES, "finding"]

    def part(self, split: str) -> tuple[pd.DataFrame, np.ndarray]:
        """The rows and inputs of one split."""
        mask = (self.rows["split"] == split).to_numpy()
        return self.rows[mask].reset_index(drop=True), self.x[mask]


def forecast_table(snapshot: Path, split_seed: int = 0) -> ForecastTable:
    """Build the forecasting rows of a snapshot folder (``cxrkg export snapshot``).

    Raises:
        GnnError: not a snapshot of this format, or no patient with two studies and a present finding.
    """
    _, tables = load_tables(snapshot)
    studies = tables["studies"].to_pandas()
    states = tables["study_findings"].to_pandas()
    return build_forecast_table(studies, states, split_seed)


def build_forecast_table(studies: pd.DataFrame, states: pd.DataFrame, split_seed: int = 0,
                         findings: list[str] | None = None) -> ForecastTable:
    """:func:`forecast_table` from the two snapshot tables as DataFrames (``studies``, ``study_findings``).
    ``findings``: forecast exactly these (a fitted forecaster's), default every finding present somewhere.

    Raises:
        GnnError: no patient with two studies, or no finding ever present.
    """
    findings = list(findings) if findings is not None else sorted(states.loc[states["state"] == PRESENT,
                                                                             "finding"].unique())
    studies = studies.sort_values(["patient_id", "study_order", "study_id"]).reset_index(drop=True)
    if not findings or studies["patient_id"].duplicated().sum() == 0:
        raise GnnError("no patient has two studies and a present finding: nothing to forecast")
    code = _state_matrix(studies, states, findings)  # (studies, findings) state index into STATES
    history = _history(studies, code)
    pair = studies["patient_id"].eq(studies["patient_id"].shift(-1)).to_numpy()  # study i has a next study
    prior_idx = np.flatnonzero(pair)
    next_idx = prior_idx + 1
    n_f = len(findings)
    rows = pd.DataFrame({
        "patient_id": np.repeat(studies["patient_id"].to_numpy()[next_idx], n_f),
        "study_id": np.repeat(studies["study_id"].to_numpy()[next_idx], n_f),
        "prior_study_id": np.repeat(studies["study_id"].to_numpy()[prior_idx], n_f),
        "finding": np.tile(np.array(findings, dtype=object), len(prior_idx)),
    })
    prior_present = (code[prior_idx] == STATES.index(PRESENT)).reshape(-1).astype(np.int8)
    next_present = (code[next_idx] == STATES.index(PRESENT)).reshape(-1).astype(np.int8)
    rows["prior_present"], rows["next_present"] = prior_present, next_present
    rows["target"] = np.where(prior_present == 1, np.where(next_present == 1, PERSISTENCE, RESOLUTION),
                              np.where(next_present == 1, ONSET, STAYS_ABSENT)).astype(np.int8)
    next_code = code[next_idx].reshape(-1)
    rows["resolved_stated"] = ((rows["target"] == RESOLUTION).to_numpy()
                               & (next_code == STATES.index(ABSENT))).astype(np.int8)
    rows["next_mentioned"] = (next_code != STATES.index(NOT_MENTIONED)).astype(np.int8)
    rows["next_state"] = pd.Categorical.from_codes(next_code, categories=list(STATES))
    split = {p: split_of(p, split_seed) for p in studies["patient_id"].unique()}
    rows["split"] = rows["patient_id"].map(split)
    x = _inputs(studies, code, history, prior_idx, next_idx)
    return ForecastTable(rows, x, findings)


def _state_matrix(studies: pd.DataFrame, states: pd.DataFrame, findings: list[str]) -> np.ndarray:
    """int8 (studies, findings): each study's state of each finding as an index into :data:`STATES`."""
    code = np.zeros((len(studies), len(findings)), dtype=np.int8)
    row_of = pd.Series(np.arange(len(studies)), index=studies["study_id"].to_numpy())
    col_of = {f: i for i, f in enumerate(findings)}
    known = states[states["finding"].isin(col_of) & states["study_id"].isin(row_of.index)]
    rank = known["state"].map({s: i for i, s in enumerate(STATES)})
    if rank.isna().any():
        bad = known.loc[rank.isna(), "state"].iloc[0]
        raise GnnError(f"study_findings: unknown state {bad!r}; expected one of {', '.join(STATES)}")
    code[row_of[known["study_id"]].to_numpy(), known["finding"].map(col_of).to_numpy()] = rank.to_numpy()
    return code


def _history(studies: pd.DataFrame, code: np.ndarray) -> dict[str, np.ndarray]:
    """Per study (row) and finding (column), counts over the patient's studies up to and including it."""
    present = (code == STATES.index(PRESENT)).astype(np.int32)
    absent = (code == STATES.index(ABSENT)).astype(np.int32)
    groups = studies["patient_id"].to_numpy()
    step = studies.groupby("patient_id", sort=False).cumcount().to_numpy()  # 0-based study index
    n_present = pd.DataFrame(present).groupby(groups).cumsum().to_numpy()
    n_absent = pd.DataFrame(absent).groupby(groups).cumsum().to_numpy()
    # steps since first / last present: index of the first / latest present study so far, else NaN
    at = np.where(present == 1, step[:, None], np.nan)
    first = pd.DataFrame(at).groupby(groups).cummin().to_numpy()
    last = pd.DataFrame(at).groupby(groups).ffill().to_numpy()
    return {"n_present": n_present, "n_absent": n_absent, "step": step,
            "since_first": np.where(np.isnan(first), -1, step[:, None] - first),
            "since_last": np.where(np.isnan(last), -1, step[:, None] - last)}


def _inputs(studies: pd.DataFrame, code: np.ndarray, h: dict[str, np.ndarray], prior_idx: np.ndarray,
            next_idx: np.ndarray) -> np.ndarray:
    """The float32 input matrix, rows in (pair, finding) order; of ``next_idx`` only its position is read."""
    n_pairs, n_f = len(prior_idx), code.shape[1]
    state = code[prior_idx]
    per_pair = {
        "n_studies": h["step"][prior_idx] + 1,
        "other_present": (state == STATES.index(PRESENT)).sum(axis=1),
        "interval_steps": h["step"][next_idx] - h["step"][prior_idx],
        "age": studies["age_decile"].str.extract(r"^(\d+)", expand=False).astype(float).to_numpy()[prior_idx],
        "sex_female": studies["gender"].map({"F": 1.0, "M": 0.0}).to_numpy(dtype=float)[prior_idx],
    }
    cols = [(state == i).astype(np.float32) for i in range(len(STATES))]
    n_present, n_absent = h["n_present"][prior_idx], h["n_absent"][prior_idx]
    cols += [n_present, n_absent, n_present / per_pair["n_studies"][:, None], h["since_first"][prior_idx],
             h["since_last"][prior_idx], np.repeat(per_pair["n_studies"][:, None], n_f, axis=1),
             per_pair["other_present"][:, None] - (state == STATES.index(PRESENT))]
    cols += [np.repeat(per_pair[k][:, None], n_f, axis=1)
             for k in ("interval_steps", "age", "sex_female")]
    cols.append(np.tile(np.arange(n_f), (n_pairs, 1)))
    return np.stack([np.asarray(c, dtype=np.float32).reshape(-1) for c in cols], axis=1)

