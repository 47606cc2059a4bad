"""The named observation feature layout (gnn.features) that the dataset, baselines and compare share."""

from __future__ import annotations

import numpy as np

from gnn.features import (BASE_DIM, IS_CURRENT, MENTIONED, column, feature_names, highest_severity,
                          stated_present, stated_uncertain)


def test_names_and_columns_agree():
    names = feature_names(emb_dim=3)
    assert len(names) == BASE_DIM + 2 + 3 + 1
    assert names[column("radgraph", "frac_present")] == "radgraph:frac_present"
    assert names[MENTIONED] == "mentioned" and names[IS_CURRENT] == "is_current" and names[-1] == "has_embedding"


def test_states_and_severity_read_by_name():
    x = np.zeros((3, BASE_DIM + 2), np.float32)
    x[0, [column("chest_imagenome", "mentioned"), column("chest_imagenome", "frac_present")]] = 1.0
    x[0, [column("radgraph", "mentioned"), column("radgraph", "has_severity")]] = 1.0
    x[0, column("radgraph", "severity")] = 2 / 3
    x[1, [column("radgraph", "mentioned"), column("radgraph", "frac_uncertain")]] = 1.0
    x[2, column("radgraph", "frac_present")] = 1.0  # not mentioned by that source: ignored
    assert stated_present(x).tolist() == [True, False, False]
    assert stated_uncertain(x).tolist() == [False, True, False]
    assert np.allclose(highest_severity(x), [2 / 3, 0, 0])
    assert stated_present(x[0]).tolist() == [True]  # one vector works too
