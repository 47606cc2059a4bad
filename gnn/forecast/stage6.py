"""The decision rule that turns two next-study forecasts into CXRTrek stage 6 answers, chosen on the
validation patients.

Stage 6 asks, of each finding present at a study, whether the next study will still show it (yes/no) and
what the next study states of it (a choice among :data:`graph.cxrtrek.templates.NEXT_OPTIONS`: still present,
resolved = stated absent, not mentioned). The inputs are the presence forecast ``p`` (the next study states the
finding present) and the mention forecast ``m`` (it states the finding at all, in any state), one per
(pair, finding) row of :mod:`gnn.forecast.rows`.

:class:`Stage6Rule`: yes/no ``Yes.`` when ``p >= yes_threshold``; the choice ``Not mentioned.`` when ``m <
mention_threshold``, else ``Still present.`` when ``p >= present_threshold``, else ``Resolved.``.
:func:`choose_rule` picks the thresholds that maximise exact match on the rows it is given (the validation
patients'), searching thresholds at and beyond the ends of the forecasts' range, so every constant answer
(all ``Yes.``, all ``No.``, each choice everywhere) is among the rules searched: on the rows it was chosen on,
the rule scores at least the most common answer. A rule chosen on few patients can beat the most common answer
there by chance and lose to it on others, so :func:`unless_clearly_better` keeps each question's chosen rule
only where its gain over the most common answer on those rows has a paired 95 % bootstrap interval over
patients above 0, and otherwise answers that question with the most common answer of the patients not held
out (training and validation).

As the gold answers (graph/cxrtrek/stages.py) read it, an uncertain finding counts as present, both at the
study asked about and at the next one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from gnn.forecast.rows import FEATURES, ForecastTable
from graph.bootstrap import DRAWS, cluster_bootstrap
from graph.cxrtrek.templates import NEXT_OPTIONS, NO, YES
from graph.terms import POSITIVE_STATES

OUTCOMES = tuple(NEXT_OPTIONS)  # the choice's outcomes, in the options' order: present, absent, not_mentioned
STILL_PRESENT, RESOLVED, NOT_MENTIONED = OUTCOMES
ABOVE_ALL = float(np.nextafter(1.0, 2.0))  # a threshold no probability reaches: the answer "no" everywhere
_PRIOR_PRESENT, _PRIOR_UNCERTAIN = FEATURES.index("state_present"), FEATURES.index("state_uncertain")
_CANDIDATES = 256  # mention thresholds searched at most (quantiles beyond that)


@dataclass(frozen=True)
class Stage6Rule:
    """Thresholds on the presence (``p``) and mention (``m``) forecasts; the defaults are the rule used
    before any was chosen (0.5, and never ``Not mentioned.``)."""

    yes_threshold: float = 0.5
    mention_threshold: float = 0.0
    present_threshold: float = 0.5

    def yes(self, p: np.ndarray) -> np.ndarray:
        """bool per row: the yes/no answer ``Yes.``."""
        return np.asarray(p, dtype=float) >= self.yes_threshold

    def choice(self, p: np.ndarray, m: np.ndarray | None) -> np.ndarray:
        """Per row one of :data:`OUTCOMES` (object array); ``m`` None: no mention forecast, so never
        ``not_mentioned``."""
        p = np.asarray(p, dtype=float)
        out = np.where(p >= self.present_threshold, STILL_PRESENT, RESOLVED).astype(object)
        if m is not None:
            out[np.asarray(m, dtype=float) < self.mention_threshold] = NOT_MENTIONED
        return out

    def as_dict(self) -> dict[str, float]:
        return asdict(self)

    def text(self) -> str:
        """The rule in words, a constant answer named as such (``"No." everywhere``)."""
        yes_no = _cut("yes", self.yes_threshold, f'"{YES}"', f'"{NO}"')
        if self.yes_threshold <= 0 or self.yes_threshold >= ABOVE_ALL:
            yes_no += " everywhere"
        if self.mention_threshold >= ABOVE_ALL:
            return f'{yes_no}; "{NEXT_OPTIONS[NOT_MENTIONED]}" everywhere'
        said = _cut("still present", self.present_threshold, f'"{NEXT_OPTIONS[STILL_PRESENT]}"',
                    f'"{NEXT_OPTIONS[RESOLVED]}"')
        one_answer = self.present_threshold <= 0 or self.present_threshold >= ABOVE_ALL
        if self.mention_threshold <= 0:
            return f"{yes_no}; {said}" + (" everywhere" if one_answer else ", else resolved")
        return f"{yes_no}; not mentioned at mention p < {self.mention_threshold:.3f}, else {said}"


def _cut(answer: str, threshold: float, below_all: str, above_all: str) -> str:
    """``answer at p >= t``, or the constant answer when the threshold is past one end of the probabilities."""
    if threshold <= 0:
        return below_all
    if threshold >= ABOVE_ALL:
        return above_all
    return f"{answer} at p >= {threshold:.3f}"


def asked(x: np.ndarray) -> np.ndarray:
    """bool per row of inputs ``x``: stage 6 asks about it (the prior study has the finding present or
    uncertain)."""
    return (x[:, _PRIOR_PRESENT] == 1) | (x[:, _PRIOR_UNCERTAIN] == 1)


def asked_part(table: ForecastTable, split: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows and inputs of ``split`` that stage 6 asks about. The inputs are no longer whole pairs, so
    forecast the split's rows first and select with :func:`asked`."""
    rows, x = table.part(split)
    keep = asked(x)
    return rows[keep].reset_index(drop=True), x[keep]


def outcomes(rows: pd.DataFrame) -> np.ndarray:
    """The gold choice outcome of each row (:data:`OUTCOMES`) from its ``next_state``: present or uncertain
    -> still present, absent -> resolved, not mentioned -> not mentioned."""
    state = rows["next_state"].astype(str).to_numpy()
    return np.where(np.isin(state, sorted(POSITIVE_STATES)), STILL_PRESENT, state).astype(object)


def _best_threshold(p: np.ndarray, positive: np.ndarray) -> tuple[float, int]:
    """The threshold t (0, a value of ``p``, or :data:`ABOVE_ALL`) for which ``p >= t`` matches ``positive``
    most often, and that count; ties go to the lowest t."""
    candidates = np.unique(np.concatenate([[0.0], p, [ABOVE_ALL]]))
    pos, neg = np.sort(p[positive]), np.sort(p[~positive])
    correct = (len(pos) - np.searchsorted(pos, candidates, side="left")) + np.searchsorted(neg, candidates,
                                                                                           side="left")
    best = int(np.argmax(correct))
    return float(candidates[best]), int(correct[best])


def choose_yes_threshold(p: np.ndarray, yes: np.ndarray) -> float:
    """The yes/no threshold with the most exact matches of ``p >= t`` against ``yes`` (bool per row).

    Raises:
        ValueError: no rows, or ``p`` and ``yes`` differ in length.
    """
    p, yes = _checked(p, yes)
    return _best_threshold(p, yes.astype(bool))[0]


def choose_rule(p: np.ndarray, m: np.ndarray, outcome: np.ndarray) -> Stage6Rule:
    """The :class:`Stage6Rule` with the most exact matches on these rows: the yes/no threshold against
    ``outcome == still present``, and the choice's two thresholds searched jointly (for each mention
    threshold, the best presence threshold among the rows then answered as mentioned).

    Args:
        p: the presence forecast, one per row.
        m: the mention forecast, one per row.
        outcome: the gold outcome per row, one of :data:`OUTCOMES`.

    Raises:
        ValueError: no rows, lengths differ, or an outcome outside :data:`OUTCOMES`.
    """
    p, outcome = _checked(p, outcome)
    m = np.asarray(m, dtype=float)
    if len(m) != len(p):
        raise ValueError(f"{len(m)} mention forecasts for {len(p)} rows")
    if not np.isin(outcome, OUTCOMES).all():
        raise ValueError(f"outcomes must be among {', '.join(OUTCOMES)}")
    present = outcome == STILL_PRESENT
    yes_threshold = _best_threshold(p, present)[0]
    levels = np.unique(m) if len(np.unique(m)) <= _CANDIDATES else np.quantile(m, np.linspace(0, 1, _CANDIDATES))
    best = (-1, 0.0, 0.0)
    for t_m in np.unique(np.concatenate([[0.0], levels, [ABOVE_ALL]])):
        said = m >= t_m
        unsaid_right = int((outcome[~said] == NOT_MENTIONED).sum())
        keep = said & (outcome != NOT_MENTIONED)  # a not-mentioned row answered as mentioned is wrong either way
        t_p, right = _best_threshold(p[keep], present[keep]) if keep.any() else (0.0, 0)
        if right + unsaid_right > best[0]:
            best = (right + unsaid_right, float(t_m), t_p)
    return Stage6Rule(yes_threshold, best[1], best[2])


def constant_rule(yes: bool, choice: str) -> Stage6Rule:
    """The rule that answers every yes/no question ``Yes.`` (``yes``) or ``No.``, and every choice
    ``choice`` (one of :data:`OUTCOMES`), whatever the forecasts.

    Raises:
        ValueError: ``choice`` outside :data:`OUTCOMES`.
    """
    if choice not in OUTCOMES:
        raise ValueError(f"{choice!r} is not among {', '.join(OUTCOMES)}")
    return Stage6Rule(yes_threshold=0.0 if yes else ABOVE_ALL,
                      mention_threshold=ABOVE_ALL if choice == NOT_MENTIONED else 0.0,
                      present_threshold=0.0 if choice == STILL_PRESENT else ABOVE_ALL)


def most_common(outcome: np.ndarray) -> Stage6Rule:
    """:func:`constant_rule` of these gold outcomes' most common answers: ``Yes.`` when more than half are
    still present, and the most frequent outcome (ties: the options' order).

    Raises:
        ValueError: no outcomes.
    """
    outcome = np.asarray(outcome, dtype=object)
    if len(outcome) == 0:
        raise ValueError("no outcomes to take the most common answer of")
    counts = [int((outcome == o).sum()) for o in OUTCOMES]
    return constant_rule(2 * counts[0] > len(outcome), OUTCOMES[int(np.argmax(counts))])


DECISION_DRAWS = 1_000  # bootstrap draws behind unless_clearly_better; fixed, so the rule does not depend on
# how many draws a user asks for the printed intervals


def unless_clearly_better(rule: Stage6Rule, fallback: Stage6Rule, rows: pd.DataFrame, p: np.ndarray,
                          m: np.ndarray | None, draws: int = DECISION_DRAWS, seed: int = 0) -> Stage6Rule:
    """``rule`` for each question type (yes/no; choice) whose exact match on ``rows`` beats ``fallback``'s with
    a paired 95 % percentile bootstrap interval over patients whose lower end is above 0; ``fallback``'s
    thresholds for the other question type.

    Args:
        rule: the rule chosen on ``rows`` (:func:`choose_rule`).
        fallback: the constant answer to fall back to (:func:`most_common` of the patients not held out).
        rows: one row per asked (pair, finding), with ``patient_id`` and ``next_state``.
        p: the presence forecast of each row.
        m: the mention forecast of each row, or None (then the choice never says not mentioned).
        draws: bootstrap draws of patients.
        seed: the draws' random seed.

    Raises:
        ValueError: no rows.
    """
    if len(rows) == 0:
        raise ValueError("no stage 6 rows to decide on")
    chosen, constant = _answers(rows, p, m, rule), _answers(rows, p, m, fallback)
    gains = [(said == gold).astype(float) - (constant[question][0] == gold).astype(float)
             for question, (said, gold) in chosen.items()]
    drawn = cluster_bootstrap(rows["patient_id"], lambda w: _means(w, gains), draws, seed, batched=True)
    keep = {question: bool(drawn.interval(k)[0] > 0) for k, question in enumerate(chosen)}
    yes_from = rule if keep["yes/no"] else fallback
    choice_from = rule if keep["choice"] else fallback
    return Stage6Rule(yes_from.yes_threshold, choice_from.mention_threshold, choice_from.present_threshold)


def _means(weights: np.ndarray, columns: list[np.ndarray]) -> np.ndarray:
    """The weighted mean of each column under each draw's weights, shape (draws, columns)."""
    return (weights @ np.column_stack(columns)) / weights.sum(axis=1, keepdims=True)


def _checked(p: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p, labels = np.asarray(p, dtype=float), np.asarray(labels)
    if len(p) == 0:
        raise ValueError("no rows to choose a stage 6 rule on")
    if len(p) != len(labels):
        raise ValueError(f"{len(p)} forecasts for {len(labels)} labels")
    return p, labels


def _answers(rows: pd.DataFrame, p: np.ndarray, m: np.ndarray | None,
             rule: Stage6Rule) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per question type, (the rule's answers, the gold answers) as answer texts."""
    gold = outcomes(rows)
    yes_text = np.where(gold == STILL_PRESENT, YES, NO).astype(object)
    said = np.where(rule.yes(p), YES, NO).astype(object)
    to_text = np.vectorize(NEXT_OPTIONS.__getitem__, otypes=[object])
    return {"yes/no": (said, yes_text), "choice": (to_text(rule.choice(p, m)), to_text(gold))}


def against_most_common(rows: pd.DataFrame, p: np.ndarray, m: np.ndarray | None, rule: Stage6Rule,
                        bootstrap: int = DRAWS, seed: int = 0) -> list[dict[str, str]]:
    """Exact match of the rule's answers and of the most common gold answer of these rows, each with a 95 %
    percentile bootstrap interval over patients, and their paired difference with its interval (the same
    draws); one row per question type, as text for a table.

    Raises:
        ValueError: no rows.
    """
    if len(rows) == 0:
        raise ValueError("no stage 6 rows to score")
    answers, commons, scored = _answers(rows, p, m, rule), [], []
    for said, gold in answers.values():
        values, counts = np.unique(gold, return_counts=True)
        commons.append(values[int(np.argmax(counts))])
        scored += [(said == gold).astype(float), (gold == commons[-1]).astype(float)]
    drawn = cluster_bootstrap(rows["patient_id"], lambda w: _means(w, scored), bootstrap, seed, batched=True)
    out = []
    for k, (question, (_, gold)) in enumerate(answers.items()):
        right, trivial = scored[2 * k].mean(), scored[2 * k + 1].mean()
        cells = [_with_interval(right, drawn.interval(2 * k)), _with_interval(trivial, drawn.interval(2 * k + 1)),
                 _with_interval(right - trivial, drawn.difference(2 * k, 2 * k + 1), signed=True)]
        out.append({"question": question, "questions": f"{len(gold):,}", "forecaster": cells[0],
                    "most common answer": f"{commons[k]} {cells[1]}", "difference": cells[2]})
    return out


def _with_interval(value: float, interval: tuple[float, float], signed: bool = False) -> str:
    f = "{:+.3f}" if signed else "{:.3f}"
    if np.isnan(interval[0]):
        return f.format(value)
    return f"{f.format(value)} [{f.format(interval[0])}, {f.format(interval[1])}]"
