"""How a run is cut into batches and written: files ordered and batched by patient, batches written two
at a time and relinked in their own transactions, and the schema migration of graphs written before
the Mention ``file_key`` index. All against the real Neo4j (planning alone: tests/unit/test_ingest_plan_batches.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from graph.records import file_key
from graph.synth import write_cohort
from graph.vocabulary import vocabulary
from tests.fixtures.loading import graph_snapshot, load_into


@pytest.fixture(scope="module")
def cohort(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cohort")
    write_cohort(out, patients=6, seed=5)
    return out


def test_flow_with_two_writers_and_in_batch_links_equals_a_plain_load(store, prefect_harness, cohort):
    from flows.ingest_flow import ingest_flow

    load_into(store, cohort)  # plain functions: one batch, then every patient relinked separately
    expected = graph_snapshot(store)
    store.clear()
    summary = ingest_flow([str(cohort)], batch_files=4, rejected_report=None)
    assert summary.ok and summary.patients_relinked == 6
    assert len(summary.stage_seconds) and graph_snapshot(store) == expected


def test_graphs_from_before_the_file_key_index_are_migrated(store, cohort, tmp_path):
    work = tmp_path / "in"
    shutil.copytree(cohort, work)
    load_into(store, work)
    expected = graph_snapshot(store)
    # the earlier schema: Mentions indexed on their path, no file_key, a constraint on progression ids
    with store.driver.session() as session:
        session.run("DROP INDEX mention_file_key").consume()
        session.run("MATCH (m:Mention) REMOVE m.file_key").consume()
        session.run("CREATE INDEX mention_file FOR (n:Mention) ON (n.file)").consume()
        session.run("CREATE CONSTRAINT progression_id FOR ()-[r:PROGRESSION]-() "
                    "REQUIRE r.progression_id IS UNIQUE").consume()
    store.ensure_schema(vocabulary())

    indexes = {r["name"] for r in store.read("SHOW INDEXES YIELD name RETURN name")}
    constraints = {r["name"] for r in store.read("SHOW CONSTRAINTS YIELD name RETURN name")}
    assert "mention_file_key" in indexes and "mention_file" not in indexes
    assert "progression_id" not in constraints
    keys = store.read("MATCH (m:Mention) RETURN DISTINCT m.file AS file, m.file_key AS key")
    assert keys and all(r["key"] == file_key(r["file"]) for r in keys)
    assert graph_snapshot(store) == expected

    # a changed file is found through the new index: its old mentions go (the new version has none)
    report = next(work.rglob("s*.json"))
    docs = json.loads(report.read_text())
    assert any(doc["entities"] for doc in docs.values())
    report.write_text(json.dumps({key: {**doc, "entities": {}} for key, doc in docs.items()}))
    plan, _ = load_into(store, work)
    assert plan.changed == {str(report.resolve())}
    assert store.read("MATCH (m:Mention {file: $f}) RETURN count(*) AS n", f=str(report.resolve()))[0]["n"] == 0


