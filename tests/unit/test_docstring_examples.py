"""The examples in public docstrings run, and print what they show (``doctest``): every module of graph, gnn
and flows that holds a ``>>>`` line is found by reading the files, so a new example is run without a list
(an example that needs a running graph says ``# doctest: +SKIP``)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WITH_EXAMPLES = sorted(".".join(p.relative_to(REPO).with_suffix("").parts)
                       for package in ("graph", "gnn", "flows") for p in (REPO / package).rglob("*.py")
                       if any(">>> " in line and "+SKIP" not in line
                              for line in p.read_text(encoding="utf-8").splitlines()))


def test_the_examples_are_found():
    assert len(WITH_EXAMPLES) >= 4, WITH_EXAMPLES


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_examples_of_a_module_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, result
