"""The patients' folds of the out-of-fold predictions (gnn.splits.fold_of): stable, every fold used, not the
train/val/test split under another name."""

from __future__ import annotations

import pytest

from gnn.splits import fold_of, split_of

PATIENTS = [str(10_000 + i) for i in range(400)]


def test_folds_are_stable_and_about_equal():
    folds = [fold_of(p, 2) for p in PATIENTS]
    assert folds == [fold_of(p, 2) for p in PATIENTS] and set(folds) == {0, 1}
    assert 150 < sum(folds) < 250
    assert {fold_of(p, 5, seed=3) for p in PATIENTS} == set(range(5))
    assert [fold_of(p, 2, seed=1) for p in PATIENTS] != folds


def test_both_folds_hold_training_and_test_patients_of_the_split():
    pairs = {(fold_of(p, 2), split_of(p, 0)) for p in PATIENTS}
    assert pairs >= {(0, "train"), (1, "train"), (0, "test"), (1, "test")}


def test_one_fold_is_refused():
    with pytest.raises(ValueError, match="folds must be 2 or more, not 1"):
        fold_of("1", 1)
