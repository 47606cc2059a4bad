"""Cutting a sequence into runs (graph.sequences) and reading by batches of patients (graph.store.reads)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from graph.sequences import cut_runs
from graph.store.reads import read_by_patients


def test_runs_start_where_the_rule_says_and_hold_every_item_once():
    asked: list[tuple[list[int], int]] = []

    def gap(run: list[int], item: int) -> bool:
        asked.append((list(run), item))
        return item - run[-1] > 1

    assert cut_runs([1, 2, 4, 5, 6, 9], gap) == [[1, 2], [4, 5, 6], [9]]
    assert [item for _, item in asked] == [2, 4, 5, 6, 9]  # once per item after the first, in order
    assert asked[2] == ([4], 5)  # the run so far, never empty
    assert cut_runs([], gap) == [] and cut_runs(iter([7]), gap) == [[7]]
    assert cut_runs(range(5), lambda run, _: len(run) == 2) == [[0, 1], [2, 3], [4]]


class _Reader:
    """Answers each read with one row per patient id; records the batches and the threads reading them."""

    def __init__(self, fail_on: str | None = None):
        self.batches: list[list[str]] = []
        self.threads: set[int] = set()
        self.fail_on = fail_on

    def read(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        self.threads.add(threading.get_ident())
        ids = params["patient_ids"]
        self.batches.append(ids)
        if self.fail_on in ids:
            raise RuntimeError(f"read failed on {self.fail_on}")
        return [{"patient_id": p} for p in ids]


def test_patients_are_read_in_id_order_by_batches_one_batch_ahead():
    reader = _Reader()
    got = []
    for rows in read_by_patients(reader, "Q", [5, "3", "1", 4, "2", "3"], 2):
        got.append([r["patient_id"] for r in rows])
        assert len(reader.batches) <= len(got) + 1  # at most one read ahead of the caller
    assert got == [["1", "2"], ["3", "4"], ["5"]] and reader.batches == got
    assert threading.get_ident() not in reader.threads  # read on the second thread
    assert list(read_by_patients(_Reader(), "Q", [], 2)) == []


def test_a_failed_read_is_raised_where_its_batch_is_taken():
    batches = read_by_patients(_Reader(fail_on="3"), "Q", ["1", "2", "3"], 2)
    assert [r["patient_id"] for r in next(batches)] == ["1", "2"]
    with pytest.raises(RuntimeError, match="read failed on 3"):
        next(batches)
