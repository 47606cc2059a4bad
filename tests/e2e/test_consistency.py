"""The consistency checks of ``cxrkg stats`` against the real Neo4j: a clean load passes, and each kind of
damage (written directly with Cypher) is found by its check, and only by it, with example ids."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from flows.cli import app
from graph.store.consistency import CHECKS, run_checks
from tests.fixtures.effusion import LCA, STUDY, effusion_study
from tests.fixtures.loading import load_into

runner = CliRunner()
OBS = {n: f"{STUDY[n]}|{LCA}|pleural effusion" for n in STUDY}


@pytest.fixture()
def three_studies(store, tmp_path):
    effusion_study(tmp_path, 1, present=False)
    effusion_study(tmp_path, 2, severity="small")
    effusion_study(tmp_path, 3, severity="moderate", compare="worsened")
    load_into(store, tmp_path)
    return store


def _found(store) -> dict[str, int]:
    return {r.name: r.count for r in run_checks(store)}


def test_checks_are_read_only_queries(three_studies):
    with three_studies.driver.session() as session:
        for check in CHECKS:
            assert session.run("EXPLAIN " + check.cypher, k=5).consume().query_type == "r", check.name


def test_clean_load_is_consistent_and_stats_exits_zero(three_studies):
    assert set(_found(three_studies).values()) == {0}
    result = runner.invoke(app, ["stats", "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["consistent"] is True
    assert set(out["consistency"]) == {c.name for c in CHECKS}


DAMAGE = {
    "studies_without_patient": (
        "MATCH (:Patient)-[r:HAS_STUDY]->(:Study {study_id: $s3}) DELETE r", str(STUDY[3])),
    "observations_without_finding": (
        "MATCH (:Observation {observation_id: $o2})-[r:OF_FINDING]->() DELETE r", OBS[2]),
    # study 3 -> study 1 jumps over study 2
    "progressions_skipping_study": (
        "MATCH (o:Observation {observation_id: $o3}), (po:Observation {observation_id: $o1}) "
        "CREATE (o)-[:PROGRESSION {progression_id: 'x', change: 'worsened', source: 'radgraph'}]->(po)", OBS[3]),
    # a second copy of an existing derived edge
    "duplicate_progressions": (
        "MATCH (o:Observation {observation_id: $o3})-[r:PROGRESSION]->(po) WITH o, r, po LIMIT 1 "
        "CREATE (o)-[r2:PROGRESSION]->(po) SET r2 = properties(r)", OBS[3]),
    # study 2 now dated after study 3, links left as they were
    "priors_contradicting_dates": (
        "MATCH (s:Study {study_id: $s2}) SET s.study_datetime = s.study_datetime + duration({days: 60})",
        str(STUDY[3])),
}


@pytest.mark.parametrize("check", sorted(DAMAGE))
def test_each_kind_of_damage_is_found_by_its_check(three_studies, check):
    cypher, example = DAMAGE[check]
    with three_studies.driver.session() as session:
        session.run(cypher, s2=str(STUDY[2]), s3=str(STUDY[3]), o1=OBS[1], o2=OBS[2], o3=OBS[3]).consume()
    results = {r.name: r for r in run_checks(three_studies)}
    assert results[check].count >= 1
    assert any(example in e for e in results[check].examples), results[check].examples
    assert {n for n, r in results.items() if not r.ok} == {check}

    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 4
    assert "inconsistent" in result.output and check in result.output


def test_gnn_predictions_between_any_two_studies_are_not_flagged(three_studies):
    with three_studies.driver.session() as session:
        session.run("MATCH (o:Observation {observation_id: $o3}), (po:Observation {observation_id: $o1}) "
                    "CREATE (o)-[:PROGRESSION {progression_id: 'g', change: 'worsened', source: 'gnn'}]->(po)",
                    o3=OBS[3], o1=OBS[1]).consume()
    assert set(_found(three_studies).values()) == {0}


def test_a_prior_link_over_a_study_in_between_is_found(three_studies):
    with three_studies.driver.session() as session:
        session.run("MATCH (s:Study {study_id: $s3})-[r:PRIOR]->() DELETE r", s3=str(STUDY[3])).consume()
        session.run("MATCH (s:Study {study_id: $s3}), (p:Study {study_id: $s1}) "
                    "CREATE (s)-[:PRIOR {days: duration.inDays(p.study_datetime, s.study_datetime).days}]->(p)",
                    s3=str(STUDY[3]), s1=str(STUDY[1])).consume()
    found = {r.name: r for r in run_checks(three_studies)}
    assert found["priors_contradicting_dates"].examples == [f"{STUDY[3]} -> {STUDY[1]}"]
    # the progressions 3 -> 2 (stated worsened, derived persistent) are now off the PRIOR chain too
    assert found["progressions_skipping_study"].count == 2



def test_stats_names_a_property_or_label_the_schema_lacks_and_not_the_declared_bookkeeping(three_studies):
    result = runner.invoke(app, ["stats", "--format", "json"])
    assert json.loads(result.output)["schema_drift"] == [], result.output
    with three_studies.driver.session() as session:
        # bookkeeping the schema declares (a patient whose link step is pending): not drift
        session.run("MATCH (p:Patient) SET p.link_pending = true").consume()
        session.run("MATCH (s:Study {study_id: $s2}) SET s.colour = 'red'", s2=str(STUDY[2])).consume()
        session.run("MATCH ()-[r:PRIOR]->() SET r.weight = 0.5").consume()
        session.run("CREATE (:Ward {name: 'a'})").consume()
    result = runner.invoke(app, ["stats", "--format", "json"])
    assert result.exit_code == 4
    out = json.loads(result.stdout)
    assert out["schema_drift"] == ["PRIOR.weight", "Study.colour", "label Ward"]
    assert out["consistent"] is False
    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 4 and "schema drift" in result.output and "Study.colour" in result.output


def test_stats_names_stored_values_outside_a_property_s_values(three_studies):
    with three_studies.driver.session() as session:
        # what another tool might write: a source cxrkg never writes, an array element, a relationship's value
        session.run("MATCH (m:Mention) WITH m LIMIT 1 SET m.source = 'rules'").consume()
        session.run("MATCH (o:Observation {observation_id: $o2}) SET o.sources = o.sources + 'my_labeler'",
                    o2=OBS[2]).consume()
        session.run("MATCH ()-[r:PROGRESSION]->() WITH r LIMIT 1 SET r.change = 'better'").consume()
    result = runner.invoke(app, ["stats", "--format", "json"])
    assert result.exit_code == 4, result.output
    assert json.loads(result.stdout)["schema_drift"] == [
        "Mention.source = 'rules'", "Observation.sources = 'my_labeler'", "PROGRESSION.change = 'better'"]
    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 4 and "Mention.source = 'rules'" in result.output
