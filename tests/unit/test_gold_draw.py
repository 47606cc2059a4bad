"""The gold-set draw of the annotation guide's §1 and §10 on made-up report text, and the shipped gold sets."""

import pytest

from graph.extract.eval.gold_draw import draw, in_tests_key, normalised, pool, segment
from graph.datasets.iu import IUReport


def _sentences(text):
    return [text[s:e] for s, e in segment(text)]


def test_sections_are_cut_after_terminal_runs_and_before_enumerations():
    assert _sentences("No effusion.  Heart normal!! Lungs clear") == ["No effusion.", "Heart normal!!", "Lungs clear"]
    assert _sentences("Dr. XXXX was called at 3 p.m. today. Opacities.. Stable.") == [
        "Dr. XXXX was called at 3 p.m. today.", "Opacities..", "Stable."]
    assert _sentences("1. No acute disease 2. Low lung volumes. 3., Stable 1.5 cm nodule.") == [
        "No acute disease", "Low lung volumes.", "Stable 1.5 cm nodule."]
    assert _sentences("(1) Clear lungs. 2. . 10.5 mm nodule") == ["Clear lungs.", "10.5 mm nodule"]


def test_offsets_point_into_the_section_text():
    text = " 1. Small left effusion. Right PICC."
    assert segment(text) == [(4, 24), (25, 36)]


def _report(rid, findings, impression=""):
    return IUReport(rid, f"{rid}.xml", "", "", findings, impression, (), (), ())


def test_pool_leaves_out_excluded_reports_and_sentences_quoted_in_tests():
    reports = [_report("1", "Small left effusion."), _report("2", "No pneumothorax is seen. Ok.", "Stable.")]
    got = pool(reports, {"1"}, tests_text="... no pneumothorax is seen ...")
    assert got == [("2", "findings", 25, 28), ("2", "impression", 0, 7)]
    assert in_tests_key("No pneumothorax is seen. ") == "no pneumothorax is seen"


def test_strata_draw_in_order_once_per_sentence_and_stock_phrase():
    reports = [_report("1", "Stable left effusion. Lungs clear."), _report("2", "Lungs clear! Stable pacer.")]
    candidates = pool(reports, set(), "")
    strata = [("change", r"\bstable\b"), ("normal", r"\bclear\b"), ("other", ".")]
    got = draw(reports, candidates, strata, seed=1, per_stratum=5)
    # the two "Lungs clear" sentences are one stock phrase: drawn once, and not again by "other"
    assert sorted(c.stratum for c in got) == ["change", "change", "normal"]
    assert {(c.report_id, c.start) for c in got if c.stratum == "change"} == {("1", 0), ("2", 13)}
    assert normalised("Lungs clear!") == normalised("lungs  clear.")
    assert [c.stratum for c in draw(reports, candidates, strata, seed=1, per_stratum=1)] == ["change", "normal", "other"]


@pytest.mark.network
def test_the_shipped_gold_sets_are_guide_sentences_and_share_no_report():
    from graph.datasets import iu, wheel
    from graph.extract.eval.gold_eval import load_gold

    try:
        reports = {r.report_id: r for r in iu.load_reports()}
    except wheel.WheelUnavailable as exc:
        pytest.skip(f"IU reports unavailable: {exc}")
    gold = load_gold()
    for g in gold:
        assert (g.start, g.end) in segment(getattr(reports[g.report_id], g.section)), g.key
    dev = {g.report_id for g in gold if g.split == "dev"}
    held_out = {g.report_id for g in gold if g.split == "held-out"}
    assert len(held_out) >= 200 and not dev & held_out
