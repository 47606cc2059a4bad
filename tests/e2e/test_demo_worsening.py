"""The demo's worsening answer on a small synthetic cohort: the stated edges' line as before, then the line of
the stated edges with a small progression GNN's edges of the unstated pairs, scored against the ground truth,
each patient's edges from a model that never saw the patient; without torch, one line says why instead."""

from __future__ import annotations

import io
import re
import sys

import pytest

from tests.fixtures.loading import load_into

PATIENTS = 40
FIGURE = r"([01]\.[0-9]{3})"
STATED = re.compile(r"cohort, worsened pleural effusion per \(study, anatomy\): (\d+) in the graph, (\d+) true; "
                    rf"precision {FIGURE}, recall {FIGURE} \(reports state only some changes, ~10% noise\)$")
WITH_GNN = re.compile(r"with a progression GNN's edges of the unstated pairs \(`cxrkg predict --write-back`\): "
                      rf"(\d+) \((\d+) from the GNN\), (\d+) true; precision {FIGURE}, recall {FIGURE} \(stated only "
                      rf"{FIGURE}, {FIGURE}\); its edges (add more recall|cost more precision) "
                      r"\(([+-][0-9.]+)\) than they (cost precision|add recall) \(([+-][0-9.]+)\)$")
TRAINED = re.compile(r"  GNN: `cxrkg train`'s model, small \(sage, hidden 32, 2 layers, \d+/\d+ epochs\), trained here "
                     r"2 times, each on the \d+/\d+ patients of the other fold, never on those it scores, in [0-9.]+ s")


@pytest.fixture
def cohort(store, tmp_path):
    from graph.synth import write_cohort

    write_cohort(tmp_path / "cohort", patients=PATIENTS, seed=7)
    load_into(store, tmp_path / "cohort")
    return tmp_path / "cohort"


def _lines(cohort) -> list[str]:
    from rich.console import Console

    from flows.demo.cohort import worsening_section
    from flows.demo.gnn import worsening_lines

    out = io.StringIO()
    console = Console(file=out, width=10_000)
    stated = worsening_section(console, cohort)
    return out.getvalue().splitlines() + worsening_lines(cohort, stated, "pleural effusion")


def test_the_gnns_edges_stand_beside_the_stated_ones(cohort):
    lines = _lines(cohort)
    stated, with_gnn, trained = STATED.match(lines[-3]), WITH_GNN.match(lines[-2]), TRAINED.match(lines[-1])
    assert stated and with_gnn and trained, lines[-3:]
    n, true, precision, recall = int(stated[1]), int(stated[2]), float(stated[3]), float(stated[4])
    both, added, true_too, p1, r1, p0, r0 = (int(with_gnn[1]), int(with_gnn[2]), int(with_gnn[3]), float(with_gnn[4]),
                                             float(with_gnn[5]), float(with_gnn[6]), float(with_gnn[7]))
    assert (p0, r0, true_too) == (precision, recall, true)  # the stated figures, restated
    assert both == n + added and added > 0  # the GNN's edges only add to the stated ones
    assert r1 >= r0  # so the recall cannot fall
    assert 0 <= p1 <= 1 and 0 <= r1 <= 1
    gain, loss = r1 - r0, p0 - p1
    helped = with_gnn[8] == "add more recall"
    assert helped == (gain >= loss)
    shown_gain, shown_loss = (with_gnn[9], with_gnn[11]) if helped else (with_gnn[11], with_gnn[9])
    assert float(shown_gain) == pytest.approx(gain, abs=2e-3) and float(shown_loss) == pytest.approx(-loss, abs=2e-3)


def test_no_patient_is_scored_by_a_model_that_saw_it_and_no_stated_pair_is_predicted(store, cohort):
    from flows.demo.gnn import cohort_patients, gnn_changes
    from gnn.export import read_graph_tables

    made = gnn_changes(store, cohort_patients(cohort), epochs=2)
    every = made.cross_fit.predictions
    for fold, patients in enumerate(made.cross_fit.trained_on):
        scored = set(every.loc[every["fold"] == fold, "patient_id"])
        assert scored and not scored & patients
    # each patient is scored in one fold and trained on in the others (a patient whose pairs are all absent
    # in both studies has no row: predict keeps pairs present or uncertain in either)
    assert set(every["patient_id"]) <= set().union(*made.cross_fit.trained_on)
    assert not every.duplicated(["study_id", "prior_study_id", "anatomy", "finding"]).any()
    labels = read_graph_tables(store, cohort_patients(cohort)).tables["labels"]
    stated = {(r["study_id"], r["prior_study_id"], r["anatomy"], r["finding"]) for r in labels}
    keys = set(zip(made.predictions["study_id"], made.predictions["prior_study_id"], made.predictions["anatomy"],
                   made.predictions["finding"], strict=True))
    assert stated and keys and not keys & stated


def test_without_torch_one_line_says_why(cohort, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # what `import torch` finds where it is not installed
    for name in [m for m in sys.modules if m.startswith(("gnn.", "flows.demo.gnn", "flows.demo.forecast"))]:
        monkeypatch.delitem(sys.modules, name)
    lines = _lines(cohort)
    assert STATED.match(lines[-2]), lines[-2]
    assert lines[-1] == "with a progression GNN's edges: not shown (torch is not installed: pip install 'cxrkg[gnn]')"
