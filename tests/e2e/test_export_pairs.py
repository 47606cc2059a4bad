"""``cxrkg export pairs`` on a hand-built cohort in the real Neo4j: stated changes first, derived ones only where no
source states one (and none with --stated-only), the three and five classes, and the pairs in doubt left out and
counted (synthetic values only)."""

from __future__ import annotations

import csv

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.fixtures.inputs import comparison, scene_graph, write_scene_graph
from tests.fixtures.loading import load_into

runner = CliRunner()
LCA = "left costophrenic angle"
A, B, C = 10000001, 10000002, 10000003


def _study(folder, patient: int, n: int, when: str | None, present: bool, compare: str | None = None,
           view: str = "PA") -> None:
    image, prior = f"{patient}-img-{n}", f"{patient}-img-{n - 1}"
    label = f"anatomicalfinding|{'yes' if present else 'no'}|pleural effusion"
    rels = [comparison(image, prior, LCA, compare, "pleural effusion")] if compare else []
    g = scene_graph(image, patient, patient * 10 + n, when, {LCA: [[label]]}, relationships=rels)
    g["viewpoint"] = view
    write_scene_graph(folder / "scene_graphs", g)


@pytest.fixture()
def cohort(store, tmp_path):
    """Patient A: effusion absent, then present (derived new), then stated worsened (with a derived
    persistent beside it), then absent (derived resolved); B: two studies of one date; C: a lateral view,
    then a stated improved. (The loader rejects a study without a date, and links no study to another
    patient's: those reasons are unit-tested.)"""
    days = ["2150-01-01 08:00:00", "2150-01-11 08:00:00", "2150-02-10 08:00:00", "2150-03-12 08:00:00"]
    for n, (present, compare) in enumerate([(False, None), (True, None), (True, "worsened"), (False, None)], 1):
        _study(tmp_path, A, n, days[n - 1], present, compare)
    _study(tmp_path, B, 1, days[0], False)
    _study(tmp_path, B, 2, days[0], True)
    _study(tmp_path, C, 1, days[0], True, view="LATERAL")
    _study(tmp_path, C, 2, days[1], True, compare="improved", view="AP")
    load_into(store, tmp_path / "scene_graphs")
    return tmp_path


def _rows(path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _export(out, *options: str):
    result = runner.invoke(app, ["export", "pairs", "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    return result.output


def test_three_classes_stated_first_then_derived(cohort):
    out = cohort / "pairs.csv"
    said = _export(out)

    rows = _rows(out)
    assert [(r["study_id"], r["previous_study_id"]) for r in rows] == [
        (f"{A * 10 + n}", f"{A * 10 + n - 1}") for n in (2, 3, 4)] + [(f"{C * 10 + 2}", f"{C * 10 + 1}")]
    assert [r["dicom_id"] for r in rows] == [f"{A}-img-{n}" for n in (2, 3, 4)] + [f"{C}-img-2"]
    assert [r["previous_dicom_id"] for r in rows] == [f"{A}-img-{n}" for n in (1, 2, 3)] + [f"{C}-img-1"]
    assert [r["subject_id"] for r in rows] == [str(A)] * 3 + [str(C)]
    got = [(r["pleural_effusion_progression"], r["pleural_effusion_label_source"], r["pleural_effusion_label_basis"])
           for r in rows]
    assert got == [("worsening", "presence", "derived"), ("worsening", "chest_imagenome", "stated"),
                   ("improving", "presence", "derived"), ("improving", "chest_imagenome", "stated")]
    assert all(r["edema_progression"] == r["edema_label_basis"] == "" for r in rows)
    assert "4 pairs" in said and "worsening 2" in said and "stable 0" in said and "improving 2" in said, said
    assert "pairs left out: two studies of one date 1;" in said, said


def test_five_classes_and_stated_only(cohort):
    out = cohort / "pairs5.csv"
    _export(out, "--classes", "5", "--findings", "pleural_effusion")
    rows = _rows(out)
    assert [r["pleural_effusion_progression"] for r in rows] == ["new", "worsened", "resolved", "improved"]
    assert "edema_progression" not in rows[0]

    _export(out, "--stated-only")
    assert [r["pleural_effusion_progression"] for r in _rows(out)] == ["", "worsening", "", "improving"]


def test_a_vocabulary_finding_by_name_and_an_unknown_one(cohort):
    out = cohort / "named.csv"
    _export(out, "--findings", "pleural effusion,atelectasis")
    assert list(_rows(out)[0])[5:] == ["pleural_effusion_progression", "pleural_effusion_label_source",
                                       "pleural_effusion_label_basis", "atelectasis_progression",
                                       "atelectasis_label_source", "atelectasis_label_basis"]

    bad = runner.invoke(app, ["export", "pairs", "--out", str(out), "--findings", "pleural efusion"])
    assert bad.exit_code == 1
    assert "pleural efusion" in bad.output and "pleural effusion" in bad.output, bad.output
    assert runner.invoke(app, ["export", "pairs", "--out", str(out), "--classes", "4"]).exit_code == 2


def test_two_sources_that_disagree_give_no_label_and_are_counted(store, tmp_path):
    from tests.fixtures.effusion import STUDY, effusion_study, report

    effusion_study(tmp_path, 1, present=False)
    effusion_study(tmp_path, 2, severity="small")
    effusion_study(tmp_path, 3, severity="moderate", compare="worsened")  # Chest ImaGenome: worsened
    report(tmp_path, 3, "CHAN-CON-IMP")  # RadGraph: improved
    effusion_study(tmp_path, 4, severity="moderate", compare="worsened")
    report(tmp_path, 4, "CHAN-CON-WOR")  # both: worsened
    load_into(store, tmp_path / "scene_graphs", tmp_path / "radgraph")
    out = tmp_path / "pairs.csv"
    said = _export(out, "--findings", "pleural_effusion")

    got = {r["study_id"]: (r["pleural_effusion_progression"], r["pleural_effusion_label_source"],
                           r["pleural_effusion_label_basis"]) for r in _rows(out)}
    assert got == {str(STUDY[2]): ("worsening", "presence", "derived"), str(STUDY[3]): ("", "", ""),
                   str(STUDY[4]): ("worsening", "chest_imagenome|radgraph", "stated")}
    assert "edges without a label: stated labels disagree 1;" in said, said
