"""Mention states and onset / resolution events on sparse input (findings stated only when said), against
the real Neo4j: the cases of the README's table, hierarchy at study level, and load-order independence."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.store.queries import get_query, run_named
from graph.vocabulary import vocabulary
from tests.fixtures.inputs import scene_graph, write_scene_graph
from tests.fixtures.loading import graph_snapshot, load_into

LCA, RCA = "left costophrenic angle", "right costophrenic angle"
EFF, ATEL = "pleural effusion", "atelectasis"

# patient -> studies as (datetime, {region: [label, ...]}); one patient per case of the README table.
CASES = {
    "prior_absent": [("2150-01-01 08:00:00", {LCA: [f"no|{EFF}"]}), ("2150-02-01 08:00:00", {LCA: [f"yes|{EFF}"]})],
    "prior_not_mentioned": [("2150-01-01 08:00:00", {"left lower lung zone": [f"yes|{ATEL}"]}),
                            ("2150-02-01 08:00:00", {LCA: [f"yes|{EFF}"]})],
    "prior_uncertain": [("2150-01-01 08:00:00", {LCA: [f"uncertain|{EFF}"]}),
                        ("2150-02-01 08:00:00", {LCA: [f"yes|{EFF}"]})],
    "gap_not_mentioned": [("2150-01-01 08:00:00", {LCA: [f"yes|{EFF}"]}),
                          ("2150-02-01 08:00:00", {"left lower lung zone": [f"yes|{ATEL}"]}),
                          ("2150-03-01 08:00:00", {LCA: [f"yes|{EFF}"]})],
    "first_study": [("2150-02-01 08:00:00", {LCA: [f"yes|{EFF}"]})],
    "same_day": [("2150-02-01 08:00:00", {LCA: [f"no|{EFF}"]}), ("2150-02-01 08:00:00", {LCA: [f"yes|{EFF}"]})],
    "resolved": [("2150-01-01 08:00:00", {LCA: [f"yes|{EFF}"]}), ("2150-02-01 08:00:00", {LCA: [f"no|{EFF}"]})],
    "other_side": [("2150-01-01 08:00:00", {LCA: [f"yes|{EFF}"]}), ("2150-02-01 08:00:00", {RCA: [f"yes|{EFF}"]})],
    "child_finding": [("2150-01-01 08:00:00", {LCA: [f"no|{EFF}"]}),
                      ("2150-02-01 08:00:00", {LCA: ["yes|costophrenic angle blunting"]})],
}
PATIENTS = {name: 10000100 + i for i, name in enumerate(CASES)}


def _label(short: str) -> str:
    polarity, finding = short.split("|")
    return f"anatomicalfinding|{'yes' if polarity != 'no' else 'no'}|{finding}"


def write_cases(folder: Path) -> list[Path]:
    """One scene graph per study. Chest ImaGenome has only yes / no, so an ``uncertain|...`` entry is
    left out here and stated by a RadGraph OBS-U instead (:func:`_uncertain_reports`)."""
    paths = []
    for name, studies in CASES.items():
        pid = PATIENTS[name]
        for n, (when, regions) in enumerate(studies, start=1):
            image = f"cccccccc-{pid:08d}-00000000-00000000-0000000{n}"
            labels = {r: [[_label(x) for x in xs if not x.startswith("uncertain")]] for r, xs in regions.items()}
            g = scene_graph(image, pid, pid * 10 + n, when, {r: v for r, v in labels.items() if v[0]})
            paths.append(write_scene_graph(folder, g))
    return paths


def _uncertain_reports(folder: Path) -> Path:
    """The uncertain prior of case prior_uncertain, as a RadGraph OBS-U (Chest ImaGenome has no uncertain)."""
    from tests.fixtures.inputs import radgraph_doc, write_radgraph

    pid = PATIENTS["prior_uncertain"]
    doc = radgraph_doc("Possible left pleural effusion .", [("left", "ANAT-DP", 1, []),
                                                            ("pleural", "ANAT-DP", 2, [("modify", 1)]),
                                                            ("effusion", "OBS-U", 3, [("located_at", 2)])])
    mapping = folder / "mapping.csv"
    mapping.write_text(f"doc_key,patient_id,study_id,study_datetime\nu1,{pid},{pid * 10 + 1},2150-01-01T08:00:00\n")
    write_radgraph(folder / "reports.json", {"u1": doc})
    return mapping


@pytest.fixture()
def cases(store, tmp_path):
    folder = tmp_path / "cases"
    write_cases(folder / "scene_graphs")
    mapping = _uncertain_reports(folder)
    load_into(store, folder, mapping=str(mapping))
    return store


def _new(store, **params):
    q = get_query("new_finding_patients")
    rows = run_named(store, q, q.bind({"finding": "effusion", "start_date": "2150-01-01", "end_date": "2150-12-31",
                                       **params}))
    names = {str(pid): name for name, pid in PATIENTS.items()}
    return sorted((names[r["patient_id"]], r["anatomy"], r["prior_state"]) for r in rows)


def test_onsets_at_study_level_know_what_the_prior_said(cases):
    assert _new(cases) == [
        ("child_finding", None, "absent"),
        ("gap_not_mentioned", None, "not_mentioned"),
        ("prior_absent", None, "absent"),
        ("prior_not_mentioned", None, "not_mentioned"),
        ("prior_uncertain", None, "uncertain"),
        ("same_day", None, "absent"),
    ]
    # the strict reading is one filter away
    assert [r for r in _new(cases) if r[2] == "absent"] == [
        ("child_finding", None, "absent"), ("prior_absent", None, "absent"), ("same_day", None, "absent")]
    assert _new(cases, basis="stated") == []


def test_onsets_at_anatomy_level_are_per_region(cases):
    got = _new(cases, level="anatomy")
    # an effusion moving from the left to the right side is an onset on the right only at anatomy level
    assert ("other_side", RCA, "not_mentioned") in got
    assert ("child_finding", LCA, "not_mentioned") in got  # the child finding is new at that region
    assert not any(name == "other_side" for name, *_ in _new(cases))


def test_resolution_needs_a_stated_absence(cases):
    def events(name):
        pid = PATIENTS[name]
        return cases.read("MATCH (:Patient {patient_id: $p})-[:HAS_STUDY]->(:Study)-[:HAS_STUDY_FINDING]->"
                          "(n:StudyFinding {finding: $f})-[r:PROGRESSION]->() RETURN r.change AS change, r.rule AS rule, "
                          "r.basis AS basis", p=str(pid), f=EFF)

    assert events("resolved") == [{"change": "resolved", "rule": "resolution", "basis": "derived"}]
    assert sorted(e["change"] for e in events("gap_not_mentioned")) == ["new", "no longer mentioned"]


def test_timeline_lists_every_study_with_its_state(cases):
    q = get_query("finding_timeline")
    rows = run_named(cases, q, q.bind({"patient_id": str(PATIENTS["gap_not_mentioned"]), "finding": EFF}))
    assert [(r["study_order"], r["state"], r["changes"]) for r in rows] == [
        (1, "present", []), (2, "not_mentioned", ["no longer mentioned (presence)"]), (3, "present", ["new (presence)"])]


def test_changes_between_any_two_studies(cases):
    pid = PATIENTS["gap_not_mentioned"]
    q = get_query("changes_between_studies")
    rows = run_named(cases, q, q.bind({"current_study_id": str(pid * 10 + 3), "prior_study_id": str(pid * 10 + 1)}))
    # present at both ends of a gap: persistent between them, whatever the study in between said
    assert [(r["finding"], r["prior_state"], r["current_state"], r["change"]) for r in rows] == [
        (EFF, "present", "present", "persistent")]


def test_any_load_order_gives_the_one_shot_graph(store, tmp_path):
    folder = tmp_path / "cases"
    paths = write_cases(folder / "scene_graphs")
    mapping = _uncertain_reports(folder)
    load_into(store, folder, mapping=str(mapping))
    one_shot = graph_snapshot(store)

    store.clear()
    store.ensure_schema(vocabulary())
    for path in reversed(paths):  # every study alone, latest first: each load relinks its neighbours
        load_into(store, path)
    load_into(store, folder / "reports.json", mapping=str(mapping))
    assert graph_snapshot(store) == one_shot


def test_every_catalogue_query_answers_as_its_file_does(cases):
    """run_named's packed transport returns the rows, columns and order of the catalogue file run as is."""
    from graph.store.queries import catalogue

    pid = PATIENTS["gap_not_mentioned"]
    values = {"patient_id": str(pid), "finding": "effusion", "start_date": "2150-01-01", "end_date": "2150-12-31",
              "current_study_id": str(pid * 10 + 3), "prior_study_id": str(pid * 10 + 1)}
    sizes = {}
    for name, q in catalogue().items():
        for level in ("study", "anatomy"):
            given = {p.name: values.get(p.name, level if p.name == "level" else p.default) for p in q.params}
            bound = q.bind({k: v for k, v in given.items() if v is not None})
            plain = [{c: row[c] for c in q.columns} for row in cases.read(q.cypher, **bound)]
            assert run_named(cases, q, bound) == plain, (name, level)
            sizes[name, level] = len(plain)
    assert sizes["new_finding_patients", "anatomy"] > sizes["new_finding_patients", "study"] > 1
    assert sizes["finding_timeline", "study"] == 3


def test_warm_plans_plans_every_catalogue_query_and_reads_nothing(cases):
    """`cxrkg db start` plans the catalogue (graph.store.queries.warm_plans): every query, no data touched."""
    from graph.store.queries import catalogue, warm_plans

    before = graph_snapshot(cases)
    assert warm_plans(cases) == len(catalogue()) >= 7
    assert graph_snapshot(cases) == before
