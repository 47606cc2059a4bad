"""Lunguage rows as records (graph.ingest.lunguage) and the graph's mentions as Lunguage rows
(graph.longitudinal.sequential_reports): pure functions on made-up files, no Neo4j."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from graph.formats.lunguage import (
    CHANGE_FIELD,
    CHANGE_OF_FIELD,
    EXPORT_COLUMN,
    LUNGUAGE_COLUMNS,
    STATE_STATUS,
    LunguageRow,
    made_up_rows,
    read_lunguage,
    state_of,
    write_lunguage,
)
from graph.ingest import discover, parse_files
from graph.ingest.lunguage import lunguage_key, parse_lunguage
from graph.longitudinal.sequential_reports import lunguage_rows
from graph.terms import Source
from graph.vocabulary import vocabulary


def test_rows_become_mentions_with_state_changes_groups_and_history_apart(tmp_path):
    rows = made_up_rows(3, seed=1)
    path = write_lunguage(rows, tmp_path / "made_up_lunguage.csv")
    assert [f.format for f in discover([tmp_path])] == ["lunguage"]
    pf = parse_lunguage(path, vocabulary())
    assert pf.rejections == [] and pf.unmapped_terms == []
    assert {s.study_id for s in pf.studies} == {r.study_id for r in rows}
    assert all(m.source == Source.LUNGUAGE and m.section != "hist" for m in pf.mentions)
    assert {m.polarity for m in pf.mentions} == {"present", "absent", "uncertain", None}
    assert {m.change for m in pf.mentions} >= {"new", None}
    assert all(m.entity_group for m in pf.mentions) and any(m.temporal_group for m in pf.mentions)
    # history rows are report text, never mentions: no mention has a history row's key
    history = [r for r in rows if r.section == "hist"]
    assert history and {lunguage_key(r) for r in history}.isdisjoint(m.record for m in pf.mentions)
    assert {lunguage_key(r) for r in rows if r.section == "find"} == {m.record for m in pf.mentions}
    assert all(any(h.sent in r.text for r in pf.reports if r.study_id == h.study_id) for h in history)


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

    from graph.longitudinal.derived_rows import finding_parents, mention_fact
    from graph.longitudinal.episodes import stated_episodes
    from graph.longitudinal.events import StudyFact, derive_patient

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


def test_state_and_change_tables_read_back_as_written():
    # the ingest reads with the inverses of the tables the export writes with
    assert {state: state_of(*status) for state, status in STATE_STATUS.items()} == {s: s for s in STATE_STATUS}
    assert state_of("negative", "tentative") == "absent"  # no hedged absence in the graph
    assert {CHANGE_OF_FIELD[CHANGE_FIELD[c]] for c in CHANGE_OF_FIELD.values()} == set(CHANGE_OF_FIELD.values())
    assert set(CHANGE_OF_FIELD) <= set(LunguageRow.model_fields)


def test_a_lunguage_file_is_known_by_its_header_not_its_name(tmp_path):
    rows = made_up_rows(1, seed=4)
    write_lunguage(rows, tmp_path / "reports_2150.csv")
    pd.DataFrame({"subject_id": ["p1"], "label": ["x"]}).to_csv(tmp_path / "lunguage_notes.csv", index=False)
    (tmp_path / "empty_lunguage.csv").write_text("")
    assert [(Path(f.path).name, f.format) for f in discover([tmp_path])] == [("reports_2150.csv", "lunguage")]


def test_the_export_is_refused_as_a_source_and_the_rest_of_the_batch_loads(tmp_path):
    """A file written as ``cxrkg export lunguage`` writes it (graph mentions -> lunguage_rows ->
    write_lunguage(exported=True)), named as a Lunguage file, beside a genuine one: discovery finds both,
    the export is one rejection naming the file and the marking column, the genuine file parses whole."""
    genuine = write_lunguage(made_up_rows(2, seed=5), tmp_path / "genuine.csv")
    pf = parse_lunguage(genuine, vocabulary())
    owner = {s.study_id: s.patient_id for s in pf.studies}
    order = {s.study_id: n for n, s in enumerate(pf.studies, start=1)}
    mentions = [{**vars(m), "patient_id": owner[m.study_id], "study_order": order[m.study_id]} for m in pf.mentions]
    categories = {f.name: f.category for f in vocabulary().findings.values()}
    exported = write_lunguage(lunguage_rows(mentions, [], categories), tmp_path / "lunguage.csv", exported=True)
    assert pd.read_csv(exported, dtype=str).columns[-1] == EXPORT_COLUMN
    assert read_lunguage(exported).rows and read_lunguage(exported).rejections == []  # still a Lunguage file

    files = discover([tmp_path])
    assert [(Path(f.path).name, f.format) for f in files] == [("genuine.csv", "lunguage"), ("lunguage.csv", "lunguage")]
    parsed = parse_files(files, vocabulary(), None)
    assert parsed[0].rejections == [] and parsed[0].mentions
    [refused] = parsed[1].rejections
    assert (refused.file, refused.record, refused.field) == (str(exported), "line 1 (header)", EXPORT_COLUMN)
    assert "cxrkg export lunguage" in refused.reason and "\n" not in refused.reason
    assert parsed[1].mentions == [] and parsed[1].studies == []

