"""Episodes and implied presence in the real graph: any load order (one shot, one file at a time in shuffled
order, bulk import) stores the same episodes, the episode queries answer from them, and source_disagreements
lists only pairs whose statements disagree under the event rules' compatibility."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest

from graph.longitudinal.events import DERIVED_SOURCE, changes_agree
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


def _recurrent_by_hand(store, root: str, level: str, start: date, end: date, least: int) -> dict:
    """recurrent_findings' answer from every stored episode, grouped in Python: (patient, region or None)
    -> first study ids in time order, for the patients with at least ``least`` episodes in the range."""
    names = [r["name"] for r in store.read("MATCH (f:Finding)-[:IS_A*0..]->(:Finding {name: $root}) "
                                           "RETURN f.name AS name", root=root)] if level == "anatomy" else [root]
    groups: dict[tuple, list] = {}
    for r in store.read("MATCH (e:Episode {level: $level, basis: 'derived'}) WHERE e.finding IN $names "
                        "RETURN e.patient_id AS p, e.anatomy AS a, e.first_datetime AS first, "
                        "e.first_study_id AS study", level=level, names=names):
        if start <= r["first"].to_native().date() <= end:
            groups.setdefault((r["p"], r["a"]), []).append((r["first"].to_native(), r["study"]))
    return {key: [s for _, s in sorted(eps)] for key, eps in groups.items() if len(eps) >= least}


def test_recurrent_findings_skips_only_patients_with_too_few_episodes(store, tmp_path):
    """Skipping patients by episode_count, before grouping, keeps every answer: against a grouping of all
    stored episodes by hand, for each finding, level, date range and min_episodes; and at level anatomy
    with episodes of two findings in one region, which count together."""
    write_cohort(tmp_path / "c", patients=40, seed=9)
    load_into(store, tmp_path / "c")
    recurrent = get_query("recurrent_findings")
    roots = [r["f"] for r in store.read("MATCH (e:Episode {level: 'study'}) RETURN DISTINCT e.finding AS f")]
    mixed = 0
    for root in roots:
        for level in ("study", "anatomy"):
            for start, end in ((date(1900, 1, 1), date(2299, 12, 31)), (date(2012, 1, 1), date(2014, 6, 30))):
                for least in (1, 2, 3):
                    got = run_named(store, recurrent, recurrent.bind({
                        "finding": root, "level": level, "start_date": start.isoformat(),
                        "end_date": end.isoformat(), "min_episodes": str(least)}))
                    want = _recurrent_by_hand(store, root, level, start, end, least)
                    assert {(r["patient_id"], r["anatomy"]): r["first_study_ids"] for r in got} == want, \
                        (root, level, start, least)
        if store.read("MATCH (e:Episode {level: 'anatomy'})-[:OF_FINDING]->(f:Finding)-[:IS_A*1..]->"
                      "(:Finding {name: $root}) MATCH (o:Episode {level: 'anatomy', finding: $root, "
                      "patient_id: e.patient_id, anatomy: e.anatomy}) RETURN count(*) AS n", root=root)[0]["n"]:
            mixed += 1
    assert mixed  # a region where two findings of one root both have episodes: least 2 must not skip them
