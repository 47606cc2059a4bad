"""Lunguage CSVs in and out (graph.formats.lunguage) and episode agreement (graph.longitudinal.episode_agreement,
``cxrkg eval episodes``), on made-up files the project writes itself (no Lunguage row: the data are credentialed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from graph.formats.lunguage import (
    LUNGUAGE_COLUMNS,
    LUNGUAGE_FILE,
    LunguageInputError,
    LunguageRow,
    lunguage_header,
    made_up_rows,
    read_lunguage,
    write_lunguage,
)
from graph.ingest.lunguage import parse_lunguage
from graph.vocabulary import vocabulary
from graph.longitudinal.episode_agreement import annotated_episodes, episode_agreement

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows() -> list[LunguageRow]:
    return made_up_rows(patients=5, seed=3)


def _groups(rows):
    """(subject, entity group) -> the temporal groups it has."""
    out = defaultdict(set)
    for r in rows:
        if r.gt_temporal_group:
            out[(r.subject_id, r.gt_entity_group)].add(r.gt_temporal_group)
    return out


# --- the file format -------------------------------------------------------------------------------------

def test_made_up_file_has_patients_recurrences_and_stated_episodes(rows):
    assert len({r.subject_id for r in rows}) == 5
    groups = _groups(rows)
    recurrent = {s for (s, _), tgs in groups.items() if len(tgs) >= 2}
    assert recurrent == {r.subject_id for r in rows}  # every patient's first finding comes back
    assert any(r.dx_status == "negative" and r.gt_entity_group and not r.gt_temporal_group for r in rows)
    assert any(r.section == "hist" and not r.gt_entity_group for r in rows)
    assert made_up_rows(patients=5, seed=3) == rows and made_up_rows(patients=5, seed=4) != rows


def test_made_up_file_round_trips_exactly(rows, tmp_path):
    first = write_lunguage(rows, tmp_path / "a.csv")
    assert pd.read_csv(first, dtype=str, keep_default_na=False).columns.tolist() == list(LUNGUAGE_COLUMNS)
    back = read_lunguage(first)
    assert back.rejections == [] and back.rows == rows
    second = write_lunguage(back.rows, tmp_path / "b.csv")
    assert second.read_bytes() == first.read_bytes()


def _with(rows, tmp_path, line: int, **cells) -> Path:
    """The made-up file with some cells of one data line (2 = first row) replaced."""
    frame = pd.DataFrame([r.cells() for r in rows], columns=list(LUNGUAGE_COLUMNS))
    for column, value in cells.items():
        frame.loc[line - 2, column] = value
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("line, cells, field, says", [
    (3, {"section": "findings"}, "section", "'hist', 'find' or 'impr'"),
    (4, {"sequence": "two"}, "sequence", "integer"),
    (5, {"dx_status": "maybe"}, "dx_status", "'positive', 'negative'"),
    (2, {"gt_temporal_group": "TG9.9"}, "gt_temporal_group", "without gt_entity_group"),
    (6, {"ent": ""}, "ent", "at least 1 character"),
    (3, {"section": "hist", "sent_idx": "0", "ent_idx": "0"}, "ent_idx", "already at line 2"),
    (3, {"sequence": "7"}, "sequence", "has sequence 1 at line 2"),
])
def test_a_bad_row_is_rejected_with_line_and_field_and_the_rest_kept(rows, tmp_path, line, cells, field, says):
    read = read_lunguage(_with(rows, tmp_path, line, **cells))
    assert len(read.rejections) == 1 and len(read.rows) == len(rows) - 1
    r = read.rejections[0]
    assert (r.file, r.record, r.field) == (str(tmp_path / "bad.csv"), f"line {line}", field)
    assert says in r.reason


def test_a_missing_column_rejects_the_file(rows, tmp_path):
    path = write_lunguage(rows, tmp_path / "a.csv")
    pd.read_csv(path, dtype=str, keep_default_na=False).drop(columns=["no change"]).to_csv(path, index=False)
    with pytest.raises(LunguageInputError, match="field no change: column"):
        read_lunguage(path)


def test_the_release_variants_are_kept_and_counted(rows, tmp_path):
    """What lunguage-score 1.0.0 reads in the release's Lunguage.csv beyond the schema: the associate /
    evidence relation columns, the older dx_uncertainty name, cat lf / If (as pf) and merged categories,
    loc: / det: prefixes in location, status in another case, no status on history rows."""
    frame = pd.DataFrame([r.cells() for r in rows], columns=list(LUNGUAGE_COLUMNS))
    finding = [i for i, r in enumerate(rows) if r.is_mention() and r.location][:5]
    history = next(i for i, r in enumerate(rows) if r.section == "hist")
    frame["associate"], frame["evidence"] = "", ""
    frame.loc[finding[0], ["associate", "evidence"]] = ["idx3", "idx4, idx5"]
    frame.loc[finding[1], "cat"] = "lf"
    frame.loc[finding[2], "cat"] = "If"
    frame.loc[finding[3], "cat"] = "pf/cf"
    frame.loc[finding[4], "cat"] = "lesion"
    frame.loc[finding[0], "location"] = f"loc: {rows[finding[0]].location}, det: upper"
    frame.loc[finding[1], "dx_status"] = f" {rows[finding[1]].dx_status.capitalize()}"
    frame.loc[history, ["dx_status", "dx_certainty"]] = ["", ""]
    path = tmp_path / "release.csv"
    frame.rename(columns={"dx_certainty": "dx_uncertainty"}).to_csv(path, index=False)
    assert lunguage_header(path) == LUNGUAGE_FILE
    read = read_lunguage(path)
    assert read.rejections == [] and len(read.rows) == len(rows)
    first, second = read.rows[finding[0]], read.rows[finding[1]]
    assert (first.associate, first.evidence) == ("idx3", "idx4, idx5")
    assert first.location == f"{rows[finding[0]].location}, upper"
    assert (second.cat, second.dx_status) == ("pf", rows[finding[1]].dx_status)
    assert [read.rows[i].cat for i in finding[2:]] == ["pf", "pf/cf", "lesion"]
    assert read.variants == {
        "lunguage: column dx_uncertainty read as dx_certainty": len(rows),
        "lunguage: associate column kept": 1, "lunguage: evidence column kept": 1,
        "lunguage: cat 'lf' read as 'pf'": 1, "lunguage: cat 'If' read as 'pf'": 1,
        "lunguage: cat outside the schema kept": 1, "lunguage: loc:/det: prefixes of location dropped": 1,
        "lunguage: dx_status case or spaces normalised": 1,
        "lunguage: empty dx_status/dx_certainty on a history or patient info. row": 1}
    parsed = parse_lunguage(path, vocabulary())
    assert parsed.variants == read.variants and parsed.rejections == []


def test_a_finding_row_without_certainty_is_rejected(rows, tmp_path):
    line = 2 + next(i for i, r in enumerate(rows) if r.is_mention())
    read = read_lunguage(_with(rows, tmp_path, line, dx_certainty=""))
    assert [(r.record, r.field) for r in read.rejections] == [(f"line {line}", "dx_certainty")]
    assert "state is made of" in read.rejections[0].reason


# --- episode agreement -----------------------------------------------------------------------------------

def test_a_file_against_itself_agrees_fully(rows):
    result = episode_agreement(rows, rows)
    for score in (result.episode_pairs, result.entity_pairs, result.boundaries):
        assert (score.precision, score.recall, score.f1) == (1.0, 1.0, 1.0)
    assert result.episode_pairs.gold > 0 and result.unmatched_gold == []
    assert result.mentions_common == result.mentions_gold == len(rows)


def _relabel(rows, pick) -> list[LunguageRow]:
    return [r.model_copy(update={"gt_temporal_group": pick(r)}) if pick(r) is not None else r for r in rows]


def test_a_split_episode_is_detected(rows):
    long = next(e for e in annotated_episodes(rows) if e.first_mention_study != e.last_mention_study)
    last = max(long.mentions, key=lambda k: k[1])  # study ids grow with the sequence in the made-up file
    split = _relabel(rows, lambda r: "TG-split" if r.key() == last else None)
    result = episode_agreement(rows, split)
    assert result.episode_pairs.precision == 1.0 and result.episode_pairs.recall < 1.0
    assert result.entity_pairs.f1 == 1.0  # the entity groups are untouched
    assert long in result.unmatched_gold and result.boundaries.recall < 1.0 and result.boundaries.precision < 1.0


def test_a_merged_episode_is_detected(rows):
    (subject, group), tgs = next((k, sorted(v)) for k, v in _groups(rows).items() if len(v) >= 2)
    merged = _relabel(rows, lambda r: tgs[0] if (r.subject_id, r.gt_entity_group) == (subject, group)
                      and r.gt_temporal_group == tgs[1] else None)
    result = episode_agreement(rows, merged)
    assert result.episode_pairs.recall == 1.0 and result.episode_pairs.precision < 1.0
    assert {(e.subject_id, e.temporal_group) for e in result.unmatched_gold} >= {(subject, tgs[0]), (subject, tgs[1])}


def _row(study: int, entity_group: str, temporal_group: str, status: str = "positive") -> LunguageRow:
    return LunguageRow(subject_id="p1", study_id=f"s{study}", sequence=study, section="find", sent_idx=0,
                       ent_idx=0, ent="pleural effusion", cat="pf", dx_status=status, dx_certainty="definitive",
                       gt_entity_group=entity_group, gt_temporal_group=temporal_group)


def test_a_hand_counted_case():
    """One patient, one finding in five studies. Gold: studies 1-2 one episode (TG1), 3 negative, 4-5 a
    recurrence (TG2), all in EG1. Pred splits the recurrence (T2: study 4, T3: study 5) and puts the negative
    of study 3 in an entity group of its own (B).

    Episode pairs (within gold EG1): gold links 1-2 and 4-5 (2 pairs), pred links 1-2 only (1), both 1:
    precision 1/1, recall 1/2, F1 2 * 1 * 1/2 / (1 + 1/2) = 2/3.
    Entity-group pairs (within the patient): gold links all C(5,2) = 10 pairs, pred C(4,2) = 6 (A holds
    1, 2, 4, 5; B holds 3 alone), both 6: precision 6/6, recall 6/10, F1 2 * 0.6 / 1.6 = 3/4.
    Boundaries: gold TG1 [s1, s2] is matched by T1 [s1, s2]; gold TG2 [s4, s5] shares mentions with T2
    [s4, s4] and T3 [s5, s5], neither with its bounds. Recall 1/2 gold, precision 1/3 pred (T1 only),
    F1 2 * 1/3 * 1/2 / (1/3 + 1/2) = 2/5; TG2 is the unmatched gold episode.
    """
    gold = [_row(1, "EG1", "TG1"), _row(2, "EG1", "TG1"), _row(3, "EG1", "", "negative"),
            _row(4, "EG1", "TG2"), _row(5, "EG1", "TG2")]
    pred = [_row(1, "A", "T1"), _row(2, "A", "T1"), _row(3, "B", "", "negative"),
            _row(4, "A", "T2"), _row(5, "A", "T3")]
    result = episode_agreement(gold, pred)
    assert (result.mentions_gold, result.mentions_pred, result.mentions_common) == (5, 5, 5)
    expected = {"episode_pairs": ((2, 1, 1, 1), (1, 1 / 2, 2 / 3)),
                "entity_pairs": ((10, 6, 6, 6), (1, 6 / 10, 3 / 4)),
                "boundaries": ((2, 3, 1, 1), (1 / 3, 1 / 2, 2 / 5))}
    for name, (counts, scores) in expected.items():
        got = getattr(result, name)
        assert (got.gold, got.pred, got.matched_gold, got.matched_pred) == counts, name
        # exact but for floating-point rounding (F1 of 1 and 0.6 computes as 0.7499999999999999)
        assert (got.precision, got.recall, got.f1) == pytest.approx(scores, rel=1e-12), name
    assert [(e.temporal_group, e.first_mention_study, e.last_mention_study) for e in result.unmatched_gold] == [
        ("TG2", "s4", "s5")]


# --- the command -----------------------------------------------------------------------------------------

def _cxrkg(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CXRKG_", "NEO4J_"))}
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**env, "CXRKG_HOME": str(tmp_path / "home"), "COLUMNS": "200"})


def test_eval_episodes_command(rows, tmp_path):
    gold = write_lunguage(rows, tmp_path / "gold.csv")
    done = _cxrkg(tmp_path, "eval", "episodes", str(gold), str(gold), "--format", "json")
    assert done.returncode == 0, done.stderr
    measures = {m["measure"]: m for m in json.loads(done.stdout)["measures"]}
    assert {m["f1"] for m in measures.values()} == {1.0}

    bad = _with(rows, tmp_path, 3, section="findings")
    done = _cxrkg(tmp_path, "eval", "episodes", str(gold), str(bad))
    assert done.returncode == 6 and "record line 3 field section" in done.stderr
    assert "episode pairs" in done.stdout and "Traceback" not in done.stderr

    pd.read_csv(gold, dtype=str).drop(columns=["ent"]).to_csv(bad, index=False)
    done = _cxrkg(tmp_path, "eval", "episodes", str(gold), str(bad))
    assert done.returncode == 1 and "column(s) ent missing" in done.stderr and "Traceback" not in done.stderr
