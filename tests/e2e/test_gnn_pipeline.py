"""Export -> HeteroData -> train -> evaluate -> predict / write-back -> compare, against the real Neo4j,
on one small synthetic cohort loaded once for the module; then the command line and the Prefect flow."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from graph.ingest import discover, load_files, plan_ingest
from graph.store.queries import get_query, run_named
from graph.synth import write_cohort
from graph.vocabulary import vocabulary
from gnn.dataset import CLASSES, EDGE_TYPES, LABEL_EDGE, load_dataset, split_of, to_networkx
from gnn.errors import GnnError
from gnn.export import export_snapshot, read_graph_tables

V = vocabulary()
REPO = Path(__file__).resolve().parents[2]
SMOKE = {"model": "sage", "hidden": 16, "layers": 2, "lr": 0.01, "epochs": 2, "patience": 2, "batch_size": 16}

STATED = ("MATCH ()-[r:PROGRESSION]->() WHERE r.source IN ['chest_imagenome', 'radgraph'] "
          "RETURN r.progression_id AS id, r.change AS change ORDER BY id")


@pytest.fixture(scope="module")
def cohort(neo4j_server, tmp_path_factory):
    """A 30-patient cohort with region embeddings, ingested into an empty graph."""
    from graph.store import reset_shared_store, shared_store

    folder = tmp_path_factory.mktemp("cohort")
    summary = write_cohort(folder, patients=30, seed=11, embeddings=True)
    reset_shared_store()
    store = shared_store()
    store.clear()
    store.ensure_schema(V)
    files = discover([folder])
    plan = plan_ingest(files, {}, V.version)
    result = load_files(store, plan.load, V, plan.changed, plan.metadata, None)
    store.link_patients(result.patients)
    snap = tmp_path_factory.mktemp("snapshot")
    manifest = export_snapshot(store, snap, embeddings=summary.embeddings)
    yield {"store": store, "folder": folder, "snapshot": snap, "manifest": manifest, "embeddings": summary.embeddings,
           "tmp": tmp_path_factory.mktemp("work")}
    reset_shared_store()


def test_snapshot_is_versioned_deterministic_and_loads_into_heterodata(cohort):
    store, snap, manifest = cohort["store"], cohort["snapshot"], cohort["manifest"]
    assert manifest.rows["studies"] > 30 and manifest.rows["observations"] > 100 and manifest.rows["labels"] > 10
    assert manifest.rows["region_embeddings"] > 0 and manifest.embedding_dim == 32
    assert manifest.vocabulary_versions == [V.version]
    saved = json.loads((snap / "manifest.json").read_text())
    assert saved["content_hash"] == manifest.content_hash and set(saved["schema"]) >= {"studies", "labels"}
    # the same graph gives the same hash, from the files or in memory; small export chunks change nothing
    again = export_snapshot(store, cohort["tmp"] / "again", chunk=7)
    assert again.content_hash == manifest.content_hash
    assert read_graph_tables(store).content_hash == manifest.content_hash

    _, data = load_dataset(snap)
    assert data.embedding_dim == 32 and data.num_features == 14 + 33
    assert data.samples[0]["study"].x.shape == (2, 2 + 33)
    sample = data.samples[0]
    assert set(sample.node_types) == {"observation", "anatomy", "finding", "study"}
    assert set(EDGE_TYPES) <= set(sample.edge_types)
    assert ("anatomy", "rev_located_at", "observation") in sample.edge_types
    lab = sample[LABEL_EDGE]
    k = lab.edge_label_index.shape[1]
    assert sample["observation"].num_nodes == 2 * k and lab.edge_label.shape == (k,)
    # the current side of each pair is the current study's node, the prior side the prior study's
    x = sample["observation"].x
    assert bool((x[lab.edge_label_index[0], 13] == 1).all()) and bool((x[lab.edge_label_index[1], 13] == 0).all())
    assert (data.pairs["label"] >= 0).sum() > 10 and set(data.pairs["label"]) <= set(range(-1, len(CLASSES)))

    # patient split: every patient in exactly one split, deterministic, and a new seed reshuffles it
    per_patient = data.pairs.groupby("patient_id")["split"].nunique()
    assert (per_patient == 1).all()
    patients = sorted(data.pairs["patient_id"].unique())
    assert [split_of(p, 0) for p in patients] == [split_of(p, 0) for p in patients]
    assert [split_of(p, 0) for p in patients] != [split_of(p, 1) for p in patients]
    assert {split_of(p, 0) for p in patients} == {"train", "val", "test"}


def test_networkx_view_of_one_patient(cohort):
    tables = read_graph_tables(cohort["store"])
    pid = max({r["patient_id"] for r in tables.tables["studies"]},
              key=lambda p: sum(r["patient_id"] == p for r in tables.tables["studies"]))
    g = to_networkx(tables, pid)
    studies = [n for n, d in g.nodes(data=True) if d["label"] == "Study"]
    assert len(studies) == sum(r["patient_id"] == pid for r in tables.tables["studies"])
    assert any(d["type"] == "PRIOR" for _, _, d in g.edges(data=True))
    assert any(d["label"] == "Observation" for _, d in g.nodes(data=True))


def test_models_forward_on_cpu_and_cuda_is_refused_when_absent(cohort):
    from gnn.training import TrainConfig, build_model, resolve_device
    from torch_geometric.data import Batch

    _, data = load_dataset(cohort["snapshot"])
    batch = Batch.from_data_list(data.samples[:4])
    for conv in ("sage", "gat", "hgt"):
        model = build_model(data, TrainConfig(model=conv, hidden=8, layers=1))
        out = model(batch)
        assert out.shape == (batch[LABEL_EDGE].edge_label_index.shape[1], len(CLASSES))
    if not torch.cuda.is_available():
        with pytest.raises(GnnError, match="CUDA is not available"):
            resolve_device("cuda")


def test_pair_context_pools_other_pairs_of_the_same_study_pair_only(cohort):
    from gnn.models import _mean_of_others
    from gnn.training import TrainConfig, build_model
    from torch_geometric.data import Batch

    z = torch.tensor([[1.0, 0.0], [3.0, 2.0], [5.0, 4.0], [7.0, 6.0]])
    group = torch.tensor([0, 0, 0, 2])
    # rows 0-2 share a group: each gets the mean of the two others; row 3 is alone
    expected = torch.tensor([[4.0, 3.0], [3.0, 2.0], [2.0, 1.0], [0.0, 0.0]])
    assert torch.equal(_mean_of_others(z, group), expected)

    _, data = load_dataset(cohort["snapshot"])
    torch.manual_seed(0)
    model = build_model(data, TrainConfig(hidden=8, layers=1)).eval()
    first, second = data.samples[0], data.samples[1]
    n = first[LABEL_EDGE].edge_label_index.shape[1]
    with torch.no_grad():
        alone = model(Batch.from_data_list([first]))
        together = model(Batch.from_data_list([first, second]))
        changed = second.clone()
        changed["observation"].x = changed["observation"].x + 1.0
        other = model(Batch.from_data_list([first, changed]))
    assert torch.allclose(alone, together[:n], atol=1e-6) and torch.allclose(together[:n], other[:n], atol=1e-6)
    assert not torch.allclose(together[n:], other[n:])


def test_checkpoints_from_before_the_pair_context_still_load(cohort):
    from gnn.training import TrainConfig, load_checkpoint, save_checkpoint, train_model

    _, data = load_dataset(cohort["snapshot"])
    result = train_model(data, TrainConfig.from_dict({**SMOKE, "pair_context": False}))
    path = cohort["tmp"] / "before.pt"
    save_checkpoint(path, result, data)
    blob = torch.load(path, weights_only=True)
    del blob["meta"]["config"]["pair_context"], blob["meta"]["config"]["lr_schedule"]
    torch.save(blob, path)
    model, meta = load_checkpoint(path)
    assert not model.pair_context and "readout.3.weight" in model.state_dict()


def test_weight_averaging_scores_and_returns_the_averaged_weights(cohort):
    from gnn.training import TrainConfig, train_model

    _, data = load_dataset(cohort["snapshot"])
    cfg = {**SMOKE, "patience": 5}

    def weights(ema_decay: float) -> tuple[torch.Tensor, float]:
        result = train_model(data, TrainConfig.from_dict({**cfg, "ema_decay": ema_decay}))
        return torch.cat([p.flatten() for p in result.model.parameters()]), result.val_macro_f1

    raw, raw_f1 = weights(0.0)
    near_zero, near_zero_f1 = weights(1e-12)  # the average is the latest weights: the same run
    slow, _ = weights(0.999)  # after two epochs the average is still near the first step's weights
    assert torch.allclose(raw, near_zero, atol=1e-6) and raw_f1 == pytest.approx(near_zero_f1)
    assert (raw - slow).abs().max() > 1e-3


def test_train_checkpoint_evaluate(cohort):
    from gnn.evaluation import evaluate, write_report
    from gnn.training import TrainConfig, check_compatible, load_checkpoint, save_checkpoint, train_model

    _, data = load_dataset(cohort["snapshot"])
    result = train_model(data, TrainConfig.from_dict(SMOKE))
    assert 1 <= result.best_epoch <= 2 and len(result.history) == 2 and 0 <= result.val_macro_f1 <= 1
    path = cohort["tmp"] / "model.pt"
    meta = save_checkpoint(path, result, data)
    model, loaded = load_checkpoint(path)
    assert loaded["snapshot_hash"] == data.content_hash == cohort["manifest"].content_hash
    assert loaded["model_version"] == meta["model_version"]
    check_compatible(loaded, data)
    with pytest.raises(GnnError, match="hashes to"):
        check_compatible({**loaded, "snapshot_hash": "0" * 64}, data)
    _, no_emb = load_dataset(cohort["snapshot"], use_embeddings=False)
    with pytest.raises(GnnError, match="region embeddings"):
        check_compatible(loaded, no_emb, check_hash=False)
    (cohort["tmp"] / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(GnnError, match="not a readable checkpoint"):
        load_checkpoint(cohort["tmp"] / "junk.pt")

    report = evaluate(data, TrainConfig.from_dict(SMOKE), seeds=(0, 1, 2))
    assert set(report["models"]) == {"gnn", "majority", "presence_rule", "pair_gbt"}
    for m in report["models"].values():
        assert len(m["runs"]) == 3
        s = m["summary"]["five_class"]
        assert 0 <= s["macro_f1"]["mean"] <= 1 and s["macro_f1"]["sd"] >= 0
        assert set(s["per_class"]) == set(CLASSES)
        assert np.sum(s["confusion"]) == 3 * report["test_pairs"]
        assert set(m["summary"]["three_class"]["per_class"]) == {"improved", "worsened", "no change"}
    # the majority baseline predicts one class (the training majority): its accuracy is that class's
    # share of the test pairs, and it is the only class with any recall
    maj = report["models"]["majority"]["summary"]["five_class"]
    chosen = [c for c, v in maj["per_class"].items() if v["recall"] > 0]
    assert maj["accuracy"]["sd"] == 0 and len(chosen) == 1
    assert maj["accuracy"]["mean"] == pytest.approx(maj["per_class"][chosen[0]]["support"] / report["test_pairs"])
    paths = write_report(report, cohort["tmp"] / "evaluation")
    assert json.loads(paths["json"].read_text())["test_pairs"] == report["test_pairs"]
    assert paths["plot"].stat().st_size > 1000 and "macro-F1" in paths["text"].read_text()


def test_predict_writes_back_without_touching_stated_edges_and_compare_answers(cohort):
    from gnn.compare import compare
    from gnn.prediction import predict
    from gnn.training import TrainConfig, save_checkpoint, train_model

    store = cohort["store"]
    _, data = load_dataset(cohort["snapshot"])
    path = cohort["tmp"] / "predict.pt"
    save_checkpoint(path, train_model(data, TrainConfig.from_dict({**SMOKE, "epochs": 1})), data)
    before = store.read(STATED)
    with pytest.raises(GnnError, match="region_embeddings|region embeddings"):
        predict(store, path)  # trained with embeddings, none given
    frame, summary = predict(store, path, write_back=True, embeddings=cohort["embeddings"])
    assert summary.edges_written > 0 and summary.edges_written == int((~frame["stated"]).sum())
    assert store.read(STATED) == before  # stated edges untouched
    gnn = store.read("MATCH (o)-[r:PROGRESSION {source: 'gnn'}]->(po) RETURN r.change AS change, r.probability AS p, "
                     "r.probabilities AS ps, r.classes AS classes, r.model_version AS v, "
                     "EXISTS { (o)-[x:PROGRESSION]->(po) WHERE x.source IN ['chest_imagenome', 'radgraph'] } AS stated")
    assert len(gnn) == summary.edges_written
    assert all(r["change"] in CLASSES and 0 < r["p"] <= 1 and abs(sum(r["ps"]) - 1) < 1e-3 and not r["stated"]
               and r["classes"] == list(CLASSES) and r["v"] == summary.model_version for r in gnn)
    # again: replaced, not duplicated; the snapshot hash does not see gnn edges or their placeholders
    _, again = predict(store, path, write_back=True, embeddings=cohort["embeddings"])
    assert store.read("MATCH ()-[r:PROGRESSION {source: 'gnn'}]->() RETURN count(r) AS n")[0]["n"] == again.edges_written
    assert read_graph_tables(store).content_hash == cohort["manifest"].content_hash

    # the named query shows stated and predicted side by side
    pid = frame["patient_id"].value_counts().index[0]
    rows = run_named(store, get_query("stated_vs_predicted"), {"patient_id": pid})
    assert any(r["predicted"] for r in rows) and any(r["stated"] for r in rows)

    # compare: any two studies, stated change first, else the model with its probability
    studies = [r["study_id"] for r in store.read(
        "MATCH (:Patient {patient_id: $p})-[:HAS_STUDY]->(s) RETURN s.study_id AS study_id ORDER BY s.study_order", p=pid)]
    latest = compare(store, pid, checkpoint=path, embeddings=cohort["embeddings"])
    assert (latest.current_study_id, latest.prior_study_id, latest.consecutive) == (studies[-1], studies[-2], True)
    assert latest.answer.endswith(".") and latest.rows
    for r in latest.rows:
        assert r.source.startswith("stated") == bool([s for s in r.stated if s.split(" (")[0] in CLASSES])
        assert (r.probability is None) == r.source.startswith("stated")
    if len(studies) >= 3:
        far = compare(store, pid, current=studies[-1], prior=studies[0], checkpoint=path, embeddings=cohort["embeddings"])
        assert not far.consecutive and far.days > latest.days
    stored = compare(store, pid)  # no checkpoint registered here: stored gnn edges or the rule
    assert all(r.source.startswith("stated") or r.source in ("gnn (stored)", "presence rule") for r in stored.rows)
    assert any(r.source == "gnn (stored)" for r in stored.rows) or not any(
        r.source == "gnn" for r in latest.rows)
    effusion = compare(store, pid, finding="effusions", checkpoint=path, embeddings=cohort["embeddings"])
    assert all(r.finding == "pleural effusion" for r in effusion.rows)

    with pytest.raises(GnnError, match="not in the vocabulary"):
        compare(store, pid, finding="dragon scales")
    with pytest.raises(GnnError, match="not earlier"):
        compare(store, pid, current=studies[0], prior=studies[-1])
    with pytest.raises(GnnError, match="not a study of patient"):
        compare(store, pid, current="99999999")
    with pytest.raises(GnnError, match="no patient"):
        compare(store, "19999999")


def test_metrics_match_hand_computation():
    from gnn.evaluation import classification_metrics, to_three

    y = np.array([0, 0, 1, 2, 3, 4])
    proba = np.eye(5)[[0, 1, 1, 2, 3, 0]].astype(np.float32)
    m = classification_metrics(y, proba)
    # per class F1: improved 2*1/(2+1+1)=0.5, worsened 2/3, no change 1, new 1, resolved 0
    assert m["per_class"]["improved"]["f1"] == pytest.approx(0.5)
    assert m["per_class"]["worsened"]["f1"] == pytest.approx(2 / 3)
    assert m["macro_f1"] == pytest.approx((0.5 + 2 / 3 + 1 + 1 + 0) / 5)
    assert m["accuracy"] == pytest.approx(4 / 6)
    assert to_three(np.array([[0.1, 0.2, 0.3, 0.25, 0.15]])).tolist()[0] == pytest.approx([0.25, 0.45, 0.3])


def test_command_line(cohort, monkeypatch):
    from flows.cli import app

    monkeypatch.setenv("CXRKG_HOME", str(cohort["tmp"] / "home"))
    runner = CliRunner()
    cfg = cohort["tmp"] / "smoke.json"
    cfg.write_text(json.dumps({**SMOKE, "epochs": 1}))
    res = runner.invoke(app, ["train", "--config", str(cfg), "--snapshot", str(cohort["snapshot"])])
    assert res.exit_code == 0, res.output
    assert (cohort["tmp"] / "home" / "models" / "latest.json").exists()
    pid = json.loads(Path(cohort["snapshot"], "manifest.json").read_text()) and \
        read_graph_tables(cohort["store"]).tables["studies"][-1]["patient_id"]
    res = runner.invoke(app, ["compare", "--patient", pid, "--embeddings", str(cohort["embeddings"]), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["patient_id"] == pid
    for args, message in ((["compare", "--patient", pid, "--finding", "dragon scales"], "not in the vocabulary"),
                          (["compare", "--patient", "19999999"], "no patient"),
                          (["train", "--config", str(REPO / "gnn" / "configs" / "gnn.yaml"), "--snapshot", str(cohort["tmp"])],
                           "not a cxrkg snapshot"),
                          (["predict"], "trained with 32 region embeddings")):
        res = runner.invoke(app, args)
        assert res.exit_code == 1, (args, res.output)
        assert message in res.output and "Traceback" not in res.output


def test_export_snapshot_and_its_old_name_write_the_same_snapshot(cohort, tmp_path):
    """`cxrkg export snapshot --out DIR` is the command; `cxrkg export --out DIR`, its name before `export`
    became a group, still writes the same snapshot for one release, with a one-line notice of the new name."""
    from flows.cli import app

    runner = CliRunner()
    new = runner.invoke(app, ["export", "snapshot", "--out", str(tmp_path / "new")])
    assert new.exit_code == 0, new.output
    assert "notice" not in new.output
    old = runner.invoke(app, ["export", "--out", str(tmp_path / "old")])
    assert old.exit_code == 0, old.output
    assert [line for line in old.output.splitlines() if line.startswith("notice:")] == [
        "notice: `cxrkg export --out DIR` is now `cxrkg export snapshot --out DIR`; the old form goes in the next "
        "release"]
    hashes = [json.loads((tmp_path / d / "manifest.json").read_text())["content_hash"] for d in ("new", "old")]
    assert hashes[0] == hashes[1]
    mixed = runner.invoke(app, ["export", "--out", str(tmp_path / "x"), "lunguage"])
    assert mixed.exit_code == 1 and "after the subcommand" in mixed.output


def test_training_flow_exports_trains_evaluates_and_registers(cohort, prefect_harness, monkeypatch, tmp_path):
    from flows.serve import training_flow
    from flows.train_flow import train_flow

    assert training_flow() is train_flow
    monkeypatch.setenv("CXRKG_HOME", str(tmp_path / "home"))
    cfg = tmp_path / "smoke.json"
    cfg.write_text(json.dumps({**SMOKE, "epochs": 1}))
    out = train_flow(config_path=str(cfg), seeds=[0], work_dir=str(tmp_path / "run"))
    assert out["manifest"]["content_hash"] == cohort["manifest"].content_hash
    assert out["model"]["snapshot_hash"] == cohort["manifest"].content_hash
    assert Path(out["registered"]).exists() and (tmp_path / "run" / "evaluation" / "confusion_matrix.png").exists()
    latest = json.loads((tmp_path / "home" / "models" / "latest.json").read_text())
    assert latest["model_version"] == out["model"]["model_version"]
    metrics = json.loads((Path(out["registered"]).parent / "metrics.json").read_text())
    assert metrics["snapshot_hash"] == cohort["manifest"].content_hash and "gap_macro_f1" in metrics["metrics"]["evaluation"]
