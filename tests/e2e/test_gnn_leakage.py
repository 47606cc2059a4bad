"""The learning inputs never contain a label's own evidence, and an empty graph is refused (real Neo4j)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from graph.ingest import discover, load_files, plan_ingest
from graph.synth import write_cohort
from graph.vocabulary import vocabulary
from gnn.dataset import LABEL_EDGE, build
from gnn.errors import GnnError
from gnn.export import export_snapshot, read_graph_tables

V = vocabulary()


def ingest(store, *paths: Path) -> None:
    files = discover(paths)
    plan = plan_ingest(files, store.source_file_hashes(f.path for f in files), V.version)
    result = load_files(store, plan.load, V, plan.changed, plan.metadata, None)
    store.link_patients(result.patients)


def strip_change_evidence(folder: Path) -> int:
    """Remove every statement of change from a cohort, in place: Chest ImaGenome comparison
    relationships and comparison cues, RadGraph2 change entities and the relations to them."""
    removed = 0
    for path in folder.rglob("*_SceneGraph.json"):
        g = json.loads(path.read_text())
        removed += len(g["relationships"])
        g["relationships"] = []
        for a in g["attributes"]:
            a["comparison_cues"] = [[] for _ in a["comparison_cues"]]
        path.write_text(json.dumps(g))
    for path in (folder / "radgraph").rglob("*.json"):
        docs = json.loads(path.read_text())
        for doc in docs.values():
            ents = doc["entities"]
            gone = {k for k, e in ents.items() if e["label"].startswith("CHAN")}
            removed += len(gone)
            doc["entities"] = {k: {**e, "relations": [r for r in e["relations"] if r[1] not in gone]}
                               for k, e in ents.items() if k not in gone}
        path.write_text(json.dumps(docs))
    return removed


def test_inputs_never_contain_the_labels_evidence(store, tmp_path):
    full = tmp_path / "full"
    write_cohort(full, patients=14, seed=5)
    stripped = tmp_path / "stripped"
    shutil.copytree(full, stripped)
    assert strip_change_evidence(stripped) > 20

    ingest(store, full)
    placeholders = store.read("MATCH (o:Observation) WHERE o.polarity IS NULL RETURN count(o) AS n")[0]["n"]
    with_labels = build(read_graph_tables(store))
    store.clear()
    store.ensure_schema(V)
    ingest(store, stripped)
    without = build(read_graph_tables(store))

    # the full graph has stated changes (labels) and observations that only a stated change created
    assert (with_labels.pairs["label"] >= 0).sum() > 20
    assert placeholders > 0
    assert (without.pairs["label"] >= 0).sum() == 0
    # ... yet the pairs to classify and every input feature are exactly the same
    cols = ["patient_id", "study_id", "prior_study_id", "anatomy", "finding"]
    assert with_labels.pairs[cols].equals(without.pairs[cols])
    np.testing.assert_array_equal(with_labels.x_cur, without.x_cur)
    np.testing.assert_array_equal(with_labels.x_prior, without.x_prior)
    assert len(with_labels.samples) == len(without.samples)
    for a, b in zip(with_labels.samples, without.samples, strict=True):
        assert a.edge_types == b.edge_types
        for t in a.node_types:
            assert torch_equal(a[t].x, b[t].x)
        for et in a.edge_types:
            if et != LABEL_EDGE:
                assert torch_equal(a[et].edge_index, b[et].edge_index)
        # no message-passing edge carries a progression; the label store carries no edge_index
        assert all("progression" not in et[1] for et in a.edge_types if et != LABEL_EDGE)
        assert "edge_index" not in a[LABEL_EDGE]


def torch_equal(a, b) -> bool:
    return a.shape == b.shape and bool((a == b).all())


def test_empty_graph_is_a_clear_error(store, tmp_path):
    with pytest.raises(GnnError, match="no patients"):
        export_snapshot(store, tmp_path / "snap")
    with pytest.raises(GnnError, match="no patients"):
        read_graph_tables(store)


def test_single_study_patients_have_nothing_to_learn(store, tmp_path):
    from tests.fixtures.inputs import scene_graph, write_scene_graph

    for n, pid in enumerate((10000001, 10000002)):
        write_scene_graph(tmp_path, scene_graph(f"aaaaaaaa-00000000-00000000-00000000-0000000{n}", pid, 50000001 + n,
                                                "2150-01-01 08:00:00",
                                                {"left costophrenic angle": [["anatomicalfinding|yes|pleural effusion"]]}))
    ingest(store, tmp_path)
    with pytest.raises(GnnError, match="single study"):
        build(read_graph_tables(store))
