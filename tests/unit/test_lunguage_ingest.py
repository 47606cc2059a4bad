"""Lunguage rows as records (graph.ingest.lunguage) and the graph's mentions as Lunguage rows
(graph.sequential_reports): pure functions on made-up files, no Neo4j."""

from __future__ import annotations

import pandas as pd

from graph.formats.lunguage import LUNGUAGE_COLUMNS, made_up_rows, write_lunguage
from graph.ingest import discover
from graph.ingest.lunguage import SOURCE_LUNGUAGE, parse_lunguage
from graph.sequential_reports import lunguage_rows
from graph.vocabulary import vocabulary


def test_rows_become_mentions_with_state_changes_groups_and_history_apart(tmp_path):
    rows = made_up_rows(3, seed=1)
    path = write_lunguage(rows, tmp_path / "made_up_lunguage.csv")
    assert [f.format for f in discover([tmp_path])] == ["lunguage"]
    pf = parse_lunguage(path, vocabulary())
    assert pf.rejections == [] and pf.unmapped_terms == []
    assert {s.study_id for s in pf.studies} == {r.study_id for r in rows}
    assert all(m.source == SOURCE_LUNGUAGE and m.section != "hist" for m in pf.mentions)
    assert {m.polarity for m in pf.mentions} == {"present", "absent", "uncertain", None}
    assert {m.change for m in pf.mentions} >= {"new", None}
    assert all(m.entity_group for m in pf.mentions) and any(m.temporal_group for m in pf.mentions)
    history = next(r for r in rows if r.section == "hist")
    assert all(m.record.split("|")[:2] != [history.subject_id, history.study_id] or m.section == "find"
               for m in pf.mentions)
    assert any(history.sent in r.text for r in pf.reports)


def test_bad_rows_are_rejected_with_line_and_field_and_unknown_terms_listed(tmp_path):
    frame = pd.DataFrame([r.cells() for r in made_up_rows(1, seed=2)], columns=list(LUNGUAGE_COLUMNS))
    frame.loc[1, "dx_status"] = "maybe"
    frame.loc[2, "ent"] = "flux capacitor"
    frame.loc[2, "section"] = "find"
    frame.loc[2, "cat"] = "pf"
    frame.loc[3, "location"] = "somewhere odd"
    frame.loc[3, "section"] = "find"
    frame.loc[3, "cat"] = "pf"
    frame.loc[3, "ent"] = "pleural effusion"
    path = tmp_path / "bad_lunguage.csv"
    frame.to_csv(path, index=False)
    pf = parse_lunguage(path, vocabulary())
    assert [(r.record, r.field) for r in pf.rejections] == [("line 3", "dx_status")]
    assert "flux capacitor" in pf.unmapped_terms and "somewhere odd" in pf.unmapped_terms
    assert pf.mentions


def test_other_sources_are_grouped_by_region_and_finding_with_their_derived_episodes():
    base = {"patient_id": "p1", "anatomy": "left lung", "finding": "pleural effusion", "source": "radgraph",
            "change": None, "change_label": None, "severity": None, "evidence": "x", "section": None,
            "sentence_id": None, "term": None, "entity_group": None, "temporal_group": None}
    mentions = [{**base, "study_id": "s1", "study_order": 1, "polarity": "present", "record": "r1"},
                {**base, "study_id": "s2", "study_order": 2, "polarity": "absent", "record": "r2"},
                {**base, "study_id": "s3", "study_order": 3, "polarity": "present", "record": "r3"},
                {**base, "study_id": "s3", "study_order": 3, "polarity": None, "change": "new", "record": "r3",
                 "change_label": "CHAN-CON-AP"}]
    episodes = [{"patient_id": "p1", "anatomy": "left lung", "finding": "pleural effusion", "number": n,
                 "study_ids": [s]} for n, s in ((1, "s1"), (2, "s3"))]
    rows = lunguage_rows(mentions, episodes, {"pleural effusion": "anatomicalfinding"})
    assert [(r.sequence, r.dx_status, r.gt_temporal_group, r.onset) for r in rows] == [
        (1, "positive", "left lung|pleural effusion|1", ""), (2, "negative", "", ""),
        (3, "positive", "left lung|pleural effusion|2", "CHAN-CON-AP")]
    assert {r.gt_entity_group for r in rows} == {"left lung|pleural effusion"}


def test_temporal_groups_become_stated_episodes(tmp_path):
    """Every (patient, entity group, temporal group) of a made-up file is one stated episode, tentative
    mentions included; a recurrence is the entity group's second episode."""
    from collections import defaultdict
    from datetime import datetime, timedelta

    from graph.derived_rows import finding_parents, mention_fact
    from graph.episodes import stated_episodes
    from graph.events import StudyFact, derive_patient

    rows = made_up_rows(4, seed=3)
    pf = parse_lunguage(write_lunguage(rows, tmp_path / "made_up_lunguage.csv"), vocabulary())
    owner = {r.study_id: r.subject_id for r in rows}
    studies, mentions = defaultdict(dict), defaultdict(list)
    for r in rows:
        when = datetime(2150, 1, 1) + timedelta(days=10 * r.sequence)
        studies[r.subject_id][r.study_id] = StudyFact(r.study_id, when)
    for m in pf.mentions:
        mentions[owner[m.study_id]].append(mention_fact(m))
    got = {}
    for subject, facts in studies.items():
        d = derive_patient(facts.values(), mentions[subject], finding_parents())
        got |= {(subject, e.entity_group, e.temporal_group): e for e in stated_episodes(subject, d, mentions[subject])}
    assert set(got) == {(r.subject_id, r.gt_entity_group, r.gt_temporal_group) for r in rows if r.gt_temporal_group}
    assert all(e.basis == "stated" and e.level == "study" for e in got.values())
    assert any(e.number == 2 for e in got.values()) and any(e.closed for e in got.values())
