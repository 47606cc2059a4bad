"""Scoring on the annotated IU sentences: matching, each figure, the keyword baseline and bad gold files.
Report text here is synthetic."""

from __future__ import annotations

import json

import pytest

from graph.extract.eval.gold_eval import (GoldError, GoldFinding, GoldSentence, Predicted, baseline_predictions,
                                     dev_fold, gold_report_ids, load_gold, score)
from graph.datasets.iu import IUReport
from graph.vocabulary import vocabulary

V = vocabulary()


def _sentence(start: int, *findings: GoldFinding, report: str = "1") -> GoldSentence:
    return GoldSentence(report, "findings", start, start + 10, "dev", "other", tuple(findings))


def test_score_counts_every_figure():
    eff = GoldFinding("pleural effusion", "present", "left", "CHAN-CON-WOR")
    ptx = GoldFinding("pneumothorax", "absent", "none", None)
    cardio = GoldFinding("enlarged cardiac silhouette", "absent", "none", None)
    gold = [_sentence(0, eff, ptx), _sentence(20, cardio)]
    predicted = {
        gold[0].key: [Predicted("pleural effusion", "present", "bilateral", frozenset({"CHAN-CON-WOR"})),
                      Predicted("pneumothorax", "present", "none"),
                      Predicted("atelectasis", "present", "none", frozenset({"CHAN-NC"}))],
        gold[1].key: [],
    }
    s = score(gold, predicted, V)
    assert (s.tp, s.fp, s.fn) == (2, 1, 1)
    assert s.misses == [(gold[1].key, "enlarged cardiac silhouette")]
    assert s.assertion == [1, 2]  # the pneumothorax is stated absent, predicted present
    assert s.laterality == [0, 1]  # only the sided gold finding is scored; bilateral is not left
    assert s.change_findings == [1, 1, 0] and s.change_sentences == [1, 1, 0]
    assert s.recall == pytest.approx(2 / 3) and s.change_f1_findings == pytest.approx(2 / 3)


def test_a_related_finding_matches_when_the_name_differs():
    # costophrenic angle blunting IS_A pleural effusion in the vocabulary: a reader's "effusion" matches it
    gold = [_sentence(0, GoldFinding("pleural effusion", "present", "none", None))]
    s = score(gold, {gold[0].key: [Predicted("costophrenic angle blunting", "present", "none")]}, V)
    assert (s.tp, s.fp, s.fn) == (1, 0, 0)
    s = score(gold, {gold[0].key: [Predicted("pneumothorax", "present", "none")]}, V)
    assert (s.tp, s.fp, s.fn) == (0, 1, 1)


def test_baseline_reads_negation_sides_and_change_words():
    text = "No pneumothorax. Increased left pleural effusion. Heart size is normal."
    report = IUReport("9", "9.xml", "", "", text, "", (), (), ())
    gold = [GoldSentence("9", "findings", 0, 16, "dev", "x", ()), GoldSentence("9", "findings", 17, 49, "dev", "x", ())]
    got = baseline_predictions({"9": report}, gold, V)
    assert got[gold[0].key] == [Predicted("pneumothorax", "absent", "none")]
    assert got[gold[1].key] == [Predicted("pleural effusion", "present", "left", frozenset({"CHAN-CON-WOR"}))]


def test_malformed_gold_files_name_the_sentence_and_field(tmp_path):
    good = {"report_id": "1", "section": "findings", "start": 0, "end": 5, "split": "dev", "stratum": "x",
            "findings": [{"finding": "pneumothorax", "assertion": "absent", "laterality": "none", "change": None}]}
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"sentences": [good, {**good, "split": "held-out"}]}))
    assert [g.split for g in load_gold(path)] == ["dev", "held-out"]
    assert len(load_gold(path, "dev")) == 1
    path.write_text(json.dumps({"sentences": [good, {k: v for k, v in good.items() if k != "end"}]}))
    with pytest.raises(GoldError, match=r"sentence 1 \(report 1\): field 'end' missing"):
        load_gold(path)
    bad = {**good, "findings": [{**good["findings"][0], "assertion": "maybe"}]}
    path.write_text(json.dumps({"sentences": [bad]}))
    with pytest.raises(GoldError, match="finding 'pneumothorax'"):
        load_gold(path)


def test_report_ids_of_a_split_are_read_without_the_labels(tmp_path):
    path = tmp_path / "gold.json"
    # the held-out row's labels are not even well-formed: only its id and split are read
    path.write_text(json.dumps({"sentences": [{"report_id": 7, "split": "dev"},
                                              {"report_id": "12", "split": "held-out", "findings": "?"}]}))
    assert gold_report_ids("held-out", path) == {"12"} and gold_report_ids("dev", path) == {"7"}
    with pytest.raises(GoldError, match="no split 'test'"):
        gold_report_ids("test", path)
    path.write_text(json.dumps({"sentences": [{"report_id": "1"}]}))
    with pytest.raises(GoldError, match="lacks the field 'split'"):
        gold_report_ids("dev", path)


def test_dev_folds_are_fixed_and_both_hold_reports():
    folds = [dev_fold(str(n)) for n in range(200)]
    assert set(folds) == {"A", "B"} and 60 < folds.count("A") < 140
    assert folds == [dev_fold(str(n)) for n in range(200)]


def _rules_on(text: str, *spans: tuple[int, int]) -> list[list[Predicted]]:
    """The rules' predictions for the sentences ``text[start:end]`` of a findings section ``text``."""
    from graph.extract.eval.gold_eval import rules_predictions

    gold = [GoldSentence("9", "findings", start, end, "dev", "x", ()) for start, end in spans]
    got = rules_predictions({"9": IUReport("9", "9.xml", "", "", text, "", (), (), ())}, gold, V)
    return [got[g.key] for g in gold]


@pytest.mark.extract
def test_rules_predictions_attribute_mentions_to_their_sentence():
    first, second = _rules_on("No pneumothorax. The left pleural effusion has increased. Heart size is normal.",
                              (0, 16), (17, 57))
    assert [(p.finding, p.assertion) for p in first] == [("pneumothorax", "absent")]
    assert [(p.finding, p.assertion, p.laterality, p.changes) for p in second] == [
        ("pleural effusion", "present", "left", frozenset({"CHAN-CON-WOR"}))]


def test_a_finding_outside_the_list_matches_a_vocabulary_synonym():
    gold = [_sentence(0, GoldFinding("other:Cardiomegaly", "present", "none", None))]
    s = score(gold, {gold[0].key: [Predicted("enlarged cardiac silhouette", "present", "none")]}, V)
    assert (s.tp, s.fp, s.fn) == (1, 0, 0)


@pytest.mark.extract
def test_a_refer_back_sentence_is_credited_with_the_finding_it_changes():
    refer, leads = _rules_on("Left-sided pacemaker. These are stable. Leads end in the right atrium.", (22, 39), (40, 70))
    assert [(p.finding, p.laterality, p.changes) for p in refer] == [
        ("cardiac pacer and wires", "left", frozenset({"CHAN-NC"}))]
    # a heart chamber's side is not the side of the body
    assert [(p.finding, p.laterality) for p in leads] == [("cardiac pacer and wires", "none")]


def test_gold_files_are_read_together_and_a_split_spans_them(tmp_path):
    row = {"report_id": "1", "section": "findings", "start": 0, "end": 5, "split": "dev", "stratum": "x",
           "findings": []}
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({"sentences": [row, {**row, "report_id": "2", "first_split": "held-out"}]}))
    second.write_text(json.dumps({"sentences": [{**row, "report_id": "3", "split": "held-out"}]}))
    assert [g.report_id for g in load_gold((first, second), "dev")] == ["1", "2"]
    assert [g.report_id for g in load_gold((first, second), "held-out")] == ["3"]
    assert gold_report_ids("held-out", (first, second)) == {"3"}
    second.write_text(json.dumps({"sentences": [{**row, "split": "test"}]}))
    with pytest.raises(GoldError, match=r"b\.json: sentence 0 \(report 1\): split 'test'"):
        load_gold((first, second))
