"""F1RadGraph through the ``radgraph`` package's own reward functions (``radgraph/rewards.py``).

Source: Delbrouck et al., "Improving the Factual Correctness of Radiology Report Generation with Semantic
Rewards", Findings of EMNLP 2022; the code is radgraph 0.1.18 (Stanford-AIMI, MIT), ``rewards.py``:
``compute_reward(hypothesis, reference, reward_level)`` at three levels, each a set F1 over the entities of
two RadGraph annotations:

* ``simple``: (tokens, label) per entity;
* ``partial``: (tokens, label, True) for an entity with relations, (tokens, label) for one without;
* ``complete``: per relation (tokens lowercased, label, relation type, target tokens lowercased); an
  entity without relations gives (tokens, label).

A pair where either side has no entity scores 0 at every level; the corpus figure is the plain mean over
reports. Case: radgraph 0.1.18 compares ``simple`` and ``partial`` tokens as written (case-sensitive) and
lowercases only ``complete``'s relation tuples (the repository's main branch lowercases all levels); cxrkg
calls 0.1.18's functions, so it matches 0.1.18.

``import radgraph.rewards`` runs the package's ``__init__``, which imports the model's torch, transformers,
dotmap and allennlp code; ``rewards.py`` itself imports nothing. :func:`rewards_module` therefore loads that
one file from the installed package without running its ``__init__``, so scoring needs the package
installed (``make install`` installs it without its dependencies) but not the model's.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

from graph.errors import CxrkgError

#: the radgraph release whose reward functions cxrkg calls (constraints.txt pins it)
RADGRAPH_VERSION = "0.1.18"
LEVELS = ("simple", "partial", "complete")


class RewardsUnavailable(CxrkgError, RuntimeError):
    """The ``radgraph`` package is not installed, or is another release than :data:`RADGRAPH_VERSION`."""


@functools.cache
def rewards_module() -> ModuleType:
    """The installed ``radgraph`` package's ``rewards.py``, loaded once without the package's ``__init__``
    (the package's own module when something imported it already).

    Raises:
        RewardsUnavailable: radgraph is not installed, is not 0.1.18, or has no rewards.py.
    """
    if (loaded := sys.modules.get("radgraph.rewards")) is not None:
        return loaded
    spec = importlib.util.find_spec("radgraph")
    if spec is None or not spec.submodule_search_locations:
        raise RewardsUnavailable("F1RadGraph needs the radgraph package's reward functions: "
                                 f"pip install --no-deps radgraph=={RADGRAPH_VERSION} (make install does)")
    version = importlib.metadata.version("radgraph")
    if version != RADGRAPH_VERSION:
        raise RewardsUnavailable(f"radgraph {version} is installed; cxrkg scores with {RADGRAPH_VERSION}'s reward "
                                 f"functions (their case rules differ): pip install --no-deps radgraph=={RADGRAPH_VERSION}")
    path = Path(next(iter(spec.submodule_search_locations))) / "rewards.py"
    file_spec = importlib.util.spec_from_file_location("cxrkg_radgraph_rewards", path)
    if file_spec is None or file_spec.loader is None or not path.is_file():
        raise RewardsUnavailable(f"{path}: the radgraph package has no rewards.py")
    module = importlib.util.module_from_spec(file_spec)
    file_spec.loader.exec_module(module)
    return module


def f1radgraph(hypothesis: Mapping[str, Any], reference: Mapping[str, Any]) -> tuple[float, float, float]:
    """F1RadGraph (simple, partial, complete) of one hypothesis annotation against one reference annotation,
    each a RadGraph document ``{"text", "entities": {id: {tokens, label, start_ix, end_ix, relations}}}``;
    each figure in [0, 1].

    Raises:
        RewardsUnavailable: see :func:`rewards_module`.
    """
    simple, partial, complete = rewards_module().compute_reward(hypothesis, reference, "all")
    return float(simple), float(partial), float(complete)
