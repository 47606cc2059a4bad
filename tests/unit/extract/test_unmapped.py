"""`cxrkg eval extract --unmapped`: the phrases no vocabulary entry or cue covers, by frequency. Report text
here is synthetic."""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from flows.cli import app
from graph.extract.eval.unmapped import MAX_WORDS, unmapped_phrases

pytestmark = pytest.mark.extract


def test_only_unread_phrases_are_counted():
    counts = unmapped_phrases([
        "FINDINGS: Paratracheal stripe lobulation at the bases. No pleural effusion. The lungs are clear.",
        {"findings": "Mild paratracheal stripe lobulation is seen.", "impression": "Stable left pleural effusion.",
         "indication": "Shortness of breath."},
    ])
    assert counts["paratracheal stripe lobulation"] == 2
    # findings, anatomy, cues, normal statements, stop words, framing words and other sections are read
    assert not {w for phrase in counts for w in phrase.split()} & {
        "effusion", "pleural", "clear", "lungs", "bases", "stable", "mild", "seen", "shortness", "breath"}


def test_long_runs_are_cut():
    counts = unmapped_phrases(["Zorbic quellian frastic plomber wendish gartly."])
    assert all(len(p.split()) <= MAX_WORDS for p in counts) and sum(len(p.split()) for p in counts) == 6


def test_cli_lists_by_frequency(tmp_path):
    (tmp_path / "a.txt").write_text("Bronchovascular crowding. Azygos fissure. Azygos fissure again noted.")
    result = CliRunner().invoke(app, ["eval", "extract", "--unmapped", "--source", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert got["reports"] == 1 and got["phrases"][0] == ["azygos fissure", 2]
    missing = CliRunner().invoke(app, ["eval", "extract", "--unmapped", "--source", str(tmp_path / "none")])
    assert missing.exit_code == 1 and "no such" in missing.output and "Traceback" not in missing.output


def test_vocabulary_entries_without_a_cui_are_listed(tmp_path):
    from graph.extract.eval.unmapped import without_cui
    from graph.vocabulary import vocabulary

    v = vocabulary()
    missing = without_cui(v)
    assert "anatomicalfinding: pleural effusion" not in missing["findings"]  # the YAML gives it a CUI
    assert len(missing["findings"]) == sum(not f.cuis for f in v.findings.values()) > 0
    assert "right upper lung zone" in missing["regions"] and "lungs" not in missing["regions"]
    (tmp_path / "a.txt").write_text("Azygos fissure.")
    table = CliRunner().invoke(app, ["eval", "extract", "--unmapped", "--source", str(tmp_path)])
    assert table.exit_code == 0 and f"findings of the vocabulary without a UMLS CUI ({len(missing['findings'])})" in table.output
    got = json.loads(CliRunner().invoke(app, ["eval", "extract", "--unmapped", "--source", str(tmp_path),
                                              "--format", "json"]).output)
    assert got["without_cui"] == missing


def test_reports_of_a_gold_split_can_be_left_out(tmp_path, monkeypatch):
    import graph.extract.eval.gold_eval as gold_eval

    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"sentences": [{"report_id": "2", "split": "held-out"}]}))
    monkeypatch.setattr(gold_eval, "GOLD_FILES", (gold,))
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "1.txt").write_text("Azygos fissure.")
    (tmp_path / "r" / "2.txt").write_text("Paratracheal stripe thickening.")
    args = ["eval", "extract", "--unmapped", "--source", str(tmp_path / "r"), "--format", "json"]
    both = json.loads(CliRunner().invoke(app, args).output)
    assert both["reports"] == 2
    result = CliRunner().invoke(app, args + ["--exclude-gold", "held-out"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert got["reports"] == 1 and [p for p, _ in got["phrases"]] == ["azygos fissure"]
