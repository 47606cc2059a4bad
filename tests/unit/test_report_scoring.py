"""The scoring core without Neo4j: F1RadGraph through radgraph's own rewards, each temporal class on
hand-made graph facts, prior references, CheXpert labels and the generated reports' CSV."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import runpy
from fractions import Fraction
from pathlib import Path

import pytest

from graph.records import InputError
from graph.report_scoring.chexpert import NO_FINDING, SUPPORT_DEVICES, chexpert_map, corpus_f1
from graph.report_scoring.facts import GraphChange, StudyFacts
from graph.report_scoring.inputs import baseline_items, generated_items, read_reports
from graph.report_scoring.radgraph_reward import f1radgraph
from graph.report_scoring.reading import ReportReading, StatedChange, prior_cue, read_annotation
from graph.report_scoring.score import finding_f1, score_annotations
from graph.report_scoring.temporal import (
    CONTRADICTED,
    SUPPORTED,
    UNVERIFIABLE,
    judge,
    stated_reference_changes,
    temporal_figures,
)
from graph.synth import write_cohort
from graph.vocabulary import vocabulary
from tests.fixtures.inputs import radgraph_doc

EFF = "pleural effusion"


def _package_rewards() -> dict:
    """radgraph 0.1.18's rewards.py run on its own, as a user of the package would call it."""
    spec = importlib.util.find_spec("radgraph")
    assert spec is not None and spec.submodule_search_locations, "radgraph is not installed (make install)"
    return runpy.run_path(str(Path(next(iter(spec.submodule_search_locations))) / "rewards.py"))


# F1RadGraph, as radgraph 0.1.18's rewards.py defines it (Delbrouck et al., Findings of EMNLP 2022: RG_E, RG_ER
# and the full-graph reward), written out here and implemented again below without the package:
#   each annotation gives a SET of candidates per level, over its entities e (tokens t, label l, relations):
#   simple:   (t, l) for every entity;
#   partial:  (t, l, True) for an entity with a relation, (t, l) for one without;
#   complete: for an entity with relations, one (lower(t), l, relation type, lower(target's tokens)) per relation
#             (the target's label is not in it); for an entity without, (t, l) as written.
#   P = |H & R| / |H|, R = |H & R| / |R|, F1 = 2PR / (P + R) (0 when P + R = 0), i.e. 2 |H & R| / (|H| + |R|);
#   a pair where either annotation has no entity scores 0 at every level.
LEVELS = ("simple", "partial", "complete")


def _candidates(doc: dict, level: str) -> set[tuple]:
    entities = doc["entities"]
    out: set[tuple] = set()
    for e in entities.values():
        if level == "simple" or not e["relations"]:
            out.add((e["tokens"], e["label"]))
        elif level == "partial":
            out.add((e["tokens"], e["label"], True))
        else:
            out |= {(e["tokens"].lower(), e["label"], rel, entities[t]["tokens"].lower()) for rel, t in e["relations"]}
    return out


def _f1radgraph_again(hyp: dict, ref: dict) -> tuple[float, ...]:
    if not hyp["entities"] or not ref["entities"]:
        return (0.0, 0.0, 0.0)
    sets = [(_candidates(hyp, level), _candidates(ref, level)) for level in LEVELS]
    return tuple(2 * len(h & r) / (len(h) + len(r)) for h, r in sets)


_REF_LEFT = radgraph_doc("Left pleural effusion .", [("Left", "ANAT-DP", 0, [("modify", 2)]),
                                                    ("pleural", "ANAT-DP", 1, []),
                                                    ("effusion", "OBS-DP", 2, [("located_at", 2)])])
_HYP_LEFT = radgraph_doc("Left effusion , no pneumothorax .", [("Left", "ANAT-DP", 0, []),
                                                               ("effusion", "OBS-DP", 1, [("located_at", 1)]),
                                                               ("pneumothorax", "OBS-DA", 4, [])])
_REF_HEART = radgraph_doc("Heart size is enlarged . Effusion unchanged .", [
    ("Heart", "ANAT-DP", 0, []), ("size", "ANAT-DP", 1, [("modify", 1)]), ("enlarged", "OBS-DP", 3, [("located_at", 1)]),
    ("Effusion", "OBS-DP", 5, []), ("unchanged", "OBS-DP", 6, [("modify", 4)])])
_HYP_HEART = radgraph_doc("Heart size is enlarged . effusion .", [
    ("Heart", "ANAT-DP", 0, []), ("size", "ANAT-DP", 1, [("modify", 1)]), ("enlarged", "OBS-DP", 3, [("located_at", 2)]),
    ("effusion", "OBS-DP", 5, [])])
_REF_BOTH = radgraph_doc("Left effusion . Right effusion .", [
    ("Left", "ANAT-DP", 0, []), ("effusion", "OBS-DP", 1, [("located_at", 1)]),
    ("Right", "ANAT-DP", 3, []), ("effusion", "OBS-DP", 4, [("located_at", 3)])])
_HYP_ONE = radgraph_doc("Left effusion .", [("Left", "ANAT-DP", 0, []), ("effusion", "OBS-DP", 1, [("located_at", 1)])])


@pytest.mark.parametrize(("hyp", "ref", "expected"), [
    # simple: H {Left, effusion, pneumothorax}, R {Left, pleural, effusion}: 2 shared -> 2*2/(3+3) = 2/3.
    # partial: H {Left, (effusion, True), pneumothorax}, R {(Left, True), pleural, (effusion, True)}: 1 -> 1/3.
    # complete: H {Left, (effusion, located_at, left), pneumothorax}, R {(left, modify, pleural), pleural,
    #           (effusion, located_at, pleural)}: nothing shared -> 0.
    (_HYP_LEFT, _REF_LEFT, (Fraction(2, 3), Fraction(1, 3), Fraction(0))),
    # simple: H {Heart, size, enlarged, effusion}, R {Heart, size, enlarged, Effusion, unchanged} ("effusion" is
    #         not "Effusion" as written): 3 -> 2*3/(4+5) = 2/3. partial: the same three (size and enlarged have
    #         relations on both sides) -> 2/3. complete: H {Heart, (size, modify, heart), (enlarged, located_at,
    #         size), effusion}, R {Heart, (size, modify, heart), (enlarged, located_at, heart), Effusion,
    #         (unchanged, modify, effusion)}: 2 -> 2*2/(4+5) = 4/9.
    (_HYP_HEART, _REF_HEART, (Fraction(2, 3), Fraction(2, 3), Fraction(4, 9))),
    # sets, not lists: R's two "effusion" entities are one candidate at simple and partial (R has 3, H 2, 2
    # shared -> 4/5), two at complete (located at left, at right: R 4, H 2, 2 shared -> 2*2/(2+4) = 2/3).
    (_HYP_ONE, _REF_BOTH, (Fraction(4, 5), Fraction(4, 5), Fraction(2, 3))),
    # no entity on one side: 0 at every level, even where the other side matches nothing at all
    (radgraph_doc("Clear .", []), _REF_LEFT, (Fraction(0), Fraction(0), Fraction(0))),
])
def test_f1radgraph_by_hand(hyp, ref, expected):
    assert f1radgraph(hyp, ref) == pytest.approx([float(x) for x in expected], abs=1e-12)
    assert _f1radgraph_again(hyp, ref) == pytest.approx([float(x) for x in expected], abs=1e-12)


def test_f1radgraph_goes_through_the_installed_package():
    """Plumbing only: the figures are the installed radgraph 0.1.18's own compute_reward (the definitions
    are checked by hand above and by the second implementation below)."""
    from graph.report_scoring.radgraph_reward import RADGRAPH_VERSION, rewards_module

    assert importlib.metadata.version("radgraph") == RADGRAPH_VERSION
    assert Path(rewards_module().__file__).read_text() == Path(_package_rewards()["__file__"]).read_text()
    compute = _package_rewards()["compute_reward"]
    assert f1radgraph(_HYP_HEART, _REF_HEART) == compute(_HYP_HEART, _REF_HEART, "all")


def test_f1radgraph_agrees_with_the_definition_on_a_synthetic_corpus(tmp_path):
    write_cohort(tmp_path, patients=10, seed=2)
    docs = {}
    for f in sorted((tmp_path / "radgraph").rglob("*.json")):
        docs.update(json.loads(f.read_text()))
    annotations = list(docs.values())
    assert len(annotations) > 20
    pairs = list(zip(annotations, annotations[1:] + annotations[:1], strict=True))
    for hyp, ref in pairs:
        assert f1radgraph(hyp, ref) == pytest.approx(_f1radgraph_again(hyp, ref), abs=1e-12)
    assert f1radgraph(annotations[0], annotations[0]) == (1.0, 1.0, 1.0)
    assert len({f1radgraph(h, r) for h, r in pairs}) > 5  # the pairs are not all alike


def test_f1radgraph_matches_radgraph_0_1_18_case_rules():
    upper = radgraph_doc("Effusion .", [("Effusion", "OBS-DP", 0, [])])
    lower = radgraph_doc("effusion .", [("effusion", "OBS-DP", 0, [])])
    # 0.1.18 compares entity tokens as written at every level for an entity without relations
    assert f1radgraph(upper, lower) == (0.0, 0.0, 0.0)
    linked_upper = radgraph_doc("Left effusion .", [("Left", "ANAT-DP", 0, []), ("effusion", "OBS-DP", 1, [("located_at", 1)])])
    linked_lower = radgraph_doc("left effusion .", [("left", "ANAT-DP", 0, []), ("effusion", "OBS-DP", 1, [("located_at", 1)])])
    simple, partial, complete = f1radgraph(linked_upper, linked_lower)
    # "Left" != "left" for simple and partial (1 of 2 entities), while complete lowercases relation tuples and
    # keeps the anatomy entity without relations as written: 1 of 2 tuples again
    assert simple == partial == 0.5 and complete == 0.5
    assert f1radgraph(radgraph_doc("x", []), upper) == (0.0, 0.0, 0.0)  # no entity on one side


def _facts(changes=None, states=None, prior_states=None, prior="s1") -> StudyFacts:
    return StudyFacts("s2", "p", prior, "ref", None, states or {}, prior_states or {}, changes or {})


def _change(change: str, finding: str = EFF) -> StatedChange:
    return StatedChange(finding, change, f"{finding} {change} .")


@pytest.mark.parametrize(("stated", "graph", "verdict"), [
    ("worsened", [GraphChange("worsened", "stated", "radgraph")], SUPPORTED),
    ("new", [GraphChange("worsened", "stated", "chest_imagenome")], SUPPORTED),  # new ~ worsened
    ("improved", [GraphChange("resolved", "derived", "derived")], SUPPORTED),  # improved ~ resolved
    ("no change", [GraphChange("persistent", "derived", "presence")], SUPPORTED),
    ("improved", [GraphChange("worsened", "stated", "radgraph")], CONTRADICTED),
    ("new", [GraphChange("persistent", "derived", "presence")], CONTRADICTED),
    # a stated change decides over a derived persistent, which agrees with improved and worsened alike
    ("improved", [GraphChange("worsened", "stated", "radgraph"), GraphChange("persistent", "derived", "x")], CONTRADICTED),
    ("resolved", [GraphChange("no longer mentioned", "derived", "x")], UNVERIFIABLE),
    ("worsened", [], UNVERIFIABLE),
])
def test_each_temporal_class(stated, graph, verdict):
    facts = _facts({EFF: tuple(graph)}, {EFF: "present"}, {EFF: "present"})
    assert judge(_change(stated), facts).verdict == verdict


def test_a_change_of_a_finding_absent_at_both_studies_is_contradicted_and_without_prior_unverifiable():
    both_absent = _facts(states={EFF: "absent"}, prior_states={EFF: "absent"})
    assert judge(_change("improved"), both_absent).verdict == CONTRADICTED
    assert judge(_change("improved"), _facts(states={EFF: "absent"})).verdict == UNVERIFIABLE
    assert judge(_change("new"), _facts(prior=None)).verdict == UNVERIFIABLE


def _reading(changes=(), cue=None) -> ReportReading:
    from collections import Counter

    return ReportReading(frozenset(), tuple(changes), cue, Counter())


def test_omitted_covered_and_hallucinated_prior():
    reference = [_change("worsened"), _change("new", "atelectasis"), _change("improved", "pneumothorax")]
    generated = _reading([_change("new"), _change("no change", "atelectasis")], "new")
    t = temporal_figures(generated, reference, _facts())
    assert [c.finding for c in t.omitted_changes] == ["pneumothorax"]  # the only finding stated no change for
    assert [c.finding for c in t.covered] == [EFF]  # new ~ worsened; "no change" does not cover "new"
    assert t.prior_reference and not t.hallucinated_prior
    first = temporal_figures(_reading(cue="again"), [], _facts(prior=None))
    assert first.hallucinated_prior and not first.has_prior
    assert not temporal_figures(_reading(), [], _facts(prior=None)).hallucinated_prior


def test_the_stored_reports_changes_are_the_graphs_stated_changes():
    facts = _facts({EFF: (GraphChange("new", "stated", "radgraph", ("New left effusion .",)),
                          GraphChange("improved", "stated", "chest_imagenome", ("new left effusion",))),
                    "atelectasis": (GraphChange("improved", "stated", "chest_imagenome", ("less volume loss",)),
                                    GraphChange("persistent", "derived", "presence")),
                    "pneumothorax": (GraphChange("resolved", "derived", "presence"),),
                    "edema": (GraphChange("persistent", "stated", "lunguage"),
                              GraphChange("worsened", "stated", "lunguage", ("worse edema",)),
                              GraphChange("no change", "stated", "lunguage", ("stable edema",)))})
    # per finding the first source of radgraph, lunguage, chest_imagenome that states a change (a second source's
    # reading of the same sentence, agreeing or not, does not count again); derived edges and changes outside
    # the scored classes are no statement of the report
    assert [(c.finding, c.change, c.sentence) for c in stated_reference_changes(facts)] == [
        ("atelectasis", "improved", "less volume loss"), ("edema", "no change", "stable edema"),
        ("edema", "worsened", "worse edema"), (EFF, "new", "New left effusion .")]


def test_omitted_counts_the_graphs_changes_for_a_stored_reference_and_the_reading_for_a_file():
    v = vocabulary()
    gen = radgraph_doc("Small left effusion .", [("effusion", "OBS-DP", 2, [])])
    facts = _facts({"atelectasis": (GraphChange("worsened", "stated", "chest_imagenome", ("more volume loss",)),)})
    stored = score_annotations("s2", gen, gen, facts, v)
    assert stored.score.changes_omitted == 1  # the graph holds a change the text's words do not state
    assert [c.sentence for c in stored.temporal.omitted_changes] == ["more volume loss"]
    assert score_annotations("s2", gen, gen, facts, v, stored_reference=False).score.changes_omitted == 0


@pytest.mark.parametrize(("text", "cue"), [
    ("COMPARISON : None . FINDINGS : Small left effusion .", None),
    ("COMPARISON: 01/02/2150. FINDINGS: Small left effusion.", "comparison section"),
    ("Compared with the prior study, the effusion is smaller.", "compared"),  # the first cue
    ("Left effusion is again seen.", "again"),
    ("No new consolidation.", "new"),
])
def test_prior_cues(text, cue):
    assert prior_cue(text) == cue


def test_reading_a_change_and_scoring_a_pair():
    v = vocabulary()
    gen = radgraph_doc("Left pleural effusion , increased .", [
        ("Left", "ANAT-DP", 0, []), ("pleural", "ANAT-DP", 1, [("modify", 1)]),
        ("effusion", "OBS-DP", 2, [("located_at", 2)]), ("increased", "CHAN-CON-WOR", 4, [("modify", 3)])])
    reading = read_annotation(gen, v)
    assert reading.positive == {EFF} and [(c.finding, c.change) for c in reading.changes] == [(EFF, "worsened")]
    assert reading.prior_cue == "stated change" and not reading.unread_change_words
    bare = radgraph_doc("Left pleural effusion , increased .", [("effusion", "OBS-DP", 2, [])])
    assert read_annotation(bare, v).unread_change_words == {"increased": 1}
    facts = _facts({EFF: (GraphChange("improved", "stated", "radgraph"),)}, {EFF: "present"}, {EFF: "present"})
    result = score_annotations("s2", gen, gen, facts, v)
    assert result.score.changes_contradicted == 1 and result.score.changes_omitted == 0
    assert result.score.f1radgraph_complete == 1.0 and result.score.finding_f1 == 1.0
    with pytest.raises(InputError, match="label"):
        read_annotation(radgraph_doc("x", [("x", "NOPE", 0, [])]), v)


def test_finding_f1():
    assert finding_f1(frozenset(), frozenset()) == 1.0
    assert finding_f1(frozenset({"a"}), frozenset()) == 0.0
    assert finding_f1(frozenset({"a", "b"}), frozenset({"a"})) == 2 / 3


def test_chexpert_labels_and_f1():
    table = chexpert_map()
    assert len(table.observations) == 14 and table.vocabulary == vocabulary().version
    assert table.labels({"picc"}) == {SUPPORT_DEVICES, NO_FINDING}  # devices only: still no finding
    assert table.labels({"costophrenic angle blunting", "lung opacity"}) == {"Pleural Effusion", "Lung Opacity"}
    assert table.labels({"tortuous aorta"}) == {NO_FINDING}  # outside the 14
    gen = [frozenset({"Edema"}), frozenset({"Edema", "Atelectasis"}), frozenset()]
    ref = [frozenset({"Edema"}), frozenset({"Atelectasis"}), frozenset({"Atelectasis"})]
    micro, macro, per = corpus_f1(gen, ref, ["Edema", "Atelectasis"])
    # Edema: tp 1, fp 1 -> 2/3; Atelectasis: tp 1, fn 1 -> 2/3; micro: tp 2, fp 1, fn 1 -> 4/6
    assert per == {"Edema": 2 / 3, "Atelectasis": 2 / 3} and micro == macro == 2 / 3


def test_generated_csv_rejects_rows_by_name(tmp_path):
    path = tmp_path / "generated.csv"
    path.write_text("study_id,report,subject_id\ns1,Small effusion.,p1\n,No id.,p1\ns2,,p2\ns1,Again.,p1\ns3\n")
    rows, rejected = read_reports(path)
    assert rows == {"s1": "Small effusion."}
    assert [(r.record, r.field) for r in rejected] == [("row 2", "study_id"), ("s2", "report"), ("s1", "study_id"),
                                                       ("s3", "report")]
    (tmp_path / "bom.csv").write_text("\ufeffstudy_id,report\ns1,x\n", encoding="utf-8")
    assert read_reports(tmp_path / "bom.csv") == ({"s1": "x"}, [])
    (tmp_path / "bad.csv").write_text("study,text\ns1,x\n")
    with pytest.raises(InputError, match="missing column"):
        read_reports(tmp_path / "bad.csv")
    facts = {"s1": _facts(), "s9": _facts()._replace(study_id="s9", report=None)}
    items, missing = generated_items({"s1": "x", "s8": "y", "s9": "z"}, facts, "generated.csv")
    assert items == [("s1", "x", "ref")] and [(r.record, r.field) for r in missing] == [("s8", "study_id"),
                                                                                       ("s9", "study_id")]


def test_baselines_from_the_graph():
    facts = {"s1": StudyFacts("s1", "p", None, "first", None, {}, {}, {}),
             "s2": StudyFacts("s2", "p", "s1", "second", "first", {}, {}, {})}
    assert baseline_items("reference", facts) == ([("s1", "first", "first"), ("s2", "second", "second")], 0)
    assert baseline_items("copy-prior", facts) == ([("s2", "first", "second")], 1)
    with pytest.raises(ValueError, match="unknown baseline"):
        baseline_items("nope", facts)


@pytest.mark.extract
def test_the_reward_scores_a_batch_with_repeated_studies():
    from graph.extract.pipeline import EXTRACTORS
    from graph.report_scoring.score import ReportScorer

    worsened = {EFF: (GraphChange("worsened", "stated", "radgraph"),)}
    facts = {"s2": _facts(worsened, {EFF: "present"}, {EFF: "present"})._replace(report="Left pleural effusion has increased."),
             "s3": _facts()._replace(study_id="s3", report=None)}
    scorer = ReportScorer(facts, EXTRACTORS["rules"]())
    texts = ["The left pleural effusion has improved.", "The left pleural effusion is larger, increased.", "x", "y"]
    scores = scorer(["s2", "s2", "s3", "nope"], texts)
    assert scores[2] is None and scores[3] is None  # no stored report; not in the facts
    assert (scores[0].changes_contradicted, scores[0].changes_supported) == (1, 0)
    assert (scores[1].changes_contradicted, scores[1].changes_supported) == (0, 1)
    assert scorer(["s2"], texts[:1]) == scores[:1]  # the kept reference scores as the first time
    with pytest.raises(ValueError, match="1 study ids, 2 texts"):
        scorer(["s2"], texts[:2])


def test_corpus_ratio_and_mean_intervals():
    from graph.report_scoring.summary import mean_interval, ratio_interval

    num, den, value, low, high = ratio_interval([1, 0, 3, 2, 0, 4], [2, 0, 3, 4, 1, 4])
    assert (num, den, value) == (10, 14, 10 / 14) and low < value < high
    assert ratio_interval([0, 0], [0, 0]) == (0, 0, None, None, None)
    assert ratio_interval([1, 0], [2, 0])[2:] == (0.5, 0.5, 0.5)  # one study with a denominator: no spread
    mean, low, high = mean_interval([0.0, 1.0] * 20)
    assert mean == 0.5 and 0.3 < low < 0.5 < high < 0.7
    assert mean_interval([1.0, 1.0]) == (1.0, 1.0, 1.0)


@pytest.fixture(scope="module")
def iu_reports():
    """The IU reports (Open-i) from the torchxrayvision wheel, read once for this module's network tests."""
    from graph.datasets import iu, wheel

    try:
        return iu.load_reports()
    except wheel.WheelUnavailable as exc:
        pytest.skip(f"IU reports unavailable: {exc}")


@pytest.mark.network
@pytest.mark.extract
def test_f1radgraph_agrees_with_the_definition_on_the_iu_reports(iu_reports):
    """Every IU report, annotated by the rules extractor, scored against the next one: the package's figures
    (through f1radgraph) equal the second implementation's, to floating-point precision."""
    from graph.extract.rules import extract

    docs = [doc for _, doc in extract([(r.report_id, r.sections()) for r in iu_reports])]
    assert len(docs) > 3900
    pairs = list(zip(docs, docs[1:] + docs[:1], strict=True))
    for hyp, ref in pairs:
        assert f1radgraph(hyp, ref) == pytest.approx(_f1radgraph_again(hyp, ref), abs=1e-12)
    assert sum(f1radgraph(h, r)[2] > 0 for h, r in pairs) > len(pairs) / 10  # not a corpus of zeros


@pytest.mark.network
@pytest.mark.extract
def test_the_printed_change_recall_is_what_evaluate_gold_measures(iu_reports):
    """eval reports prints EXTRACTOR_CHANGE_RECALL as a measurement of the named gold sets on the named date:
    evaluate_gold, run now, finds the same gold changes (finding level: tp of tp + fn) on each split."""
    from graph.extract.eval.gold_eval import SPLITS, evaluate_gold
    from graph.report_scoring.summary import EXTRACTOR_CHANGE_RECALL, change_recall_note

    measured = EXTRACTOR_CHANGE_RECALL["rules"]
    assert set(measured) == set(SPLITS)
    for split, (found, gold) in measured.items():
        tp, _, fn = evaluate_gold(iu_reports, split)["rules"].change_findings
        assert (tp, tp + fn) == (found, gold), split
        assert f"{found / gold:.3f} ({found} of {gold} gold changes) {split}" in change_recall_note("rules")
