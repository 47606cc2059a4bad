"""Episodes and implied presence in the real graph: any load order (one shot, one file at a time in shuffled
order, bulk import) stores the same episodes, the episode queries answer from them, and source_disagreements
lists only pairs whose statements disagree under the event rules' compatibility."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from graph.events import DERIVED_SOURCE, changes_agree
from graph.store import reset_shared_store, shared_store
from graph.store.content import graph_content
from graph.store.queries import get_query, run_named
from graph.synth import METADATA_CSV, write_cohort
from graph.vocabulary import vocabulary
from tests.fixtures.loading import load_into

COMPATIBLE = {"new": {"new", "worsened"}, "resolved": {"resolved", "improved"},
              "persistent": {"no change", "improved", "worsened"}, "no longer mentioned": set()}


@pytest.fixture(scope="module")
def cohort(tmp_path_factory) -> Path:
    """A small synthetic cohort with omitted findings, stated comparisons and absences (not sparse)."""
    out = tmp_path_factory.mktemp("episodes") / "cohort"
    write_cohort(out, patients=10, seed=5)
    return out


def _episode_lines(content: list[str]) -> list[str]:
    return [line for line in content if '"Episode"' in line]


def test_any_load_order_and_the_bulk_import_store_the_same_episodes(store, prefect_harness, cohort):
    from flows.bulk_flow import bulk_ingest_flow

    load_into(store, cohort)
    one_shot = graph_content(store)
    episodes = _episode_lines(one_shot)
    assert any('"number": 2' in line for line in episodes)  # a recurrence
    assert any('"implied_study_ids"' in line for line in episodes)  # a presence implied by a comparison
    assert any('"closed": true' in line for line in episodes) and any('"closed": false' in line for line in episodes)

    store.clear()
    store.ensure_schema(vocabulary())
    files = sorted(p for p in cohort.rglob("*.json"))
    random.Random(2).shuffle(files)
    for path in files:  # one study's file at a time, in shuffled order: each load relinks the patient
        load_into(store, path, cohort / METADATA_CSV)
    assert graph_content(store) == one_shot

    store.clear()
    reset_shared_store()
    assert bulk_ingest_flow([str(cohort)], rejected_report=None).ok
    assert graph_content(shared_store()) == one_shot


def test_episode_queries_answer_from_the_stored_episodes(store, cohort):
    load_into(store, cohort)
    recurrent = get_query("recurrent_findings")
    rows = run_named(store, recurrent, recurrent.bind({"finding": "pulmonary edema"}))
    assert rows and all(r["episodes"] >= 2 and len(r["first_study_ids"]) == r["episodes"] for r in rows)
    patient = rows[0]["patient_id"]
    episodes = get_query("finding_episodes")
    eps = run_named(store, episodes, episodes.bind({"patient_id": patient, "finding": "edema"}))
    assert [e["number"] for e in eps] == list(range(1, len(eps) + 1)) and len(eps) == rows[0]["episodes"]
    assert [e["first_study_id"] for e in eps] == rows[0]["first_study_ids"]
    assert all(e["closed"] == (e["end_study_id"] is not None) for e in eps)
    anatomy = run_named(store, episodes, episodes.bind({"patient_id": patient, "finding": "edema",
                                                        "level": "anatomy"}))
    assert anatomy and all(e["anatomy"] for e in anatomy)
    durations = get_query("episode_durations")
    dist = run_named(store, durations, durations.bind({"finding": "pulmonary edema"}))
    assert {r["closed"] for r in dist} == {True, False}
    total = sum(r["episodes"] for r in dist)
    everyone = run_named(store, recurrent, recurrent.bind({"finding": "pulmonary edema", "min_episodes": "1"}))
    assert total == sum(r["episodes"] for r in everyone)
    assert all(r["min_days"] <= r["median_days"] <= r["max_days"] for r in dist)


def test_source_disagreements_lists_only_pairs_that_disagree(store, cohort):
    load_into(store, cohort)
    q = get_query("source_disagreements")
    rows = run_named(store, q, q.bind({"patient_id": ""}))
    changes = [r for r in rows if r["kind"] == "change"]
    assert changes and not any(r["truncated"] for r in rows)
    for r in changes:
        said = [c.rsplit(" (", 1) for c in r["changes"]]
        stated = {c for c, source in said if source != f"{DERIVED_SOURCE})"}
        derived = [c for c, source in said if source == f"{DERIVED_SOURCE})"]
        assert not changes_agree(stated) or any(stated - COMPATIBLE[d] for d in derived), r
    capped = run_named(store, q, q.bind({"patient_id": "", "max_rows": "1"}))
    assert len(capped) == 1 and capped[0]["truncated"] is (len(rows) > 1)
