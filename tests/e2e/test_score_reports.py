"""``cxrkg eval reports`` on a synthetic cohort in the real Neo4j: the reference baseline scores every factual
figure at its maximum and nothing contradicted, copy-prior shows the temporal errors, edits made to the
references are found, and bad rows are rejected by name."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from flows.cli import app
from graph.report_scoring.facts import cohort_facts
from graph.synth import write_cohort
from graph.synth.tables import UNKNOWN_FORMS
from tests.fixtures.loading import load_into

runner = CliRunner()


@pytest.fixture()
def cohort(store, tmp_path):
    folder = tmp_path / "cohort"
    write_cohort(folder, patients=12, seed=5, sparse=True)
    load_into(store, folder)
    return store


def _score(tmp_path, *args):
    out = tmp_path / "scores.csv"
    result = runner.invoke(app, ["eval", "reports", *args, "--out", str(out), "--format", "json"])
    assert result.exit_code in (0, 6), result.output
    rows = list(csv.DictReader(out.open()))
    return result, rows, json.loads(result.stdout)


def test_reference_baseline_scores_the_maximum(cohort, tmp_path):
    result, rows, summary = _score(tmp_path, "--baseline", "reference", "--details", str(tmp_path / "d.csv"))
    assert result.exit_code == 0
    assert rows and len(rows) == summary["studies"]
    # every report has an entity ("No acute cardiopulmonary process." too), so no pair scores radgraph's 0
    assert not [n for n in summary["notes"] if "no entity" in n]
    for name in ("f1radgraph_simple", "f1radgraph_partial", "f1radgraph_complete"):
        assert {r[name] for r in rows} == {"1.0"}, name
    assert {r["finding_f1"] for r in rows} == {"1.0"}
    assert {r["changes_contradicted"] for r in rows} == {"0"}
    assert {r["hallucinated_prior"] for r in rows} == {"false"}
    # omitted counts the graph's changes: a reference omits only those its words state with an observation word
    # the vocabulary does not know (the synthetic cohort's, which the scene graphs name by their finding)
    omitted = [d for d in csv.DictReader((tmp_path / "d.csv").open()) if d["verdict"] == "omitted"]
    assert len(omitted) == sum(int(r["changes_omitted"]) for r in rows)
    unknown = re.compile("|".join(UNKNOWN_FORMS.values()), re.IGNORECASE)
    assert all(unknown.search(d["sentence"]) for d in omitted), omitted


def test_copy_prior_contradicts_and_omits(cohort, tmp_path):
    result, rows, summary = _score(tmp_path, "--baseline", "copy-prior", "--details", str(tmp_path / "d.csv"),
                                   "--plot", str(tmp_path / "per_finding.png"))
    assert result.exit_code == 0
    assert (tmp_path / "per_finding.png").read_bytes().startswith(b"\x89PNG")
    facts = cohort_facts(cohort)
    with_prior = {f.study_id for f in facts.values() if f.prior_report and f.report}
    assert {r["study_id"] for r in rows} == with_prior
    assert f"{sum(1 for f in facts.values() if f.report) - len(with_prior)} without a prior report left out" in \
        " ".join(summary["notes"])
    contradicted = sum(int(r["changes_contradicted"]) for r in rows)
    details = list(csv.DictReader((tmp_path / "d.csv").open()))
    assert contradicted > 0 and sum(d["verdict"] == "contradicted" for d in details) == contradicted
    omitted = sum(int(r["changes_omitted"]) for r in rows)
    assert omitted > 0 and sum(d["verdict"] == "omitted" for d in details) == omitted
    precision = summary["temporal_precision"]
    assert precision["precision"] < 1 and precision["stated"] == sum(int(r["changes_stated"]) for r in rows)
    assert {r["hallucinated_prior"] for r in rows} == {"false"}  # every copied report has a prior study
    # annotated on two worker processes: the same scores
    out = tmp_path / "pooled.csv"
    pooled = runner.invoke(app, ["eval", "reports", "--baseline", "copy-prior", "--workers", "2", "--out", str(out)])
    assert pooled.exit_code == 0, pooled.output
    assert list(csv.DictReader(out.open())) == rows
    # `cxrkg score-reports`, the old name, scores the same after its notice
    old = runner.invoke(app, ["score-reports", "--baseline", "copy-prior", "--out", str(tmp_path / "old.csv")])
    assert old.exit_code == 0 and list(csv.DictReader((tmp_path / "old.csv").open())) == rows
    assert "notice: `cxrkg score-reports` is now `cxrkg eval reports`" in old.stderr


OPPOSITE = {"increased": "decreased", "decreased": "increased", "worse": "improved", "worsened": "improved",
            "worsening": "improving", "improved": "worsened", "improving": "worsening", "new": "resolved",
            "resolved": "new"}


def _annotations(folder: Path) -> dict[str, dict]:
    """study_id -> the cohort's own RadGraph document of its report (what the graph was loaded from)."""
    out = {}
    for f in (folder / "radgraph").rglob("*.json"):
        for key, doc in json.loads(f.read_text()).items():
            out[re.search(r"s(\d+)\.txt$", key).group(1)] = doc
    return out


def _change_sentences(doc: dict) -> list[tuple[int, int]]:
    """(start, end) token spans of the sentences holding a change entity of the cohort's own annotation."""
    tokens = doc["text"].split(" ")
    ends = [i + 1 for i, t in enumerate(tokens) if t in (".", ":")]
    spans = list(zip([0, *ends], ends, strict=False))
    chan = {e["start_ix"] for e in doc["entities"].values() if e["label"].startswith("CHAN")}
    return [(a, b) for a, b in spans if any(a <= i < b for i in chan)]


def _swap(doc: dict) -> str | None:
    """The report with the first change word of a change sentence swapped to its opposite, or None."""
    tokens = doc["text"].split(" ")
    for a, b in _change_sentences(doc):
        for i in range(a, b):
            if (word := tokens[i].lower()) in OPPOSITE:
                swapped = OPPOSITE[word]
                tokens[i] = swapped.capitalize() if tokens[i][0].isupper() else swapped
                return " ".join(tokens)
    return None


def test_edits_to_the_references_are_found(cohort, tmp_path):
    """Each count is derived from the edit made: one swapped change word per edited report, one sentence
    referring to a prior per first study, every change sentence (by the cohort's own annotation) removed."""
    facts, docs = cohort_facts(cohort), _annotations(tmp_path / "cohort")
    truth = pd.read_parquet(tmp_path / "cohort" / "ground_truth.parquet")
    stated = truth.dropna(subset=["stated_radgraph"]).drop_duplicates(["study_id", "finding", "stated_radgraph"])
    stated_count = stated.groupby("study_id").size().to_dict()
    with_change = sorted(sid for sid in stated_count if facts[sid].has_prior)
    swapped = {sid: text for sid in with_change[::2] if (text := _swap(docs[sid]))}
    firsts = sorted(sid for sid, f in facts.items() if not f.has_prior)
    prior_added = {sid: "Compared with the prior study , " + docs[sid]["text"] for sid in firsts}
    removed = {}
    for sid in with_change[1::2]:
        tokens, cut = docs[sid]["text"].split(" "), _change_sentences(docs[sid])
        removed[sid] = " ".join(t for i, t in enumerate(tokens) if not any(a <= i < b for a, b in cut))
    generated = tmp_path / "generated.csv"
    pd.DataFrame({"study_id": list(swapped) + list(prior_added) + list(removed),
                  "report": list(swapped.values()) + list(prior_added.values()) + list(removed.values())}
                 ).to_csv(generated, index=False)
    result, rows, summary = _score(tmp_path, str(generated))
    assert result.exit_code == 0 and len(swapped) >= 5 and len(firsts) >= 5 and len(removed) >= 5
    by_id = {r["study_id"]: r for r in rows}
    found = {
        "swap": sum(int(by_id[s]["changes_contradicted"]) >= 1 for s in swapped) / len(swapped),
        "prior": sum(by_id[s]["hallucinated_prior"] == "true" for s in prior_added) / len(prior_added),
        "removed": sum(min(int(by_id[s]["changes_omitted"]), stated_count[s]) for s in removed)
                   / sum(stated_count[s] for s in removed),
    }
    missed = {s: docs[s]["text"] for s in swapped if by_id[s]["changes_contradicted"] == "0"}
    assert all(rate >= 0.9 for rate in found.values()), (found, missed)
    assert sum(by_id[s]["hallucinated_prior"] == "true" for s in swapped) == 0  # studies with a prior


def test_bad_rows_are_rejected_by_name_and_the_rest_scored(cohort, tmp_path):
    facts = cohort_facts(cohort)
    some = sorted(facts)[0]
    generated = tmp_path / "generated.csv"
    generated.write_text(f"study_id,report,subject_id\n{some},Small left pleural effusion.,p\n"
                         "99999999,No acute process.,p\n" f"{sorted(facts)[1]},,p\n")
    out = tmp_path / "scores.csv"
    result = runner.invoke(app, ["eval", "reports", str(generated), "--out", str(out), "--rejected",
                                 str(tmp_path / "rejected.json")])
    assert result.exit_code == 6, result.output
    rows = list(csv.DictReader(out.open()))
    assert [r["study_id"] for r in rows] == [some]
    assert list(rows[0]) == ["study_id", "has_prior", "prior_reference", "hallucinated_prior", "changes_stated",
                             "changes_supported", "changes_contradicted", "changes_unverifiable", "changes_omitted",
                             "f1radgraph_simple", "f1radgraph_partial", "f1radgraph_complete", "finding_f1"]
    rejected = json.loads((tmp_path / "rejected.json").read_text())
    assert sorted((r["record"], r["field"]) for r in rejected) == sorted(
        [("99999999", "study_id"), (sorted(facts)[1], "report")])
