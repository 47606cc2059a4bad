"""The one mapping of the graph's change words to the temporal benchmarks' label sets.

The graph's study-level ``PROGRESSION.change`` words (graph/schema.yaml; :class:`graph.terms.Change` and the
derived words of :mod:`graph.longitudinal.events`) map to:

- CheXTemporal's five classes (2026), in the order they are listed: ``new``, ``worsened``, ``stable``,
  ``improved``, ``resolved``. The graph's ``no change`` is written ``stable``.
- MS-CXR-T's three classes (Bannur et al., CVPR 2023, the ``<finding>_progression`` values of
  ``MS_CXR_T_temporal_image_classification_v1.0.0.csv``): ``worsening`` (new, worsened), ``stable``
  (no change), ``improving`` (improved, resolved).

The graph's other words, decided here:

- ``persistent`` (derived: present in both studies, nothing stated) is ``stable``: the finding is there
  before and after and no source says it moved;
- ``no longer mentioned`` (derived: present before, nothing said now) is no label: the report's silence is
  not a resolution (the event rules never count it as one), so the pair is left without a label for that
  finding and counted under :data:`NO_LONGER_MENTIONED`;
- ``repositioned`` (stated of devices only, RadGraph2's CHAN-DEV-PLACE) is no label either: it is neither
  better nor worse, and counted under :data:`REPOSITIONED`.

Both the pairs (:mod:`graph.temporal.pairs`) and the five-visit questions (:mod:`graph.temporal.multivisit_facts`)
read their labels here.
"""

from __future__ import annotations

from enum import IntEnum

from graph.terms import CHEXTEMPORAL_CLASSES, MSCXRT_CLASSES, Change

FIVE = CHEXTEMPORAL_CLASSES
"""CheXTemporal's five classes, worst to best (:data:`graph.terms.CHEXTEMPORAL_CLASSES`)."""
THREE = MSCXRT_CLASSES
"""MS-CXR-T's three classes, worst to best (:data:`graph.terms.MSCXRT_CLASSES`)."""

PERSISTENT = "persistent"
NO_LONGER_MENTIONED = "no longer mentioned"
REPOSITIONED = str(Change.REPOSITIONED)

_TO_FIVE: dict[str, str] = {
    str(Change.NEW): "new", str(Change.WORSENED): "worsened", str(Change.NO_CHANGE): "stable",
    PERSISTENT: "stable", str(Change.IMPROVED): "improved", str(Change.RESOLVED): "resolved",
}
_FIVE_TO_THREE: dict[str, str] = {"new": "worsening", "worsened": "worsening", "stable": "stable",
                                  "improved": "improving", "resolved": "improving"}
UNLABELLED: frozenset[str] = frozenset({NO_LONGER_MENTIONED, REPOSITIONED})
"""The graph's change words that give no label (counted by the word)."""


class Classes(IntEnum):
    """A label set by its size: ``3`` MS-CXR-T's, ``5`` CheXTemporal's."""

    THREE = 3
    FIVE = 5

    @property
    def names(self) -> tuple[str, ...]:
        """The label set's words (:data:`THREE` or :data:`FIVE`)."""
        return THREE if self is Classes.THREE else FIVE


def label(change: str, classes: Classes | int = Classes.FIVE) -> str | None:
    """The label of one graph change word in the label set ``classes`` (3 or 5), or None for a word that
    gives none (:data:`UNLABELLED`).

    >>> label("new", 3), label("persistent", 5), label("no change", 5), label("no longer mentioned", 3)
    ('worsening', 'stable', 'stable', None)

    Raises:
        ValueError: a word the graph does not write, or a label set other than 3 or 5.
    """
    size = Classes(int(classes))
    word = str(change)
    if word in UNLABELLED:
        return None
    if word not in _TO_FIVE:
        raise ValueError(f"{word!r} is not a change word of the graph; known: {sorted(_TO_FIVE) + sorted(UNLABELLED)}")
    five = _TO_FIVE[word]
    return five if size is Classes.FIVE else _FIVE_TO_THREE[five]


def to_three(five: str) -> str:
    """A CheXTemporal label in MS-CXR-T's three (``new`` -> ``worsening``).

    Raises:
        ValueError: not one of :data:`FIVE`.
    """
    if five not in _FIVE_TO_THREE:
        raise ValueError(f"{five!r} is not one of {', '.join(FIVE)}")
    return _FIVE_TO_THREE[five]
