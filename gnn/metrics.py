"""The one macro-F1 of the project: training's early stopping and the evaluation report both use it.

Macro-F1 is scikit-learn's ``f1_score(average="macro")`` with the task's whole label set given as
``labels``: the unweighted mean of the per-class F1 over *every* class, a class with neither true nor
predicted pairs counting 0 (``zero_division=0``). Averaging only the classes present would report 1.0 for
a split holding a single class predicted right; instead the split's missing classes are reported with
a :class:`MissingClassWarning`.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np


class MissingClassWarning(UserWarning):
    """A split has no pair of some class: its macro-F1 counts that class's F1 as 0."""


def missing_classes(y: np.ndarray, classes: Sequence[str]) -> list[str]:
    """The classes (names, in order) with no label in ``y`` (ints in ``range(len(classes))``)."""
    present = set(np.asarray(y).tolist())
    return [name for c, name in enumerate(classes) if c not in present]


def macro_f1(y: np.ndarray, pred: np.ndarray, classes: Sequence[str], split: str = "") -> float:
    """Macro-F1 of predictions ``pred`` ``[N]`` against labels ``y`` ``[N]`` over all ``classes``; 0 for no pairs.

    Warns:
        MissingClassWarning: ``y`` lacks a class (named, with ``split``).
    """
    from sklearn.metrics import f1_score

    if len(y) == 0:
        return 0.0
    if missing := missing_classes(y, classes):
        warnings.warn(f"the {split or 'scored'} split has no pair of class {', '.join(missing)}: macro-F1 counts "
                      "its F1 as 0", MissingClassWarning, stacklevel=2)
    return float(f1_score(y, pred, labels=list(range(len(classes))), average="macro", zero_division=0))
