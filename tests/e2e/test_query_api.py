"""The quick commands' reader (Neo4j's HTTP Query API) answers every catalogue query exactly as the driver
does, refuses writes, and fails with the store's own errors."""

from __future__ import annotations

import socket

import pytest

from graph.settings import local_server_settings
from graph.store import GraphUnavailable, LoginRefused
from graph.store.queries import QueryError, catalogue, parse_query_file, run_named
from graph.store.query_api import QueryApiError, QueryApiReader
from graph.synth import write_cohort
from tests.fixtures.loading import load_into


def _reader(settings, password=None) -> QueryApiReader:
    return QueryApiReader(local_server_settings().http_uri, settings.user,
                          settings.password if password is None else password, settings.database)


def _bindings(store) -> dict[str, str]:
    """Parameter values that give every catalogue query rows: a patient with a prior study and its two
    studies, the commonest finding, all dates."""
    pair = store.read("MATCH (p:Patient)-[:HAS_STUDY]->(s:Study)-[:PRIOR]->(ps:Study) "
                      "RETURN p.patient_id AS patient, s.study_id AS current, ps.study_id AS prior "
                      "ORDER BY patient, current LIMIT 1")[0]
    finding = store.read("MATCH (o:Observation) WHERE o.finding IS NOT NULL RETURN o.finding AS f, count(*) AS n "
                         "ORDER BY n DESC, f LIMIT 1")[0]["f"]
    return {"patient_id": pair["patient"], "current_study_id": pair["current"], "prior_study_id": pair["prior"],
            "finding": finding, "start_date": "1900-01-01", "end_date": "2999-12-31"}


def test_every_catalogue_query_reads_the_same_through_http_and_bolt(store, neo4j_server, tmp_path):
    if neo4j_server.external:
        pytest.skip("the Query API reader serves the local server only")
    write_cohort(tmp_path / "cohort", patients=6, seed=5)
    load_into(store, tmp_path / "cohort")
    values, reader = _bindings(store), _reader(neo4j_server)
    empty = set()
    for query in catalogue().values():
        params = query.bind({p.name: values[p.name] for p in query.params if p.name in values})
        expected = run_named(store, query, params)
        assert run_named(reader, query, params) == expected, query.name
        empty |= {query.name} if not expected else set()
    # the comparison is not of empty answers: these six patients have no recurrence, and on them the boxes and
    # the reports agree on cardiomegaly (tests/e2e/test_geometry_queries.py has disagreements to find)
    assert empty <= {"recurrent_findings", "geometry_vs_reports"}, empty


def test_writes_bad_statements_and_bad_logins_fail_as_through_the_driver(store, neo4j_server):
    if neo4j_server.external:
        pytest.skip("the Query API reader serves the local server only")
    reader = _reader(neo4j_server)
    evil = parse_query_file("// name: evil\n// purpose: writes\n// columns: n\nCREATE (n:Patient {patient_id: 'x'}) "
                            "RETURN n", "evil.cypher")
    with pytest.raises(QueryError, match="would write"):
        run_named(reader, evil, {})
    assert store.read("MATCH (p:Patient {patient_id: 'x'}) RETURN count(p) AS n") == [{"n": 0}]
    with pytest.raises(QueryApiError, match="ParameterMissing"):
        reader.read("RETURN $nothing AS n")
    assert reader.read("RETURN 1 AS i, [1.5, 'a', null] AS l, {k: true} AS m") == [
        {"i": 1, "l": [1.5, "a", None], "m": {"k": True}}]
    with pytest.raises(LoginRefused):
        _reader(neo4j_server, password="not the password").read("RETURN 1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # bound but not listening: connections are refused
        with pytest.raises(GraphUnavailable, match="cxrkg db start"):
            QueryApiReader(f"http://127.0.0.1:{closed}", "neo4j", "x").read("RETURN 1")
