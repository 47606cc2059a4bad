"""Cutting an ordered sequence into consecutive runs where a rule says so (load batches, timelines)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def cut_runs(items: Iterable[T], cut_before: Callable[[list[T], T], bool]) -> list[list[T]]:
    """``items`` in their order, cut into runs: a new run starts before an item when
    ``cut_before(run, item)`` is true, ``run`` being the current run (never empty; the rule may read its
    length and last item, and must not change it). Every item is in exactly one run, no run is empty, and
    there are no runs without items. The rule is asked once per item after the first, in order."""
    out: list[list[T]] = []
    current: list[T] = []
    for item in items:
        if current and cut_before(current, item):
            out.append(current)
            current = []
        current.append(item)
    if current:
        out.append(current)
    return out
