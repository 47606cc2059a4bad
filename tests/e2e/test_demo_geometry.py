"""The demo's geometry section on a small synthetic cohort: one patient's cardiothoracic ratio over time, its
line's numbers those of the graph's Measurement nodes and of geometry_truth.parquet, and the cohort's line
(rising patients, the boxes against the reports, rotated and cut-off films) recounted here from the nodes by
rules written afresh; on a graph without measured films, one line says so."""

from __future__ import annotations

import io
import re
from datetime import datetime

import pandas as pd
import pytest

from tests.fixtures.loading import load_into

PATIENTS = 30
DATE = r"(\d{4}-\d\d-\d\d)"
RATIO = re.compile(r"patient (\d+): (\d+) films, cardiothoracic ratio ([0-9.]+) to ([0-9.]+)(; it rose ([0-9.]+) -> "
                   rf"([0-9.]+) \(\+([0-9.]+)\) in (\d+) days \({DATE} to {DATE}\))?; cardiomegaly by the boxes in "
                   r"(\d+) of (\d+), by the planted truth in (\d+)$")
COHORT = re.compile(r"cohort: (\d+) patients whose cardiothoracic ratio rose by 0\.05 or more within 365 days; "
                    r"cardiomegaly by the boxes and not stated by the reports in (\d+) studies, stated and not by "
                    r"the boxes in (\d+); (\d+) rotated and (\d+) cut-off films$")


@pytest.fixture
def cohort(store, tmp_path):
    from graph.synth import write_cohort

    write_cohort(tmp_path / "cohort", patients=PATIENTS, seed=7)
    load_into(store, tmp_path / "cohort")
    return tmp_path / "cohort"


def _lines(cohort, capsys) -> tuple[list[str], list[str]]:
    """The section's lines, and its table's rows (printed on stdout, as the demo's tables are)."""
    from rich.console import Console

    from flows.demo.geometry import geometry_section

    out = io.StringIO()
    capsys.readouterr()
    geometry_section(Console(file=out, width=10_000), cohort)
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    return out.getvalue().splitlines(), table


def _match(pattern: re.Pattern, lines: list[str]) -> re.Match:
    found = [m for line in lines if (m := pattern.match(line))]
    assert len(found) == 1, lines
    return found[0]


def _films(store, patient: str) -> list[dict]:
    return store.read("MATCH (s:Study {patient_id: $p})-[:HAS_IMAGE]->(i:Image)-[:HAS_MEASUREMENT]->"
                      "(m:Measurement {name: 'cardiothoracic_ratio'}) WHERE m.value IS NOT NULL "
                      "RETURN toString(s.study_datetime) AS day, i.image_id AS image, m.value AS value, "
                      "m.decision AS decision ORDER BY s.study_order, i.image_id", p=patient)


def _rising(store) -> set[str]:
    """Patients with two studies of one view at most 365 days apart whose measured ratio rose by 0.05 or more,
    from each study's geometry observation (the rule of cypher/cardiothoracic_rise.cypher, in Python)."""
    rows = store.read("MATCH (g:GeometryObservation {finding: 'enlarged cardiac silhouette'})-[:FROM_MEASUREMENT]->"
                      "(m:Measurement) RETURN g.patient_id AS p, g.study_id AS s, toString(g.study_datetime) AS t, "
                      "g.value AS v, m.view AS view")
    out = set()
    for a in rows:
        for b in rows:
            days = (datetime.fromisoformat(b["t"]) - datetime.fromisoformat(a["t"])).days
            if (a["p"] == b["p"] and a["view"] == b["view"] and (a["t"], a["s"]) < (b["t"], b["s"]) and days <= 365
                    and round(b["v"] - a["v"], 2) >= 0.05):
                out.add(a["p"])
    return out


def _disagreements(store, geometry: str, stated: bool) -> int:
    return store.read("MATCH (s:Study)-[:HAS_GEOMETRY_OBSERVATION]->(g:GeometryObservation "
                      "{finding: 'enlarged cardiac silhouette', state: $g}) "
                      "WHERE EXISTS { (s)-[:HAS_OBSERVATION]->(o:Observation {finding: 'enlarged cardiac silhouette'}) "
                      "WHERE o.state IN ['present', 'uncertain'] } = $stated RETURN count(*) AS n",
                      g=geometry, stated=stated)[0]["n"]


def test_one_patients_ratio_over_time_is_the_graphs(store, cohort, capsys):
    lines, table = _lines(cohort, capsys)
    m = _match(RATIO, lines)
    patient, films = m[1], _films(store, m[1])
    ratios = [f["value"] for f in films]
    assert len(films) >= 3 and int(m[2]) == int(m[13]) == len(films)
    assert (float(m[3]), float(m[4])) == (min(ratios), max(ratios))
    assert int(m[12]) == sum(f["decision"] == "yes" for f in films)
    truth = pd.read_parquet(cohort / "geometry_truth.parquet").set_index("image_id")
    assert int(m[14]) == sum(bool(truth.loc[f["image"], "cardiomegaly"]) for f in films)
    assert len(table) == len(films)
    for row, f in zip(table, films, strict=True):  # each film's date, ratio and planted ratio, in order
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert (cells[0], float(cells[2]), cells[3]) == (f["day"][:10], f["value"], f["decision"])
        assert abs(float(cells[4]) - truth.loc[f["image"], "cardiothoracic_ratio"]) <= 0.02  # tests/unit/test_synth_geometry.py
    rising = _rising(store)
    assert (m[5] is not None) == (patient in rising) == bool(rising)  # a rising patient is shown where one is
    if m[5]:  # the rise is between two of the films shown, within a year
        before, after, rise, days = float(m[6]), float(m[7]), float(m[8]), int(m[9])
        pairs = [(a, b) for a in films for b in films if (a["day"][:10], a["value"], b["day"][:10], b["value"]) ==
                 (m[10], before, m[11], after)]
        assert pairs and rise == round(after - before, 2) >= 0.05 and 0 <= days <= 365


def test_the_cohort_line_recounts_from_the_nodes(store, cohort, capsys):
    m = _match(COHORT, _lines(cohort, capsys)[0])
    assert int(m[1]) == len(_rising(store)) > 0
    assert (int(m[2]), int(m[3])) == (_disagreements(store, "present", False), _disagreements(store, "absent", True))
    rotated, cut = (store.read("MATCH (m:Measurement {name: $n, decision: $d}) RETURN count(*) AS n", n=n, d=d)[0]["n"]
                    for n, d in (("rotation_ratio", "yes"), ("inclusion", "cut off")))
    assert (int(m[4]), int(m[5])) == (rotated, cut) and rotated + cut > 0


def test_without_measured_films_one_line_says_so(store, tmp_path, capsys):
    lines, table = _lines(tmp_path, capsys)
    assert table == []
    assert lines[-1] == "no patient has two films with a measured cardiothoracic ratio (anatomy boxes)", lines
