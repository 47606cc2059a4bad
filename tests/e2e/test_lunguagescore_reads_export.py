"""LUNGUAGESCORE's own reader (PyPI ``lunguage-score`` 1.0.0, installed ``--no-deps`` by ``make install``) on
``cxrkg export lunguage`` of cohorts in the real Neo4j, as its gold file and as its prediction file: the entity
groups and episodes its scorer holds are cxrkg's.

Its module imports ``transformers`` at the top; its reader never calls it, and its scorer's first call of it is
the download of an encoder from a model hub (``AutoTokenizer.from_pretrained``), which no test can make. A
stand-in ``transformers`` module, scoped to the test, answers that call by raising :class:`ModelHubUnreachable`
with the model's name, so ``calculate_lunguagescore`` runs its own file and column handling and its
``DataConverter`` up to the first model it would fetch.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import types
from collections import Counter

import pandas as pd
import pytest

from flows.cli.export import export_lunguage
from graph.formats.lunguage import read_lunguage, write_made_up_cohort
from graph.longitudinal.sequential_reports import episode_numbers
from graph.synth import write_cohort
from tests.fixtures.loading import load_into

LUNGUAGE_SCORE_VERSION = "1.0.0"
#: the scorer's first encoder (lunguagescore.py, SubjectMatcher.semantic_match)
FIRST_ENCODER = "FremyCompany/BioLORD-2023"


class ModelHubUnreachable(RuntimeError):
    """The stand-in's answer to a model download."""


@pytest.fixture()
def lunguagescore(monkeypatch):
    """``lunguage_score.lunguagescore`` imported over a stand-in ``transformers``, and the model names it asked
    for; both are gone from ``sys.modules`` after the test."""
    try:
        version = importlib.metadata.version("lunguage-score")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("lunguage-score is not installed (make install: pip install --no-deps lunguage-score)")
    assert version == LUNGUAGE_SCORE_VERSION
    asked: list[str] = []

    class _Auto:
        @staticmethod
        def from_pretrained(name, *args, **kwargs):
            asked.append(name)
            raise ModelHubUnreachable(name)

    stand_in = types.ModuleType("transformers")
    stand_in.AutoModel = stand_in.AutoTokenizer = _Auto
    monkeypatch.setitem(sys.modules, "transformers", stand_in)
    for name in [m for m in sys.modules if m.split(".")[0] == "lunguage_score"]:
        monkeypatch.delitem(sys.modules, name)
    yield importlib.import_module("lunguage_score.lunguagescore"), asked
    for name in [m for m in sys.modules if m.split(".")[0] == "lunguage_score"]:
        del sys.modules[name]


@pytest.fixture()
def exported(store, tmp_path):
    """A made-up Lunguage file (own entity and temporal groups, a recurrence) and a synthetic cohort (groups by
    region and finding, derived episodes) loaded, then exported as gold and as a prediction named as
    LUNGUAGESCORE looks for one (``<model>_SR_seq.csv`` in the benchmark folder)."""
    write_made_up_cohort(tmp_path / "lunguage", patients=3, seed=3)
    write_cohort(tmp_path / "synth", patients=3, seed=5)
    for folder in ("lunguage", "synth"):
        load_into(store, tmp_path / folder)
    gold, bench = tmp_path / "gold.csv", tmp_path / "benchmark_SR"
    bench.mkdir()
    export_lunguage(store, gold, "gold")
    export_lunguage(store, bench / "cxrkg_SR_seq.csv", "prediction")
    return gold, bench


def _cxrkg_groups(gold) -> Counter:
    """(subject, study, entity, entity group, episode number or None) of every exported row, as cxrkg wrote it."""
    rows = read_lunguage(gold).rows
    return Counter((r.subject_id, r.study_id, r.ent, r.gt_entity_group, n) for r, n in zip(rows, episode_numbers(rows), strict=True))


def _seen_groups(structured: dict) -> Counter:
    """The same of LUNGUAGESCORE's structured dict (subject -> study -> entity -> entries)."""
    return Counter((str(subject), str(study), entity, entry.get("entity_group"),
                    None if pd.isna(entry.get("episode", float("nan"))) else int(entry["episode"]))
                   for subject, studies in structured.items() for study, entities in studies.items()
                   for entity, entries in entities.items() for entry in entries)


def test_lunguagescore_reads_the_export_as_gold_and_as_prediction(exported, lunguagescore, monkeypatch):
    gold, bench = exported
    module, asked = lunguagescore
    converted: list[dict] = []
    convert = module.DataConverter.convert_to_structured_dict

    def recording(self, df):
        converted.append(convert(self, df))
        return converted[-1]

    monkeypatch.setattr(module.DataConverter, "convert_to_structured_dict", recording)
    with pytest.raises(ModelHubUnreachable):
        module.calculate_lunguagescore("sequential", "cxrkg", str(gold), str(bench))
    assert asked == [FIRST_ENCODER]  # the score itself starts with a model download: it cannot run offline
    pred, ref = converted  # calculate_lunguagescore converts the prediction, then the gold file
    ours = _cxrkg_groups(gold)
    assert sum(ours.values()) > 50 and len({k[4] for k in ours}) >= 3  # episodes 1, 2 (a recurrence) and none
    assert _seen_groups(ref) == ours
    assert _seen_groups(pred) == ours


def test_the_gold_columns_read_as_a_prediction_lose_the_groups(exported, lunguagescore):
    """Why --role prediction exists: LUNGUAGESCORE renames gt_entity_group only on its gold file, so the gold
    columns read as a prediction give its rows no entity group (its matcher calls them 'unknown')."""
    gold, _ = exported
    module, _ = lunguagescore
    weights = module._load_metric_weights()
    converter = module.DataConverter([weights["TEMPORAL_WEIGHTS"], weights["REL_WEIGHTS"]], "sequential")
    seen = _seen_groups(converter.convert_to_structured_dict(pd.read_csv(gold)))
    assert seen and {k[3] for k in seen} == {None}
