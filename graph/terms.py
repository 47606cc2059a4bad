"""The words the graph writes, named once: a finding's states, the sources of what is said, the stated changes.

Each is a :class:`enum.StrEnum`, so a member *is* the string the graph holds (``State.PRESENT == "present"``,
``f"{Change.NO_CHANGE}"`` is ``"no change"``, the repr is the string's): rows, Cypher parameters, tables and
JSON carry them as written, and ``State(value)`` reads a stored value back (``ValueError`` for any other
word). graph/schema.yaml lists the same words as the allowed values of the properties that hold them; a unit
test keeps both in step.

This module imports nothing of cxrkg, so every layer (graph, gnn, flows) and every check may use it.
"""

from __future__ import annotations

from enum import StrEnum


class _Word(StrEnum):
    """A word the graph writes; its repr is the string's, so messages and examples show it as stored."""

    def __repr__(self) -> str:
        return str.__repr__(self)


class State(_Word):
    """A finding's state in a study (``Observation.state``, ``StudyFinding.state``); a mention's polarity
    (``Mention.polarity``, ``Observation.polarity``) is one of the first three."""

    PRESENT = "present"
    UNCERTAIN = "uncertain"
    ABSENT = "absent"
    NOT_MENTIONED = "not_mentioned"
    """no mention in the study: the placeholder an event between two studies needs"""


POLARITIES = (State.PRESENT, State.UNCERTAIN, State.ABSENT)
"""What a mention can state, strongest first (the order an observation's polarity is chosen by)."""

POSITIVE_STATES = frozenset({State.PRESENT, State.UNCERTAIN})
"""The states that count as positive: a finding stated uncertain ("possible effusion") counts as present
wherever cxrkg asks whether a study has a finding (report scoring, question sets, CXRTrek, stage 6); the
longitudinal events and episodes keep the two apart."""


class Source(_Word):
    """Who says it: ``Mention.source``, ``Report.source`` and ``PROGRESSION.source``."""

    CHEST_IMAGENOME = "chest_imagenome"
    """Chest ImaGenome scene graphs"""
    RADGRAPH = "radgraph"
    """RadGraph-format documents (RadGraph, RadGraph-XL, RadGraph2, and every extractor's output)"""
    LUNGUAGE = "lunguage"
    """Lunguage sequential structured reports"""
    NIH_CHESTXRAY14 = "nih_chestxray14"
    """NIH ChestX-ray14's text-mined labels (graph.datasets.nih writes them as scene graphs)"""
    NIH_GOOGLE2019 = "nih_google2019"
    """Google's radiologist-adjudicated labels of NIH ChestX-ray14 images (likewise)"""
    PRESENCE = "presence"
    """a derived PROGRESSION edge: the event rules over the states of two studies"""
    GEOMETRY = "geometry"
    """a GeometryObservation and its derived PROGRESSION edges: the anatomy boxes' measurements
    (graph.measurements.trends), never a report's statement"""
    GNN = "gnn"
    """a PROGRESSION edge the progression model wrote back"""


STATED_SOURCES = (Source.CHEST_IMAGENOME, Source.RADGRAPH, Source.LUNGUAGE, Source.NIH_CHESTXRAY14,
                  Source.NIH_GOOGLE2019)
"""The sources an input file gives (mentions, reports, stated changes); the others only ever label derived or
predicted PROGRESSION edges."""


class Change(_Word):
    """A stated change against a prior study (``Mention.change``, a stated ``PROGRESSION.change``): the
    progression classes of RadGraph2 and Chest ImaGenome as graph/vocab/chest_xray.yaml maps their labels."""

    NEW = "new"
    WORSENED = "worsened"
    IMPROVED = "improved"
    NO_CHANGE = "no change"
    RESOLVED = "resolved"
    REPOSITIONED = "repositioned"
    """a device moved (RadGraph2's CHAN-DEV-PLACE, CHAN-DISP); not one of the predicted classes"""


PROGRESSION_CLASSES = (Change.IMPROVED, Change.WORSENED, Change.NO_CHANGE, Change.NEW, Change.RESOLVED)
"""The five progression classes cxrkg predicts, in the model's class order."""

CHEXTEMPORAL_CLASSES: tuple[str, ...] = ("new", "worsened", "stable", "improved", "resolved")
"""The temporal benchmarks' five classes (CheXTemporal, 2026), worst to best, as cxrkg's exports write them
(graph.temporal.labels maps the graph's change words to them; ``no change`` is written ``stable``)."""
MSCXRT_CLASSES: tuple[str, ...] = ("worsening", "stable", "improving")
"""MS-CXR-T's three classes (Bannur et al., CVPR 2023, its ``<finding>_progression`` values), worst to best."""


BOOTSTRAP_DRAWS = 2000
"""The default number of bootstrap draws behind every printed 95 % interval (graph.bootstrap, every command's
``--bootstrap``): percentile end points need far more draws than a standard error (Efron and Tibshirani, "An
Introduction to the Bootstrap", 1993, ask for about 1,000 or more for intervals)."""
