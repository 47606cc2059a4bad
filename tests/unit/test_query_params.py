"""What `cxrkg query` and `cxrkg stats` do before and after reading the graph, as library functions: the
``--param`` pairs checked and converted (graph.store.queries), the statistics report's rows, JSON and verdict
(graph.store.stats). No Neo4j: the report is built from given counts."""

from __future__ import annotations

import pytest

from graph.store.consistency import CheckResult
from graph.store.queries import QueryError, bound_params, get_query, parse_params
from graph.store.stats import StatsReport


def test_pairs_split_at_the_first_equals_sign():
    assert parse_params(["patient_id=10000032", " finding =a=b"]) == {"patient_id": "10000032", "finding": "a=b"}
    with pytest.raises(QueryError, match="--param 'patient_id': expected key=value"):
        parse_params(["patient_id"])


def test_bound_params_convert_and_check_the_finding():
    q = get_query("worsening_findings")
    assert bound_params(q, ["patient_id=10000032", "finding=effusions"])["finding"] == "effusions"
    with pytest.raises(QueryError, match="finding 'dragon scales' is not in the vocabulary"):
        bound_params(q, ["patient_id=1", "finding=dragon scales"])
    with pytest.raises(QueryError, match="unknown parameter"):
        bound_params(q, ["patient_id=1", "colour=blue"])


COUNTS = {"nodes": {"Patient": 2, "Study": 5}, "relationships": {"HAS_STUDY": 5}, "orphans": {"Study": 1},
          "total_nodes": 7, "total_relationships": 5}


def test_an_unchecked_report_is_the_counts_and_consistent():
    report = StatsReport(COUNTS)
    assert report.as_dict() == COUNTS and report.consistent and not report.failed
    assert report.rows() == [{"kind": "node", "name": "Patient", "count": 2},
                             {"kind": "node", "name": "Study", "count": 5},
                             {"kind": "relationship", "name": "HAS_STUDY", "count": 5},
                             {"kind": "orphan", "name": "Study", "count": 1}]


def test_a_failed_check_or_drift_makes_the_report_inconsistent():
    ok, bad = CheckResult("a", "fine", 0), CheckResult("b", "studies without a patient", 2, ["s1", "s2"])
    report = StatsReport(COUNTS, True, [ok, bad], [])
    assert report.failed == [bad] and not report.consistent
    data = report.as_dict()
    assert data["consistency"]["b"] == {"count": 2, "examples": ["s1", "s2"], "description": bad.description}
    assert data["consistent"] is False and data["schema_drift"] == []
    assert report.rows()[-2:] == [{"kind": "check", "name": "a", "count": 0}, {"kind": "check", "name": "b", "count": 2}]
    drifted = StatsReport(COUNTS, True, [ok], ["Study.colour"])
    assert not drifted.consistent and drifted.rows()[-1] == {"kind": "drift", "name": "Study.colour", "count": 1}
