"""notebooks/progression.ipynb runs top to bottom against the test Neo4j on a small cohort (nbclient, a real kernel)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from graph.ingest import discover, load_files, plan_ingest
from graph.synth import write_cohort
from graph.vocabulary import vocabulary

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_gnn_notebook_runs_end_to_end(store, neo4j_server, tmp_path):
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=20, seed=5, embeddings=True)
    v = vocabulary()
    plan = plan_ingest(discover([cohort]), {}, v.version)
    result = load_files(store, plan.load, v, plan.changed, plan.metadata, None)
    store.link_patients(result.patients)
    s = neo4j_server
    env = {**os.environ, "NEO4J_URI": s.uri, "NEO4J_USER": s.user, "NEO4J_PASSWORD": s.password,
           "CXRKG_NOTEBOOK_COHORT": str(cohort), "CXRKG_NOTEBOOK_FORECAST_EPOCHS": "2", "CXRKG_NOTEBOOK_BOOTSTRAP": "5",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    nb = nbformat.read(REPO / "notebooks" / "progression.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(REPO / "notebooks")}}).execute(env=env)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "snapshot" in text and "macro-F1" in text and "GNN - best baseline" in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2  # timeline and confusion matrix
    assert "than the reference image" in text or "nothing has changed" in text or "the level of" in text \
        or "has worsened" in text or "has improved" in text
