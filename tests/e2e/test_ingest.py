"""Ingestion against the real Neo4j: graph model, idempotency, incremental and out-of-order loads,
changed files and malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph.ingest import discover, plan_ingest
from graph.store.queries import QueryError, get_query, parse_query_file, run_named
from graph.vocabulary import vocabulary
from tests.fixtures.effusion import IMG, LCA, PID, STUDY, effusion_study, report
from tests.fixtures.inputs import radgraph_doc, scene_graph, write_radgraph, write_scene_graph
from tests.fixtures.loading import graph_snapshot, load_into

V = vocabulary()
DISAGREE = get_query("source_disagreements")


def ingest(store, *paths: Path, mapping: str | None = None):
    return load_into(store, *paths, mapping=mapping)


def progressions(store, patient=str(PID)):
    return sorted((r["study"], r["prior"], r["anatomy"], r["change"], r["source"]) for r in store.read(
        "MATCH (:Patient {patient_id: $p})-[:HAS_STUDY]->(s)-[:HAS_OBSERVATION]->(o)-[r:PROGRESSION]->(po) "
        "RETURN s.study_id AS study, po.study_id AS prior, o.anatomy AS anatomy, r.change AS change, r.source AS source",
        p=patient))


def prior_chain(store, patient=str(PID)):
    return store.read("MATCH (:Patient {patient_id: $p})-[:HAS_STUDY]->(s) OPTIONAL MATCH (s)-[r:PRIOR]->(ps) "
                      "RETURN s.study_id AS study, s.study_order AS n, ps.study_id AS prior, r.days AS days ORDER BY n",
                      p=patient)


def test_both_sources_meet_and_progressions_are_derived(store, tmp_path):
    effusion_study(tmp_path, 1, present=False)
    effusion_study(tmp_path, 2, severity="small")
    effusion_study(tmp_path, 3, severity="moderate", compare="worsened")
    report(tmp_path, 3, "CHAN-CON-WOR")
    ingest(store, tmp_path)

    assert [(r["study"], r["prior"], r["days"]) for r in prior_chain(store)] == [
        (str(STUDY[1]), None, None), (str(STUDY[2]), str(STUDY[1]), 10), (str(STUDY[3]), str(STUDY[2]), 30)]
    obs = store.read("MATCH (o:Observation {observation_id: $id}) RETURN o.sources AS sources, o.severity AS sev, "
                     "o.polarity AS pol, COUNT { (o)-[:HAS_MENTION]->() } AS mentions",
                     id=f"{STUDY[3]}|{LCA}|pleural effusion")[0]
    assert obs == {"sources": ["chest_imagenome", "radgraph"], "sev": "moderate", "pol": "present", "mentions": 3}
    assert progressions(store) == [
        (str(STUDY[2]), str(STUDY[1]), LCA, "new", "presence"),
        (str(STUDY[3]), str(STUDY[2]), LCA, "persistent", "presence"),
        (str(STUDY[3]), str(STUDY[2]), LCA, "worsened", "chest_imagenome"),
        (str(STUDY[3]), str(STUDY[2]), LCA, "worsened", "radgraph"),
    ]
    worsening = get_query("worsening_findings")
    rows = run_named(store, worsening, worsening.bind({"patient_id": str(PID), "finding": "Effusions", "level": "anatomy"}))
    assert [(r["study_id"], r["prior_study_id"], r["anatomy"], r["sources"], r["days"]) for r in rows] == [
        (str(STUDY[3]), str(STUDY[2]), LCA, ["chest_imagenome", "radgraph"], 30)]
    rows = run_named(store, worsening, worsening.bind({"patient_id": str(PID), "finding": "Effusions"}))
    assert [(r["study_id"], r["anatomy"], r["sources"]) for r in rows] == [
        (str(STUDY[3]), None, ["chest_imagenome", "radgraph"])]
    # hierarchy: costophrenic angle blunting IS_A pleural effusion, so it is found under the parent,
    # but asking for the child does not return the parent
    assert run_named(store, worsening, worsening.bind({"patient_id": str(PID),
                                                       "finding": "costophrenic angle blunting"})) == []


def test_loading_twice_changes_nothing(store, tmp_path):
    for n in (1, 2, 3):
        effusion_study(tmp_path, n, severity="small", compare="no change" if n > 1 else None)
    report(tmp_path, 2, "CHAN-NC")
    plan1, _ = ingest(store, tmp_path)
    first = graph_snapshot(store)
    plan2, result2 = ingest(store, tmp_path)
    assert len(plan1.load) == 4 and plan2.load == [] and len(plan2.unchanged) == 4
    assert result2.elements.nodes == 0 and graph_snapshot(store) == first
    # even a forced reload of every file (bookkeeping dropped) gives the same graph
    store.read("MATCH (f:SourceFile) RETURN count(f) AS n")
    with store.driver.session() as s:
        s.run("MATCH (f:SourceFile) DELETE f").consume()
    ingest(store, tmp_path)
    assert graph_snapshot(store) == first


def test_incremental_load_reads_only_new_files(store, tmp_path):
    effusion_study(tmp_path, 1, present=False)
    effusion_study(tmp_path, 2)
    ingest(store, tmp_path)
    effusion_study(tmp_path, 3, severity="large", compare="worsened")
    plan, result = ingest(store, tmp_path)
    assert [Path(f.path).name for f in plan.load] == [f"{IMG[3]}_SceneGraph.json"]
    assert len(plan.unchanged) == 2
    assert (str(STUDY[3]), str(STUDY[2]), LCA, "worsened", "chest_imagenome") in progressions(store)


def test_out_of_order_studies_are_relinked(store, tmp_path):
    one_shot, late = tmp_path / "all", tmp_path / "late"
    for n in (1, 2, 3):
        effusion_study(one_shot, n, present=n != 2)
    report(one_shot, 3, "CHAN-CON-IMP")
    ingest(store, one_shot)
    expected = graph_snapshot(store)

    store.clear()
    store.ensure_schema(V)
    effusion_study(late, 3, present=True)
    report(late, 3, "CHAN-CON-IMP")
    effusion_study(late, 1, present=True)
    ingest(store, late)  # 3 -> 1 for now: the report's change points at study 1
    assert [(r["study"], r["prior"]) for r in prior_chain(store)] == [(str(STUDY[1]), None), (str(STUDY[3]), str(STUDY[1]))]
    assert (str(STUDY[3]), str(STUDY[1]), LCA, "improved", "radgraph") in progressions(store)
    effusion_study(late, 2, present=False)  # the late study arrives between them
    ingest(store, late)
    assert [(r["study"], r["prior"]) for r in prior_chain(store)] == [
        (str(STUDY[1]), None), (str(STUDY[2]), str(STUDY[1])), (str(STUDY[3]), str(STUDY[2]))]
    assert progressions(store) == [
        (str(STUDY[2]), str(STUDY[1]), LCA, "resolved", "presence"),
        (str(STUDY[3]), str(STUDY[2]), LCA, "improved", "radgraph"),
        (str(STUDY[3]), str(STUDY[2]), LCA, "new", "presence"),
    ]
    # same graph as loading everything at once (Mention.file differs by folder; compare without it)
    got = graph_snapshot(store)
    assert len(got[0]) == len(expected[0]) and len(got[1]) == len(expected[1])
    assert sorted(r[:3] for r in got[1]) == sorted(r[:3] for r in expected[1])


def test_changed_file_replaces_its_old_content(store, tmp_path):
    effusion_study(tmp_path, 1, severity="small")
    path = effusion_study(tmp_path, 2, severity="large")
    ingest(store, tmp_path)
    g = json.loads(path.read_text())
    g["attributes"][0]["attributes"] = [["anatomicalfinding|yes|atelectasis"]]
    g["attributes"][0]["bbox_name"] = "left lower lung zone"
    path.write_text(json.dumps(g))
    plan, _ = ingest(store, tmp_path)
    assert plan.changed == {str(path.resolve())}
    findings = store.read("MATCH (s:Study {study_id: $s})-[:HAS_OBSERVATION]->(o) RETURN o.finding AS f, o.state AS state "
                          "ORDER BY f", s=str(STUDY[2]))
    # the effusion of study 1 is no longer mentioned in study 2: a placeholder with that state, no mentions
    assert findings == [{"f": "atelectasis", "state": "present"}, {"f": "pleural effusion", "state": "not_mentioned"}]


def test_new_vocabulary_version_reloads_files(store, tmp_path):
    path = effusion_study(tmp_path, 1)
    ingest(store, tmp_path)
    files = discover([tmp_path])
    known = store.source_file_hashes(f.path for f in files)
    assert plan_ingest(files, known, V.version).load == []
    assert [f.path for f in plan_ingest(files, known, "next").load] == [str(path.resolve())]
    assert plan_ingest(files, known, "next").changed == {str(path.resolve())}


def test_malformed_input_is_rejected_and_the_rest_loads(store, tmp_path):
    good = tmp_path / "good"
    effusion_study(good, 1)
    kept = effusion_study(good, 2, severity="small")
    ingest(store, good)
    before = graph_snapshot(store)

    bad = tmp_path / "bad"
    truncated = effusion_study(bad, 3)
    truncated.write_text(truncated.read_text()[:100])
    kept.write_text(kept.read_text()[:50])  # an already loaded file, now corrupt: its content stays
    thief = effusion_study(bad, 4, patient=10000002)
    thief.write_text(thief.read_text().replace(str(STUDY[4]), str(STUDY[1])))  # study 1 belongs to PID
    undated = write_scene_graph(bad, scene_graph(IMG[4], PID, 50009999, None, {LCA: [["anatomicalfinding|yes|pleural effusion"]]}))
    docs = {f"p10/p{PID}/s{STUDY[2]}.txt": radgraph_doc("No effusion .", [("effusion", "OBS-NOPE", 1, [])])}
    unknown = write_radgraph(bad / "r.json", docs)
    plan, result = ingest(store, good, bad)
    reasons = {(Path(r.file).name, r.field): r.reason for r in result.rejections}
    assert set(reasons) == {(truncated.name, None), (kept.name, None), (thief.name, "study_id"),
                            (undated.name, "StudyDateTime"), (unknown.name, "entities.1.label")}
    assert "belongs to patient 10000001" in reasons[(thief.name, "study_id")]
    assert graph_snapshot(store) == before  # nothing lost, nothing half-written


def test_catalogue_refuses_writes_and_checks_params(store):
    q = parse_query_file("// name: evil\n// purpose: writes\n// columns: n\nCREATE (n:Patient {patient_id: 'x'}) RETURN n",
                         "evil.cypher")
    with pytest.raises(QueryError, match="only read"):
        run_named(store, q, {})
    assert store.read("MATCH (p:Patient {patient_id: 'x'}) RETURN count(p) AS n") == [{"n": 0}]
    with pytest.raises(QueryError, match="missing parameter"):
        get_query("worsening_findings").bind({"patient_id": "1"})


def test_disagreements_and_onsets_follow_reloads(store, tmp_path):
    """source_disagreements and new_finding_patients read flags the link step keeps current."""
    effusion_study(tmp_path, 1, present=False)
    effusion_study(tmp_path, 2, severity="small")
    effusion_study(tmp_path, 3, severity="moderate", compare="worsened")
    disagreeing = report(tmp_path, 3, "CHAN-CON-IMP")
    ingest(store, tmp_path)

    rows = run_named(store, DISAGREE, DISAGREE.bind({"patient_id": ""}))
    assert [(r["study_id"], r["prior_study_id"], r["kind"], r["changes"]) for r in rows] == [
        (str(STUDY[3]), str(STUDY[2]), "change",
         ["improved (radgraph)", "persistent (presence)", "worsened (chest_imagenome)"])]
    assert run_named(store, DISAGREE, DISAGREE.bind({"patient_id": "10000099"})) == []

    new = get_query("new_finding_patients")
    rows = run_named(store, new, new.bind({"finding": "pleural fluid", "start_date": "2150-01-11",
                                           "end_date": "2150-01-11"}))
    assert [(r["patient_id"], r["study_id"], r["anatomy"], r["basis"], r["prior_state"], r["sources"]) for r in rows] == [
        (str(PID), str(STUDY[2]), None, ["derived"], "absent", ["presence"])]
    assert run_named(store, new, new.bind({"finding": "pleural effusion", "start_date": "2150-01-12",
                                           "end_date": "2150-12-31"})) == []

    # the report is corrected to agree, and study 1 now has the effusion already: both flags go
    disagreeing.unlink()
    report(tmp_path, 3, "CHAN-CON-WOR")
    effusion_study(tmp_path, 1, severity="small")
    ingest(store, tmp_path)
    assert run_named(store, DISAGREE, DISAGREE.bind({"patient_id": str(PID)})) == []
    assert run_named(store, new, new.bind({"finding": "pleural effusion", "start_date": "2150-01-01",
                                           "end_date": "2150-12-31"})) == []
