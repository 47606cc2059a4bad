"""One macro-F1 over the task's whole label set (gnn.metrics), used by training and evaluation alike."""

from __future__ import annotations

import numpy as np
import pytest

from gnn.metrics import MissingClassWarning, macro_f1

CLASSES = ("improved", "worsened", "no change", "new", "resolved")


def test_a_split_of_one_class_is_not_a_perfect_score_and_says_what_it_lacks():
    y = np.zeros(6, dtype=int)
    with pytest.warns(MissingClassWarning, match="validation split has no pair of class worsened, no change, new, "
                                                 "resolved"):
        assert macro_f1(y, y.copy(), CLASSES, "validation") == pytest.approx(0.2)


def test_all_classes_present_is_the_mean_of_the_per_class_f1():
    from sklearn.metrics import f1_score

    y = np.array([0, 1, 2, 3, 4, 0, 1, 2])
    pred = np.array([0, 1, 2, 3, 0, 1, 1, 2])
    per_class = f1_score(y, pred, average=None, labels=range(5), zero_division=0)
    assert macro_f1(y, pred, CLASSES) == pytest.approx(per_class.mean())
    assert macro_f1(np.array([], dtype=int), np.array([], dtype=int), CLASSES) == 0.0


def test_the_evaluation_report_uses_the_same_definition():
    from gnn.evaluation import classification_metrics

    y = np.array([0, 0, 1, 1])
    proba = np.eye(5)[[0, 1, 1, 1]]
    with pytest.warns(MissingClassWarning):
        m = classification_metrics(y, proba)
    with pytest.warns(MissingClassWarning):  # the same three classes are missing in the direct call
        direct = macro_f1(y, proba.argmax(1), CLASSES)
    assert m["macro_f1"] == pytest.approx(direct)
    assert m["missing_classes"] == ["no change", "new", "resolved"]
