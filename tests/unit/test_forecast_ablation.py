"""The forecasting ablation (gnn/forecast/ablation.py) and the graph forecaster's YAML config: removed
inputs are constant in every split, the subsample is fixed per patient, and a signal that lives only
across findings is lost by both models exactly when the other findings are removed."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from gnn.errors import GnnError
from gnn.forecast.rows import FEATURES, build_forecast_table
from gnn.forecast.baselines import gbt
from gnn.forecast.ablation import (ALL_INPUTS, GROUPS, OWN_ONLY, ablation_models, ablation_rows, run_ablation,
                                   subsample_training, variants, without)
from gnn.forecast.model import GRAPH_FORECASTER, ForecastGnnConfig
from tests.fixtures.forecast import one_leads_to_another

TREES = "gradient-boosted trees"


@pytest.fixture(scope="module")
def table():
    return build_forecast_table(*one_leads_to_another())


def test_groups_cover_every_input_once_and_variants_remove_them(table):
    named = [c for cols in GROUPS.values() for c in cols]
    assert sorted(named) == sorted(FEATURES) and len(named) == len(set(named))
    v = variants()
    assert v[ALL_INPUTS] == () and v[OWN_ONLY] == ("other findings", "age and sex", "follow-up")
    masked = without(table, ("age and sex",))
    cols = [FEATURES.index("age"), FEATURES.index("sex_female")]
    assert (masked.x[:, cols] == 0).all() and (table.x[:, cols] != 0).any()
    rest = [i for i in range(table.x.shape[1]) if i not in cols]
    assert np.array_equal(masked.x[:, rest], table.x[:, rest])


def test_subsample_keeps_validation_and_test_whole_and_is_fixed_per_patient(table):
    sub = subsample_training(table, 0.5)
    for split in ("val", "test"):
        assert sub.part(split)[0].equals(table.part(split)[0])
    kept = set(sub.part("train")[0]["patient_id"])
    assert 0.3 < len(kept) / table.part("train")[0]["patient_id"].nunique() < 0.7
    assert set(subsample_training(table, 0.5).part("train")[0]["patient_id"]) == kept
    assert kept <= set(subsample_training(table, 0.8).part("train")[0]["patient_id"])  # more patients, a superset
    with pytest.raises(ValueError, match="train fraction 0"):
        subsample_training(table, 0)


def test_a_signal_across_findings_is_lost_only_without_the_other_findings(table):
    trees = run_ablation(table, {TREES: lambda _: partial(gbt, max_iter=40)}, bootstrap=10)
    assert set(trees.point) == {(TREES, v) for v in variants()}
    assert trees.delta[(TREES, ALL_INPUTS)]["onset_auroc"] == 0
    lost = {v: d["onset_auroc"] for (_, v), d in trees.delta.items()}
    assert lost["without other findings"] < -0.1 and lost[OWN_ONLY] < -0.1
    assert trees.delta_interval[(TREES, "without other findings")]["onset_auroc"][1] < 0  # excludes no change
    kept = [d for v, d in lost.items() if v not in ("without other findings", OWN_ONLY)]
    assert min(kept) > lost["without other findings"] + 0.05
    rows = ablation_rows(trees)
    assert len(rows) == len(variants()) and rows[0]["onset_auroc change"] == ""
    assert all(r["onset_auroc change"].startswith(("+", "-")) for r in rows if r["inputs"] != ALL_INPUTS)


def test_without_other_findings_each_finding_of_the_graph_attends_to_itself_only():
    import torch

    from gnn.forecast.model import FindingGraphNet

    torch.manual_seed(0)
    x = torch.randn(3, 4, 5)
    moved = x.clone()
    moved[:, 1:] += 1.0  # every finding but the first changes
    for attend_across, same in ((False, True), (True, False)):
        net = FindingGraphNet(4, 5, hidden=8, heads=2, attend_across=attend_across).eval()
        with torch.no_grad():
            assert torch.allclose(net(x)[:, 0], net(moved)[:, 0]) == same
    models = ablation_models(ForecastGnnConfig(hidden=8, heads=2, epochs=9), max_epochs=1)
    assert set(models) == {TREES, GRAPH_FORECASTER}


def test_forecast_config_reads_yaml_and_names_bad_keys(tmp_path):
    from gnn.forecast.model import DEFAULT_FORECAST_CONFIG

    assert ForecastGnnConfig.from_file(DEFAULT_FORECAST_CONFIG) == ForecastGnnConfig()  # the file is the defaults
    path = tmp_path / "f.yaml"
    path.write_text("hidden: 32\nlr: 1\nattend_across: false\n")
    cfg = ForecastGnnConfig.from_file(path)
    assert (cfg.hidden, cfg.lr, cfg.attend_across, cfg.epochs) == (32, 1.0, False, 12)
    path.write_text("hiden: 32\n")
    with pytest.raises(GnnError, match="hiden.*options: hidden"):
        ForecastGnnConfig.from_file(path)
    path.write_text("hidden: 30\nheads: 4\n")
    with pytest.raises(GnnError, match="divisible by heads 4"):
        ForecastGnnConfig.from_file(path)


def test_a_saved_forecaster_predicts_as_before_and_a_foreign_file_is_refused(tmp_path):
    from gnn.forecast.model import gnn_forecaster, load_forecaster

    table = build_forecast_table(*one_leads_to_another(n_patients=60))
    fitted = gnn_forecaster(ForecastGnnConfig(hidden=8, epochs=2, attend_across=False))(table)
    assert [h["epoch"] for h in fitted.history] == [1, 2] and fitted.history[0]["train_loss"] > 0
    fitted.save(tmp_path / "f.pt", "abc")
    loaded = load_forecaster(tmp_path / "f.pt")
    assert (loaded.findings, loaded.snapshot_hash, loaded.config) == (table.findings, "abc", fitted.config)
    assert loaded.model_version == fitted.model_version and loaded.history == fitted.history
    assert np.allclose(loaded(table.x), fitted(table.x))
    (tmp_path / "x.yaml").write_text("hidden: 8\n")
    for bad in (tmp_path / "x.yaml", tmp_path / "missing.pt"):
        with pytest.raises(GnnError, match="not a readable next-study forecaster"):
            load_forecaster(bad)
